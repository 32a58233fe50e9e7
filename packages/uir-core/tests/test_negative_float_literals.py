"""Negative float literals keep their sign (uir.md section 2); CONST f32 -1.5 was once 1.5."""

import math

from uir.core import parse


def _const(text: str) -> float:
    program = parse(f"%a = CONST f32 {text}\n%out = SINK void %a\n")
    return program.sink.src[0].arg


def test_negative_decimal_literal_is_negative() -> None:
    assert _const("-1.5") == -1.5


def test_negative_hexfloat_literal_is_negative() -> None:
    assert _const("-0x1.8p1") == -3.0


def test_negative_literal_rounds_once_to_nearest() -> None:
    # -0.1 in f32 is the negative of 0.1's nearest f32, 13421773 * 2**-27.
    assert _const("-0.1") == -13421773 * 2.0**-27


def test_negative_zero_literal_is_negative_zero() -> None:
    value = _const("-0.0")
    assert value == 0 and math.copysign(1.0, value) == -1.0


def test_tiny_negative_literal_rounds_to_negative_zero() -> None:
    value = _const("-1e-50")
    assert value == 0 and math.copysign(1.0, value) == -1.0
