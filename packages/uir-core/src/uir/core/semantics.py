"""The numeric meaning of every ALU op (uir.md sections 3 and 4), in one table.

Each entry maps an op to a function on numpy arrays held in the storage type of their dtype
(`DType.storage`). The interpreter, constant folding and the tests all call `apply`, so they can
never disagree. Integer results wrap (numpy's fixed-width arithmetic); float results are computed
exactly or in float64 and rounded once to the result dtype, which is a single correct rounding for
+ - * / and sqrt because float64 carries more than twice the bits of every narrower float.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from .arrays import bf16_bits, bf16_values, round_array
from .dtypes import DType, bf16, f16, f32, f64
from .floats import round_fraction
from .ops import Op
from .scalar import scalar_op

Array = np.ndarray


def _wide(x: Array) -> Array:
    return np.asarray(x, dtype=np.float64)


def _float(fn: Callable[..., Array], ieee: bool = False) -> Callable[..., Array]:
    """Lift a float64 function to any float dtype: compute wide, round once to the result.

    An `ieee` function (+ - * / sqrt) is correctly rounded in every IEEE format, so on f32 it
    runs in float32 directly: the same result without widening, which week 4's arrays of
    millions of elements notice.
    """

    def run(out: DType, *xs: Array) -> Array:
        if out is f64:
            return np.asarray(fn(*xs), dtype=np.float64)
        if ieee and out is f32:
            return np.asarray(fn(*(np.asarray(x, dtype=np.float32) for x in xs)), dtype=np.float32)
        return round_array(fn(*(_wide(x) for x in xs)), out)

    return run


def _int(fn: Callable[..., Array]) -> Callable[..., Array]:
    """An int (or bool) function as numpy computes it: fixed width, so results wrap."""

    def run(out: DType, *xs: Array) -> Array:
        return np.asarray(fn(*xs), dtype=out.storage)

    return run


def _number(fn: Callable[..., Array]) -> Callable[..., Array]:
    """An IEEE function that wraps on ints and rounds once on floats."""
    on_float, on_int = _float(fn, ieee=True), _int(fn)

    def run(out: DType, *xs: Array) -> Array:
        return on_float(out, *xs) if out.is_float else on_int(out, *xs)

    return run


def _idiv(out: DType, a: Array, b: Array) -> Array:
    """C division, made total as RISC-V does: x/0 is all ones, MIN/-1 is MIN."""
    by_zero = b == 0
    by_minus_one = (b == -1) if out.signed else np.zeros_like(by_zero)
    safe = np.where(by_zero | by_minus_one, 1, b).astype(out.storage)
    remainder = np.fmod(a, safe)  # C remainder: the dividend's sign
    quotient = (a - remainder) // safe  # exact, so floor and truncation agree
    quotient = np.where(by_minus_one, -a, quotient)  # -MIN wraps to MIN
    return np.where(by_zero, np.array(-1).astype(out.storage), quotient).astype(out.storage)


def _mod(out: DType, a: Array, b: Array) -> Array:
    """C remainder, made total: x%0 is x, MIN%-1 is 0."""
    by_zero = b == 0
    safe = np.where(by_zero | (b == -1), 1, b).astype(out.storage)
    return np.where(by_zero, a, np.fmod(a, safe)).astype(out.storage)


def _shift(fn: Callable[[Array, Array], Array]) -> Callable[..., Array]:
    def run(out: DType, a: Array, b: Array) -> Array:
        count = (b & (out.bits - 1)).astype(out.storage)  # the count is b mod the width
        return np.asarray(fn(a, count), dtype=out.storage)

    return run


def _max_min(is_max: bool) -> Callable[..., Array]:
    """IEEE 754-2019 maximum/minimum: NaN propagates and -0 < +0."""

    def run(out: DType, a: Array, b: Array) -> Array:
        pick = np.maximum(a, b) if is_max else np.minimum(a, b)
        if out.is_float:
            # numpy returns either zero for max(-0, +0); choose by sign bit.
            zero_tie = (a == b) & (a == 0)
            prefer_a = np.signbit(b) if is_max else np.signbit(a)
            pick = np.where(zero_tie, np.where(prefer_a, a, b), pick)
        return np.asarray(pick, dtype=out.storage)

    return run


def _compare(fn: Callable[[Array, Array], Array]) -> Callable[..., Array]:
    def run(out: DType, a: Array, b: Array) -> Array:
        return np.asarray(fn(a, b), dtype=np.bool_)

    return run


def _where(out: DType, c: Array, a: Array, b: Array) -> Array:
    return np.asarray(np.where(c, a, b), dtype=out.storage)


def cast(x: Array, src: DType, out: DType) -> Array:
    """CAST: ints keep their low bits, floats truncate and saturate (NaN gives 0), one rounding."""
    if out.is_bool:
        return np.asarray(x != 0, dtype=np.bool_)
    if out.is_float:
        if src.is_int and src.bits == 64:
            # float64 cannot hold every 64-bit int: round each exactly from the Python int.
            flat = [round_fraction(int(v), out) for v in np.ravel(x)]
            return np.asarray(flat, dtype=np.float64).reshape(np.shape(x)).astype(out.storage)
        return round_array(_wide(x), out)
    if src.is_float:
        t = np.trunc(_wide(x))
        top = float(2 ** (out.bits - 1 if out.signed else out.bits))
        inside = (t >= out.min) & (t < top)
        safe = np.where(inside, t, 0).astype(out.storage)
        high = np.array(out.max, dtype=object).astype(out.storage)
        low = np.array(out.min, dtype=object).astype(out.storage)
        result = np.where(t >= top, high, np.where(t < out.min, low, safe))
        return np.where(np.isnan(t), np.zeros_like(safe), result).astype(out.storage)
    # int or bool to int: numpy's integer conversion keeps the low bits, as C's does.
    return np.asarray(x).astype(out.storage)


def bitcast(x: Array, src: DType, out: DType) -> Array:
    """BITCAST: the same bits read as another dtype of the same width (bf16 is stored widened)."""
    x = np.asarray(x)
    if src is bf16:
        x = bf16_bits(x)
    if out is bf16:
        return bf16_values(x)
    # ascontiguousarray makes a 0-d array 1-d: give the result the source's shape back.
    return np.ascontiguousarray(x).view(out.storage).reshape(x.shape)


_TABLE: dict[Op, Callable[..., Array]] = {
    Op.ADD: _number(np.add),
    Op.SUB: _number(np.subtract),
    Op.MUL: _number(np.multiply),
    Op.NEG: _number(np.negative),
    Op.IDIV: _idiv,
    Op.MOD: _mod,
    Op.FDIV: _float(np.divide, ieee=True),
    Op.MAX: _max_min(True),
    Op.MIN: _max_min(False),
    Op.CMPLT: _compare(np.less),
    Op.CMPLE: _compare(np.less_equal),
    Op.CMPEQ: _compare(np.equal),
    Op.CMPNE: _compare(np.not_equal),
    Op.AND: _int(np.bitwise_and),
    Op.OR: _int(np.bitwise_or),
    Op.XOR: _int(np.bitwise_xor),
    Op.SHL: _shift(np.left_shift),
    Op.SHR: _shift(np.right_shift),
    Op.WHERE: _where,
    Op.SQRT: _float(np.sqrt, ieee=True),
    Op.RECIP: _float(lambda x: 1.0 / x),
    Op.TRUNC: _float(np.trunc),
    Op.EXP2: _float(np.exp2),
    Op.LOG2: _float(np.log2),
    Op.SIN: _float(np.sin),
}


def apply(op: Op, out: DType, srcs: list[Array], src_dtypes: list[DType]) -> Array:
    """The value of `op` on `srcs` (numpy arrays of one shape), as an array of `out`'s storage."""
    with np.errstate(all="ignore"):
        # numpy turns some 0-d results into numpy scalars: always hand back an array.
        if op is Op.CAST:
            return np.asarray(cast(srcs[0], src_dtypes[0], out))
        if op is Op.BITCAST:
            return np.asarray(bitcast(srcs[0], src_dtypes[0], out))
        fn = _TABLE.get(op)
        if fn is None:
            raise KeyError(f"{op} has no numeric semantics")
        return np.asarray(fn(out, *(np.asarray(s) for s in srcs)))


