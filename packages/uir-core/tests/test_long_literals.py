"""Literals of any length (uir.md sections 2 and 3): correct values, in time linear in the length.

Python refuses int conversions of over 4,300 digits, and exact rational arithmetic on a long
literal is quadratic or worse: at the 100 KB sizes below, a quadratic step takes minutes, so these
tests would hang rather than pass slowly. No test measures time.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uir.core import VerifyError, parse, print_program, verify
from uir.core.dtypes import DTYPES, bf16, f16, f32, f64
from uir.core.floats import round_decimal, round_dyadic, round_fraction
from uir.core.parse import parse_argument

BIG = 100_000  # characters in a "long" literal


def const(type_: str, literal: str) -> float | int:
    program = parse(f"%a = CONST {type_} {literal}\n%out = SINK void %a\n")
    verify(program)
    return program.sink.src[0].arg


def test_a_decimal_with_4300_zeros_after_the_point_is_zero():
    assert const("f32", "0." + "0" * 4300 + "1") == 0.0
    assert const("f64", "0." + "0" * 4300 + "1") == 0.0


def test_a_decimal_exponent_of_4400_nines_is_infinity():
    assert const("f32", "1e" + "9" * 4400) == math.inf
    assert const("f32", "-1e" + "9" * 4400) == -math.inf
    assert const("f32", "1e-" + "9" * 4400) == 0.0


def test_an_int_literal_of_4400_digits_is_out_of_range_not_an_internal_error():
    with pytest.raises(VerifyError, match="out of range for i32") as info:
        const("i32", "7" * 4400)
    assert info.value.exit_code == 3
    with pytest.raises(VerifyError, match="out of range for i64"):
        const("i64", "-0x" + "f" * 4000)
    # In a float CONST it is a number like any other: far beyond every float's range.
    assert const("f64", "7" * 4400) == math.inf
    assert const("f16", "-" + "7" * 4400) == -math.inf


LONG_LITERALS = {
    "decimal digits": "1." + "3" * BIG,
    "decimal zeros": "0." + "0" * BIG + "1",
    "decimal exponent": "1e" + "9" * BIG,
    "hex digits": "0x1." + "f" * BIG + "p-3",
    "hex exponent": "0x1p-" + "9" * BIG,
    "hex zeros": "0x0." + "0" * BIG + "1p1",
    "int": "1" * BIG,
    "hex int": "0x" + "f" * BIG,
}


@pytest.mark.parametrize("name", LONG_LITERALS)
@pytest.mark.parametrize("dtype", ["f32", "bf16", "f64", "i32"])
def test_100kb_literals_parse_verify_and_print(name, dtype):
    literal = LONG_LITERALS[name]
    # Also as the argument of a LOCAL, where it stays unrounded and prints as its exact value.
    text = f"%a = CONST {dtype} {literal}\n%l = LOCAL {dtype}[1] {literal}\n%o = SINK void %a %l\n"
    program = parse(text)
    assert parse(print_program(program.sink)).sink is program.sink
    const_only = parse(f"%a = CONST {dtype} {literal}\n%o = SINK void %a\n")
    if dtype == "i32":  # a float literal, or an int far out of range
        with pytest.raises(VerifyError):
            verify(const_only)
    else:
        verify(const_only)


def test_long_literals_have_their_exact_values():
    # 1.333...3 (100,000 threes) lies between the f32 neighbours 11184810 * 2**-23 and the next.
    assert const("f32", LONG_LITERALS["decimal digits"]) == 11184811 * 2.0**-23
    # 0x1.fff...f p-3 is just under 2 * 2**-3: it rounds up to 0.25 in every dtype.
    assert const("bf16", LONG_LITERALS["hex digits"]) == 0.25
    # 0x0.000...01 p1 (100,000 zeros) is 2**(1 - 4 * 100,001): zero in f64.
    assert const("f64", LONG_LITERALS["hex zeros"]) == 0.0
    assert const("f32", LONG_LITERALS["hex int"]) == math.inf


# 1 + 2**-24 lies halfway between the f32 neighbours 1 and 1 + 2**-23. Its exact decimal expansion
# is 1.000000059604644775390625.
F32_MIDPOINT = "1.000000059604644775390625"


def test_an_exact_midpoint_rounds_to_even():
    assert const("f32", F32_MIDPOINT) == 1.0
    assert const("f32", F32_MIDPOINT + "0" * BIG) == 1.0  # trailing zeros change nothing
    assert const("f32", "0x1.000001p0") == 1.0


def test_a_hair_above_the_midpoint_rounds_up_even_past_thousands_of_digits():
    # Through f64 first, the value would become the midpoint itself, then round to even: 1.0.
    assert const("f32", F32_MIDPOINT + "0" * BIG + "1") == 1 + 2.0**-23
    assert const("f32", "0x1.000001" + "0" * BIG + "1p0") == 1 + 2.0**-23


def test_a_hair_below_the_midpoint_rounds_down():
    assert const("f32", "1.000000059604644775390624" + "9" * BIG) == 1.0


def test_spellings_of_one_value_are_one_argument():
    assert parse_argument("1.50e2", 1) == parse_argument("150.0", 1)
    assert parse_argument("0x1.8p1", 1) == parse_argument("3.0", 1) == parse_argument("0x3p0", 1)
    assert parse_argument("-0x0p0", 1) == parse_argument("-0.0", 1)
    assert str(parse_argument("0x1.8p-1", 1)) == "0.75"


FLOATS = [f16, bf16, f32, f64]


@settings(deadline=None)
@given(
    st.sampled_from(FLOATS),
    st.integers(1, 10**40),
    st.integers(-400, 400),
)
def test_decimal_rounding_agrees_with_exact_rationals(dtype, digits, exponent):
    exact = round_fraction(Fraction(digits) * Fraction(10) ** exponent, dtype)
    assert round_decimal(str(digits), exponent, dtype) == exact


@settings(deadline=None)
@given(st.sampled_from(FLOATS), st.integers(1, 2**80), st.integers(-1200, 1100))
def test_dyadic_rounding_agrees_with_exact_rationals(dtype, mantissa, exponent):
    exact = round_fraction(Fraction(mantissa) * Fraction(2) ** exponent, dtype)
    assert round_dyadic(mantissa, exponent, dtype) == exact


@settings(deadline=None)
@given(st.sampled_from(FLOATS), st.integers(1, 2**60), st.integers(-1100, 1000), st.booleans())
def test_decimal_rounding_of_dyadic_midpoints(dtype, odd, exponent, above):
    # m * 2**e written in decimal exactly, then nudged by one unit far past 800 digits: the
    # cases where rounding through f64 first goes wrong.
    odd |= 1
    value = Fraction(odd) * Fraction(2) ** exponent
    places = max(0, -exponent)
    digits = str(odd * 5**places if exponent < 0 else odd << exponent)
    nudged = int(digits) * 10**900 + (1 if above else -1)
    want = round_fraction(value + Fraction(1 if above else -1, 10 ** (places + 900)), dtype)
    assert round_decimal(str(nudged), -(places + 900), dtype) == want


def test_every_float_dtype_is_covered():
    assert {d for d in DTYPES.values() if d.is_float} == set(FLOATS)
