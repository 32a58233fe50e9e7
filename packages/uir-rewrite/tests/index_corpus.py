"""A corpus of index expressions, written the way week-5 lowering produces them, each with the
number of ALU ops it should have after simplification, worked out by hand.

Every variable is a loop index: a RANGE over [0, n). A movement op's lowering computes a flat
index, splits it into coordinates with IDIV and MOD, and recombines coordinates with MUL and ADD;
a pad adds a mask of comparisons, a flip an `n-1 - i`. The hand count (`ops`) is what remains
when every div and mod the ranges make unnecessary is gone; the reasoning is in `why`.

Used by tests/test_index_corpus.py (each count reached, each result equal on the whole domain)
and benchmarks/rewrite_bench.py (ops removed, before and after issue 17).
"""

from __future__ import annotations

from dataclasses import dataclass

from uir.core.dtypes import I32
from uir.core.ops import Op
from uir.core.uop import UOp


def const(value: int) -> UOp:
    return UOp(Op.CONST, I32, (), value)


def loop(axis: int, n: int) -> UOp:
    """A loop index over [0, n)."""
    return UOp(Op.RANGE, I32, (const(n),), axis)


def lit(value: int | UOp) -> UOp:
    return value if isinstance(value, UOp) else const(value)


def _binary(op: Op):
    def build(a: int | UOp, b: int | UOp) -> UOp:
        return lit(a).alu(op, lit(b))

    return build


add, sub, mul, div, mod = (_binary(op) for op in (Op.ADD, Op.SUB, Op.MUL, Op.IDIV, Op.MOD))
lt, le = _binary(Op.CMPLT), _binary(Op.CMPLE)


def both(a: UOp, b: UOp) -> UOp:
    return a.alu(Op.AND, b)


def where(c: UOp, a, b) -> UOp:
    return c.alu(Op.WHERE, lit(a), lit(b))


def flat(coords: list[UOp], shape: list[int]) -> UOp:
    """The row-major flat index of `coords` in `shape`, as lowering writes it (Horner form)."""
    index = coords[0]
    for c, n in zip(coords[1:], shape[1:], strict=True):
        index = add(mul(index, n), c)
    return index


def unflat(index: UOp, shape: list[int]) -> list[UOp]:
    """The coordinates of a flat index in `shape`: (index / stride) % n per axis, the first
    without the % and the last without the /, as lowering writes them."""
    coords, stride = [], 1
    for axis in reversed(range(len(shape))):
        c = index if stride == 1 else div(index, stride)
        coords.append(c if axis == 0 else mod(c, shape[axis]))
        stride *= shape[axis]
    return coords[::-1]


def reshape(coords: list[UOp], new_shape: list[int], old_shape: list[int]) -> list[UOp]:
    """The coordinates in `old_shape` of the element at `coords` of its reshape to `new_shape`."""
    return unflat(flat(coords, new_shape), old_shape)


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    expr: UOp
    ops: int  # ALU ops after simplification, by hand
    why: str


i4, j6 = loop(0, 4), loop(1, 6)
i6, j4 = loop(0, 6), loop(1, 4)
idx24 = loop(0, 24)
idx6, idx8, idx12 = loop(0, 6), loop(0, 8), loop(0, 12)
m8, n8, k8 = loop(0, 8), loop(1, 8), loop(2, 8)
o10, w3 = loop(0, 10), loop(1, 3)
r8, s3 = loop(0, 8), loop(1, 3)
a6, b4 = loop(0, 6), loop(1, 4)
a100, b3, c3 = loop(0, 100), loop(1, 3), loop(2, 3)
x1000 = loop(0, 1000)

# reshape [6,4] -> [4,6], then permute to [6,4]: result (i, j) reads the [4,6] view at (j, i)
_rp = reshape([j4, i6], [4, 6], [6, 4])
# reshape [2,3,4] -> [6,4]: result (a, b)
_r3 = reshape([a6, b4], [6, 4], [2, 3, 4])
# permute [2,3,4] by (0,2,1) to [2,4,3], reshape to [8,3]: result (r, s) reads [2,3,4] at
# (c0, c2, c1) of its [2,4,3] coordinates
_pr = reshape([r8, s3], [8, 3], [2, 4, 3])

