"""How long shaped CONSTs take to build, parse, verify, print and turn into arrays.

Run: uv run python benchmarks/const_bench.py [ELEMENTS]
Prints the figures (wall and CPU seconds); nothing here asserts a time.

Measured on the shared 2-core machine, CPU seconds before and after shaped CONSTs became
Elements and literals were rounded without Fractions:
  f32[200000] distinct: parse 3.09 -> 1.32, verify 0.32 -> 0.00, print 10.1 -> 2.95
  i32[200000] distinct: parse 0.40 -> 0.51, verify 0.37 -> 0.01, print 0.07 -> 0.03
  f32[1024,1024] of 0.0: const_like 0.53 -> 0.00, print 3.87 -> 0.29, parse 10.9 -> 0.89,
  verify 1.28 -> 0.00, interpret 0.55 -> 0.00
"""

from __future__ import annotations

import random
import sys

from core_scale_bench import timed  # the same timing line; run from the repo root as documented

from uir.core.dtypes import VOID, Type, f32, i32
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.parse import parse
from uir.core.printer import print_program
from uir.core.uop import UOp
from uir.core.verify import verify


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    rng = random.Random(0)
    floats = ", ".join(f"{rng.uniform(-1e3, 1e3):.6g}" for _ in range(count))
    ints = ", ".join(str(rng.randrange(-(2**31), 2**31)) for _ in range(count))
    for dtype, items in ((f32, floats), (i32, ints)):
        text = f"%a = CONST {dtype.name}[{count}] ({items})\n%o = SINK void %a\n"
        print(f"CONST {dtype.name}[{count}], distinct values, {len(text) / 1e6:.2f} MB of text")
        program = timed("  parse", parse, text)
        timed("  verify", verify, program)
        timed("  print", print_program, program.sink)
        timed("  interpret", evaluate, program.sink)

    shape = (1024, 1024)
    print(f"CONST f32[{shape[0]},{shape[1]}] of one value")
    one = UOp(Op.CONST, Type(f32, shape), (), (1.0,) * (shape[0] * shape[1]))
    zeros = timed("  const_like", one.const_like, 0.0)
    program_text = timed("  print", print_program, UOp(Op.SINK, VOID, (zeros,)))
    program = timed("  parse", parse, program_text)
    assert program.sink.src[0] is zeros
    timed("  verify", verify, program)
    timed("  interpret", evaluate, program.sink)


if __name__ == "__main__":
    main()
