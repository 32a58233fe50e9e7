"""Shaped CONSTs in compact form: one object per element list, the tuple's meaning kept."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from uir.core import VerifyError, parse, print_program, verify
from uir.core.arrays import const_array
from uir.core.dtypes import VOID, Type, bool_, f32, i32, u64
from uir.core.elements import Elements
from uir.core.ops import Op
from uir.core.uop import UOp


def const(type_: Type, values: tuple) -> UOp:
    return UOp(Op.CONST, type_, (), values)


def round_trip(uop: UOp) -> UOp:
    return parse(print_program(UOp(Op.SINK, VOID, (uop,)))).sink.src[0]


def test_const_like_on_a_million_elements_is_the_parsed_and_the_spelled_out_constant():
    big = Type(f32, (1024, 1024))
    zeros = const(big, (1.0,) * big.size).const_like(0.0)
    assert zeros is const(big, (0.0,) * big.size)
    assert round_trip(zeros) is zeros
    assert len(zeros.arg) == 1024 * 1024 and zeros.arg[-1] == 0.0
    assert const_array(zeros).shape == (1024, 1024) and not const_array(zeros).any()


def test_the_sign_of_zero_and_nan_payloads():
    t = Type(f32, (2,))
    assert const(t, (0.0, 0.0)) is not const(t, (-0.0, -0.0))
    assert const(t, (0.0, -0.0)) is not const(t, (-0.0, 0.0))
    other_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000123))[0]
    assert math.isnan(other_nan)
    assert const(t, (math.nan, 1.0)) is const(t, (other_nan, 1.0))
    assert const(t, (math.nan, math.nan)) is const(t, (other_nan, -math.nan))
    assert print_program(UOp(Op.SINK, VOID, (const(t, (0.0, -0.0)),))).startswith(
        "%0 = CONST f32[2] (0.0, -0.0)\n"
    )


def test_elements_read_like_the_tuple():
    for values in [(1.5, -2.0, 1.5), (7, 7, 7), (True, False, True), (0, 1 << 70, 2)]:
        e = Elements(values)
        assert len(e) == 3 and tuple(e) == values and e == values
        assert [e[i] for i in range(3)] == list(values) and e[-1] == values[-1]
        assert [type(v) for v in e] == [type(v) for v in values]
        assert e[1:] == values[1:]
    with pytest.raises(IndexError):
        Elements.fill(1, 3)[3]
    assert Elements.fill(2.5, 3) == Elements((2.5, 2.5, 2.5))
    assert Elements((1, 1)) != Elements((True, True))  # kinds stay apart
    assert Elements((1, 1)) != Elements((1.0, 1.0))


@pytest.mark.parametrize(
    ("dtype", "values"),
    [
        (f32, (0.5, -0.0, math.inf, 3.0)),
        (i32, (-(2**31), 0, 5, 2**31 - 1)),
        (u64, (0, 2**64 - 1, 2**63, 1)),
        (bool_, (True, False, False, True)),
        (i32, (4, 4, 4, 4)),
    ],
)
def test_arrays_of_every_form(dtype, values):
    uop = const(Type(dtype, (2, 2)), values)
    want = np.array(values, dtype=dtype.storage).reshape(2, 2)  # numpy from the plain list
    got = const_array(uop)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert round_trip(uop) is uop
    verify(parse(print_program(UOp(Op.SINK, VOID, (uop,)))))


def test_verification_sees_every_element():
    with pytest.raises(VerifyError, match="2147483648 is out of range for i32"):
        verify(parse("%a = CONST i32[3] (1, 2147483648, 3)\n%o = SINK void %a\n"))
    with pytest.raises(VerifyError, match="-2147483649 is out of range for i32"):
        verify(parse("%a = CONST i32[3] (-2147483649, 0, 3)\n%o = SINK void %a\n"))
    with pytest.raises(VerifyError, match="not a literal of type i32"):
        verify(parse("%a = CONST i32[2] (1, 2.5)\n%o = SINK void %a\n"))
    with pytest.raises(VerifyError, match="not a literal of type bool"):
        verify(parse("%a = CONST bool[2] (true, 1)\n%o = SINK void %a\n"))
    with pytest.raises(VerifyError, match="needs a flat tuple of 3 elements"):
        verify(parse("%a = CONST i32[3] (1, 2)\n%o = SINK void %a\n"))


def test_a_parsed_broadcast_and_a_built_one_are_one_uop():
    text = "%a = CONST i32[5] (9, 9, 9, 9, 9)\n%o = SINK void %a\n"
    parsed = parse(text).sink.src[0]
    assert (
        parsed is const(Type(i32, (5,)), (9,) * 5) is const(Type(i32, (5,)), (0,) * 5).const_like(9)
    )
