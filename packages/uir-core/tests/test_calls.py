"""CALL inlining: the one inliner, used by the verifier, the interpreter, backends and passes."""

import pytest

from uir.core.calls import inline_calls
from uir.core.dtypes import I32
from uir.core.errors import VerifyError
from uir.core.ops import Op
from uir.core.parse import parse
from uir.core.uop import UOp
from uir.core.verify import verify


def const(v):
    return UOp(Op.CONST, I32, (), v)


def test_a_nested_body_keeps_its_own_params():
    # The outer body p + sq(10) shares the PARAM UOp of sq = p*p; calling it with 3 substitutes
    # only outside the nested body: 3 + 10*10, never 3 + 3*3.
    p = UOp(Op.PARAM, I32, (), 0)
    sq = p.alu(Op.MUL, p)
    outer = p.alu(Op.ADD, UOp(Op.CALL, I32, (sq, const(10))))
    call = UOp(Op.CALL, I32, (outer, const(3)))
    assert inline_calls(call) is const(3).alu(Op.ADD, const(10).alu(Op.MUL, const(10)))


def test_an_argument_holding_a_call_is_inlined_too():
    p = UOp(Op.PARAM, I32, (), 0)
    neg = UOp(Op.CALL, I32, (p.alu(Op.NEG), const(4)))
    twice = UOp(Op.CALL, I32, (p.alu(Op.ADD, p), neg))
    assert inline_calls(twice) is const(4).alu(Op.NEG).alu(Op.ADD, const(4).alu(Op.NEG))


def test_a_graph_without_call_comes_back_as_the_same_object():
    graph = const(1)
    for _ in range(1000):
        graph = graph.alu(Op.MUL, const(3)).alu(Op.NEG)
    assert inline_calls(graph) is graph


def test_an_index_rebuilt_by_inlining_keeps_the_line_of_its_statement():
    # The INDEX is outside any body, but its index is a CALL's result (2), out of range.
    program = parse(
        "%p = PARAM i32 0\n"
        "%two = CONST i32 2\n"
        "%c = CALL i32 %p %two\n"
        "%v = CONST i32[2] (5, 6)\n"
        "%e = INDEX i32 %v %c\n"
        "%o = SINK void %e\n",
        "t.uir",
    )
    with pytest.raises(VerifyError, match=r"\[2, 2\]") as error:
        verify(program)
    assert error.value.line == 5
