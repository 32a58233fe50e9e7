"""Loop-nest rewrites for the CPU's caches and vector units, as shaped rules before rangeify.

Rangeify nests a REDUCE's loops in its source's axis order and folds each accumulator in the
row-major order of the reduced axes (spec/rangeify.md 2). So a RESHAPE and PERMUTE of a REDUCE's
source *is* a loop-nest rewrite: splitting an axis splits its range into an outer and an inner
one, permuting reorders the loops, and the result is permuted and reshaped back so that the
program's type and every element's meaning stay. Three rules (spec/uir-week8.md section 4):

- `tiled_fold`, any REDUCE of a rank-3 source `[M, K, N]` over axis 1 (a matmul
  `a[M,K] @ b[K,N]`, FAST or not): the source becomes `[M/TI, N/TJ, K, TI, TJ]`, so the loops
  run `mo, no, k, mi, ni`. A tile of TI x TJ accumulators stays in L1 while all of K is folded
  into it, each row of b's TJ-wide panel is read once per TI rows instead of once per row, and
  the innermost loop is an axpy over TJ contiguous floats, which the C compiler vectorizes.
  Each accumulator still takes its K terms in order k = 0 .. K-1, from the identity: the very
  fold of week 4, so the rule keeps every bit and needs no FAST.
- `split_fast_fold`, a FAST REDUCE folding every axis of a large source: the source becomes
  `[P, R, L]`, folded over R into P x L partial accumulators, then those folded (FAST) to the
  result. L = 16 independent lanes break the loop-carried dependence (the inner loop over L
  vectorizes), and the P parts are a PARALLEL loop the C backend shares among its threads. This
  reorders the fold, so only FAST allows it.
- `blocked_fold`, a convolution's fold (`[N, F, C, KH, KW, OH, OW]` over C, KH, KW): TI of the
  F filters moved just inside the fold, so that each input plane read in the inner loops
  updates TI accumulator planes while it is in L1. The fold order is unchanged: same bits.

Which rule applies, with what tile, is a cost model (no search): the constants below, for a core
with 32 KiB of L1d and 512 KiB of L2 (this machine's AMD EPYC), chosen by measuring
benchmarks/cpu_bench.py. Shapes that the tiles do not divide are left as they are.
"""

from __future__ import annotations

import math

from uir.core.ops import Op
from uir.core.pattern import P, Rules
from uir.core.shapes import reduce_arg
from uir.core.uop import UOp

TILE_COLUMNS = 128
"""The most accumulators of a tile's row (TJ): 16 vectors of 8 f32, one row of b's panel."""
TILE_ROWS = 32
"""The most rows of a tile (TI): TI x TJ f32 accumulators take 16 KiB, half of L1d."""
PANEL_BYTES = 256 * 1024
"""`tiled_fold` applies when the plane `[K, N]` the untiled loop reads for every row takes more
than this (half of L2): below it the plane stays in L2 between rows and tiling gains nothing."""
LANES = 16
"""Independent accumulators of a split FAST fold (two AVX2 vectors of f32)."""
PARTS = 16
"""The most parts a split FAST fold is cut into (its PARALLEL loop's iterations)."""
PART_ELEMENTS = 1 << 14
"""The fewest elements one part folds: below it starting a thread costs more than it saves."""


def _largest_divisor(n: int, most: int, multiple: int = 1) -> int:
    """The largest d <= most dividing n with d % multiple == 0, else 0."""
    for d in range(min(n, most), 0, -1):
        if n % d == 0 and d % multiple == 0:
            return d
    return 0


def tile_shape(m: int, k: int, n: int, itemsize: int) -> tuple[int, int] | None:
    """The tile (TI, TJ) that `tiled_fold` uses for a `[m, k, n]` source, or None when the cost
    model leaves the fold alone: the `[k, n]` plane fits half of L2, or no tile of at least 2
    rows and 8 columns divides the shape, or the tile would be the whole matrix."""
    if k * n * itemsize <= PANEL_BYTES:
        return None
    tj = _largest_divisor(n, TILE_COLUMNS, 8)
    ti = _largest_divisor(m, TILE_ROWS)
    if tj == 0 or ti < 2 or (tj == n and ti == m):
        return None
    return ti, tj


