"""Exact rounding to the float dtypes, and float text in both directions.

Every float result in UIR is rounded once, to nearest with ties to even (uir.md section 3). Literals
are rounded from their exact rational value, never through float64 first, since rounding twice is
wrong in rare cases.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .dtypes import DType, bf16, f16, f32, f64


def float_limits(dtype: DType) -> tuple[int, int, int]:
    """(significand bits p, smallest normal exponent, largest exponent) of a float dtype."""
    emax = (1 << (dtype.exponent - 1)) - 1
    return dtype.mantissa, 1 - emax, emax


def round_fraction(value: Fraction, dtype: DType, negative_zero: bool = False) -> float:
    """The float of `dtype` nearest to an exact rational, ties to even, overflow to infinity.

    The result is a Python float, which holds every value of every float dtype exactly.
    """
    if value == 0:
        return -0.0 if negative_zero else 0.0
    p, emin, emax = float_limits(dtype)
    magnitude = abs(value)
    num, den = magnitude.numerator, magnitude.denominator
    exp = num.bit_length() - den.bit_length()  # 2**(exp-1) < magnitude < 2**(exp+1)
    if (num << max(0, -exp)) < (den << max(0, exp)):
        exp -= 1  # now 2**exp <= magnitude < 2**(exp+1)
    quantum = max(exp, emin) - (p - 1)  # the value of one unit in the last place
    steps = round(magnitude / Fraction(2) ** quantum)  # Fraction rounds half to even
    overflows = quantum + steps.bit_length() - 1 > emax
    result = math.inf if overflows else math.ldexp(steps, quantum)
    return -result if value < 0 else result


def shortest_text(value: float, dtype: DType) -> str:
    """The shortest decimal literal that parses back to exactly `value` in `dtype`."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        if round_fraction(Fraction(text), dtype, text.startswith("-")) == value:
            break
    if not any(c in text for c in ".e"):
        text += ".0"  # keep it a float literal: an int literal -0 would be +0
    return text


# Enough significant digits to tell every value of the dtype apart (uir.md section 11).
_OUTPUT_DIGITS = {f16: 5, bf16: 4, f32: 9, f64: 17}


def format_float(value: float, dtype: DType) -> str:
    """Output formatting of uir.md section 11: C's %.Ng of the exact value."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    digits = _OUTPUT_DIGITS[dtype]
    return f"{value:.{digits}g}"
