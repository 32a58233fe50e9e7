"""Week-5 programs built as UOps: movement ops with their result types worked out (uir.md section
9), matmul and conv2d written as movement ops plus one REDUCE, and a row softmax. Tests and
benchmarks build the very same programs from here."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import strategies as st

from uir.core.dtypes import VOID, DType, Type, f32, i32
from uir.core.elements import Elements
from uir.core.ops import ALU, FAST, Op
from uir.core.uop import UOp

Pairs = tuple[tuple[int, int], ...]


def const(values: np.ndarray) -> UOp:
    """A shaped CONST holding a numpy array (f32 or i32), any rank."""
    dtype: DType = f32 if values.dtype == np.float32 else i32
    literal = tuple(v.item() for v in values.reshape(-1))
    return UOp(Op.CONST, Type(dtype, values.shape), (), Elements(literal))


def load(slot: int, dtype: DType, shape: Sequence[int]) -> UOp:
    """A whole-buffer LOAD of the flat BUFFER `slot`, RESHAPEd to `shape`."""
    flat = Type(dtype, (math.prod(shape),))
    loaded = UOp(Op.LOAD, flat, (UOp(Op.BUFFER, flat, (), slot),))
    return loaded if len(shape) == 1 else reshape(loaded, shape)


def _moved(op: Op, x: UOp, shape: Sequence[int], arg: object = None) -> UOp:
    return UOp(op, Type(x.dtype, tuple(shape)), (x,), arg)


def reshape(x: UOp, shape: Sequence[int]) -> UOp:
    return _moved(Op.RESHAPE, x, shape)


def expand(x: UOp, shape: Sequence[int]) -> UOp:
    return _moved(Op.EXPAND, x, shape)


def permute(x: UOp, order: Sequence[int]) -> UOp:
    return _moved(Op.PERMUTE, x, [x.type.shape[a] for a in order], tuple(order))


def pad(x: UOp, pairs: Pairs) -> UOp:
    shape = [before + dim + after for dim, (before, after) in zip(x.type.shape, pairs, strict=True)]
    return _moved(Op.PAD, x, shape, tuple(pairs))


def shrink(x: UOp, pairs: Pairs) -> UOp:
    return _moved(Op.SHRINK, x, [end - begin for begin, end in pairs], tuple(pairs))


def flip(x: UOp, axes: Sequence[int]) -> UOp:
    return _moved(Op.FLIP, x, x.type.shape, tuple(axes))


def stack(*xs: UOp) -> UOp:
    return UOp(Op.STACK, Type(xs[0].dtype, (len(xs), *xs[0].type.shape)), xs)


def reduce(x: UOp, op: Op, axes: Sequence[int], fast: bool = False) -> UOp:
    """`op` over `axes`; `fast` adds the FAST flag (any fold order, spec/uir-week8.md)."""
    kept = tuple(d for a, d in enumerate(x.type.shape) if a not in axes)
    arg = (op, tuple(axes), FAST) if fast else (op, tuple(axes))
    return UOp(Op.REDUCE, Type(x.dtype, kept), (x,), arg)


def program(*outputs: UOp) -> UOp:
    return UOp(Op.SINK, VOID, outputs)


def matmul(a: UOp, b: UOp, fast: bool = False) -> UOp:
    """a[M,K] @ b[K,N]: both operands viewed as [M,K,N], multiplied, and K folded. K in the
    middle makes the loops i, k, j (rangeify nests a REDUCE's loops in its source's axis order):
    the innermost loop reads a row of b and updates a row of accumulators."""
    (m, k), (_, n) = a.type.shape, b.type.shape
    left = expand(reshape(a, (m, k, 1)), (m, k, n))
    right = expand(reshape(b, (1, k, n)), (m, k, n))
    return reduce(UOp(Op.MUL, left.type, (left, right)), Op.ADD, (1,), fast)


def windows(x: UOp, axis: int, k: int) -> UOp:
    """Axis `axis` of size n becomes two, (k, n-k+1), element (j, i) being the source's i+j: the
    axis repeated k+1 times and read with a row length of n+1 (each row starts one later)."""
    shape = x.type.shape
    n, before, after = shape[axis], shape[:axis], shape[axis + 1 :]
    full = tuple((0, d) for d in before), tuple((0, d) for d in after)
    repeated = expand(reshape(x, (*before, 1, n, *after)), (*before, k + 1, n, *after))
    line = reshape(repeated, (*before, (k + 1) * n, *after))
    rows = reshape(
        shrink(line, (*full[0], (0, k * (n + 1)), *full[1])), (*before, k, n + 1, *after)
    )
    return shrink(rows, (*full[0], (0, k), (0, n - k + 1), *full[1]))


def conv2d(x: UOp, w: UOp, padding: int, fast: bool = False) -> UOp:
    """x[C,H,W], or a batch x[N,C,H,W], convolved (cross-correlated, as in deep learning) with
    w[F,C,KH,KW], stride 1, `padding` zeros on each side: PAD, a sliding-window view, MUL and one
    REDUCE over (C,KH,KW). The result is [F,OH,OW], or [N,F,OH,OW]. The product is laid out
    [N?,F,C,KH,KW,OH,OW] so that the innermost loop runs along an output row (rangeify nests a
    REDUCE's loops in its source's axis order)."""
    f, c, kh, kw = w.type.shape
    p, b = padding, len(x.type.shape) - 3  # b: 1 with a batch axis in front, else 0
    batch = x.type.shape[:b]
    padded = pad(x, ((0, 0),) * (b + 1) + ((p, p), (p, p)))
    view = windows(windows(padded, b + 1, kh), b + 3, kw)  # [N?, C, KH, OH, KW, OW]
    oh, ow = view.type.shape[b + 2], view.type.shape[b + 4]
    order = (*range(b), b, b + 1, b + 3, b + 2, b + 4)
    patches = reshape(permute(view, order), (*batch, 1, c, kh, kw, oh, ow))
    shape = (*batch, f, c, kh, kw, oh, ow)
    left = expand(patches, shape)
    right = expand(reshape(w, (*[1] * b, f, c, kh, kw, 1, 1)), shape)
    return reduce(UOp(Op.MUL, left.type, (left, right)), Op.ADD, (b + 1, b + 2, b + 3), fast)


LOG2_E = float(np.float32(math.log2(math.e)))
"""log2(e) rounded to f32: exp(t) is computed as EXP2(t * LOG2_E)."""


def softmax(x: UOp) -> UOp:
    """The softmax of each row of x[R,C]: e = exp(x - max of the row), then e / (sum of the
    row's e). The row max and the row sum are REDUCEs over axis 1, EXPANDed back over the row;
    exp is EXP2 of a product with log2(e); the division is FDIV (one rounding)."""
    rows, cols = x.type.shape

    def over_row(value: UOp) -> UOp:  # [R] -> [R,C], each row's value repeated along the row
        return expand(reshape(value, (rows, 1)), (rows, cols))

    shifted = UOp(Op.SUB, x.type, (x, over_row(reduce(x, Op.MAX, (1,)))))
    log2_e = expand(UOp(Op.CONST, Type(x.dtype, ()), (), LOG2_E), (rows, cols))
    exp = UOp(Op.EXP2, x.type, (UOp(Op.MUL, x.type, (shifted, log2_e)),))
    return UOp(Op.FDIV, x.type, (exp, over_row(reduce(exp, Op.ADD, (1,)))))


def index_ops(sink: UOp) -> list[UOp]:
    """The distinct ALU ops computing the positions every INDEX (of memory, or of a vector)
    names: what rangeify's index maps produce and the simplifier cleans."""
    found: dict[UOp, None] = {}
    for root in (s for u in sink.toposort() if u.op is Op.INDEX for s in u.src[1:]):
        found.update((u, None) for u in root.toposort() if u.op in ALU)
    return list(found)


# --- random chains ---------------------------------------------------------------------------


def _factors(n: int) -> list[int]:
    found, d = [], 2
    while n > 1:
        while n % d == 0:
            found.append(d)
            n //= d
        d += 1
    return found


MOVES = ("reshape", "permute", "flip", "shrink", "pad", "expand")
"""The movement ops a chain or a random program applies to one value (STACK takes several)."""
STEPS = (*MOVES, "stack", "reduce", "neg")
"""The kinds of step a chain takes: every movement op, REDUCE, and an elementwise op."""
Reference = Callable[[np.ndarray], np.ndarray]


def fold_sum(array: np.ndarray, axes: Sequence[int]) -> np.ndarray:
    """The sum over `axes` as uir.md 8 fixes it: from the first element, in the row-major order
    of the reduced axes, one rounding per step. numpy's `sum` differs even on small integers:
    it gives +0.0 for a sum of -0.0s (and adds pairwise)."""
    kept = [a for a in range(array.ndim) if a not in axes]
    moved = np.transpose(array, (*kept, *axes))
    rows = moved.reshape(*moved.shape[: len(kept)], -1)
    total = rows[..., 0].copy()
    for j in range(1, rows.shape[-1]):
        total = (total + rows[..., j]).astype(array.dtype)
    return total


def split(draw: st.DrawFn, size: int, ranks: tuple[int, int] = (1, 4)) -> tuple[int, ...]:
    """A random shape of `ranks[0]` to `ranks[1]` dims holding `size` elements: its prime
    factors dealt out to the dims (the rest are 1)."""
    dims = [1] * draw(st.integers(*ranks))
    for f in draw(st.permutations(_factors(size))):
        dims[draw(st.integers(0, len(dims) - 1))] *= f
    return tuple(dims)


def move(draw: st.DrawFn, kind: str, value: UOp) -> tuple[UOp, Reference]:
    """The movement op `kind` (one of MOVES) of the shaped `value`, its arguments drawn, and the
    numpy function that computes it from `value`'s array. A RESHAPE gives 1 to 4 dims, and an
    EXPAND adds a leading axis up to 4."""
    shape, rank = value.type.shape, len(value.type.shape)
    if kind == "reshape":
        dims = split(draw, value.type.size)
        return reshape(value, dims), lambda a: a.reshape(dims)
    if kind == "permute":
        order = tuple(draw(st.permutations(range(rank))))
        return permute(value, order), lambda a: np.transpose(a, order)
    if kind == "flip":
        axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
        return flip(value, axes), lambda a: np.flip(a, axes)
    if kind == "shrink":
        pairs = []
        for dim in shape:
            begin = draw(st.integers(0, dim - 1))
            pairs.append((begin, draw(st.integers(begin + 1, dim))))
        window = tuple(slice(b, e) for b, e in pairs)
        return shrink(value, tuple(pairs)), lambda a: a[window]
    if kind == "pad":
        padding = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in shape)
        return pad(value, padding), lambda a: np.pad(a, padding)
    # expand: each axis of size 1 broadcast, and maybe a new leading axis
    dims = [draw(st.integers(1, 3)) if d == 1 else d for d in shape]
    if rank < 4 and draw(st.booleans()):
        dims.insert(0, draw(st.integers(1, 3)))
    return expand(value, dims), lambda a: np.broadcast_to(a, dims)


