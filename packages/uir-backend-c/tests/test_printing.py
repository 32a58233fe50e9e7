"""The C formatter of large outputs (uir.backend.c.printing) writes exactly the text of
uir.core.output.format_value, the definition (uir.md 11), which the interpreter's runs print.

Every f16 and every bf16 bit pattern; random f32 and f64 bit patterns (subnormals, NaNs with
payloads and signs, infinities and zeros among them, and added explicitly); f32 values with
short significands, whose 9-digit roundings are often exact ties (1 + 2^-9 = 1.001953125 is
halfway between 1.00195312 and 1.00195313: the fast path must hand it to snprintf, which rounds
to even); every int dtype at random and at its limits; bools. `uir run --backend c` of a large
output prints what the interpreter prints.
"""

from __future__ import annotations

import numpy as np
import pytest

from uir.backend.c.printing import SMALL, format_values
from uir.backend.c.toolchain import compiler
from uir.core.arrays import bf16_values
from uir.core.dtypes import DType, bf16, bool_, f16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64
from uir.core.output import format_value
from uir.testing.cli import run_uir

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

RNG = np.random.default_rng(20261202)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1.0, -1.0, 0.1, 1e-4, 9.9999e-5, 1e9]


def assert_same_text(values: np.ndarray, dtype: DType, threads: int = 2) -> None:
    values = np.concatenate([values, values[:SMALL]])  # past SMALL: the C path
    (got,) = format_values([values], [dtype], threads)
    expected = format_value(values, dtype)
    if got != expected:
        pairs = zip(got.split(" "), expected.split(" "), strict=False)
        wrong = [(i, a, b) for i, (a, b) in enumerate(pairs) if a != b][:5]
        raise AssertionError(f"{dtype}: (index, C, definition) {wrong}")


def bit_patterns(count: int, itemsize: int) -> np.ndarray:
    return RNG.integers(0, 256, count * itemsize, dtype=np.uint8)


def test_every_f16_value():
    values = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    assert_same_text(values, f16)


def test_every_bf16_value():
    assert_same_text(bf16_values(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)), bf16)


def test_random_f32_bit_patterns_and_special_values():
    special = np.array(SPECIAL, dtype=np.float32)
    subnormal = RNG.integers(0, 1 << 23, 20_000, dtype=np.uint32).view(np.float32)
    values = np.concatenate([special, subnormal, bit_patterns(400_000, 4).view(np.float32)])
    assert_same_text(values, f32)


def test_f32_values_with_short_significands_including_exact_ties():
    bits = bit_patterns(300_000, 4).view(np.uint32) & np.uint32(0xFFFF_F000)
    ties = np.array([1 + 2**-9, 1.0625, 2.5e-5, 123456.5, 0.5**20, 3 * 2**-15], dtype=np.float32)
    assert format_value(ties[:1], f32) == "1.00195312"  # halfway, rounded to even
    assert_same_text(np.concatenate([ties, bits.view(np.float32)]), f32)


def test_random_f64_bit_patterns_and_special_values():
    special = np.array([*SPECIAL, 5e-324, 2.2250738585072014e-308], dtype=np.float64)
    values = np.concatenate([special, bit_patterns(100_000, 8).view(np.float64)])
    assert_same_text(values, f64)


@pytest.mark.parametrize(
    "dtype, storage",
    [
        (i8, np.int8),
        (i16, np.int16),
        (i32, np.int32),
        (i64, np.int64),
        (u8, np.uint8),
        (u16, np.uint16),
        (u32, np.uint32),
        (u64, np.uint64),
    ],
)
def test_ints_at_random_and_at_their_limits(dtype, storage):
    info = np.iinfo(storage)
    limits = np.array([info.min, info.max, 0, 1, info.max - 1], dtype=storage)
    random = bit_patterns(50_000, np.dtype(storage).itemsize).view(storage)
    assert_same_text(np.concatenate([limits, random]), dtype)


def test_bools():
    assert_same_text(RNG.integers(0, 2, 50_000).astype(bool), bool_)


def test_several_values_one_thread_and_many():
    values = [RNG.standard_normal(70_000).astype(np.float32), np.arange(5, dtype=np.int32)]
    dtypes = [f32, i32]
    expected = [format_value(v, d) for v, d in zip(values, dtypes, strict=True)]
    for threads in (1, 3):
        assert format_values(values, dtypes, threads) == expected


def test_uir_run_of_a_large_output_prints_what_the_interpreter_prints(tmp_path):
    # iota-like f32 values with fractions: i * 0.1 + 1e-3 for i < 20000, and its i32 counter.
    text = """
%n = CONST i32 20000
%o = BUFFER f32[20000] 0
%q = BUFFER i32[20000] 1
%t = CONST f32 0.1
%u = CONST f32 0.001
%i = RANGE i32 %n (0, PARALLEL)
%f = CAST f32 %i
%m = MUL f32 %f %t
%a = ADD f32 %m %u
%p = INDEX f32 %o %i
%s = STORE void %p %a
%e = END void %s %i
%o1 = AFTER f32[20000] %o %e
%j = RANGE i32 %n (1, PARALLEL)
%pq = INDEX i32 %q %j
%sq = STORE void %pq %j
%eq = END void %sq %j
%q1 = AFTER i32[20000] %q %eq
%out = SINK void %o1 %q1
"""
    path = tmp_path / "large.uir"
    path.write_text(text)
    c = run_uir(tmp_path, "run", str(path), "--backend", "c", "--threads", "2").stdout
    interp = run_uir(tmp_path, "run", str(path)).stdout
    assert c == interp
    assert len(c.splitlines()) == 2 and c.split()[:2] == ["0.00100000005", "0.101000004"]
