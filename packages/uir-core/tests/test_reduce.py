"""REDUCE folds in the order uir.md section 8 fixes, checked against plain Python loops.

Every reference here folds one element at a time from the first, rounding each step with Python
floats and one conversion to the dtype (a float64 sum or product of two f16 or f32 values rounded
once more to the dtype is correctly rounded: 53 >= 2p + 2), never through `semantics`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from uir.core.dtypes import bf16, f16, f32, f64, i8, i32, u8
from uir.core.ops import Op
from uir.core.semantics import reduce

SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, 3.4e38, -3.4e38]


def f32_floats() -> st.SearchStrategy[float]:
    finite = st.floats(width=32, allow_nan=False, allow_infinity=False)
    return st.one_of(finite, st.sampled_from(SPECIAL))


def bits(x: object) -> bytes:
    """A value's identity for bit-exact comparison, every NaN one value (uir.md section 3)."""
    value = float(x)  # type: ignore[arg-type]
    return b"nan" if math.isnan(value) else np.float64(value).tobytes()


def to_bf16(x: float) -> float:
    """Round a float to bf16 (8 significant bits, exponents down to -126, subnormals below) by
    exact rational arithmetic, ties to even."""
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    exponent = max(math.frexp(x)[1] - 1, -126)  # 2^exponent <= |x| for normals
    quantum = Fraction(2) ** (exponent - 7)
    rounded = round(Fraction(x) / quantum) * quantum  # round() on a Fraction: ties to even
    if abs(rounded) >= 2**128:
        return math.copysign(math.inf, x)
    return math.copysign(float(rounded), x) if rounded == 0 else float(rounded)


