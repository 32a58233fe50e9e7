"""How long a 50,000-statement program takes to parse, verify and interpret.

Run: uv run python benchmarks/core_scale_bench.py [STATEMENTS]
Prints the figures; nothing here asserts a time.

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
from uir.core.printer import print_program
from uir.core.verify import verify

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


def main() -> None:
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
