"""How long a 50,000-statement program takes to parse, verify and interpret, and how `uir check`,
the optimizing passes and the C render scale on the shapes issue 24 found superlinear.

Run: uv run python benchmarks/core_scale_bench.py [STATEMENTS] [--shapes SCALE]
Prints the figures; nothing here asserts a time. `--shapes 1` runs the issue's sizes (10,000
sequential loops, a SINK of 200,000 operands, a STACK of 100,000, 5,000 nested CALLs, 30,000
constants), `--shapes 0.25` a quarter of each: comparing the two shows how each cost grows.

Sequential loops over one buffer (uir.testing.chains.sequential_loops_text), `uir check`:
before issue 24, 12.4 s and 740 MB (peak RSS) at 4,000 loops and quadratic in both (every UOp
after n loops held the n ranges their ENDs closed); after, 6.6 s and 74 MB at 4,000 loops
(1 s of it start-up), and 4 times the loops cost 4.3 times the time and 3.8 times the memory.

Verification, CPU seconds on the shared 2-core machine: 1.58 before the graph was sorted once
and messages built only on failure, 1.12 after (about half of it is inline_calls, which rebuilds
the graph even without a CALL).
"""

from __future__ import annotations

import random
import sys
import time

from uir.core.interpret import evaluate
from uir.core.parse import parse
from uir.core.plugins import load_registry, prepare, run_passes
from uir.core.printer import print_program
from uir.core.verify import verify
from uir.testing.chains import (
    constants_text,
    nested_calls_text,
    sequential_loops_text,
    wide_sink_text,
    wide_stack_text,
)

OPS = ["ADD", "SUB", "MUL", "MAX", "MIN", "XOR", "IDIV", "MOD"]


def program_text(statements: int, seed: int = 0) -> str:
    """A chain of i32 and f32 arithmetic with CALLs, STACK and proven INDEXes mixed in."""
    rng = random.Random(seed)
    lines = [
        "%p0 = PARAM i32 0",
        "%p1 = PARAM i32 1",
        "%body = MUL i32 %p0 %p1",
        "%three = CONST i32 3",
        "%i0 = CONST i32 1",
        "%f0 = CONST f32 0.5",
    ]
    ints, floats = ["%i0"], ["%f0"]
    n = 0
    while len(lines) < statements - 1:
        n += 1
        kind = rng.random()
        a, b = rng.choice(ints[-50:]), rng.choice(ints[-50:])
        if kind < 0.6:
            lines.append(f"%i{n} = {rng.choice(OPS)} i32 {a} {b}")
            ints.append(f"%i{n}")
        elif kind < 0.7:
            lines.append(f"%i{n} = CALL i32 %body {a} {b}")
            ints.append(f"%i{n}")
        elif kind < 0.8:
            lines.append(f"%k{n} = AND i32 {a} %three")
            lines.append(f"%v{n} = STACK i32[4] {a} {b} {a} {b}")
            lines.append(f"%i{n} = INDEX i32 %v{n} %k{n}")
            ints.append(f"%i{n}")
        else:
            x, y = rng.choice(floats[-50:]), rng.choice(floats[-50:])
            op = rng.choice(["ADD", "MUL", "SUB", "FDIV", "MAX"])
            lines.append(f"%f{n} = {op} f32 {x} {y}")
            floats.append(f"%f{n}")
    lines.append(f"%out = SINK void {ints[-1]} {floats[-1]}")
    return "\n".join(lines) + "\n"


def timed(label: str, fn, *args):
    # CPU time as well as wall time: on a shared machine the wall time mostly measures the others.
    start, start_cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    print(f"{label:<12} {wall:8.3f} s  {cpu:8.3f} s CPU")
    return result


def scalar_statements_text(statements: int) -> str:
    """`program_text`: scalar arithmetic with CALLs, STACKs and INDEXes (the issue's "100k scalar
    statements")."""
    return program_text(statements)


# Each shape of issue 24 item 4 -> how to write it, and its size at scale 1.
SHAPES = {
    "sequential loops": (sequential_loops_text, 10_000),
    "SINK operands": (wide_sink_text, 200_000),
    "STACK elements": (wide_stack_text, 100_000),
    "nested CALLs": (nested_calls_text, 5_000),
    "constants": (constants_text, 30_000),
    "scalar statements": (scalar_statements_text, 100_000),
}


def _cpu(fn, *args):
    start = time.process_time()
    result = fn(*args)
    return result, time.process_time() - start


