"""Bounds of an index under a gate (uir.md section 6.4)."""

from __future__ import annotations

from uir.core.bounds import bounds, gate_facts, gated_bounds
from uir.core.dtypes import BOOL, I32, Type
from uir.core.ops import Op
from uir.core.uop import UOp

FULL = (-(2**31), 2**31 - 1)


def const(v: int) -> UOp:
    return UOp(Op.CONST, I32, (), v)


def loaded(slot: int) -> UOp:
    """An i32 read from memory: full range, as no compiler reasons about buffer contents."""
    buf = UOp(Op.BUFFER, Type(I32.dtype, (1,)), (), slot)
    return UOp(Op.LOAD, I32, (UOp(Op.INDEX, I32, (buf, const(0))),))


def cmp(op: Op, a: UOp, b: UOp) -> UOp:
    return UOp(op, BOOL, (a, b))


def both(a: UOp, b: UOp) -> UOp:
    return UOp(Op.AND, BOOL, (a, b))


def test_constant_on_the_right_bounds_from_above():
    x = loaded(0)
    assert gated_bounds(x, cmp(Op.CMPLT, x, const(4))) == (FULL[0], 3)
    assert gated_bounds(x, cmp(Op.CMPLE, x, const(4))) == (FULL[0], 4)


def test_constant_on_the_left_bounds_from_below():
    x = loaded(1)
    assert gated_bounds(x, cmp(Op.CMPLT, const(-1), x)) == (0, FULL[1])
    assert gated_bounds(x, cmp(Op.CMPLE, const(2), x)) == (2, FULL[1])


def test_cmpeq_pins_either_side():
    x = loaded(2)
    assert gated_bounds(x, cmp(Op.CMPEQ, x, const(7))) == (7, 7)
    assert gated_bounds(x, cmp(Op.CMPEQ, const(7), x)) == (7, 7)


def test_conjuncts_intersect_and_arithmetic_is_recomputed():
    x = loaded(3)
    gate = both(
        both(cmp(Op.CMPLE, const(0), x), cmp(Op.CMPLT, x, const(3))), UOp(Op.CONST, BOOL, (), True)
    )
    index = UOp(Op.ADD, I32, (UOp(Op.MUL, I32, (x, const(2))), const(1)))
    assert gated_bounds(index, gate) == (1, 5)  # x in [0, 2]: 2x + 1 in [1, 5]


def test_narrowing_leaves_the_ungated_cache_alone():
    x = loaded(4)
    index = UOp(Op.ADD, I32, (x, const(1)))
    gate = both(cmp(Op.CMPLE, const(0), x), cmp(Op.CMPLE, x, const(9)))
    assert gated_bounds(index, gate) == (1, 10)
    assert bounds(index) == FULL  # x + 1 may wrap without the gate
    assert bounds(x) == FULL


def test_or_and_cmpne_do_not_narrow():
    x = loaded(5)
    either = UOp(Op.OR, BOOL, (cmp(Op.CMPLE, const(0), x), cmp(Op.CMPLT, x, const(4))))
    assert gated_bounds(x, either) == FULL
    assert gated_bounds(x, cmp(Op.CMPNE, x, const(4))) == FULL


def test_contradictory_gate_never_holds():
    x = loaded(6)
    gate = both(cmp(Op.CMPLT, x, const(0)), cmp(Op.CMPLT, const(5), x))
    assert gate_facts(gate) is None
    assert gated_bounds(x, gate) is None


def test_gate_decided_false_never_holds():
    assert gated_bounds(const(9), cmp(Op.CMPLT, const(9), const(9))) is None