def ieee_max(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0:
        return a if not math.copysign(1, a) < 0 else b
    return a if a > b else b


def ieee_min(a: float, b: float) -> float:
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b == 0:
        return a if math.copysign(1, a) < 0 else b
    return a if a < b else b


def python_fold(op: Op, values: list[float], rounding) -> float:
    step = {
        Op.ADD: lambda a, b: rounding(a + b),
        Op.MUL: lambda a, b: rounding(a * b),
        Op.MAX: ieee_max,
        Op.MIN: ieee_min,
    }[op]
    acc = values[0]
    for v in values[1:]:
        acc = step(acc, v)
    return acc


def f32_round(x: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def f16_round(x: float) -> float:
    with np.errstate(over="ignore"):
        return float(np.float16(x))


FOLDS = [Op.ADD, Op.MUL, Op.MAX, Op.MIN]


@settings(deadline=None, max_examples=300)
@given(st.sampled_from(FOLDS), st.lists(f32_floats(), min_size=1, max_size=40))
def test_f32_fold_is_sequential_from_the_first_element(op: Op, values: list[float]) -> None:
    values = [f32_round(v) for v in values]
    got = reduce(op, f32, np.array(values, dtype=np.float32), (0,))
    assert got.dtype == np.float32 and got.shape == ()
    assert bits(got) == bits(python_fold(op, values, f32_round))


@settings(deadline=None, max_examples=200)
@given(
    st.sampled_from(FOLDS),
    st.lists(st.floats(width=16, allow_nan=False) | st.sampled_from(SPECIAL), min_size=1),
)
def test_f16_fold_rounds_every_step_to_f16(op: Op, values: list[float]) -> None:
    values = [f16_round(v) for v in values]
    got = reduce(op, f16, np.array(values, dtype=np.float16), (0,))
    assert bits(got) == bits(python_fold(op, values, f16_round))


@settings(deadline=None, max_examples=200)
@given(st.sampled_from(FOLDS), st.lists(f32_floats(), min_size=1, max_size=30))
def test_bf16_fold_rounds_every_step_to_bf16(op: Op, values: list[float]) -> None:
    values = [to_bf16(v) for v in values]
    got = reduce(op, bf16, np.array(values, dtype=np.float32), (0,))
    assert bits(got) == bits(python_fold(op, values, to_bf16))


@settings(deadline=None, max_examples=200)
@given(st.sampled_from(FOLDS), st.lists(st.floats(allow_nan=True), min_size=1, max_size=30))
def test_f64_fold(op: Op, values: list[float]) -> None:
    got = reduce(op, f64, np.array(values, dtype=np.float64), (0,))
    assert bits(got) == bits(python_fold(op, values, float))


def wrap(x: int, bits_: int, signed: bool) -> int:
    x &= (1 << bits_) - 1
    return x - (1 << bits_) if signed and x >= 1 << (bits_ - 1) else x


@settings(deadline=None, max_examples=200)
@given(
    st.sampled_from(FOLDS),
    st.sampled_from([(i32, 32, True), (i8, 8, True), (u8, 8, False)]),
    st.data(),
)
def test_integer_folds_wrap(op: Op, dtype_info, data) -> None:
    dtype, width, signed = dtype_info
    values = data.draw(st.lists(st.integers(dtype.min, dtype.max), min_size=1, max_size=30))
    expected = values[0]
    for v in values[1:]:
        if op is Op.ADD:
            expected = wrap(expected + v, width, signed)
        elif op is Op.MUL:
            expected = wrap(expected * v, width, signed)
        else:
            expected = max(expected, v) if op is Op.MAX else min(expected, v)
    assert int(reduce(op, dtype, np.array(values, dtype=dtype.storage), (0,))) == expected


def test_order_matters_for_f32_and_the_fold_starts_at_the_first_element() -> None:
    # 2^24 + 1 is a tie between 2^24 and 2^24 + 2 and rounds to even, 2^24, every time.
    big_first = np.array([2.0**24, 1, 1, 1, 1], dtype=np.float32)
    assert float(reduce(Op.ADD, f32, big_first, (0,))) == 2.0**24
    # Small ones first: 4 exactly, then 2^24 + 4, which f32 holds.
    assert float(reduce(Op.ADD, f32, big_first[::-1].copy(), (0,))) == 2.0**24 + 4


def test_sum_of_negative_zeros_is_negative_zero() -> None:
    # A +0.0 start would give +0.0: -0 + -0 is -0, but +0 + -0 is +0.
    got = float(reduce(Op.ADD, f32, np.array([-0.0, -0.0, -0.0], dtype=np.float32), (0,)))
    assert got == 0 and math.copysign(1, got) < 0


def test_sixteen_million_ones_sum_to_two_to_the_24() -> None:
    # Folding in order, every 1 after the running sum reaches 2^24 rounds away; numpy's pairwise
    # sum would keep them all (2^24 + 10).
    n = 2**24 + 10
    got = reduce(Op.ADD, f32, np.ones(n, dtype=np.float32), (0,))
    assert float(got) == 2.0**24
    assert float(np.sum(np.ones(n, dtype=np.float32))) != 2.0**24


@st.composite
def shapes_and_axes(draw) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    axes = draw(st.sets(st.integers(0, len(shape) - 1), min_size=1))
    return shape, tuple(sorted(axes))


@settings(deadline=None, max_examples=150)
@given(shapes_and_axes(), st.sampled_from(FOLDS), st.integers(0, 2**32 - 1))
def test_any_axes_of_any_shape_fold_row_major(shape_axes, op: Op, seed: int) -> None:
    shape, axes = shape_axes
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 1e4).astype(np.float32)
    got = reduce(op, f32, x, axes)
    kept = [i for i in range(len(shape)) if i not in axes]
    assert got.shape == tuple(shape[i] for i in kept)
    for out_index in np.ndindex(*got.shape):
        # np.ndindex walks row-major, so the reduced coordinates come in the fixed order
        chosen = [
            float(x[index])
            for index in np.ndindex(*shape)
            if tuple(index[i] for i in kept) == out_index
        ]
        assert bits(got[out_index]) == bits(python_fold(op, chosen, f32_round))
