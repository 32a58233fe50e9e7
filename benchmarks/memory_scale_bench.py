"""How long a 50,000-statement memory program takes to parse, verify, schedule and interpret.

The program keeps four buffers and chains stores to them, with gated loads indexed by loaded
values, loads of older versions and stores through windows: the shape that makes the full-order
analysis and the gated bounds work hardest. A walk down the chain of versions per statement shows
up here as minutes instead of seconds.

Run: uv run python benchmarks/memory_scale_bench.py [STATEMENTS]
Prints the figures; nothing here asserts a time.

Verification, CPU seconds on the shared 2-core machine: 1.06 before the graph was sorted once
and messages built only on failure, 0.70 after.
"""

from __future__ import annotations

import random
import sys

from core_scale_bench import timed  # the same timing line; run from the repo root as documented

from uir.core.interpret import evaluate
from uir.core.parse import parse
from uir.core.schedule import schedule
from uir.core.verify import verify

SIZE = 16
BUFFERS = 4


def program_text(statements: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    lines = ["%z = CONST i32 0", f"%n = CONST i32 {SIZE}", f"%mask = CONST i32 {SIZE - 1}"]
    current = []
    for slot in range(BUFFERS):
        lines.append(f"%b{slot}_0 = BUFFER i32[{SIZE}] {slot}")
        current.append(f"%b{slot}_0")
    values = ["%z"]
    k = 0
    while len(lines) < statements - 1:
        k += 1
        slot = rng.randrange(BUFFERS)
        version = current[slot]
        choice = rng.random()
        if choice < 0.35:  # a gated load indexed by a loaded value
            i = rng.choice(values[-20:])
            lines += [
                f"%lo{k} = CMPLE bool %z {i}",
                f"%hi{k} = CMPLT bool {i} %n",
                f"%g{k} = AND bool %lo{k} %hi{k}",
                f"%p{k} = INDEX i32 {version} {i} %g{k}",
                f"%v{k} = LOAD i32 %p{k}",
            ]
            values.append(f"%v{k}")
        elif choice < 0.5:  # arithmetic
            a, b = rng.choice(values[-20:]), rng.choice(values[-20:])
            lines.append(f"%v{k} = ADD i32 {a} {b}")
            values.append(f"%v{k}")
        else:  # a store through a window, masked index, then the next version
            a = rng.choice(values[-20:])
            lines += [
                f"%w{k} = SHRINK i32[{SIZE // 2}] {version} (({SIZE // 2}, {SIZE}))",
                f"%m{k} = AND i32 {a} %mask",
                f"%q{k} = IDIV i32 %m{k} %n",  # in [0, 0]: keeps the index inside the window
                f"%p{k} = INDEX i32 %w{k} %q{k}",
                f"%s{k} = STORE void %p{k} {a}",
                f"%b{slot}_{k} = AFTER i32[{SIZE}] {version} %s{k}",
            ]
            current[slot] = f"%b{slot}_{k}"
    lines.append(f"%out = SINK void {' '.join(current)}")
    return "\n".join(lines) + "\n"


def main() -> None:
    statements = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    text = program_text(statements)
    print(f"program: {text.count(chr(10))} statements, {len(text) / 1e6:.2f} MB")
    program = timed("parse", parse, text, "bench.uir")
    timed("verify", verify, program)
    timed("schedule", schedule, program.sink)
    timed("interpret", evaluate, program.sink)


if __name__ == "__main__":
    main()
