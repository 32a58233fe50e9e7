"""The pattern language: what matches, what is captured, and how Rules dispatch."""

from uir.core.dtypes import F32, I32
from uir.core.ops import Op
from uir.core.pattern import FLOATS, INTS, P, Rules
from uir.core.uop import UOp

a = UOp(Op.PARAM, I32, (), 0)
b = UOp(Op.PARAM, I32, (), 1)
zero, one = UOp(Op.CONST, I32, (), 0), UOp(Op.CONST, I32, (), 1)
fzero = UOp(Op.CONST, F32, (), 0.0)
fneg_zero = UOp(Op.CONST, F32, (), -0.0)


def matches(pattern, uop):
    return list(pattern.match(uop))


def test_var_captures_and_const_matches_by_value():
    assert matches(P.var("x") + 0, a.alu(Op.ADD, zero)) == [{"x": a}]
    assert matches(P.var("x") + 0, a.alu(Op.ADD, one)) == []


def test_commutative_ops_match_either_way_round():
    assert matches(P.var("x") + 0, zero.alu(Op.ADD, a)) == [{"x": a}]
    # SUB is not commutative
    assert matches(P.var("x") - 0, zero.alu(Op.SUB, a)) == []


def test_both_orders_are_offered_to_the_rewrite():
    found = matches(P.var("x") + P.var("y"), a.alu(Op.ADD, b))
    assert found == [{"x": a, "y": b}, {"x": b, "y": a}]


def test_a_repeated_name_must_capture_the_same_uop():
    assert matches(P.var("x") - P.var("x"), a.alu(Op.SUB, a)) == [{"x": a}]
    assert matches(P.var("x") - P.var("x"), a.alu(Op.SUB, b)) == []


def test_constants_compare_by_kind_and_bits():
    # int 0 is not float 0.0, and 0.0 is not -0.0
    assert matches(P.var("x") + 0, fzero.alu(Op.ADD, fzero)) == []
    assert matches(P.var("x") + P.const(-0.0), fzero.alu(Op.ADD, fneg_zero)) == [{"x": fzero}]
    assert matches(P.var("x") + P.const(0.0), fzero.alu(Op.ADD, fneg_zero)) == [{"x": fneg_zero}]


def test_dtype_filter():
    assert matches(P.var("x", INTS), a) == [{"x": a}]
    assert matches(P.var("x", FLOATS), a) == []


def test_cvar_matches_scalar_constants_only():
    vector = UOp(Op.CONST, I32.__class__(I32.dtype, (2,)), (), (1, 2))
    assert matches(P.cvar("c"), one) == [{"c": one}]
    assert matches(P.cvar("c"), vector) == []
    assert matches(P.cvar("c"), a) == []


def test_predicate_and_named_root():
    small = P.cvar("c").such_that(lambda u: u.arg < 5)
    assert matches(small, one) == [{"c": one}]
    assert matches(small, UOp(Op.CONST, I32, (), 9)) == []
    assert matches((P.var("x") * 1).named("root"), a.alu(Op.MUL, one)) == [
        {"x": a, "root": a.alu(Op.MUL, one)}
    ]


def test_rules_try_in_order_and_skip_rewrites_that_decline():
    rules = Rules(
        [
            (P.var("x") + P.var("y"), lambda x, y: None),  # declines
            (P.var("x") + 0, lambda x: x),
            (P.var("x") + P.var("y"), lambda x, y: zero),
        ]
    )
    assert rules.rewrite(a.alu(Op.ADD, zero)) is a
    assert rules.rewrite(a.alu(Op.ADD, b)) is zero
    assert rules.rewrite(a.alu(Op.MUL, b)) is None  # no MUL rule: not even tried


def test_rules_dispatch_on_op():
    tried = []

    def seen(uop):
        tried.append(uop.op)
        return True

    rules = Rules([(P(Op.ADD, where=seen), lambda: None), (P(Op.MUL, where=seen), lambda: None)])
    for op in (Op.ADD, Op.MUL, Op.SUB):
        rules.rewrite(a.alu(op, b))
    assert tried == [Op.ADD, Op.MUL]  # each UOp met only the patterns of its own op
