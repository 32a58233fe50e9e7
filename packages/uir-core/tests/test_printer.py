"""parse(print(g)) is g, and printing is idempotent, for graphs of every shape the parser builds."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from uir.core.arrays import round_array
from uir.core.dtypes import DTYPES, Type
from uir.core.ops import Op
from uir.core.parse import const_value, parse, parse_literal
from uir.core.printer import print_program
from uir.core.uop import UOp

dtypes = st.sampled_from([d for d in DTYPES.values() if not d.is_void])
types = st.builds(Type, dtypes, st.lists(st.integers(1, 4), max_size=2).map(tuple))


def float_literal(sign: str, digits: int, point: int, exponent: int, hex_: bool) -> object:
    text = f"0x{digits:x}.{point:x}p{exponent}" if hex_ else f"{digits}.{point}e{exponent}"
    return parse_literal(sign + text, 1)


# Literal text of every form, through the parser: decimal and hex floats, short and long.
float_literals = st.builds(
    float_literal,
    st.sampled_from(["", "-"]),
    st.integers(0, 10**9),
    st.integers(0, 10**6),
    st.sampled_from([-3000, -400, -1, 0, 5, 400, 3000]),
    st.booleans(),
)
atoms = st.one_of(
    st.integers(-(2**70), 2**70), st.booleans(), st.sampled_from(list(Op)), float_literals
)
args = st.one_of(
    st.none(), atoms, st.lists(st.one_of(atoms, st.tuples(atoms, atoms)), max_size=3).map(tuple)
)


@st.composite
def graphs(draw) -> UOp:
    """Random DAGs, well-typed or not: printing must not care."""
    nodes: list[UOp] = []
    for _ in range(draw(st.integers(1, 12))):
        type_ = draw(types)
        if type_.dtype.is_float and draw(st.booleans()):
            count = type_.size if type_.shape else 1
            drawn = draw(st.lists(st.floats(), min_size=count, max_size=count))
            values = [float(x) for x in round_array(np.array(drawn), type_.dtype)]
            arg = tuple(values) if type_.shape else values[0]
            nodes.append(UOp(Op.CONST, type_, (), arg))
            continue
        op = draw(st.sampled_from([o for o in Op if o is not Op.SINK]))
        src = draw(st.lists(st.sampled_from(nodes), max_size=3)) if nodes else []
        arg = draw(args)
        if op is Op.CONST:
            arg = const_value(arg, type_)  # the parser gives CONST literals their type's value
        nodes.append(UOp(op, type_, tuple(src), arg))
    roots = draw(st.lists(st.sampled_from(nodes), min_size=1, max_size=3))
    return UOp(Op.SINK, Type(DTYPES["void"]), tuple(roots))


@given(graphs())
def test_parse_of_print_is_the_same_graph(sink):
    text = print_program(sink)
    assert parse(text).sink is sink
    assert print_program(parse(text).sink) == text


def test_canonical_names_follow_a_topological_order():
    text = "%z = CONST i32 3\n%y = CONST i32 2\n%x = ADD i32 %y %z\n%o = SINK void %x %z\n"
    assert print_program(parse(text).sink) == (
        "%0 = CONST i32 2\n%1 = CONST i32 3\n%2 = ADD i32 %0 %1\n%3 = SINK void %2 %1\n"
    )


def test_float_literals_outside_float_consts_print_their_exact_value():
    text = "%a = CONST i32 (0x1.8p-1, -1.50, 1e3, -inf)\n%o = SINK void %a\n"
    assert "(0.75, -1.5, 1000.0, -inf)" in print_program(parse(text).sink)


def test_float_arguments_print_exactly_and_keep_negative_zero():
    text = "%a = CONST f32[3] (0.1, -0.0, 3)\n%o = SINK void %a\n"
    assert print_program(parse(text).sink).splitlines()[0] == "%0 = CONST f32[3] (0.1, -0.0, 3.0)"
