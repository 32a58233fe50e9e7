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


# Each shape of issue 24 item 4 -> how to write it, and its size at scale 1.
SHAPES = {
    "sequential loops": (sequential_loops_text, 10_000),
    "SINK operands": (wide_sink_text, 200_000),
    "STACK elements": (wide_stack_text, 100_000),
    "nested CALLs": (nested_calls_text, 5_000),
    "constants": (constants_text, 30_000),
}


def _cpu(fn, *args):
    start = time.process_time()
    result = fn(*args)
    return result, time.process_time() - start


def shapes(scale: float) -> None:
    """check (parse and verify), opt (the default passes) and render (lowered for C, then C)
    of each shape, in CPU seconds and microseconds a statement, and check's allocation peak."""
    import tracemalloc

    registry = load_registry()
    c = registry.backend("c")
    print(f"{'shape':<17} {'n':>8} {'units':>8}  check (us/unit, MB peak)   opt      render")
    for name, (make, full) in SHAPES.items():
        n = max(2, int(full * scale))
        text = make(n)
        units = max(text.count("\n"), n)  # statements, or operands of one statement
        program, check = _cpu(parse, text, "bench.uir")
        _, verifying = _cpu(verify, program)
        check += verifying
        tracemalloc.start()  # a second check, for its peak: tracemalloc slows what it traces
        verify(parse(text, "bench.uir"))
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        _, opt = _cpu(run_passes, program.sink, registry.pipeline())
        ready, lowering = _cpu(
            prepare, program.sink, "kernels", registry.pipeline((), (), "kernels")
        )
        _, rendering = _cpu(c.render, ready)
        render = lowering + rendering
        per = 1e6 / units
        print(
            f"{name:<17} {n:>8} {units:>8}  {check:6.2f} s ({check * per:5.1f}, "
            f"{peak:6.1f})   {opt:6.2f} s {render:6.2f} s ({render * per:5.1f} us/unit)"
        )
    print("(units: statements, or a SINK's or STACK's operands; CPU seconds, the machine shared)")


def main() -> None:
    if "--shapes" in sys.argv:
        at = sys.argv.index("--shapes")
        scale = float(sys.argv[at + 1]) if len(sys.argv) > at + 1 else 1.0
        shapes(scale)
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
