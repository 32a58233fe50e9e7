"""The interpreter against values worked out independently: Python ints, numpy float32, by hand."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from uir.core.dtypes import bf16 as BF16
from uir.core.dtypes import f32 as F32
from uir.core.dtypes import i16 as I16
from uir.core.floats import shortest_text
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.output import format_value
from uir.core.parse import parse
from uir.core.semantics import apply
from uir.core.verify import verify

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
i32s = st.integers(INT_MIN, INT_MAX)
f32s = st.floats(width=32)


def run(text: str) -> list[str]:
    program = parse(text, "t.uir")
    verify(program)
    return [
        format_value(v, s.dtype)
        for v, s in zip(evaluate(program.sink), program.sink.src, strict=True)
    ]


def binary(op: str, dtype: str, a: str, b: str, out: str | None = None) -> str:
    return run(
        f"%a = CONST {dtype} {a}\n%b = CONST {dtype} {b}\n"
        f"%c = {op} {out or dtype} %a %b\n%o = SINK void %c\n"
    )[0]


def wrap(x: int) -> int:
    return (x + 2**31) % 2**32 - 2**31


def f32_text(x: float) -> str:
    return "nan" if math.isnan(x) else shortest_text(x, F32)


def c_format(x: np.float32) -> str:
    x = float(x)
    if math.isnan(x):
        return "nan"
    return "inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:.9g}"


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        ("IDIV", INT_MIN, -1, INT_MIN),
        ("MOD", INT_MIN, -1, 0),
        ("IDIV", 7, 0, -1),
        ("MOD", 7, 0, 7),
        ("MOD", -7, 0, -7),
        ("IDIV", -7, 2, -3),
        ("MOD", -7, 2, -1),
        ("IDIV", 7, -2, -3),
        ("MOD", 7, -2, 1),
        ("SHL", 1, 33, 2),
        ("SHL", 1, -1, INT_MIN),
        ("SHR", -8, 1, -4),
        ("SHR", INT_MIN, 31, -1),
        ("ADD", INT_MAX, 1, INT_MIN),
        ("MUL", 65536, 65536, 0),
        ("SUB", INT_MIN, 1, INT_MAX),
    ],
)
def test_int_edge_cases(op, a, b, expected):
    assert binary(op, "i32", str(a), str(b)) == str(expected)


@given(i32s, i32s)
def test_wrapping_int_arithmetic_matches_python_ints_masked_to_32_bits(a, b):
    for op, exact in [("ADD", a + b), ("SUB", a - b), ("MUL", a * b)]:
        assert binary(op, "i32", str(a), str(b)) == str(wrap(exact))


@given(i32s, i32s.filter(lambda b: b != 0))
def test_division_truncates_like_c(a, b):
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    assert binary("IDIV", "i32", str(a), str(b)) == str(wrap(quotient))
    assert binary("MOD", "i32", str(a), str(b)) == str(wrap(a - quotient * b))


@given(f32s, f32s)
def test_f32_arithmetic_rounds_once_like_numpy_float32(a, b):
    x, y = np.float32(a), np.float32(b)
    with np.errstate(all="ignore"):
        expected = {"ADD": x + y, "SUB": x - y, "MUL": x * y, "FDIV": x / y}
    for op, value in expected.items():
        assert binary(op, "f32", f32_text(a), f32_text(b)) == c_format(value)


def test_f32_sum_that_float64_gets_wrong():
    # In f32, 16777216 + 1 rounds back to 16777216 (ties to even); float64 keeps 16777217.
    assert binary("ADD", "f32", "16777216", "1") == "16777216"


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        ("MAX", "-0.0", "0.0", "0"),
        ("MAX", "0.0", "-0.0", "0"),
        ("MIN", "0.0", "-0.0", "-0"),
        ("MIN", "-0.0", "0.0", "-0"),
        ("MAX", "nan", "1", "nan"),
        ("MAX", "1", "nan", "nan"),
        ("MIN", "nan", "-inf", "nan"),
        ("MAX", "-inf", "-3", "-3"),
    ],
)
def test_ieee_maximum_and_minimum(op, a, b, expected):
    assert binary(op, "f32", a, b) == expected


@pytest.mark.parametrize(
    ("op", "a", "b", "expected"),
    [
        ("CMPLT", "nan", "1", "false"),
        ("CMPLE", "nan", "nan", "false"),
        ("CMPEQ", "nan", "nan", "false"),
        ("CMPNE", "nan", "nan", "true"),
        ("CMPEQ", "-0.0", "0.0", "true"),
        ("CMPLT", "-0.0", "0.0", "false"),
    ],
)
def test_comparisons_with_nan_and_signed_zero(op, a, b, expected):
    assert binary(op, "f32", a, b, out="bool") == expected


@pytest.mark.parametrize(
    ("value", "dtype", "target", "expected"),
    [
        ("3e9", "f32", "i32", "2147483647"),
        ("-3e9", "f32", "i32", "-2147483648"),
        ("nan", "f32", "i32", "0"),
        ("inf", "f32", "i32", "2147483647"),
        ("-2.7", "f32", "i32", "-2"),
        ("2147483647", "i32", "f32", "2.14748365e+09"),
        ("16777217", "i32", "f32", "16777216"),
        ("nan", "f32", "bool", "true"),
        ("-0.0", "f32", "bool", "false"),
        ("-1", "i32", "u8", "255"),
        ("300", "i32", "i8", "44"),
        ("true", "bool", "f32", "1"),
        ("1.0", "f32", "BITCAST i32", "1065353216"),
        ("-0.0", "f32", "BITCAST i32", "-2147483648"),
        ("2139095040", "i32", "BITCAST f32", "inf"),
    ],
)
def test_casts(value, dtype, target, expected):
    op, _, out = target.rpartition(" ")
    text = f"%a = CONST {dtype} {value}\n%c = {op or 'CAST'} {out} %a\n%o = SINK void %c\n"
    assert run(text) == [expected]


@given(f32s)
def test_float_to_int_cast_truncates_and_saturates(x):
    if math.isnan(x):
        expected = 0
    else:
        expected = min(max(math.trunc(x) if math.isfinite(x) else x, INT_MIN), INT_MAX)
    text = f"%a = CONST f32 {f32_text(x)}\n%c = CAST i32 %a\n%o = SINK void %c\n"
    assert run(text) == [str(int(expected))]


@pytest.mark.parametrize(
    ("op", "value", "expected"),
    [
        ("SQRT", "2", "1.41421354"),
        ("SQRT", "-1", "nan"),
        ("SQRT", "-0.0", "-0"),
        ("RECIP", "-0.0", "-inf"),
        ("RECIP", "3", "0.333333343"),
        ("TRUNC", "-2.5", "-2"),
        ("TRUNC", "-0.5", "-0"),
        ("EXP2", "3", "8"),
        ("LOG2", "0", "-inf"),
        ("SIN", "0", "0"),
        ("NEG", "0.0", "-0"),
    ],
)
def test_unary_float_math(op, value, expected):
    text = f"%a = CONST f32 {value}\n%c = {op} f32 %a\n%o = SINK void %c\n"
    assert run(text) == [expected]


def test_call_substitution_does_not_enter_nested_bodies():
    # inner(p0) = p0 * 10; outer(p0, p1) = inner(p1) + p0; outer(1, 2) = 2 * 10 + 1 = 21
    text = """
