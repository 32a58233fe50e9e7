import math
import struct
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from uir.core.arrays import round_array
from uir.core.dtypes import bf16, f16, f32, f64
from uir.core.floats import format_float, round_fraction, shortest_text


def f32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def test_a_tenth_rounds_to_the_nearest_f32():
    assert f32_bits(round_fraction(Fraction("0.1"), f32)) == 0x3DCCCCCD


def test_literal_rounding_is_single_not_through_float64():
    # 1 + 2**-24 is the midpoint between 1 and the next f32; a hair above it must round up.
    # float64 drops the hair (it is far below half a float64 ulp), leaving a tie that rounds
    # to even, down to 1.0: rounding twice gives the wrong answer.
    exact = Fraction(1) + Fraction(1, 2**24) + Fraction(1, 2**80)
    text = str(exact.numerator * 10**80 // exact.denominator)  # exact: 2**80 divides 10**80
    decimal = f"{text[0]}.{text[1:]}"
    assert Fraction(decimal) == exact
    assert float(np.float32(float(decimal))) == 1.0  # the double-rounded answer
    assert round_fraction(Fraction(decimal), f32) == 1 + 2**-23


def test_overflow_rounds_to_infinity_at_the_halfway_point():
    largest = (2 - 2**-23) * 2**127
    halfway = Fraction(largest) + Fraction(2**103)  # half an ulp above the largest f32
    assert round_fraction(halfway - 1, f32) == largest
    assert round_fraction(halfway, f32) == math.inf  # the tie goes to even: infinity
    assert round_fraction(-halfway, f32) == -math.inf


def test_subnormals_round_to_multiples_of_the_smallest():
    smallest = 2.0**-149
    assert round_fraction(Fraction("1e-45"), f32) == smallest
    assert round_fraction(Fraction(smallest) / 2, f32) == 0.0  # tie to even: zero
    assert round_fraction(Fraction(smallest) * 3 / 4, f32) == smallest


def test_zero_keeps_the_sign_asked_for():
    assert math.copysign(1, round_fraction(Fraction(0), f32, negative_zero=True)) == -1
    assert math.copysign(1, round_fraction(Fraction(0), f32)) == 1


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_exact_rounding_agrees_with_numpy_on_float64_inputs(x):
    # numpy's float64 -> float32/float16 conversions round once, correctly.
    with np.errstate(over="ignore"):
        assert round_fraction(Fraction(x), f32) == float(np.float32(x))
        assert round_fraction(Fraction(x), f16) == float(np.float16(x))
    assert round_fraction(Fraction(x), f64) == x


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_array_and_exact_rounding_agree_for_bf16(x):
    expected = round_fraction(Fraction(x), bf16)
    got = float(round_array(np.array([x]), bf16)[0])
    assert got == expected


def test_bf16_rounds_to_eight_significand_bits():
    assert float(round_array(np.array([1 + 2**-8]), bf16)[0]) == 1.0  # tie to even
    assert float(round_array(np.array([1 + 3 * 2**-9]), bf16)[0]) == 1 + 2**-7


@given(st.floats(width=32))
def test_shortest_text_reads_back_exactly(x):
    text = shortest_text(x, f32)
    if math.isnan(x):
        assert text == "nan"
    elif math.isinf(x):
        assert text == ("inf" if x > 0 else "-inf")
    else:
        back = round_fraction(Fraction(text), f32, negative_zero=text.startswith("-"))
        assert back == x and math.copysign(1, back) == math.copysign(1, x)
        assert "." in text or "e" in text  # a float literal, never an int one


def test_output_format_is_c_percent_g():
    assert format_float(float(np.float32(0.1)), f32) == "0.100000001"
    assert format_float(1e10, f32) == "1e+10"
    assert format_float(-0.0, f32) == "-0"
    assert format_float(math.nan, f32) == "nan"
    assert format_float(-math.inf, f32) == "-inf"
    assert format_float(1 / 3, f64) == "0.33333333333333331"
