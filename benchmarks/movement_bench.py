"""The index arithmetic of movement ops, before and after the symbolic simplifier.

Rangeify turns each movement op into an index map (uir.md section 9, spec/rangeify.md): RESHAPE
divides and takes remainders, PAD clamps and gates, FLIP subtracts. Chained, the maps leave
expressions the RANGE bounds make much simpler. For each program this prints the UOps of the index
expressions (the distinct ALU ops computing what every INDEX names; gates included) and how many
of them are IDIV or MOD, after the index maps alone (uir.rewrite.rangeify.rangeify) and after the
simplifier, which the rangeify pass and the C backend run next.

Run: uv run python benchmarks/movement_bench.py
"""

from __future__ import annotations

from uir.core.dtypes import f32
from uir.core.ops import Op
from uir.core.uop import UOp
from uir.rewrite.passes import simplify
from uir.rewrite.rangeify import rangeify
from uir.testing.movement import (
    conv2d,
    flip,
    index_ops,
    load,
    matmul,
    pad,
    permute,
    program,
    reshape,
)


def programs() -> dict[str, UOp]:
    a, b = load(0, f32, (64, 32)), load(1, f32, (32, 48))
    image, weights = load(0, f32, (16, 28, 28)), load(1, f32, (32, 16, 3, 3))
    x, y, z = load(0, f32, (6, 4)), load(0, f32, (4, 6)), load(0, f32, (2, 12))
    return {
        "matmul 64x32 @ 32x48": matmul(a, b),
        "conv2d 16->32 ch, 28x28, 3x3, pad 1": conv2d(image, weights, padding=1),
        "transpose of a reshape [4,6] -> [2,3,4] -> (2,0,1)": permute(
            reshape(y, (2, 3, 4)), (2, 0, 1)
        ),
        "flip of a reshape [2,12] -> [2,3,4] flip (0,2) -> [24]": reshape(
            flip(reshape(z, (2, 3, 4)), (0, 2)), (24,)
        ),
        "pad of a flip [6,4] flip (0,1), pad ((1,2),(0,3))": pad(flip(x, (0, 1)), ((1, 2), (0, 3))),
    }


def counts(sink: UOp) -> tuple[int, int]:
    ops = index_ops(sink)
    return len(ops), sum(u.op in (Op.IDIV, Op.MOD) for u in ops)


def main() -> None:
    print(f"{'program':52} {'index UOps':>17} {'div/mod':>9}")
    print(f"{'':52} {'before':>8} {'after':>8} {'before':>4} {'after':>4}")
    for name, value in programs().items():
        lowered = rangeify(program(value))
        (ops0, div0), (ops1, div1) = counts(lowered), counts(simplify(lowered))
        print(f"{name:52} {ops0:8} {ops1:8} {div0:6} {div1:4}")


if __name__ == "__main__":
    main()