CASES = [
    # --- matmul C[8,8] = A[8,8] @ B[8,8], loops m, n, k ---
    Case("matmul", "A[m, k]", flat([m8, k8], [8, 8]), 2, "m*8 + k: one MUL, one ADD"),
    Case("matmul", "B[k, n]", flat([k8, n8], [8, 8]), 2, "k*8 + n"),
    Case(
        "matmul",
        "C over a flat loop: (idx/8)*8 + idx%8",
        flat(unflat(loop(0, 64), [8, 8]), [8, 8]),
        0,
        "the two coordinates of idx recombine to idx itself",
    ),
    Case(
        "matmul",
        "A[idx/8, k] over a flat output loop",
        flat([unflat(loop(0, 64), [8, 8])[0], k8], [8, 8]),
        3,
        "(idx/8)*8 + k: IDIV, MUL, ADD; nothing to remove",
    ),
    # --- reshapes and permutes ---
    Case(
        "reshape",
        "[6,4] -> [4,6] -> permute: source flat index",
        flat(_rp, [6, 4]),
        2,
        "((j*6+i)/4)*4 + (j*6+i)%4 is j*6 + i: MUL, ADD",
    ),
    Case(
        "reshape",
        "[6,4] -> [4,6] -> permute: row",
        _rp[0],
        3,
        "(j*6 + i)/4: MUL, ADD, IDIV (i < 6 reaches the next multiple of 4)",
    ),
    Case(
        "reshape",
        "[2,3,4] -> [6,4]: source flat index",
        flat(_r3, [2, 3, 4]),
        2,
        "a*4 + b: the coordinates (a/3, a%3, b) recombine",
    ),
    Case(
        "reshape",
        "[2,3,4] -> [6,4]: first coordinate",
        _r3[0],
        1,
        "(a*4 + b)/12 is a/3 since b < 4: one IDIV",
    ),
    Case(
        "reshape",
        "[2,3,4] -> [6,4]: middle coordinate",
        _r3[1],
        1,
        "((a*4 + b)/4) % 3 is a % 3",
    ),
    Case("reshape", "[2,3,4] -> [6,4]: last coordinate", _r3[2], 0, "(a*4 + b) % 4 is b"),
    Case(
        "reshape",
        "[2,3,4] -permute(0,2,1)-> [2,4,3] -> [8,3]: source flat index",
        flat([_pr[0], _pr[2], _pr[1]], [2, 3, 4]),
        6,
        "(r/4)*12 + s*4 + r%4: IDIV, MUL, MUL, MOD, ADD, ADD; no recombination spends fewer",
    ),
    Case(
        "reshape",
        "[4,6] -> [24] -> [6,4]: source flat index",
        flat(reshape([i6, j4], [6, 4], [4, 6]), [4, 6]),
        2,
        "i*4 + j: the [4,6] coordinates recombine",
    ),
    Case(
        "reshape",
        "[2,3] -permute-> [3,2] -> [6]: source flat index",
        flat(reshape([idx6], [6], [3, 2])[::-1], [2, 3]),
        4,
        "(idx%2)*3 + idx/2: MOD, MUL, IDIV, ADD; nothing to remove",
    ),
    # --- convolutions: 1-D, width 10, kernel 3, stride 2, and a window split of a flat loop ---
    Case("conv", "input index o*2 + w", add(mul(o10, 2), w3), 2, "MUL, ADD"),
    Case(
        "conv",
        "pool window over a flat loop: (idx/2)*2 + idx%2",
        add(mul(div(idx8, 2), 2), mod(idx8, 2)),
        0,
        "idx",
    ),
    Case(
        "conv",
        "im2col column (r*3 + s)/3 and (r*3 + s)%3",
        add(mul(div(add(mul(r8, 3), s3), 3), 100), mod(add(mul(r8, 3), s3), 3)),
        2,
        "(r*3+s)/3 is r and (r*3+s)%3 is s (s < 3): r*100 + s is MUL, ADD",
    ),
    Case(
        "conv",
        "padded input index mask: 0 <= o + w - 1 < 10",
        both(le(0, sub(add(o10, w3), 1)), lt(sub(add(o10, w3), 1), 10)),
        4,
        "0 <= o+w-1 is 0 < o+w, o+w-1 < 10 is o+w < 11: ADD, CMPLT, CMPLT, AND",
    ),
    # --- pads and flips ---
    Case(
        "pad",
        "pad [10] by (1,1): input index where valid, clamped",
        where(both(le(1, o10), lt(o10, 11)), sub(o10, 1), 0),
        2,
        "o < 11 is true (o < 10), 1 <= o is 0 < o, and where(0 < o, o - 1, 0) is max(o - 1, 0):"
        " SUB, MAX",
    ),
    Case(
        "pad",
        "pad [10] by (0,2): mask o < 10 over o < 12",
        lt(loop(0, 12), 10),
        1,
        "o < 10: not decided, one CMPLT",
    ),
    Case("flip", "flip of a flip: 9 - (9 - o)", sub(9, sub(9, o10)), 0, "o"),
    Case(
        "flip",
        "flip axis 1 of [2,3] over a flat loop",
        add(mul(div(idx6, 3), 3), sub(2, mod(idx6, 3))),
        5,
        "(idx/3)*3 + (2 - idx%3) stays: idx - (idx%3)*2 + 2 spends 4 ops but its interval is"
        " [-2, 7] where the original's is [0, 5], and no rewrite may cost the verifier a proof",
    ),
    # --- hand-derived, the shapes of each family of issue 17 ---
    Case("divmod", "(a*4)/8", div(mul(a100, 4), 8), 1, "a/2"),
    Case("divmod", "(a*4 + 3)/16", div(add(mul(a100, 4), 3), 16), 1, "a/4: 3 never reaches 4"),
    Case("divmod", "((a/2) + 1)/2", div(add(div(a100, 2), 1), 2), 2, "(a + 2)/4: ADD, IDIV"),
    Case(
        "divmod",
        "(a*6 + b*3 + c)/3",
        div(add(add(mul(a100, 6), mul(b3, 3)), c3), 3),
        2,
        "a*2 + b: MUL, ADD (c < 3)",
    ),
    Case("divmod", "(a*2 + 1) % 2", mod(add(mul(a100, 2), 1), 2), 0, "1"),
    Case("divmod", "(b + 8) % 4", mod(add(b3, 8), 4), 0, "b: b < 3 < 4"),
    Case("divmod", "(a % 4) / 4", div(mod(a100, 4), 4), 0, "0"),
    Case("divmod", "(x/4)*4 + x%4, any x", add(mul(div(x1000, 4), 4), mod(x1000, 4)), 0, "x"),
    Case("divmod", "x - (x/4)*4", sub(x1000, mul(div(x1000, 4), 4)), 1, "x % 4"),
    Case(
        "divmod",
        "((x/4)%3)*4 + x%4",
        add(mul(mod(div(x1000, 4), 3), 4), mod(x1000, 4)),
        1,
        "x % 12",
    ),
    Case("compare", "a*4 < 13", lt(mul(a100, 4), 13), 1, "a < 4"),
    Case("compare", "a + 2 < 3", lt(add(a100, 2), 3), 1, "a < 1"),
    Case("compare", "a/4 < 3", lt(div(a100, 4), 3), 1, "a < 12"),
    Case("compare", "a*4 + 4 <= 12", le(add(mul(a100, 4), 4), 12), 1, "a < 3"),
    Case("compare", "b < 3 over b < 3", lt(b3, 3), 0, "true"),
    Case("linear", "((a*-4) + 1) + a*4", add(add(mul(a100, -4), 1), mul(a100, 4)), 0, "1"),
    Case("linear", "a + (-a)", add(a100, a100.alu(Op.NEG)), 0, "0"),
    Case("linear", "(a*3 + b) + a", add(add(mul(a100, 3), b3), a100), 2, "a*4 + b"),
    Case("linear", "(a*3 + b) - a*3", sub(add(mul(a100, 3), b3), mul(a100, 3)), 0, "b"),
    Case(
        "logic",
        "max(max(x, 10), 11)",
        x1000.alu(Op.MAX, const(10)).alu(Op.MAX, const(11)),
        1,
        "max(x, 11): x may be below 11, so one MAX stays",
    ),
    Case(
        "logic",
        "where(x - 500 < 0, 0, x - 500)",
        where(lt(sub(x1000, 500), 0), 0, sub(x1000, 500)),
        2,
        "max(x - 500, 0): SUB, MAX",
    ),
    Case("logic", "(x ^ 5) ^ 5", x1000.alu(Op.XOR, const(5)).alu(Op.XOR, const(5)), 0, "x"),
    Case(
        "logic",
        "c & !c",
        both(lt(x1000, 7), lt(x1000, 7).alu(Op.XOR, lt(x1000, 7).const_like(True))),
        0,
        "false",
    ),
]
