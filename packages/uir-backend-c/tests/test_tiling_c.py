"""The loop-nest rewrites (uir.rewrite.tiling, the `tile` pass) on the C backend, differentially.

With the cost model's thresholds lowered (monkeypatched), small random programs take every rule:

- a convolution (PAD, windows, MUL, a fold over C, KH, KW) blocked over its filters: the same;
- a fold of a random `[M, K, N]` value over axis 1 without FAST (ADD, MUL, MAX of f32 and i32,
  the source a product of loads or a load): C with the rewrite, C without it and the interpreter
  print the same bits;
- a FAST fold of every axis of a random value: ints exactly (wrapping ADD and MUL, MAX and MIN
  are associative), f32 MAX and MIN exactly (no zeros or NaNs drawn), and an f32 sum within the
  bound of any order, (n - 1) U sum|x| (uir.testing.tolerance.fold_bound), of the float64 sum.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uir.backend.c.plugin import CBackend
from uir.backend.c.toolchain import compiler
from uir.core.dtypes import f32, i32
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.rewrite import tiling
from uir.rewrite.passes import tile
from uir.testing.backends import scheduled
from uir.testing.movement import conv2d, expand, load, program, reshape
from uir.testing.tolerance import fold_bound

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

SMALL = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def run_c(sink, inputs):
    return CBackend().compile(scheduled(sink)).run(inputs)


def values(rng: np.random.Generator, dtype, size: int) -> np.ndarray:
    if dtype is f32:
        magnitude = rng.uniform(0.5, 2.0, size).astype(np.float32)
        return magnitude * rng.choice(np.array([-1, 1], np.float32), size)
    return rng.integers(-(2**31), 2**31, size, dtype=np.int64).astype(np.int32)


@SMALL
@given(
    m=st.integers(2, 9),
    k=st.integers(1, 12),
    n=st.sampled_from([8, 16, 24, 40, 48]),
    op=st.sampled_from([Op.ADD, Op.MUL, Op.MAX]),
    dtype=st.sampled_from([f32, i32]),
    product=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_tiled_folds_keep_every_bit(m, k, n, op, dtype, product, seed):
    if product:
        left = expand(reshape(load(0, dtype, (m, k)), (m, k, 1)), (m, k, n))
        right = expand(reshape(load(1, dtype, (k, n)), (1, k, n)), (m, k, n))
        source = left.alu(Op.MUL, right)
        sizes = (m * k, k * n)
    else:
        source = load(0, dtype, (m, k, n))
        sizes = (m * k * n,)
    sink = program(source.reduce(op, (1,)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tiling, "PANEL_BYTES", 0)
        tiled = tile(sink)
        # every n drawn has a tile of 8 columns, every m one of 2 rows: tiled unless whole
        assert (tiled is not sink) == (tiling.tile_shape(m, k, n, 4) is not None)
    rng = np.random.default_rng(seed)
    inputs = {slot: values(rng, dtype, size) for slot, size in enumerate(sizes)}
    (want,) = evaluate(sink, inputs)
    (plain,) = run_c(sink, inputs)
    (got,) = run_c(tiled, inputs)
    assert plain.tobytes() == want.tobytes()
    assert got.tobytes() == want.tobytes()


@SMALL
@given(
    size=st.sampled_from([32, 48, 96, 160, 512, 1024]),
    op=st.sampled_from([Op.ADD, Op.MUL, Op.MAX, Op.MIN]),
    dtype=st.sampled_from([f32, i32]),
    seed=st.integers(0, 2**32 - 1),
)
def test_split_fast_folds_agree_with_the_interpreter_within_their_tolerance(size, op, dtype, seed):
    if dtype is f32 and op is Op.MUL:
        op = Op.ADD  # a product of hundreds of floats under- or overflows: no bound to check
    sink = program(load(0, dtype, (size,)).reduce(op, (0,), fast=True))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tiling, "PART_ELEMENTS", 8)
        tiled = tile(sink)
    assert tiled is not sink  # every size drawn is a multiple of 16 and at least 2 * 8
    rng = np.random.default_rng(seed)
    x = values(rng, dtype, size)
    (want,) = evaluate(sink, {0: x})  # the week-4 order
    (got,) = run_c(tiled, {0: x})
    if dtype is i32 or op in (Op.MAX, Op.MIN):
        assert got.tobytes() == want.tobytes()
        return
    exact = np.sum(x.astype(np.float64))
    bound = fold_bound(size, np.sum(np.abs(x.astype(np.float64))))
    assert abs(float(got) - exact) <= bound
    assert abs(float(want) - exact) <= bound


@SMALL
@given(
    batch=st.integers(1, 2),
    channels=st.integers(1, 3),
    filters=st.sampled_from([2, 4, 6, 8, 16]),
    size=st.integers(11, 13),  # output rows size + 2 * padding - 2 above CHANNEL_BLOCK
    padding=st.integers(0, 1),
    seed=st.integers(0, 2**32 - 1),
)
def test_blocked_convolutions_keep_every_bit(batch, channels, filters, size, padding, seed):
    x_shape, w_shape = (batch, channels, size, size), (filters, channels, 3, 3)
    sink = program(conv2d(load(0, f32, x_shape), load(1, f32, w_shape), padding=padding))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tiling, "PANEL_BYTES", 0)
        tiled = tile(sink)
    assert tiled is not sink  # every shape drawn has a block of 2 filters and rows above 8
    rng = np.random.default_rng(seed)
    inputs = {0: values(rng, f32, math.prod(x_shape)), 1: values(rng, f32, math.prod(w_shape))}
    (want,) = evaluate(sink, inputs)
    (plain,) = run_c(sink, inputs)
    (got,) = run_c(tiled, inputs)
    assert plain.tobytes() == want.tobytes()
    assert got.tobytes() == want.tobytes()
