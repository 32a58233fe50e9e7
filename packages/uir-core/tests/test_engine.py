"""graph_rewrite: both orders to a fixpoint, memoized, iterative, identity when nothing changes;
the context, type changes, loops and origins."""

import pytest

from uir.core.dtypes import BOOL, I32
from uir.core.engine import graph_rewrite
from uir.core.errors import BackendError
from uir.core.ops import Op
from uir.core.pattern import P, Rules
from uir.core.uop import UOp

p = UOp(Op.PARAM, I32, (), 0)


def const(v):
    return UOp(Op.CONST, I32, (), v)


def test_nothing_to_do_returns_the_same_object():
    graph = p.alu(Op.MUL, const(3)).alu(Op.ADD, p.alu(Op.NEG))
    assert graph_rewrite(graph, Rules([])) is graph
    assert graph_rewrite(graph, Rules([(P.var("x") + 0, lambda x: x)])) is graph


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


# --- the context ------------------------------------------------------------------------------


def test_a_rule_that_declares_ctx_reads_and_writes_the_context():
    # Number each distinct NEG in the order the walk meets it, as a buffer allocator would.
    def number(x, ctx):
        ctx.append(x)
        return const(100 + len(ctx))

    q = UOp(Op.PARAM, I32, (), 1)
    shared = p.alu(Op.NEG)
    graph = shared.alu(Op.ADD, q.alu(Op.NEG)).alu(Op.MUL, shared)
    rules = Rules([(P(Op.NEG, src=(P.var("x"),)), number), (P.var("x") + 0, lambda x: x)])
    seen = []
    out = graph_rewrite(graph, rules, seen)
    assert seen == [p, q]  # the shared NEG once, sources left to right
    assert out is const(101).alu(Op.ADD, const(102)).alu(Op.MUL, const(101))


def test_a_rule_without_ctx_is_called_with_its_captures_only():
    rules = Rules([(P.var("x") + 0, lambda x: x)])
    assert graph_rewrite(p.alu(Op.ADD, const(0)), rules, ctx=object()) is p


def test_which_rules_want_ctx_is_decided_when_the_table_is_built(monkeypatch):
    import uir.core.pattern as pattern

    asked = []
    signature = pattern.inspect.signature
    monkeypatch.setattr(pattern.inspect, "signature", lambda f: asked.append(f) or signature(f))
    rules = Rules([(P.var("x") + 0, lambda x, ctx: x)])
    assert len(asked) == 1
    graph = p
    for _ in range(10):
        graph = graph.alu(Op.ADD, const(0))
    assert graph_rewrite(graph, rules, ctx=[]) is p
    assert len(asked) == 1


def test_ctx_cannot_be_a_capture_name():
    with pytest.raises(ValueError, match="ctx"):
        Rules([(P.var("ctx") + 0, lambda ctx: ctx)])


# --- types ------------------------------------------------------------------------------------


def test_a_lowering_may_change_types_when_it_says_so():
    # i32 -> bool at the root: a change of form, allowed only with change_types
    rules = Rules([(P.var("x") + 0, lambda x: x.alu(Op.CMPLT, x))])
    out = graph_rewrite(p.alu(Op.ADD, const(0)), rules, change_types=True)
    assert out is UOp(Op.CMPLT, BOOL, (p, p))
    with pytest.raises(BackendError, match="types differ"):
        graph_rewrite(p.alu(Op.ADD, const(0)), rules, bottom_up=False)


# --- traversal order --------------------------------------------------------------------------

# Two rules that do not commute on NEG(NEG(p)): bottom-up, the inner NEG(p) becomes 7 first and
# NEG(7) matches nothing; top-down, the outer pair cancels before the inner NEG is ever seen.
order_rules = Rules(
    [
        (P.alu(Op.NEG, P.alu(Op.NEG, P.var("x"))), lambda x: x),
        (P.alu(Op.NEG, P(Op.PARAM)), lambda: const(7)),
    ]
)


def test_bottom_up_rewrites_sources_first():
    assert graph_rewrite(p.alu(Op.NEG).alu(Op.NEG), order_rules) is const(7).alu(Op.NEG)


def test_top_down_rewrites_the_user_first():
    assert graph_rewrite(p.alu(Op.NEG).alu(Op.NEG), order_rules, bottom_up=False) is p


def test_top_down_meets_users_before_sources():
    seen = []

    def record(u):
        seen.append(u)

    graph = p.alu(Op.NEG).alu(Op.NEG).alu(Op.NEG)
    graph_rewrite(graph, Rules([(P(Op.NEG, name="u"), record)]), bottom_up=False)
    assert seen == [graph, graph.src[0], graph.src[0].src[0]]


def test_top_down_tries_the_rules_again_on_a_rebuilt_user():
    # x + x is only there once NEG(NEG(p)) has become p, after the ADD was first met
    rules = Rules(
        [
            (P.alu(Op.NEG, P.alu(Op.NEG, P.var("x"))), lambda x: x),
            (P.var("x") + P.var("x"), lambda x: x.alu(Op.MUL, const(2))),
        ]
    )
    graph = p.alu(Op.NEG).alu(Op.NEG).alu(Op.ADD, p)
    assert graph_rewrite(graph, rules, bottom_up=False) is p.alu(Op.MUL, const(2))


def test_a_100000_deep_graph_needs_no_recursion_top_down():
    graph = p
    for n in range(100_000):
        graph = graph.alu(Op.ADD, const(0)) if n % 2 else graph.alu(Op.NEG)
    rules = Rules([(P.var("x") + 0, lambda x: x)])
    out = graph_rewrite(graph, rules, bottom_up=False)
    for _ in range(50_000):  # what is left: 50,000 NEGs in a row
        assert out.op is Op.NEG
        out = out.src[0]
    assert out is p


# --- loops and origins ------------------------------------------------------------------------


def test_rules_that_loop_top_down_are_an_error():
    rules = Rules([(P(Op.ADD, name="u"), lambda u: u.replace(src=u.src[::-1]))])
    with pytest.raises(BackendError, match="loop"):
        graph_rewrite(p.alu(Op.ADD, const(1)), rules, bottom_up=False)


@pytest.mark.parametrize("bottom_up", [True, False])
def test_a_replacement_holding_what_it_replaces_is_an_error(bottom_up):
    rules = Rules([(P(Op.NEG, name="u"), lambda u: u.alu(Op.ADD, const(1)))])
    with pytest.raises(BackendError, match="loop"):
        graph_rewrite(p.alu(Op.NEG), rules, bottom_up=bottom_up)


def test_origins_trace_what_the_walk_builds_to_the_input():
    # (p + 0) * 3, with a NEG on top: the MUL and the NEG are rebuilt on p
    mul = p.alu(Op.ADD, const(0)).alu(Op.MUL, const(3))
    graph = mul.alu(Op.NEG)
    origins = {}
    out = graph_rewrite(graph, Rules([(P.var("x") + 0, lambda x: x)]), origins=origins)
    assert out is p.alu(Op.MUL, const(3)).alu(Op.NEG)
    assert origins[out] is graph
    assert origins[out.src[0]] is mul
