"""Each int-only rule fails for f32, shown by a concrete counterexample, and does not fire on f32.

Every expected value here is IEEE 754 worked out by hand; `apply` (the interpreter's table) is
only asked to confirm it.
"""

import math

import numpy as np
import pytest

from uir.core.dtypes import F32, f32
from uir.core.ops import Op
from uir.core.semantics import apply
from uir.core.uop import UOp
from uir.rewrite.passes import simplify

x = UOp(Op.PARAM, F32, (), 0)


def c(value: float) -> UOp:
    return UOp(Op.CONST, F32, (), value)


def f(*values: float) -> list[np.ndarray]:
    return [np.array(v, dtype=np.float32) for v in values]


def bits(value: np.ndarray) -> int:
    return int(np.asarray(value, dtype=np.float32).view(np.uint32))


def run(op: Op, *values: float) -> np.ndarray:
    return apply(op, f32, f(*values), [f32] * len(values))


# (rule, the f32 expression it would rewrite, the rewrite, an x that tells them apart,
#  the value of the expression there, the value of the rewrite there)
INT_ONLY = [
    ("x + 0 -> x", x.alu(Op.ADD, c(0.0)), x, -0.0, 0.0, -0.0),  # -0 + +0 is +0
    ("x * 0 -> 0", x.alu(Op.MUL, c(0.0)), c(0.0), math.inf, math.nan, 0.0),  # inf * 0 is NaN
    ("x * 0 -> 0, sign", x.alu(Op.MUL, c(0.0)), c(0.0), -1.0, -0.0, 0.0),  # -1 * +0 is -0
    ("x - x -> 0", x.alu(Op.SUB, x), c(0.0), math.inf, math.nan, 0.0),  # inf - inf is NaN
    ("x - x -> 0, NaN", x.alu(Op.SUB, x), c(0.0), math.nan, math.nan, 0.0),
    ("x <= x -> true", x.alu(Op.CMPLE, x), None, math.nan, False, True),  # NaN <= NaN is false
    ("x == x -> true", x.alu(Op.CMPEQ, x), None, math.nan, False, True),
    ("x != x -> false", x.alu(Op.CMPNE, x), None, math.nan, True, False),
    # 2**24 + 1 rounds back to 2**24, so adding 1 twice is not adding 2
    (
        "(x + 1) + 1 -> x + 2",
        x.alu(Op.ADD, c(1.0)).alu(Op.ADD, c(1.0)),
        x.alu(Op.ADD, c(2.0)),
        16777216.0,
        16777216.0,
        16777218.0,
    ),
    # 1e38 * 10 overflows to inf before / 10 could bring it back
    (
        "(x * c1) * c2 -> x * (c1*c2)",
        x.alu(Op.MUL, c(10.0)).alu(Op.MUL, c(0.1)),
        None,
        1e38,
        math.inf,
        None,
    ),
]


def _evaluate(expr: UOp, value: float) -> np.ndarray:
    """An expression over PARAM 0 at x = value, through the semantics table."""
    values = {x: np.array(value, dtype=np.float32)}
    for u in expr.toposort():
        if u.op is Op.CONST:
            values[u] = np.array(u.arg, dtype=u.dtype.storage)
        elif u.op is not Op.PARAM:
            values[u] = apply(u.op, u.dtype, [values[s] for s in u.src], [s.dtype for s in u.src])
    return values[expr]


def _same(a: np.ndarray, b: float | bool) -> bool:
    if isinstance(b, bool):
        return bool(a) == b
    if math.isnan(b):
        return bool(np.isnan(a))
    return bits(a) == bits(np.float32(b))


CASES = [case for case in INT_ONLY if case[1] is not None]


@pytest.mark.parametrize("case", CASES, ids=[case[0] for case in CASES])
def test_int_only_rule_is_wrong_for_f32_and_does_not_fire(case):
    _, expr, rewrite, value, expected, rewritten = case
    # the counterexample: the expression's true value differs from what the rule would give
    assert _same(_evaluate(expr, value), expected)
    if rewrite is not None:
        assert _same(_evaluate(rewrite, value), rewritten)
        assert not _same(_evaluate(rewrite, value), expected)
    # and the simplifier leaves the f32 expression alone
    assert simplify(expr) is expr


def test_x_plus_x_stays_an_add_for_floats():
    # x + x = 2x is exact in IEEE, but the rule is stated for ints only; floats keep the ADD.
    expr = x.alu(Op.ADD, x)
    assert simplify(expr) is expr


# Float rules that do hold, each checked on the values that break the int-only ones.
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 1e-45, 3.4028235e38]


@pytest.mark.parametrize(
    ("name", "expr"),
    [
        ("x + -0.0 -> x", x.alu(Op.ADD, c(-0.0))),
        ("x - 0.0 -> x", x.alu(Op.SUB, c(0.0))),
        ("x * 1.0 -> x", x.alu(Op.MUL, c(1.0))),
        ("x / 1.0 -> x", x.alu(Op.FDIV, c(1.0))),
    ],
)
def test_float_identity_rules_keep_every_bit(name, expr):
    assert simplify(expr) is x
    for value in FLOAT_EDGES:
        assert _same(_evaluate(expr, value), value), value


def test_float_times_minus_one_is_negation():
    assert simplify(x.alu(Op.MUL, c(-1.0))) is x.alu(Op.NEG)
    for value in FLOAT_EDGES:
        want = _evaluate(x.alu(Op.NEG), value)
        assert _same(_evaluate(x.alu(Op.MUL, c(-1.0)), value), float(want)), value


def test_x_less_than_x_is_false_even_for_nan():
    expr = x.alu(Op.CMPLT, x)
    assert simplify(expr) is expr.const_like(False)
    assert not bool(_evaluate(expr, math.nan))