%p0 = PARAM i32 0
%p1 = PARAM i32 1
%ten = CONST i32 10
%inner = MUL i32 %p0 %ten
%ci = CALL i32 %inner %p1
%outer = ADD i32 %ci %p0
%one = CONST i32 1
%two = CONST i32 2
%c = CALL i32 %outer %one %two
%o = SINK void %c
"""
    assert run(text) == ["21"]


def test_the_design_brief_call_example_prints_4():
    text = """
%x = PARAM i32 0
%y = PARAM i32 1
%s = ADD i32 %x %y
%d = SUB i32 %x %y
%f = STACK i32[2] %s %d
%a = CONST i32 7
%b = CONST i32 3
%c = CALL i32[2] %f %a %b
%one = CONST i32 1
%r = INDEX i32 %c %one
%out = SINK void %r %c
"""
    assert run(text) == ["4", "10 4"]


def test_literal_double_rounding_case_prints_the_correct_f32():
    # 1 + 2**-24 + 2**-80 is just above a tie: the right f32 is 1 + 2**-23 = 1.00000012.
    decimal = "1.00000005960464477539062582718061255302767487140869206996285356581211090087890625"
    assert run(f"%a = CONST f32 {decimal}\n%o = SINK void %a\n") == ["1.00000012"]


def test_a_scalar_bitcast_stays_a_scalar_and_can_index():
    text = """
%one = CONST f32 1.4e-45
%k = BITCAST i32 %one
%m = CONST i32 1
%j = AND i32 %k %m
%v = CONST i32[2] (10, 20)
%e = INDEX i32 %v %j
%o = SINK void %e
"""
    assert run(text) == ["20"]  # 1.4e-45 is the smallest subnormal: bit pattern 1


def test_empty_sink_prints_nothing():
    assert run("%o = SINK void\n") == []


def test_scalar_bitcast_to_bf16_is_an_array():
    # i16 -32768 is 0x8000: as bf16 that is -0.0. Scalar outputs are 0-d arrays, never np scalars.
    out = apply(Op.BITCAST, BF16, [np.array(-32768, dtype=np.int16)], [I16])
    assert isinstance(out, np.ndarray) and out.shape == ()
    assert float(out) == 0.0 and math.copysign(1.0, float(out)) == -1.0
