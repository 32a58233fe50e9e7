"""graph_rewrite: bottom-up, to a fixpoint, memoized, iterative, identity when nothing changes."""

import pytest

from uir.core.dtypes import I32
from uir.core.errors import BackendError
from uir.core.ops import Op
from uir.core.uop import UOp
from uir.rewrite.engine import graph_rewrite
from uir.rewrite.passes import simplify
from uir.rewrite.pattern import P, Rules

p = UOp(Op.PARAM, I32, (), 0)


def const(v):
    return UOp(Op.CONST, I32, (), v)


def test_nothing_to_do_returns_the_same_object():
    # p*3 - p*p: nothing to combine (p*3 + -p, used before, is p*2 for the sum-of-products rule)
    graph = p.alu(Op.MUL, const(3)).alu(Op.SUB, p.alu(Op.MUL, p))
    assert graph_rewrite(graph, Rules([])) is graph
    assert simplify(graph) is graph  # already simplified: the very same object comes back


def test_a_replacement_is_rewritten_to_a_fixpoint():
    # x + 1 -> (x + 0) + 1 would loop; instead: ADD of a constant c -> ADD of c-1 until 0
    def count_down(x, c):
        return x.alu(Op.ADD, const(c.arg - 1)) if c.arg > 0 else x

    rules = Rules([(P.var("x") + P.cvar("c"), count_down)])
    assert graph_rewrite(p.alu(Op.ADD, const(5)), rules) is p


def test_sources_are_rewritten_before_users():
    seen = []

    def record(x):
        seen.append(x.op)

    rules = Rules([(P(Op.NEG, src=(P.var("x"),)), record)])
    graph = p.alu(Op.NEG).alu(Op.NEG).alu(Op.NEG)
    graph_rewrite(graph, rules)
    assert seen == [Op.PARAM, Op.NEG, Op.NEG]


def test_shared_subexpressions_are_rewritten_once():
    calls = []

    def once(x):
        calls.append(x)

    shared = p.alu(Op.NEG)
    graph = shared.alu(Op.ADD, shared).alu(Op.MUL, shared)
    graph_rewrite(graph, Rules([(P(Op.NEG, src=(P.var("x"),)), once)]))
    assert calls == [p]


def test_a_100000_deep_graph_needs_no_recursion():
    # NEG, +0, NEG, +0, ...: without the +0s, 50,000 NEGs in a row cancel in pairs
    graph = p
    for n in range(100_000):
        graph = graph.alu(Op.ADD, const(0)) if n % 2 else graph.alu(Op.NEG)
    rules = Rules(
        [
            (P.var("x") + 0, lambda x: x),
            (P.alu(Op.NEG, P.alu(Op.NEG, P.var("x"))), lambda x: x),
        ]
    )
    assert graph_rewrite(graph, rules) is p


def test_a_100000_deep_graph_with_nothing_to_do_comes_back_unchanged():
    graph = p
    for n in range(100_000):
        graph = graph.alu(Op.ADD, const(1)) if n % 2 else graph.alu(Op.NEG)
    assert graph_rewrite(graph, Rules([(P.var("x") + 0, lambda x: x)])) is graph


def test_a_rule_that_changes_the_type_is_an_error():
    rules = Rules([(P.var("x") + 0, lambda x: x.alu(Op.CMPLT, x))])
    with pytest.raises(BackendError, match="types differ"):
        graph_rewrite(p.alu(Op.ADD, const(0)), rules)


def test_rules_that_loop_are_an_error():
    # x + y -> y + x, without the order check canonical_order has
    rules = Rules([(P(Op.ADD, name="u"), lambda u: u.replace(src=u.src[::-1]))])
    with pytest.raises(BackendError, match="loop"):
        graph_rewrite(p.alu(Op.ADD, const(1)), rules)
