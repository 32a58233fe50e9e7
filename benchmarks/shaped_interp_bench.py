"""The reference interpreter on week-4 shaped programs; prints figures, asserts nothing.

1. `o = a*b + c` on N f32 through whole-buffer LOADs and a STORE, against numpy's `a*b + c`.
2. The in-order f32 sum of N elements (REDUCE ADD), against numpy's pairwise `np.sum`, which is
   faster and not the same order (the printed values show when they differ).
3. The fold rate of each dtype's ADD REDUCE: f16/f32/f64 fold through `ufunc.accumulate`, bf16
   steps through the semantics table one element at a time.

Run: uv run python benchmarks/shaped_interp_bench.py [N]   (default N = 2**24, 16.8 million)
"""

from __future__ import annotations

import sys
import time

import numpy as np

from uir.core.dtypes import DTYPES
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.parse import parse
from uir.core.semantics import reduce
from uir.core.verify import verify
from uir.testing.shaped import A_TIMES_B_PLUS_C, SUM


def seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _program(template: str, n: int):
    program = parse(template.format(n=n))
    verify(program)
    return program.sink


def multiply_add(n: int) -> None:
    fma, total = _program(A_TIMES_B_PLUS_C, n), _program(SUM, n)
    rng = np.random.default_rng(0)
    inputs = {slot: rng.standard_normal(n).astype(np.float32) for slot in range(3)}
    outputs: list = []
    interp = seconds(lambda: outputs.extend(evaluate(fma, inputs)))
    interp += seconds(lambda: outputs.extend(evaluate(total, inputs)))
    a, b, c = inputs[0], inputs[1], inputs[2]
    fused = seconds(lambda: a * b + c)
    pairwise = seconds(lambda: np.sum(a))
    same = np.array_equal(outputs[0], a * b + c)
    print(f"{n} f32: interpreter a*b+c and sum {interp:.2f} s (bit-equal to numpy: {same})")
    print(f"  numpy a*b+c {fused:.3f} s, np.sum {pairwise:.3f} s")
    print(f"  in-order sum {float(outputs[1]):.9g}, np.sum (pairwise) {float(np.sum(a)):.9g}")


def fold_rates(n: int) -> None:
    rng = np.random.default_rng(1)
    for name in ("f16", "bf16", "f32", "f64"):
        dtype = DTYPES[name]
        count = n if name != "bf16" else min(n, 100_000)  # bf16 steps one element at a time
        x = rng.standard_normal(count).astype(dtype.storage)
        took = seconds(lambda x=x, dtype=dtype: reduce(Op.ADD, dtype, x, (0,)))
        print(f"  REDUCE ADD {name}: {count / took / 1e6:.1f} M elements/s ({count} elements)")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2**24
    multiply_add(n)
    fold_rates(n)


if __name__ == "__main__":
    main()
