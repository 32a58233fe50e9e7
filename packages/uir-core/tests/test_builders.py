"""The typed builders of UOp type what they build by the verifier's rules (uir.core.shapes)."""

from __future__ import annotations

import pytest

from uir.core import Op, Type, VerifyError, parse, print_program, verify
from uir.core.dtypes import BOOL, F32, I32, f32, i32
from uir.core.shapes import ShapeError
from uir.core.uop import UOp


def _f32(*shape: int) -> Type:
    return Type(f32, shape)


def test_each_builder_types_its_result_as_worked_out_by_hand() -> None:
    x = UOp.const(_f32(2, 3), 1.0)
    assert x.reshape((3, 2)).type == _f32(3, 2)
    assert x.reshape((6,)).type == _f32(6)
    assert x.permute((1, 0)).type == _f32(3, 2)
    assert x.pad(((1, 0), (2, 2))).type == _f32(3, 7)
    assert x.shrink(((0, 1), (1, 3))).type == _f32(1, 2)
    assert x.flip((1,)).type == _f32(2, 3)
    assert x.expand((4, 2, 3)).type == _f32(4, 2, 3)
    assert x.reduce(Op.ADD, (1,)).type == _f32(2)
    assert x.reduce(Op.MAX, (0, 1)).type == F32
    assert UOp.stack(x, x, x).type == _f32(3, 2, 3)
    assert x.alu(Op.CMPLT, x).type == Type(BOOL.dtype, (2, 3))
    assert x.cast(i32).type == Type(i32, (2, 3))
    assert x.bitcast(i32).type == Type(i32, (2, 3))
    assert x.alu(Op.CMPLT, x).where(x, x).type == _f32(2, 3)
    assert UOp.const(I32, 3).alu(Op.ADD, UOp.const(I32, 4)).type == I32


# Each case: what the builder is asked for, and the statement a program would write for it; the
# builder must refuse with the very message the verifier gives that statement.
REJECTED = [
    (lambda x: x.reshape((4,)), "%r = RESHAPE f32[4] %x"),
    (lambda x: x.permute((0, 0)), "%r = PERMUTE f32[2,2] %x (0, 0)"),
    (lambda x: x.pad(((-1, 0), (0, 0))), "%r = PAD f32[1,3] %x ((-1, 0), (0, 0))"),
    (lambda x: x.shrink(((0, 3), (0, 1))), "%r = SHRINK f32[3,1] %x ((0, 3), (0, 1))"),
    (lambda x: x.flip((1, 0)), "%r = FLIP f32[2,3] %x (1, 0)"),
    (lambda x: x.expand((2, 4)), "%r = EXPAND f32[2,4] %x"),
    (lambda x: x.reduce(Op.ADD, (2,)), "%r = REDUCE f32[2] %x (ADD, (2))"),
    (lambda x: x.reduce(Op.SUB, (0,)), "%r = REDUCE f32[3] %x (SUB, (0))"),
    (lambda x: x.alu(Op.IDIV, x), "%r = IDIV f32[2,3] %x %x"),
    (lambda x: x.bitcast(BOOL.dtype), "%r = BITCAST bool[2,3] %x"),
]


@pytest.mark.parametrize(("build", "statement"), REJECTED)
def test_a_builder_refuses_what_the_verifier_rejects_in_its_words(build, statement: str) -> None:
    x = UOp.const(_f32(2, 3), 1.0)
    with pytest.raises(ShapeError) as built:
        build(x)
    text = f"%x = CONST f32[2,3] (1, 1, 1, 1, 1, 1)\n{statement}\n%o = SINK void %r\n"
    # Written as a program, the same request is rejected with the same words.
    with pytest.raises(VerifyError) as verified:
        verify(parse(text))
    assert verified.value.message == str(built.value)
    assert verified.value.line == 2


def test_a_loop_program_built_with_the_builders_verifies_and_prints() -> None:
    # The week-3 accumulator of uir.md section 7: sum of (1.5, 2, 3, 4), printed 10.5.
    x = UOp(Op.BUFFER, _f32(4), (UOp.const(_f32(4), (1.5, 2.0, 3.0, 4.0)),), 0)
    out = UOp(Op.BUFFER, _f32(1), (), 1)
    acc = UOp(Op.LOCAL, _f32(1), (), 0)
    zero = UOp.const(I32, 0)
    init = acc.index(zero).store(UOp.const(F32, 0.0))
    k = UOp.range(UOp.const(I32, 4), 0)
    carried = acc.after(init, k)
    new = carried.index(zero).load().alu(Op.ADD, x.index(k).load())
    done = acc.after(carried.index(zero).store(new).end(k))
    result = out.after(out.index(zero).store(done.index(zero).load()))
    program = parse(print_program(UOp.sink(result)))
    verify(program)
    assert program.sink is UOp.sink(result)
