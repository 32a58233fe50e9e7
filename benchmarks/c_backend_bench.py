"""The C backend at scale, in four parts; each prints figures, nothing here asserts a time.

1. What running the compiled code in a forked child (crash isolation) costs per run.
2. Render and compile latency of a 10,000-statement program (cold, and from the compile cache),
   and its run time on C against the interpreter.
3. `restrict` on the entry point's parameters: one program rendered with and without it, the
   packed (vector) and scalar SSE instructions gcc emits for each, and the CPU time per call.
4. Rendering a program with 8,000 and 16,000 SINK sources (it was quadratic in them).

Run: uv run python benchmarks/c_backend_bench.py [STATEMENTS]
The compile cache goes to a temporary directory, so "cold" really compiles.
"""

from __future__ import annotations

import ctypes
import os
import random
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from uir.backend.c.abi import layout
from uir.backend.c.render import render_c
from uir.backend.c.runtime import CompiledProgram, run_isolated
from uir.backend.c.toolchain import FLAGS, compile_shared, compiler, run_compiler
from uir.core.calls import inline_calls
from uir.core.interpret import evaluate
from uir.core.parse import parse
from uir.core.verify import verify
from uir.testing.backends import scheduled

INT_OPS = ["ADD", "SUB", "MUL", "MAX", "MIN", "XOR", "IDIV", "MOD", "SHL", "SHR"]
FLOAT_OPS = ["ADD", "MUL", "SUB", "FDIV", "MAX"]


def program_text(statements: int, seed: int = 0) -> str:
    """i32/f32 arithmetic mixed with loads and chained stores on two 64-element buffers."""
    rng = random.Random(seed)
    lines = [
        "%mask = CONST i32 63",
        "%i0 = CONST i32 1",
        "%f0 = CONST f32 0.5",
        "%ib = BUFFER i32[64] 0",
        "%fb = BUFFER f32[64] 1",
    ]
    ints, floats = ["%i0"], ["%f0"]
    version = {"i32": "%ib", "f32": "%fb"}
    n = 0
    while len(lines) < statements - 1:
        n += 1
        kind = rng.random()
        a, b = rng.choice(ints[-50:]), rng.choice(ints[-50:])
        if kind < 0.5:
            lines.append(f"%i{n} = {rng.choice(INT_OPS)} i32 {a} {b}")
            ints.append(f"%i{n}")
        elif kind < 0.7:
            x, y = rng.choice(floats[-50:]), rng.choice(floats[-50:])
            lines.append(f"%f{n} = {rng.choice(FLOAT_OPS)} f32 {x} {y}")
            floats.append(f"%f{n}")
        else:
            dtype = rng.choice(["i32", "f32"])
            values = ints if dtype == "i32" else floats
            lines.append(f"%k{n} = AND i32 {a} %mask")
            lines.append(f"%p{n} = INDEX {dtype} {version[dtype]} %k{n}")
            if kind < 0.85:
                lines.append(f"%l{n} = LOAD {dtype} %p{n}")
                values.append(f"%l{n}")
            else:
                lines.append(f"%s{n} = STORE void %p{n} {rng.choice(values[-50:])}")
                lines.append(f"%v{n} = AFTER {dtype}[64] {version[dtype]} %s{n}")
                version[dtype] = f"%v{n}"
    lines.append(f"%out = SINK void {ints[-1]} {floats[-1]} {version['i32']} {version['f32']}")
    return "\n".join(lines) + "\n"


def timed(fn, *args, repeat: int = 1):
    """(result, wall seconds per call)."""
    start = time.perf_counter()
    for _ in range(repeat):
        result = fn(*args)
    return result, (time.perf_counter() - start) / repeat