def tiled_fold(reduce: UOp) -> UOp | None:
    """A REDUCE of `[M, K, N]` over axis 1 folded through TI x TJ tiles (the module's text);
    the same type, the same fold order."""
    op, axes, fast = reduce_arg(reduce.arg)
    (source,) = reduce.src
    if axes != (1,) or len(source.type.shape) != 3:
        return None
    m, k, n = source.type.shape
    tile = tile_shape(m, k, n, source.dtype.itemsize)
    if tile is None:
        return None
    ti, tj = tile
    split = source.reshape((m // ti, ti, k, n // tj, tj)).permute((0, 3, 2, 1, 4))
    folded = split.reduce(op, (2,), fast)  # [M/TI, N/TJ, TI, TJ]
    return folded.permute((0, 2, 1, 3)).reshape((m, n))


CHANNEL_BLOCK = 8
"""The most rows (output channels, for conv2d) `blocked_fold` moves inside the fold."""
BLOCK_BYTES = 64 * 1024
"""The most bytes of the accumulators of one block of `blocked_fold` (an eighth of L2)."""


def block_rows(shape: tuple[int, ...], first: int, end: int, itemsize: int) -> int:
    """The rows TI that `blocked_fold` moves inside a fold of axes [first, end) of `shape`, or
    0 when the cost model leaves it: the row axis `first - 1` must exist, two or more axes are
    folded (a convolution's C, KH, KW; matmul's one axis is `tiled_fold`'s), the axis after
    them is longer than CHANNEL_BLOCK (so that a blocked fold, whose next axis is its TI rows,
    is never blocked again), the plane one row folds takes more than PANEL_BYTES, and TI >= 2
    rows of accumulators fit BLOCK_BYTES."""
    if first < 1 or end - first < 2 or end >= len(shape) or shape[end] <= CHANNEL_BLOCK:
        return 0
    plane = math.prod(shape[first:])
    row = plane // max(1, math.prod(shape[first:end]))  # the accumulators of one row
    if plane * itemsize <= PANEL_BYTES:
        return 0
    most = min(CHANNEL_BLOCK, BLOCK_BYTES // (row * itemsize))
    rows = _largest_divisor(shape[first - 1], most)
    return rows if rows >= 2 else 0


def blocked_fold(reduce: UOp) -> UOp | None:
    """A REDUCE of rank 4 or more over contiguous axes [a, b), with axes after them: the axis
    before them (a conv2d's output channels F) split into (F/TI, TI), its TI rows moved just
    inside the fold, so one source row read by the innermost loops (an input plane of a
    convolution) updates TI rows of accumulators while it is in L1. Each accumulator folds its
    terms in the same row-major order of the reduced axes: the same bits."""
    op, axes, fast = reduce_arg(reduce.arg)
    (source,) = reduce.src
    shape = source.type.shape
    if len(shape) < 4 or not axes or list(axes) != list(range(axes[0], axes[-1] + 1)):
        return None
    first, end = axes[0], axes[-1] + 1
    rows = block_rows(shape, first, end, source.dtype.itemsize)
    if not rows:
        return None
    before, folded, after = shape[: first - 1], shape[first:end], shape[end:]
    outer = shape[first - 1] // rows
    split = source.reshape((*before, outer, rows, *folded, *after))
    r = len(before)  # the split axes are r (outer) and r + 1 (rows)
    order = (*range(r + 1), *range(r + 2, r + 2 + len(folded)), r + 1)
    order = (*order, *range(r + 2 + len(folded), len(split.type.shape)))
    moved = split.permute(order)  # [..., outer, folded..., rows, after...]
    folded_axes = tuple(range(r + 1, r + 1 + len(folded)))
    return moved.reduce(op, folded_axes, fast).reshape(reduce.type.shape)


def split_shape(size: int) -> tuple[int, int, int] | None:
    """(P, R, L) with P * R * L == size that `split_fast_fold` uses, or None: L = LANES must
    divide the size, and each of P parts folds at least PART_ELEMENTS elements (P = 1 below
    twice that, when a single part still gains the lanes)."""
    if size % LANES or size < 2 * PART_ELEMENTS:
        return None
    rows = size // LANES
    parts = max(p for p in range(1, PARTS + 1) if rows % p == 0 and size // p >= PART_ELEMENTS)
    return parts, rows // parts, LANES


def split_fast_fold(reduce: UOp) -> UOp | None:
    """A FAST REDUCE of every axis folded as P x L independent partial folds, then those
    (the module's text)."""
    op, _, fast = reduce_arg(reduce.arg)  # every axis: the result is a scalar
    (source,) = reduce.src
    if not fast or reduce.type.shape or not source.type.shape:
        return None
    shape = split_shape(source.type.size)
    if shape is None:
        return None
    partial = source.reshape(shape).reduce(op, (1,))  # [P, L], each folded in order
    # The partials are folded in order too: one order FAST allows, and a plain fold is one this
    # rule never splits again (the rewrite would not end).
    return partial.reduce(op, (0, 1))


tile_rules = Rules(
    [
        (P(Op.REDUCE, name="reduce"), tiled_fold),
        (P(Op.REDUCE, name="reduce"), blocked_fold),
        (P(Op.REDUCE, name="reduce"), split_fast_fold),
    ],
    names=("tiled_fold", "blocked_fold", "split_fast_fold"),
)
"""The loop-nest rewrites (spec/uir-week8.md section 4); no rule matches a rule's result again
(a rank-5 fold; a split fold's plain folds, whose [P, R, L] tile would be the whole)."""
