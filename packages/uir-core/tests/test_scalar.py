"""The interpreter's fast scalar ops agree bit for bit with the semantics table on edge values
and random inputs, for every op and dtype they cover."""

from __future__ import annotations

import itertools
import math
import random
import struct

import numpy as np
import pytest

from uir.core.dtypes import DType, bf16, bool_, f32, f64, i8, i16, i32, i64, u8, u32, u64
from uir.core.ops import BINARY, COMPARE, UNARY, Op
from uir.core.scalar import round_bf16, round_f32, scalar_op
from uir.core.semantics import apply

INTS = [i8, i16, i32, i64, u8, u32, u64]


def int_edges(d: DType) -> list[int]:
    near = [0, 1, 2, 3, 7, d.bits - 1, d.bits, d.bits + 1, d.max, d.max - 1, d.min, d.min + 1]
    return sorted({v for x in near for v in (x, -x) if d.min <= v <= d.max})


def truncated_bf16(x: float) -> float:
    """A bf16 value near `x`: its f32's top 16 bits (chopped, not rounded: any bf16 will do)."""
    word = np.array(round_f32(x), dtype=np.float32).view(np.uint32) & np.uint32(0xFFFF0000)
    return float(word.view(np.float32))


def as_dtype(x: float, d: DType) -> float:
    return {f32: round_f32, bf16: truncated_bf16}.get(d, float)(x)


def float_edges(d: DType) -> list[float]:
    tiny = {f32: 2.0**-149, bf16: 2.0**-133}.get(d, 5e-324)
    big = (2 - 2.0**-7) * 2.0**127 if d is bf16 else float(np.finfo(d.storage).max)
    base = [0.0, 1.0, 1.5, 3.0, 0.1, 1 / 3, tiny, big, math.inf, math.nan, 2.0**24 + 2, 1e-30]
    base += [1 + 2.0**-7, 255.0, 257.0, 2.0**-126]  # bf16's last bit and its smallest normal
    values = {as_dtype(v, d) for x in base for v in (x, -x)}
    return sorted(values, key=repr)


def bits(value: object, d: DType) -> object:
    """A key that tells results apart bit for bit (every NaN one key: its payload is
    unspecified, uir.md section 3)."""
    if d.is_float:
        v = float(value)  # type: ignore[arg-type]
        return "nan" if math.isnan(v) else struct.pack("<d", v)
    return (type(value) is bool, int(value))  # type: ignore[call-overload]


def reference(op: Op, out: DType, srcs: list[object], operand: DType) -> object:
    arrays = [np.asarray(s, dtype=operand.storage) for s in srcs]
    if op is Op.WHERE:
        arrays[0] = np.asarray(srcs[0], dtype=np.bool_)
    dtypes = [bool_ if op is Op.WHERE and i == 0 else operand for i in range(len(srcs))]
    return apply(op, out, arrays, dtypes).item()


def check(op: Op, operand: DType, srcs: list[object]) -> None:
    fn = scalar_op(op, operand)
    assert fn is not None
    out = bool_ if op in COMPARE else operand
    got, want = fn(*srcs), reference(op, out, srcs, operand)
    assert bits(got, out) == bits(want, out), (op, operand, srcs, got, want)


def covered(operand: DType) -> list[Op]:
    return [op for op in [*UNARY, *BINARY, *COMPARE, Op.WHERE] if scalar_op(op, operand)]


@pytest.mark.parametrize("dtype", [*INTS, f32, bf16, f64, bool_], ids=str)
def test_edge_values_agree_with_the_semantics_table(dtype: DType) -> None:
    if dtype.is_bool:
        edges: list[object] = [False, True]
    elif dtype.is_int:
        edges = list(int_edges(dtype))
    else:
        edges = list(float_edges(dtype))
    ops = covered(dtype)
    assert ops, dtype
    for op in ops:
        if op is Op.WHERE:
            for c, a, b in itertools.product([False, True], edges[:6], edges[-6:]):
                check(op, dtype, [c, a, b])
        elif op in UNARY:
            for a in edges:
                check(op, dtype, [a])
        else:
            for a, b in itertools.product(edges, edges):
                check(op, dtype, [a, b])


@pytest.mark.parametrize("dtype", [*INTS, f32, bf16, f64], ids=str)
def test_random_values_agree_with_the_semantics_table(dtype: DType) -> None:
    rng = random.Random(f"scalar-{dtype}")

    def draw() -> object:
        if dtype.is_int:
            return rng.randint(dtype.min, dtype.max) >> rng.choice([0, 0, dtype.bits // 2])
        raw = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        small = rng.uniform(-100, 100)
        value = rng.choice([raw, small, small * 1e-40])
        return as_dtype(value, dtype)

    for op in covered(dtype):
        for _ in range(300):
            arity = 3 if op is Op.WHERE else 1 if op in UNARY else 2
            srcs = [draw() for _ in range(arity)]
            if op is Op.WHERE:
                srcs[0] = rng.random() < 0.5
            check(op, dtype, srcs)


def test_round_f32_rounds_once_to_nearest_even() -> None:
    # 1 + 2^-24 is exactly half-way between 1 and the next f32: ties go to the even one, 1.0.
    assert round_f32(1 + 2.0**-24) == 1.0
    assert round_f32(1 + 3 * 2.0**-24) == 1 + 2.0**-22
    # The largest f32 has an odd significand and an ulp of 2^104: above it by less than half an
    # ulp rounds down to it; by exactly half an ulp is a tie, which goes to the even "next"
    # value, infinity.
    top = float(np.finfo(np.float32).max)
    assert round_f32(top + 2.0**102) == top
    assert round_f32(top + 2.0**103) == math.inf
    assert round_f32(-(top + 2.0**103)) == -math.inf


def test_round_bf16_rounds_once_to_nearest_even() -> None:
    # bf16 keeps 8 significant bits: 1 + 2^-8 is half-way between 1 and 1 + 2^-7 (a tie, to the
    # even 1.0), 1 + 3*2^-8 half-way between 1 + 2^-7 and 1 + 2^-6 (to the even 1 + 2^-6).
    assert round_bf16(1 + 2.0**-8) == 1.0
    assert round_bf16(1 + 3 * 2.0**-8) == 1 + 2.0**-6
    assert round_bf16(1 + 2.0**-8 + 2.0**-30) == 1 + 2.0**-7  # just above the tie
    # The largest bf16 is (2 - 2^-7) * 2^127; half an ulp (2^119) above it is a tie that goes to
    # infinity, less stays.
    top = (2 - 2.0**-7) * 2.0**127
    assert round_bf16(top + 2.0**118) == top
    assert round_bf16(top + 2.0**119) == math.inf
    assert round_bf16(-(top + 2.0**119)) == -math.inf
    # Subnormals: the smallest bf16 is 2^-133; half of it ties to the even 0, keeping the sign.
    assert round_bf16(2.0**-133) == 2.0**-133
    assert round_bf16(-(2.0**-134)) == 0 and math.copysign(1, round_bf16(-(2.0**-134))) < 0
    assert math.isnan(round_bf16(math.nan))
    assert round_bf16(1e308) == math.inf and round_bf16(-math.inf) == -math.inf