# Float dtypes whose numpy arithmetic is the dtype's own: each step rounds once to the dtype
# (numpy computes f16 in f32 and rounds back, a double rounding that is harmless: 24 >= 2*11 + 2).
# bf16 lives in float32, so numpy would round its steps to f32 instead.
_NATIVE_FLOATS = (f16, f32, f64)


def reduce(op: Op, out: DType, x: Array, axes: tuple[int, ...]) -> Array:
    """REDUCE (uir.md section 8): fold `axes` of `x` away with `op` (ADD, MUL, MAX or MIN).

    The fold runs row-major over the reduced axes from their first element: acc = x[0], then
    acc = op(acc, x[r]) for r = 1, 2, ... Float ADD and MUL depend on that order, so they fold
    step by step (numpy's `sum` adds pairwise, which is another order). Integer ADD and MUL wrap,
    and wrapping arithmetic is associative and commutative, as are MAX and MIN (IEEE 754-2019
    maximum/minimum: NaN if any NaN, else the largest with -0 < +0): for those any order gives
    the same result.
    """
    x = np.asarray(x)
    kept = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    # One row per kept element, holding its reduced elements in row-major order.
    rows = np.moveaxis(x, axes, range(-len(axes), 0)).reshape(*kept, -1)
    with np.errstate(all="ignore"):
        if op in (Op.MAX, Op.MIN):
            result = _extreme(op is Op.MAX, out, rows)
        elif out.is_int:
            ufunc = np.add if op is Op.ADD else np.multiply
            result = ufunc.reduce(rows, axis=-1, dtype=out.storage)
        else:
            result = _fold(op, out, rows)
    return np.asarray(result, dtype=out.storage)


def _extreme(is_max: bool, out: DType, rows: Array) -> Array:
    """MAX or MIN over the last axis; for floats NaN propagates and -0 < +0."""
    pick = np.max(rows, axis=-1) if is_max else np.min(rows, axis=-1)  # NaN propagates
    if out.is_float:
        # A zero result is +0 for MAX when any element is +0 (and -0 for MIN when any is -0).
        found = ((rows == 0) & (np.signbit(rows) != is_max)).any(axis=-1)
        plus = np.zeros((), dtype=out.storage)
        pick = np.where(pick == 0, np.where(found == is_max, plus, -plus), pick)
    return pick


def _fold(op: Op, out: DType, rows: Array) -> Array:
    """Float ADD or MUL over the last axis, one step at a time, each step rounded to `out`."""
    if out in _NATIVE_FLOATS:
        # ufunc.accumulate runs its steps in order (only ufunc.reduce adds pairwise); its last
        # column is the fold.
        ufunc = np.add if op is Op.ADD else np.multiply
        return ufunc.accumulate(rows, axis=-1, dtype=out.storage)[..., -1]
    # numpy has no arithmetic in this dtype (bf16): fold each row on Python floats with the
    # interpreter's scalar step, which rounds to the dtype.
    step = scalar_op(op, out)
    flat = rows.reshape(-1, rows.shape[-1]).tolist()
    folded = [functools.reduce(step, row) for row in flat]  # type: ignore[arg-type]
    return np.array(folded, dtype=out.storage).reshape(rows.shape[:-1])