@st.composite
def chains(draw, rank: int | None = None, steps: tuple[str, ...] = STEPS, length: int = 5):
    """(value, its numpy array, inputs): a random chain of 1 to `length` steps of the kinds
    `steps` from a CONST or a LOAD of rank `rank` (1 to 4 when None; STACK and EXPAND raise
    it along the way, to 8 at most), built as UOps with its numpy value alongside."""
    dtype = draw(st.sampled_from((np.int32, np.float32)))
    rank = draw(st.integers(1, 4)) if rank is None else rank
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    data = np.array(
        draw(st.lists(st.integers(-9, 9), min_size=math.prod(shape), max_size=math.prod(shape))),
        dtype=dtype,
    )
    inputs: dict[int, np.ndarray] = {}
    if draw(st.booleans()):
        inputs[0] = data
        value = load(0, f32 if dtype is np.float32 else i32, shape)
    else:
        value = const(data.reshape(shape))
    array = data.reshape(shape)
    for _ in range(draw(st.integers(1, length))):
        value, array = draw(_step(value, array, steps))
        if not value.type.shape:
            break
    return value, array, inputs


@st.composite
def _step(draw, value: UOp, array: np.ndarray, steps: tuple[str, ...]):
    rank = array.ndim
    kinds = [k for k in steps if k != "pad" or array.size <= 256]  # keep the interpreter quick
    if rank == 8:  # uir.md 9: rank 8 at most
        kinds = [k for k in kinds if k != "stack"] or ["reshape"]
    kind = draw(st.sampled_from(kinds))
    if kind == "reduce":
        axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
        return reduce(value, Op.ADD, axes), fold_sum(array, axes)
    if kind == "neg":
        return UOp(Op.NEG, value.type, (value,)), -array
    if kind == "stack":
        negated = UOp(Op.NEG, value.type, (value,))
        return stack(value, negated, value), np.stack([array, -array, array])
    moved, reference = move(draw, kind, value)
    return moved, reference(array)
