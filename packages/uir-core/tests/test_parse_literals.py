"""Float literals keep their sign (uir.md sections 2 and 3)."""

from __future__ import annotations

import math

from uir.core import parse


def _value(text: str) -> float:
    return parse(f"%a = CONST f32 {text}\n%out = SINK void %a\n").sink.src[0].arg


def test_negative_decimal_literal_is_negative():
    assert _value("-2.25") == -2.25


def test_negative_hex_float_literal_is_negative():
    assert _value("-0x1.8p1") == -3.0


def test_negative_literal_that_underflows_is_negative_zero():
    value = _value("-1e-50")
    assert value == 0.0 and math.copysign(1.0, value) == -1.0


def test_negative_literal_that_overflows_is_minus_infinity():
    assert _value("-1e39") == -math.inf
