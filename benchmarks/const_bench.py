"""How long shaped CONSTs take to build, parse, verify, print and turn into arrays.

Run: uv run python benchmarks/const_bench.py [ELEMENTS]
Prints the figures (wall and CPU seconds); nothing here asserts a time.
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
