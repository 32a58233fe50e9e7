"""Bounds of IDIV and MOD (uir.md section 6.4), checked exhaustively on small intervals.

For every dividend interval inside [-7, 7] and every divisor interval inside [-4, 4], each value
pair is computed with Python ints under the total semantics of uir.md section 4 (truncating
division, x/0 = -1, x%0 = x) and must lie in the computed bounds. The IDIV bounds must also be
exact: the smallest and largest quotient are reached.
"""

from __future__ import annotations

import itertools

from uir.core.bounds import bounds
from uir.core.dtypes import I32
from uir.core.ops import Op
from uir.core.uop import UOp

FULL = (-(2**31), 2**31 - 1)
P = UOp(Op.PARAM, I32, (), 0)
Q = UOp(Op.PARAM, I32, (), 1)


def const(v: int) -> UOp:
    return UOp(Op.CONST, I32, (), v)


def within(x: UOp, lo: int, hi: int) -> UOp:
    """x clamped to [lo, hi]: a UOp whose bounds are exactly that interval."""
    return x.alu(Op.MAX, const(lo)).alu(Op.MIN, const(hi))


def tdiv(a: int, d: int) -> int:
    if d == 0:
        return -1
    q = abs(a) // abs(d)
    return q if (a >= 0) == (d > 0) else -q


def tmod(a: int, d: int) -> int:
    return a if d == 0 else a - d * tdiv(a, d)


def intervals(lo: int, hi: int) -> list[tuple[int, int]]:
    return [(a, b) for a in range(lo, hi + 1) for b in range(a, hi + 1)]


def test_the_reference_model():
    # C semantics, worked out by hand: -7/2 = -3, -7%2 = -1, 7/-2 = -3, 7%-2 = 1
    assert (tdiv(-7, 2), tmod(-7, 2), tdiv(7, -2), tmod(7, -2)) == (-3, -1, -3, 1)
    assert (tdiv(5, 0), tmod(5, 0)) == (-1, 5)


def test_division_and_remainder_bounds_are_sound_and_the_quotient_exact():
    for (a_lo, a_hi), (d_lo, d_hi) in itertools.product(intervals(-7, 7), intervals(-4, 4)):
        x, d = within(P, a_lo, a_hi), within(Q, d_lo, d_hi)
        pairs = list(itertools.product(range(a_lo, a_hi + 1), range(d_lo, d_hi + 1)))
        quotients = [tdiv(a, b) for a, b in pairs]
        assert bounds(x.alu(Op.IDIV, d)) == (min(quotients), max(quotients)), (
            a_lo,
            a_hi,
            d_lo,
            d_hi,
        )
        lo, hi = bounds(x.alu(Op.MOD, d))
        assert all(lo <= tmod(a, b) <= hi for a, b in pairs), (a_lo, a_hi, d_lo, d_hi)


def test_remainder_bounds_by_hand():
    # a slightly negative dividend: [-2, 10] % 8 lies in [-2, 7], not [-7, 7]
    assert bounds(within(P, -2, 10).alu(Op.MOD, const(8))) == (-2, 7)
    # a negative divisor works as its magnitude: [0, 20] % -8 is [0, 7]
    assert bounds(within(P, 0, 20).alu(Op.MOD, const(-8))) == (0, 7)
    # a range that crosses no multiple of 8 keeps its order: [9, 14] % 8 is [1, 6]
    assert bounds(within(P, 9, 14).alu(Op.MOD, const(8))) == (1, 6)
    # [0, 100] % d with d in [3, 5] is below 5 and never negative
    assert bounds(within(P, 0, 100).alu(Op.MOD, within(Q, 3, 5))) == (0, 4)
    # a divisor that may be 0 leaves x itself possible: [0, 100] % [0, 5] is [0, 100]
    assert bounds(within(P, 0, 100).alu(Op.MOD, within(Q, 0, 5))) == (0, 100)


def test_division_bounds_by_hand():
    assert bounds(within(P, 0, 100).alu(Op.IDIV, const(-4))) == (-25, 0)
    assert bounds(within(P, -9, 9).alu(Op.IDIV, const(-3))) == (-3, 3)
    assert bounds(within(P, 0, 3).alu(Op.IDIV, within(Q, 4, 8))) == (0, 0)  # decided: 0
    assert bounds(within(P, 8, 64).alu(Op.IDIV, within(Q, 2, 4))) == (2, 32)
    # MIN / -1 wraps to MIN: the exact 2**31 does not fit, so anything is possible
    assert bounds(P.alu(Op.IDIV, within(Q, -1, -1))) == FULL