def cpu_timed(fn, *args, repeat: int = 1) -> float:
    """CPU seconds per call, of this process and of the children it waited for: on a loaded
    machine wall time mostly measures the other processes."""

    def cpu() -> float:
        me, children = (
            resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime

    start = cpu()
    for _ in range(repeat):
        fn(*args)
    return (cpu() - start) / repeat


def compiler_cpu() -> float:
    """CPU seconds used so far by finished child processes (the compiler runs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scale(statements: int) -> None:
    program = parse(program_text(statements), "bench.uir")
    verify(program)
    sink = inline_calls(program.sink)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["UIR_CACHE_DIR"] = cache
        source, render_s = timed(render_c, sink)
        cpu = compiler_cpu()
        library, cold_s = timed(compile_shared, [source])
        cold_cpu = compiler_cpu() - cpu
        _, cached_s = timed(compile_shared, [source])
        lower = {}
        for level in ("-O1", "-O0"):
            flags = tuple(level if f == "-O2" else f for f in FLAGS)
            _, lower[level] = timed(compile_shared, [source], flags)
        compiled = CompiledProgram(library, layout(sink), sink)
        interp_out, interp_s = timed(evaluate, sink, repeat=3)
        c_out, c_s = timed(compiled.run, repeat=100)
    same = all(a.tobytes() == b.tobytes() for a, b in zip(interp_out, c_out, strict=True))
    print(f"== 2. a program of {statements} statements ==")
    print(f"program: {statements} statements, {len(source) / 1024:.0f} KiB of C")
    print(f"render:              {render_s * 1e3:9.1f} ms")
    print(f"compile, cold:       {cold_s * 1e3:9.1f} ms  (cc -O2; {cold_cpu * 1e3:.0f} ms of CPU)")
    print(f"compile, cached:     {cached_s * 1e3:9.3f} ms  (sha256 of the source, file lookup)")
    for level, seconds in lower.items():
        print(f"compile, cold, {level}:  {seconds * 1e3:9.1f} ms  (for comparison)")
    print(f"render + cold:       {(render_s + cold_s) * 1e3:9.1f} ms")
    print(f"render + cached:     {(render_s + cached_s) * 1e3:9.1f} ms")
    print(f"run, interpreter:    {interp_s * 1e3:9.1f} ms")
    print(f"run, C (+ fork):     {c_s * 1e3:9.3f} ms  ({interp_s / c_s:,.0f}x faster)")
    print(f"outputs identical:   {same}")


def elementwise_text(n: int) -> str:
    """c[i] = a[i] * b[i] + a[i] for each of n f32 elements, one statement group an element."""
    lines = ["%a = BUFFER f32[N] 0", "%b = BUFFER f32[N] 1", "%c = BUFFER f32[N] 2"]
    version = "%c"
    for i in range(n):
        lines += [
            f"%i{i} = CONST i32 {i}",
            f"%pa{i} = INDEX f32 %a %i{i}",
            f"%la{i} = LOAD f32 %pa{i}",
            f"%pb{i} = INDEX f32 %b %i{i}",
            f"%lb{i} = LOAD f32 %pb{i}",
            f"%m{i} = MUL f32 %la{i} %lb{i}",
            f"%s{i} = ADD f32 %m{i} %la{i}",
            f"%pc{i} = INDEX f32 {version} %i{i}",
            f"%st{i} = STORE void %pc{i} %s{i}",
            f"%c{i} = AFTER f32[N] {version} %st{i}",
        ]
        version = f"%c{i}"
    lines.append(f"%out = SINK void {version}")
    return "\n".join(lines).replace("[N]", f"[{n}]") + "\n"


def sse_counts(source: str, work: Path) -> tuple[int, int]:
    """(packed, scalar) single-precision SSE/AVX instructions gcc emits for `source`."""
    command = compiler()
    assert command is not None, "no C compiler"
    c_file, asm = work / "p.c", work / "p.s"
    c_file.write_text(source)
    flags = [f for f in FLAGS if f not in ("-shared", "-fPIC")]
    run_compiler([*command, *flags, "-S", str(c_file), "-o", str(asm)])
    mnemonics = re.findall(r"^\s+(v?[a-z]+)\s", asm.read_text(), re.M)
    packed = sum(1 for m in mnemonics if m.endswith("ps"))
    scalar = sum(1 for m in mnemonics if m.endswith("ss"))
    return packed, scalar


def restrict(n: int = 1024, calls: int = 20_000) -> None:
    program = parse(elementwise_text(n), "restrict.uir")
    verify(program)
    sink = inline_calls(program.sink)
    with_restrict = render_c(scheduled(sink))
    without = with_restrict.replace(" *restrict ", " *")
    assert without != with_restrict
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    print(f"== 3. restrict: c[i] = a[i] * b[i] + a[i] on {n} f32 elements, one call ==")
    seconds = {}
    with tempfile.TemporaryDirectory() as work:
        for name, source in (("without restrict", without), ("with restrict", with_restrict)):
            packed, scalar = sse_counts(source, Path(work))
            entry = ctypes.CDLL(str(compile_shared([source]))).uir_program
            c = np.zeros(n, dtype=np.float32)
            args = [x.ctypes.data_as(ctypes.c_void_p) for x in (a, b, c)]
            entry(*args)
            assert np.array_equal(c, a * b + a)
            seconds[name] = cpu_timed(entry, *args, repeat=calls)
            print(
                f"{name + ':':18} {packed:5} packed, {scalar:5} scalar instructions; "
                f"{seconds[name] * 1e6:8.3f} us of CPU a call (ctypes included)"
            )
    print(f"speedup:            {seconds['without restrict'] / seconds['with restrict']:.2f}x")


def sink_text(n: int) -> str:
    """n SINK sources, each its own value: %v + k for a loaded %v."""
    lines = ["%b = BUFFER i32[4] 0", "%z = CONST i32 0", "%p = INDEX i32 %b %z", "%v = LOAD i32 %p"]
    for i in range(n):
        lines += [f"%k{i} = CONST i32 {i}", f"%a{i} = ADD i32 %v %k{i}"]
    lines.append("%o = SINK void " + " ".join(f"%a{i}" for i in range(n)))
    return "\n".join(lines) + "\n"


def sink_scaling(sizes: tuple[int, ...] = (8_000, 16_000)) -> None:
    print("== 4. rendering many SINK sources ==")
    for n in sizes:
        program = parse(sink_text(n), "sinks.uir")
        verify(program)
        _, seconds = timed(render_c, inline_calls(program.sink))
        print(f"render, {n:6} SINK sources: {seconds:8.3f} s")


def isolation(runs: int = 200) -> None:
    print("== 1. running in a forked child (crash isolation) ==")
    program = parse(
        "%b = BUFFER i32[64] 0\n%z = CONST i32 0\n%p = INDEX i32 %b %z\n%v = LOAD i32 %p\n"
        "%w = ADD i32 %v %v\n%o = SINK void %w\n",
        "small.uir",
    )
    verify(program)
    sink = inline_calls(program.sink)
    compiled = CompiledProgram(compile_shared([render_c(scheduled(sink))]), layout(sink), sink)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    entry = ctypes.CDLL(str(compile_shared([render_c(scheduled(sink))]))).uir_program
    buffer, out = np.zeros(64, dtype=np.int32), np.zeros(1, dtype=np.int32)
    args = [x.ctypes.data_as(ctypes.c_void_p) for x in (buffer, out)]
    direct_s = cpu_timed(entry, *args, repeat=runs)
    fork_s = cpu_timed(run_isolated, lambda: None, repeat=runs)
    run_s = cpu_timed(compiled.run, repeat=runs)
    print(f"(this process: {rss:.0f} MiB resident; a fork costs more the bigger it is)")
    print(f"ctypes call in process:   {direct_s * 1e3:7.4f} ms of CPU a run (no isolation)")
    print(f"fork + wait alone:        {fork_s * 1e3:7.3f} ms of CPU a run")
    print(
        f"run() of a small program: {run_s * 1e3:7.3f} ms of CPU a run (buffers, fork, read back)"
    )


def main() -> None:
    statements = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as cache:
        os.environ["UIR_CACHE_DIR"] = cache
        isolation()  # first, while this process is as small as `uir run`'s
    scale(statements)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["UIR_CACHE_DIR"] = cache
        restrict()
        sink_scaling()


if __name__ == "__main__":
    main()
