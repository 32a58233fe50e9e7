"""Tracing: which rules fired, on what, in which pass; and nothing recorded when tracing is off."""

import inspect

import pytest

from uir.core import parse
from uir.core.dtypes import I32
from uir.core.engine import graph_rewrite
from uir.core.errors import BackendError
from uir.core.ops import Op
from uir.core.pattern import P, Rules
from uir.core.plugins import Pass, run_passes
from uir.core.trace import current_trace, tracing
from uir.core.uop import UOp


def const(value: int) -> UOp:
    return UOp(Op.CONST, I32, (), value)


def add_zero(x: UOp) -> UOp:
    return x


def double_to_shift(x: UOp) -> UOp:
    return UOp(Op.SHL, I32, (x, const(1)))


RULES = Rules(
    [(P.var("x") + 0, add_zero), (P.var("x") * 2, double_to_shift)],
    names=["x + 0"],
)

X = UOp(Op.PARAM, I32, (), 0)


def test_each_rule_application_is_recorded_in_walk_order():
    # (x + 0) * 2: bottom-up, the ADD is rewritten first (to x), then x * 2 becomes x << 1.
    inner = X.alu(Op.ADD, const(0))
    outer = inner.alu(Op.MUL, const(2))
    with tracing() as trace:
        result = graph_rewrite(outer, RULES)
    assert result is UOp(Op.SHL, I32, (X, const(1)))
    assert [(s.rule.name, s.before, s.after) for s in trace.steps] == [
        ("x + 0", inner, X),
        ("double_to_shift", X.alu(Op.MUL, const(2)), result),
    ]
    assert all(s.pass_index is None for s in trace.steps)


def test_a_rule_is_located_at_its_rewrite_function():
    with tracing() as trace:
        graph_rewrite(X.alu(Op.MUL, const(2)), RULES)
    (step,) = trace.steps
    assert step.rule.file == inspect.getsourcefile(double_to_shift)
    assert step.rule.line == inspect.getsourcelines(double_to_shift)[1]
    assert step.rule.pattern == repr(P.var("x") * 2)


def test_tables_keep_their_names_when_combined():
    combined = Rules([(P.var("x") - 0, add_zero)]) + RULES
    assert combined.names == (None, "x + 0", None)


def test_nothing_is_recorded_outside_tracing_and_the_result_is_the_same():
    graph = X.alu(Op.ADD, const(0)).alu(Op.MUL, const(2))
    assert current_trace() is None
    untraced = graph_rewrite(graph, RULES)
    with tracing() as trace:
        assert current_trace() is trace
        traced = graph_rewrite(graph, RULES)
    assert current_trace() is None
    assert traced is untraced
    assert len(trace.steps) == 2


def test_passes_are_recorded_in_order_with_their_steps():
    program = parse(
        "%b = BUFFER i32[1] 0\n%i = CONST i32 0\n%p = INDEX i32 %b %i\n%x = LOAD i32 %p\n"
        "%a = ADD i32 %x %i\n%two = CONST i32 2\n%m = MUL i32 %a %two\n%o = SINK void %m\n"
    )
    sink = program.sink
    loaded = sink.src[0].src[0].src[0]
    passes = [
        Pass("nothing", "inline", "", lambda s: s),
        Pass("rules", "simplify", "", lambda s: graph_rewrite(s, RULES)),
    ]
    with tracing() as trace:
        result = run_passes(sink, passes)
    assert result is UOp(Op.SINK, sink.type, (UOp(Op.SHL, I32, (loaded, const(1))),))
    assert [(p.name, p.before, p.after) for p in trace.passes] == [
        ("nothing", sink, sink),
        ("rules", sink, result),
    ]
    assert [(s.rule.name, s.pass_index) for s in trace.steps] == [
        ("x + 0", 1),
        ("double_to_shift", 1),
    ]


def test_a_failing_pass_is_recorded_without_a_result():
    sink = parse("%a = CONST i32 1\n%o = SINK void %a\n").sink

    def broken(s: UOp) -> UOp:
        raise ValueError("no")

    with tracing() as trace, pytest.raises(BackendError, match="broken"):
        run_passes(sink, [Pass("broken", "simplify", "", broken)])
    assert [(p.name, p.after) for p in trace.passes] == [("broken", None)]


def test_origins_name_the_uop_a_rewritten_one_stands_for():
    graph = X.alu(Op.ADD, const(0)).alu(Op.MUL, const(2))
    with tracing() as trace:
        result = graph_rewrite(graph, RULES)
    # The MUL rebuilt on x, and then its replacement, both stand for the MUL as written.
    assert trace.origins[result] is graph
