"""The passes as a whole: what they leave alone comes back as the very same object."""

from uir.core.dtypes import I32
from uir.core.ops import Op
from uir.core.uop import UOp
from uir.rewrite.passes import fold, inline, simplify

p = UOp(Op.PARAM, I32, (), 0)


def test_a_simplified_graph_comes_back_as_the_same_object():
    graph = p.alu(Op.MUL, UOp(Op.CONST, I32, (), 3)).alu(Op.ADD, p.alu(Op.NEG))
    for run in (inline, fold, simplify):
        assert run(graph) is graph