def _peak(fn, *args) -> float:
    """The peak of Python's allocations while `fn` runs, in MB (tracemalloc slows what it
    traces, so this is a run of its own)."""
    import tracemalloc

    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def measure(make, n: int, registry, memory: bool = True) -> dict[str, float]:
    """check (parse and verify), opt (the default passes) and render (lowered for C, then C) of
    `make(n)` in CPU seconds, with the units (statements, or one statement's operands) and,
    when `memory`, the allocation peaks of check and of opt plus render."""
    c = registry.backend("c")
    text = make(n)
    program, check = _cpu(parse, text, "bench.uir")
    _, verifying = _cpu(verify, program)

    def optimize(sink):
        return run_passes(sink, registry.pipeline())

    def render(sink):
        return c.render(prepare(sink, "kernels", registry.pipeline((), (), "kernels")))

    _, opt = _cpu(optimize, program.sink)
    _, rendering = _cpu(render, program.sink)
    found = {
        "units": max(text.count("\n"), n),
        "check": check + verifying,
        "opt": opt,
        "render": rendering,
    }
    if memory:
        found["check MB"] = _peak(lambda: verify(parse(text, "bench.uir")))
        found["opt+render MB"] = _peak(lambda: (optimize(program.sink), render(program.sink)))
    return found


def shapes(scale: float, memory: bool = True) -> None:
    """Each shape at `scale` and at twice that: microseconds a unit for check, opt and render,
    the allocation peaks, and how each grows when the program doubles (2.0 is linear, 4.0
    quadratic)."""
    registry = load_registry()
    print(
        f"{'shape':<18} {'n':>7} {'units':>7}  {'check':>6} {'opt':>6} {'render':>6} us/unit"
        f"  {'check':>6} {'opt+rdr':>7} MB"
    )
    for name, (make, full) in SHAPES.items():
        n = max(2, int(full * scale))
        small, large = measure(make, n, registry, memory), measure(make, 2 * n, registry, memory)
        for size, m in ((n, small), (2 * n, large)):
            per = 1e6 / m["units"]
            mb = f"  {m['check MB']:6.1f} {m['opt+render MB']:7.1f}" if memory else ""
            print(
                f"{name:<18} {size:>7} {m['units']:>7}  {m['check'] * per:6.1f} "
                f"{m['opt'] * per:6.1f} {m['render'] * per:6.1f}{mb}"
            )
        keys = ["check", "opt", "render"] + (["check MB", "opt+render MB"] if memory else [])
        growth = "  ".join(f"{k} x{large[k] / max(small[k], 1e-9):.2f}" for k in keys)
        print(f"{'':<18} growth at 2n: {growth}")
    print("(units: statements, or a SINK's or STACK's operands; CPU time, the machine shared)")


def run_c(statements: int) -> None:
    """Where `uir run --backend c` spends its time on a program of `statements` statements:
    check, lowering and rendering, the C compiler (uncached, at -O3 and at -O1), loading and
    running."""
    import subprocess
    import tempfile

    from uir.backend.c.toolchain import build_flags, compiler

    registry = load_registry()
    c = registry.backend("c")
    text = sequential_loops_text(statements // 8)
    program, check = _cpu(parse, text, "bench.uir")
    _, verifying = _cpu(verify, program)
    ready, lowering = _cpu(prepare, program.sink, "kernels", registry.pipeline((), (), "kernels"))
    source, rendering = _cpu(c.render, ready)
    units = text.count("\n")
    print(f"sequential loops, {units} statements, {source.count(chr(10))} lines of C")
    for label, seconds in (
        ("check", check + verifying),
        ("lower", lowering),
        ("render", rendering),
    ):
        print(f"  {label:<10} {seconds:7.2f} s CPU  {seconds * 1e6 / units:7.1f} us/statement")
    command = compiler()
    if command is None:
        print("  (no C compiler)")
        return
    flags = build_flags(command)
    with tempfile.TemporaryDirectory() as work:
        file = f"{work}/p.c"
        with open(file, "w") as out:
            out.write(source)
        for level in ("-O3", "-O1", "-O0"):
            argv = [*command, *(level if f == "-O3" else f for f in flags), file]
            start = time.perf_counter()
            subprocess.run([*argv, "-o", f"{work}/p.so", "-lm"], check=True)
            wall = time.perf_counter() - start
            print(f"  cc {level:<6} {wall:7.2f} s wall  {wall * 1e6 / units:7.1f} us/statement")


def main() -> None:
    if "--shapes" in sys.argv:
        at = sys.argv.index("--shapes")
        scale = float(sys.argv[at + 1]) if len(sys.argv) > at + 1 else 1.0
        shapes(scale, memory="--no-memory" not in sys.argv)
        return
    if "--run-c" in sys.argv:
        at = sys.argv.index("--run-c")
        run_c(int(sys.argv[at + 1]) if len(sys.argv) > at + 1 else 8_000)
        return
    statements = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    text = program_text(statements)
    print(f"program: {text.count(chr(10))} statements, {len(text) / 1e6:.2f} MB")
    program = timed("parse", parse, text, "bench.uir")
    timed("verify", verify, program)
    outputs = timed("interpret", evaluate, program.sink)
    timed("print", print_program, program.sink)
    print("outputs:", [o.item() for o in outputs])


if __name__ == "__main__":
    main()
