"""Gated bounds through sums: a gate on `r + dr` narrows any sum that holds a multiple of it,
such as the reassociated index of a padded convolution (spec/uir-week3.md section 9)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from uir.core.bounds import bounds, gated_bounds, linear_form
from uir.core.dtypes import BOOL, I32
from uir.core.ops import Op
from uir.core.uop import UOp


def const(v: int) -> UOp:
    return UOp(Op.CONST, I32, (), v)


def counter(end: int, id_: int) -> UOp:
    return UOp(Op.RANGE, I32, (const(end),), id_)


def add(*xs: UOp) -> UOp:
    total = xs[0]
    for x in xs[1:]:
        total = UOp(Op.ADD, I32, (total, x))
    return total


def times(k: int, x: UOp) -> UOp:
    return UOp(Op.MUL, I32, (x, const(k)))


def inside(x: UOp, lo: int, hi: int) -> UOp:
    """lo - 1 < x and x < hi + 1, the gate form the simplifier leaves."""
    return UOp(
        Op.AND,
        BOOL,
        (UOp(Op.CMPLT, BOOL, (const(lo - 1), x)), UOp(Op.CMPLT, BOOL, (x, const(hi + 1)))),
    )


r, c, dr, dc = counter(3, 0), counter(3, 1), counter(3, 2), counter(3, 3)
rows, cols = add(r, dr), add(c, dc)
gate = UOp(Op.AND, BOOL, (inside(rows, 1, 3), inside(cols, 1, 3)))
# (r + dr - 1)*3 + (c + dc - 1) as the simplifier writes it: no `r + dr` left inside
flat = UOp(Op.SUB, I32, (add(times(3, dr), c, dc, times(3, r)), const(4)))


def test_a_reassociated_padded_index_is_narrowed_by_its_gate():
    assert bounds(flat) == (-4, 12)  # ungated: 3*[0, 4] + [0, 4] - 4
    # where 1 <= r+dr <= 3 and 1 <= c+dc <= 3: 3*[1, 3] + [1, 3] - 4
    assert gated_bounds(flat, gate) == (0, 8)


def test_the_gated_bounds_hold_for_every_value_the_gate_lets_through():
    lo, hi = gated_bounds(flat, gate)
    seen = [
        3 * (vr + vdr - 1) + (vc + vdc - 1)
        for vr, vc, vdr, vdc in itertools.product(range(3), repeat=4)
        if 1 <= vr + vdr <= 3 and 1 <= vc + vdc <= 3
    ]
    assert (min(seen), max(seen)) == (lo, hi)


def test_a_sum_that_is_no_multiple_of_the_gated_sum_is_not_narrowed_by_it():
    skewed = add(r, times(2, dr))  # r + 2*dr: no multiple of r + dr
    assert gated_bounds(skewed, inside(rows, 1, 3)) == bounds(skewed) == (0, 6)


def test_a_sum_that_may_wrap_is_a_term_of_its_own():
    p = UOp(Op.PARAM, I32, (), 0)
    q = UOp(Op.PARAM, I32, (), 1)
    wraps = add(p, q)  # p + q can wrap: it is not p's value plus q's
    assert linear_form(wraps) == ({wraps: 1}, 0)
    assert linear_form(add(times(3, r), dr, const(-1))) == ({r: 3, dr: 1}, -1)


COUNTERS = [counter(4, 10 + n) for n in range(3)]  # three counters in [0, 3]
coefficients = st.lists(st.integers(-3, 3), min_size=3, max_size=3)


def linear(coefs: list[int], offset: int) -> UOp:
    """sum(coef * counter) + offset, written as nested ADD, SUB and MUL."""
    total = const(offset)
    for coef, x in zip(coefs, COUNTERS, strict=True):
        if coef < 0:
            total = UOp(Op.SUB, I32, (total, times(-coef, x)))
        elif coef:
            total = UOp(Op.ADD, I32, (times(coef, x), total))
    return total


@settings(deadline=None, max_examples=300)
@given(
    index=coefficients,
    offset=st.integers(-5, 5),
    gated=st.lists(st.tuples(coefficients, st.integers(-6, 6), st.integers(0, 6)), max_size=2),
)
def test_gated_bounds_through_sums_hold_for_every_value_the_gate_lets_through(index, offset, gated):
    # each gated sum g gets lo - 1 < g < lo + width + 1; the expected values are Python ints
    expr = linear(index, offset)
    gate = None
    for coefs, lo, width in gated:
        conjunct = inside(linear(coefs, 0), lo, lo + width)
        gate = conjunct if gate is None else UOp(Op.AND, BOOL, (gate, conjunct))
    if gate is None:
        return
    found = gated_bounds(expr, gate)
    values = [
        sum(c * v for c, v in zip(index, point, strict=True)) + offset
        for point in itertools.product(range(4), repeat=3)
        if all(
            lo <= sum(c * v for c, v in zip(coefs, point, strict=True)) <= lo + width
            for coefs, lo, width in gated
        )
    ]
    if found is None:
        assert not values  # "the gate never holds" must be true
    else:
        assert all(found[0] <= v <= found[1] for v in values)


# A gate on `c*t + k`, one term at any sign or scale, bounds `t` itself: the simplifier turns
# `0 <= t*-2` into `-1 < -t`, and the index `t*-2` holds no `-t` for the gate to narrow.
negated = UOp(Op.NEG, I32, (r,))


def test_a_gate_on_a_negated_term_bounds_the_term():
    gate_neg = UOp(Op.CMPLT, BOOL, (const(-1), negated))  # -1 < -r: r <= 0
    assert gated_bounds(times(-2, r), gate_neg) == (0, 0)  # ungated: [-4, 0]
    assert gated_bounds(r, gate_neg) == (0, 0)


@settings(deadline=None, max_examples=300)
@given(
    scale=st.integers(-4, 4).filter(bool),
    offset=st.integers(-5, 5),
    lo=st.integers(-12, 12),
    width=st.integers(0, 6),
)
def test_a_gate_on_one_scaled_term_bounds_it_exactly(scale, offset, lo, width):
    # lo - 1 < scale*t + offset < lo + width + 1 with t a counter in [0, 3]: the t it lets through
    # form a run of integers, and gated_bounds(t) is exactly its ends (Python ints)
    t = COUNTERS[0]
    gate = inside(add(times(scale, t), const(offset)), lo, lo + width)
    through = [v for v in range(4) if lo <= scale * v + offset <= lo + width]
    expected = (min(through), max(through)) if through else None
    assert gated_bounds(t, gate) == expected
