"""The C backend at scale: render and compile latency of a 10,000-statement program (cold, and
from the compile cache), and its run time on C against the interpreter.

Run: uv run python benchmarks/c_backend_bench.py [STATEMENTS]
Prints the figures; nothing here asserts a time. The compile cache goes to a temporary directory,
so "cold" really compiles.
"""

from __future__ import annotations

import os
import random
import resource
import sys
import tempfile
import time

from uir.backend.c.abi import layout
from uir.backend.c.render import render_c
from uir.backend.c.runtime import CompiledProgram
from uir.backend.c.toolchain import FLAGS, compile_shared
from uir.core.calls import inline_calls
from uir.core.interpret import evaluate
from uir.core.parse import parse
from uir.core.verify import verify

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


def compiler_cpu() -> float:
    """CPU seconds used so far by finished child processes (the compiler runs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    statements = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
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
    print(f"program: {statements} statements, {len(source) / 1024:.0f} KiB of C")
    print(f"render:              {render_s * 1e3:9.1f} ms")
    print(f"compile, cold:       {cold_s * 1e3:9.1f} ms  (cc -O2; {cold_cpu * 1e3:.0f} ms of CPU)")
    print(f"compile, cached:     {cached_s * 1e3:9.3f} ms  (sha256 of the source, file lookup)")
    for level, seconds in lower.items():
        print(f"compile, cold, {level}:  {seconds * 1e3:9.1f} ms  (for comparison)")
    print(f"render + cold:       {(render_s + cold_s) * 1e3:9.1f} ms")
    print(f"render + cached:     {(render_s + cached_s) * 1e3:9.1f} ms")
    print(f"run, interpreter:    {interp_s * 1e3:9.1f} ms")
    print(f"run, C (+ ctypes):   {c_s * 1e3:9.3f} ms  ({interp_s / c_s:,.0f}x faster)")
    print(f"outputs identical:   {same}")


if __name__ == "__main__":
    main()
