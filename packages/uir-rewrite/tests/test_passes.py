"""The passes as a whole: what they leave alone comes back as the very same object."""

from uir.core.dtypes import I32
from uir.core.ops import Op
from uir.core.uop import UOp
from uir.rewrite.passes import fold, inline, simplify

p = UOp(Op.PARAM, I32, (), 0)


def test_a_simplified_graph_comes_back_as_the_same_object():
    # p*3 - p*p: nothing to combine (p*3 + -p would be p*2 for the sum-of-products rule)
    graph = p.alu(Op.MUL, UOp(Op.CONST, I32, (), 3)).alu(Op.SUB, p.alu(Op.MUL, p))
    for run in (inline, fold, simplify):
        assert run(graph) is graph


def test_where_of_false_and_true_is_the_negated_condition():
    # where(p < 5, false, true) is NOT (p < 5), which is p >= 5, which is 4 < p; the rule once
    # named its capture wrongly and raised a TypeError instead
    c = p.alu(Op.CMPLT, UOp(Op.CONST, I32, (), 5))
    graph = UOp(Op.WHERE, c.type, (c, c.const_like(False), c.const_like(True)))
    assert simplify(graph) is UOp(Op.CONST, I32, (), 4).alu(Op.CMPLT, p)
