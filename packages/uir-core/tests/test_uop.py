import gc
import weakref

import pytest

from uir.core.dtypes import F32, I32
from uir.core.ops import Op
from uir.core.uop import UOp


def const(value: int) -> UOp:
    return UOp(Op.CONST, I32, (), value)


def test_equal_uops_are_the_same_object():
    a = UOp(Op.ADD, I32, (const(2), const(3)))
    b = UOp(Op.ADD, I32, (const(2), const(3)))
    assert a is b


def test_fields_distinguish_uops():
    assert const(2) is not const(3)
    assert UOp(Op.CONST, F32, (), 2.0) is not UOp(Op.CONST, F32, (), -2.0)
    assert UOp(Op.CONST, F32, (), 0.0) is not UOp(Op.CONST, F32, (), -0.0)


def test_arguments_compare_by_value_and_nan_by_bits():
    assert UOp(Op.CONST, F32, (), float("nan")) is UOp(Op.CONST, F32, (), float("nan"))
    # a bool argument is not the int 1, though Python says True == 1
    assert UOp(Op.PARAM, I32, (), True) is not UOp(Op.PARAM, I32, (), 1)


def test_uops_are_immutable():
    with pytest.raises(AttributeError):
        const(1).arg = 2


def test_dead_graphs_are_freed():
    node = UOp(Op.ADD, I32, (const(40), const(41)))
    ref = weakref.ref(node)
    del node
    gc.collect()
    assert ref() is None


def test_replace_builds_a_new_node_and_keeps_the_old():
    a = UOp(Op.ADD, I32, (const(2), const(3)))
    b = a.replace(op=Op.SUB)
    assert b.op is Op.SUB and a.op is Op.ADD and b.src == a.src


def test_toposort_puts_sources_first_and_visits_shared_nodes_once():
    two = const(2)
    total = UOp(Op.ADD, I32, (two, two))
    order = total.toposort()
    assert order == [two, total]


def test_toposort_can_stay_outside_call_bodies():
    param = UOp(Op.PARAM, I32, (), 0)
    body = UOp(Op.NEG, I32, (param,))
    call = UOp(Op.CALL, I32, (body, const(5)))
    assert call.toposort(bodies=False) == [const(5), call]
    assert set(call.toposort()) == {param, body, const(5), call}


def test_a_100000_deep_chain_sorts_and_frees_without_recursion():
    node = const(1)
    one = node
    for _ in range(100_000):
        node = UOp(Op.ADD, I32, (node, one))
    assert len(node.toposort()) == 100_001
    ref = weakref.ref(node)
    del node
    gc.collect()
    assert ref() is None
