"""Exact rounding to the float dtypes, and float text in both directions.

Every float result in UIR is rounded once, to nearest with ties to even (uir.md section 3). Literals
are rounded from their exact value, never through float64 first, since rounding twice is wrong in
rare cases. Rounding a literal takes time linear in its length, however long it is.
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


def round_dyadic(mantissa: int, exponent: int, dtype: DType) -> float:
    """The float of `dtype` nearest to `mantissa * 2**exponent` (mantissa >= 0), ties to even,
    overflow to infinity; linear in the size of `mantissa` whatever the exponent."""
    return _round_dyadic(mantissa, exponent, dtype)[0]


def _round_dyadic(mantissa: int, exponent: int, dtype: DType) -> tuple[float, bool]:
    """`round_dyadic`, and whether the value lay exactly halfway between two floats of `dtype`."""
    if mantissa == 0:
        return 0.0, False
    p, emin, emax = float_limits(dtype)
    top = mantissa.bit_length() - 1 + exponent  # 2**top <= value < 2**(top+1)
    if top > emax:
        return math.inf, False
    if top < emin - p - 1:
        return 0.0, False  # below half the smallest subnormal
    quantum = max(top, emin) - (p - 1)  # the value of one unit in the last place
    shift = quantum - exponent
    if shift <= 0:
        steps, tie = mantissa << -shift, False
    else:
        steps = mantissa >> shift
        rest, half = mantissa - (steps << shift), 1 << (shift - 1)
        tie = rest == half
        if rest > half or (tie and steps & 1):
            steps += 1
    if quantum + steps.bit_length() - 1 > emax:
        return math.inf, tie
    return math.ldexp(steps, quantum), tie


# Digits past this many are replaced by one digit, nonzero when any of them is. The value moves
# strictly inside the gap between two multiples of the last kept digit's unit, and no number of
# fewer significant digits lies in that gap: every float of every dtype, and every midpoint
# between two neighbouring floats, has fewer (an f64 subnormal midpoint has under 770), so every
# rounding of the literal is unchanged.
KEPT_DIGITS = 800


def round_decimal(digits: str, exponent: int, dtype: DType) -> float:
    """The float of `dtype` nearest to `int(digits) * 10**exponent`, ties to even, overflow to
    infinity; linear in `len(digits)` however large the exponent.

    `digits` are decimal digits without leading zeros ("" for zero). Python's float() rounds
    decimal text to f64 correctly; rounding that f64 again to a narrower dtype is also correct
    unless the f64 lies exactly halfway between two of its floats (every such midpoint is an f64,
    and the f64 rounding never crosses one), so only then the exact value is needed.
    """
    if not digits:
        return 0.0
    if len(digits) > KEPT_DIGITS:
        kept, rest = digits[: KEPT_DIGITS - 1], digits[KEPT_DIGITS - 1 :]
        digits = kept + ("1" if rest.strip("0") else "0")
        exponent += len(rest) - 1
    scale = exponent + len(digits) - 1  # 10**scale <= value < 10**(scale+1)
    if scale > 400:
        return math.inf  # beyond f64's largest value, about 1.8e308
    if scale < -400:
        return 0.0  # below half of f64's smallest subnormal, about 4.9e-324
    wide = float(f"{digits}e{exponent}")
    if dtype is f64 or math.isinf(wide):
        return wide
    mantissa, twos = wide.as_integer_ratio()
    result, tie = _round_dyadic(mantissa, 1 - twos.bit_length(), dtype)
    if tie:
        return round_fraction(Fraction(int(digits)) * Fraction(10) ** exponent, dtype)
    return result


def _read_decimal(text: str, dtype: DType) -> float:
    """The float of `dtype` nearest to a decimal literal as `%g` writes it (`-1.25e-05`)."""
    mantissa, _, exp = text.lstrip("-").partition("e")
    whole, _, frac = mantissa.partition(".")
    magnitude = round_decimal((whole + frac).lstrip("0"), int(exp or 0) - len(frac), dtype)
    return -magnitude if text.startswith("-") else magnitude


def shortest_text(value: float, dtype: DType) -> str:
    """The shortest decimal literal that parses back to exactly `value` in `dtype`."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    for digits in range(1, 18):
        text = f"{value:.{digits}g}"
        if _read_decimal(text, dtype) == value:
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
