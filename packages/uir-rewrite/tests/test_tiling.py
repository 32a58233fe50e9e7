"""The loop-nest rewrites of uir.rewrite.tiling: which folds the cost model tiles or splits, and
that the rewritten program means the same on the interpreter (bit for bit without FAST; within
the bound of a reordered sum with it). The C backend's runs are in uir-backend-c's
test_tiling_c.py."""

from __future__ import annotations

import numpy as np

from uir.core.dtypes import f32
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.rewrite import tiling
from uir.rewrite.passes import tile
from uir.testing.movement import load, matmul, program
from uir.testing.tolerance import fold_bound


def test_the_cost_model_tiles_a_matmul_whose_plane_leaves_l2():
    # b of 1024 x 1024 f32 is 4 MiB > 256 KiB: tiles of 32 rows by 128 columns (both divide).
    assert tiling.tile_shape(1024, 1024, 1024, 4) == (32, 128)
    # 96 columns and 24 rows: the tile (24, 96) would be the whole matrix, nothing to tile.
    assert tiling.tile_shape(24, 4096, 96, 4) is None
    # b of 64 x 1024 f32 is 256 KiB: it stays in L2 between rows, nothing to gain.
    assert tiling.tile_shape(1024, 64, 1024, 4) is None
    # 1000 = 8 * 125 columns: the multiples of 8 dividing it are 8, 40, 200, so 40; 1001 =
    # 7 * 11 * 13 rows: the largest divisor at most 32 is 13.
    assert tiling.tile_shape(1001, 1024, 1000, 4) == (13, 40)
    # an odd column count has no tile of 8 columns.
    assert tiling.tile_shape(64, 4096, 1001, 4) is None


def test_the_cost_model_splits_a_large_fast_fold_into_parts_and_lanes():
    assert tiling.split_shape(1 << 24) == (16, 1 << 16, 16)  # 16 parts of 2^20 elements
    assert tiling.split_shape(1 << 15) == (2, 1 << 10, 16)  # each part at least 2^14
    assert tiling.split_shape((1 << 15) - 16) is None  # below two parts' worth
    assert tiling.split_shape(3 * 16 * 1000) == (2, 1500, 16)  # 3000 rows: 2 divides, 3 too small
    assert tiling.split_shape(16 * 100003) == (1, 100003, 16)  # 100003 is prime: one part


def matmul_program(m: int, k: int, n: int, fast: bool = False):
    sink = program(matmul(load(0, f32, (m, k)), load(1, f32, (k, n))))
    if fast:
        (reduce,) = sink.src
        return program(reduce.src[0].reduce(Op.ADD, (1,), fast=True))
    return sink


def test_a_tiled_matmul_folds_in_the_same_order_on_the_interpreter():
    m, k, n = 4, 512, 160  # b is 320 KiB: tiled, 4 x 80
    sink = matmul_program(m, k, n)
    tiled = tile(sink)
    assert tiled is not sink
    rng = np.random.default_rng(1)
    inputs = {0: rng.standard_normal(m * k, dtype=np.float32)}
    inputs[1] = rng.standard_normal(k * n, dtype=np.float32)
    (want,) = evaluate(sink, inputs)
    (got,) = evaluate(tiled, inputs)
    assert got.tobytes() == want.tobytes()
    # and that fold is numpy's sequential one: the terms added from -0.0 in k order
    a, b = inputs[0].reshape(m, k), inputs[1].reshape(k, n)
    total = np.full((m, n), -0.0, np.float32)
    for j in range(k):
        total = (a[:, j : j + 1] * b[j : j + 1, :] + total).astype(np.float32)
    assert got.reshape(m, n).tobytes() == total.tobytes()


def test_a_plain_sum_is_never_split_and_a_fast_one_is():
    n = 1 << 15
    flat = load(0, f32, (n,))
    plain = program(flat.reduce(Op.ADD, (0,)))
    assert tile(plain) is plain
    fast = program(flat.reduce(Op.ADD, (0,), fast=True))
    (split,) = tile(fast).src
    assert split.op is Op.REDUCE and split.arg == (Op.ADD, (0, 1))  # the partials, in order
    assert split.src[0].type.shape == (2, 16)  # 2 parts x 16 lanes of partial sums


def test_a_split_fast_sum_is_within_the_bound_of_any_order():
    n = 1 << 15
    rng = np.random.default_rng(2)
    x = rng.standard_normal(n, dtype=np.float32)
    sink = program(load(0, f32, (n,)).reduce(Op.ADD, (0,), fast=True))
    (got,) = evaluate(tile(sink), {0: x})
    exact = np.sum(x.astype(np.float64))
    # any order: n - 1 roundings, each of a partial sum at most sum|x|
    assert abs(float(got) - exact) <= fold_bound(n, np.sum(np.abs(x.astype(np.float64))))
    # and the split order is not the sequential one here (the rule did reorder)
    assert float(got) != float(np.add.accumulate(x)[-1])
