"""A standalone C `main` for rendered programs: the sanitizer tests' driver.

The harness gives each program its global buffers (heap blocks of exactly their size, so that
AddressSanitizer sees any access past them) filled with their initial contents, calls the entry
point, and prints every SINK source's bytes as hex, one line each: `P<program> <source> <hex>`.
`read_results` turns that text back into the arrays `CompiledProgram.run` would return.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from uir.core.errors import BackendError
from uir.core.kernels import Schedule
from uir.core.uop import UOp

from .abi import Layout, abi_numpy, from_abi, layout, storage_ctype
from .render import render_c
from .runtime import initial_contents


def _bytes(data: bytes) -> str:
    return ", ".join(f"0x{b:02x}" for b in data)


def _call(number: int, entry: str, abi: Layout) -> list[str]:
    lines = ["{"]
    names = []
    for b in abi.buffers:
        name, data = f"buf{b.slot}", initial_contents(abi, None)[b.slot].tobytes()
        lines.append(f"    static const unsigned char {name}_init[] = {{{_bytes(data)}}};")
        lines.append(f"    unsigned char *{name} = malloc({len(data)});")
        lines.append(f"    memcpy({name}, {name}_init, {len(data)});")
        names.append((name, storage_ctype(b.type.dtype)))
    for i, t in enumerate(abi.outputs):
        size = t.size * abi_numpy(t.dtype).itemsize
        lines.append(f"    unsigned char *out{i} = calloc({size}, 1);")
        names.append((f"out{i}", storage_ctype(t.dtype)))
    args = ", ".join(f"({ctype} *){name}" for name, ctype in names)
    lines.append(f"    {entry}({args});")
    for k, back in enumerate(abi.readbacks):
        if back.output is not None:
            t = abi.outputs[back.output]
            where, first, count = f"out{back.output}", 0, t.size * abi_numpy(t.dtype).itemsize
        else:
            buffer = next(b for b in abi.buffers if b.slot == back.slot)
            width = abi_numpy(buffer.type.dtype).itemsize
            where, first, count = f"buf{back.slot}", back.begin * width, back.length * width
        lines.append(f'    dump("P{number} {k} ", {where} + {first}, {count});')
    lines += [f"    free({name});" for name, _ in names]
    lines.append("}")
    return lines


def _prototype(entry: str, abi: Layout) -> str:
    params = [f"{storage_ctype(t.dtype)} *" for t in abi.arg_types]
    return f"void {entry}({', '.join(params) or 'void'});"


def harness(programs: list[tuple[str, Layout]]) -> str:
    """The C source of a `main` running each `(entry, layout)` once on its initial buffers."""
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include <stdlib.h>",
        "#include <string.h>",
        *(_prototype(entry, abi) for entry, abi in programs),
        "static void dump(const char *tag, const unsigned char *p, size_t n) {",
        "    fputs(tag, stdout);",
        '    for (size_t i = 0; i < n; i++) printf("%02x", p[i]);',
        "    putchar('\\n');",
        "}",
        "int main(void) {",
        "    (void)dump;  /* a program without outputs dumps nothing: no unused-function error */",
    ]
    for number, (entry, abi) in enumerate(programs):
        lines += [f"    {line}" for line in _call(number, entry, abi)]
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


def read_results(stdout: str, sinks: list[UOp]) -> list[list[np.ndarray]]:
    """The outputs the harness printed, per program, as arrays in each source's storage dtype."""
    results: list[list[np.ndarray]] = [[] for _ in sinks]
    for line in stdout.splitlines():
        tag, source, data = line.split(" ")
        sink = sinks[int(tag[1:])]
        uop = sink.src[int(source)]
        raw = np.frombuffer(bytes.fromhex(data), dtype=abi_numpy(uop.dtype))
        results[int(tag[1:])].append(from_abi(raw, uop.dtype).reshape(uop.type.shape))
    return results


# The flags of the sanitizer check (issue 5): warnings are errors, and UB or a bad access stops
# the run at once.
SANITIZE = [
    "-std=c99",
    "-O1",
    "-g",
    "-Wall",
    "-Wextra",
    "-Werror",
    # A program may compare a value with itself (MAX x x, CMPLT x x) and its C then does too:
    # defined behaviour, which this warning only calls pointless.
    "-Wno-tautological-compare",
    # A program may write a LOCAL it never reads (its stores are effects the SINK lists), and
    # its C then sets an array it never uses.
    "-Wno-unused-but-set-variable",
    "-ffp-contract=off",
    "-fsanitize=undefined,address",
    "-fno-sanitize-recover=all",
]


def run_sanitized(
    schedules: list[Schedule], workdir: Path, cc: list[str]
) -> list[list[np.ndarray]]:
    """Render each program's schedule into its own translation unit, build them with one
    harness `main` under SANITIZE, run it, and return each program's outputs.

    Raises BackendError with the compiler's or the sanitizer's message when either complains.
    """
    units = []
    for i, schedule in enumerate(schedules):
        unit = workdir / f"p{i}.c"
        unit.write_text(render_c(schedule, f"uir_program_{i}"))
        units.append(str(unit))
    sinks = [s.source for s in schedules]
    main = workdir / "main.c"
    main.write_text(harness([(f"uir_program_{i}", layout(s)) for i, s in enumerate(sinks)]))
    exe = workdir / "programs"
    built = subprocess.run(
        [*cc, *SANITIZE, *units, str(main), "-o", str(exe), "-lm"],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        raise BackendError(f"the sanitized build failed:\n{built.stderr[-4000:]}")
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, check=False)
    if ran.returncode != 0 or ran.stderr:
        raise BackendError(f"the sanitized run failed:\n{ran.stderr[-4000:]}")
    return read_results(ran.stdout, sinks)
