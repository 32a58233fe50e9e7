"""The typing rules of value ops (uir.md sections 4, 8 and 9), one definition for every user.

Each rule takes the types of an op's sources (and its argument) and gives the type of its
result, or raises ShapeError saying why no result type exists. The verifier checks a parsed
statement by comparing its declared type with what the rule gives; the builder methods of UOp
(`x.reshape(...)`, `x.reduce(...)`, ...) use the same rules to type what they build, so that a
lowering, the gradient pass or a front end cannot build a UOp the verifier would reject, and a
mistake is reported where it is made, with the verifier's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from .arguments import format_arg
from .dtypes import DType, Type, bool_
from .ops import (
    BINARY,
    BITWISE,
    COMPARE,
    FAST,
    FLOAT_BINARY,
    FLOAT_UNARY,
    INT_BINARY,
    MAX_ELEMENTS,
    MAX_RANK,
    Op,
)

# The folds a REDUCE may use (uir.md section 8).
REDUCE_OPS = frozenset({Op.ADD, Op.MUL, Op.MAX, Op.MIN})

Shape = tuple[int, ...]
Pairs = tuple[tuple[int, int], ...]


class ShapeError(ValueError):
    """Sources and an argument that admit no result type; the message says why."""


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _shown(arg: object) -> str:
    """An argument as a message quotes it."""
    return "nothing" if arg is None else format_arg(arg)


def shaped(dtype: DType, shape: Sequence[int]) -> Type:
    """`dtype[shape]`, refused when the rank is above MAX_RANK (uir.md section 9) or the element
    count above MAX_ELEMENTS (spec/uir-week1.md section 4)."""
    out = Type(dtype, tuple(shape))
    if len(out.shape) > MAX_RANK:
        raise ShapeError(f"{out} has rank {len(out.shape)}: shaped types have rank 1 to {MAX_RANK}")
    if out.size > MAX_ELEMENTS:
        raise ShapeError(
            f"{out} has {out.size} elements: a type has at most {MAX_ELEMENTS} (2^31 - 1), "
            "so that an i32 indexes each"
        )
    return out


# ---- elementwise ops (uir.md section 4; shaped operands in section 8) ------------------------


def _same(op: Op, srcs: Sequence[Type]) -> Type:
    first = srcs[0]
    for s in srcs[1:]:
        if s != first:
            raise ShapeError(f"{op} operands differ: {first} and {s}")
    return first


def _kinds(op: Op, dtype: DType) -> None:
    """What kind of number (or bool) `op` takes."""
    if op in FLOAT_UNARY or op in FLOAT_BINARY:
        if not dtype.is_float:
            raise ShapeError(f"{op} takes floats, got {dtype}")
    elif op in INT_BINARY:
        if not dtype.is_int:
            raise ShapeError(f"{op} takes ints, got {dtype}")
    elif op in BITWISE:
        if not (dtype.is_int or dtype.is_bool):
            raise ShapeError(f"{op} takes ints or bools, got {dtype}")
    elif not dtype.is_number:
        raise ShapeError(f"{op} takes numbers, got {dtype}")


def arithmetic(op: Op, srcs: Sequence[Type]) -> Type:
    """A unary or binary op (not a comparison): operands of one type, which is the result's."""
    want = 2 if op in BINARY else 1
    if len(srcs) != want:
        raise ShapeError(f"{op} takes {want} operand(s), got {len(srcs)}")
    operand = _same(op, srcs)
    _kinds(op, operand.dtype)
    return operand


def compare(op: Op, a: Type, b: Type) -> Type:
    """CMPLT/CMPLE take numbers, CMPEQ/CMPNE numbers or bools; bools of the operands' shape."""
    operand = _same(op, (a, b))
    equality = op in (Op.CMPEQ, Op.CMPNE)
    if not (operand.dtype.is_number or (equality and operand.dtype.is_bool)):
        kinds = "numbers or bools" if equality else "numbers"
        raise ShapeError(f"{op} takes {kinds}, got {operand}")
    return operand.with_dtype(bool_)


def where(cond: Type, a: Type, b: Type) -> Type:
    """`c ? a : b`: a bool condition of the branches' shape, branches of one type."""
    if not cond.dtype.is_bool:
        raise ShapeError(f"WHERE's condition must be bool, got {cond}")
    if cond.shape != a.shape:
        raise ShapeError("WHERE's condition has another shape")
    if a != b:
        raise ShapeError(f"WHERE branches must be {a}")
    return a


def cast(x: Type, dtype: DType) -> Type:
    """CAST keeps the shape; any dtype converts to any other (uir.md section 4)."""
    return x.with_dtype(dtype)


def bitcast(x: Type, dtype: DType) -> Type:
    """BITCAST keeps the shape and the bits: two non-bool dtypes of one width."""
    if x.dtype.is_bool or dtype.is_bool or x.dtype.bits != dtype.bits:
        raise ShapeError(f"BITCAST needs two non-bool dtypes of one width: {x.dtype}, {dtype}")
    return x.with_dtype(dtype)


def alu(op: Op, srcs: Sequence[Type], dtype: DType | None = None) -> Type:
    """The result type of any ALU op; CAST and BITCAST take the target `dtype`."""
    if op is Op.WHERE:
        if len(srcs) != 3:
            raise ShapeError(f"WHERE takes 3 operand(s), got {len(srcs)}")
        return where(*srcs)
    if op in (Op.CAST, Op.BITCAST):
        if len(srcs) != 1 or dtype is None:
            raise ShapeError(f"{op} takes 1 operand and a target dtype")
        return cast(srcs[0], dtype) if op is Op.CAST else bitcast(srcs[0], dtype)
    if op in COMPARE:
        if len(srcs) != 2:
            raise ShapeError(f"{op} takes 2 operand(s), got {len(srcs)}")
        return compare(op, *srcs)
    return arithmetic(op, srcs)


# ---- shaped values (uir.md section 8) ---------------------------------------------------------


def expand(x: Type, shape: Sequence[int]) -> Type:
    """numpy's broadcast, right-aligned: each source dim equal to the result's or 1."""
    out = shaped(x.dtype, shape)
    if not out.shape:
        raise ShapeError(f"EXPAND gives a shaped value, not the scalar {out}")
    if len(x.shape) > len(out.shape):
        raise ShapeError(f"EXPAND cannot remove axes: {x} has more than {out}")
    for axis, (have, want) in enumerate(
        zip(x.shape, out.shape[len(out.shape) - len(x.shape) :], strict=True)
    ):
        if have not in (1, want):
            raise ShapeError(
                f"EXPAND of {x} to {out}: dim {axis} is {have}, and must be 1 or {want} "
                "(shapes align on the right)"
            )
    return out


def reduce_arg(arg: Any) -> tuple[Op, tuple[int, ...], bool]:
    """A REDUCE argument `(OP, (axes...))` or `(OP, (axes...), FAST)` read as its fold, its axes
    and whether it is FAST (it may fold in any order: spec/uir-week8.md)."""
    form = (
        isinstance(arg, tuple)
        and len(arg) in (2, 3)
        and isinstance(arg[0], Op)
        and isinstance(arg[1], tuple)
        and all(_is_int(a) for a in arg[1])
        and (len(arg) == 2 or arg[2] == FAST)
    )
    if not form:
        raise ShapeError(
            "REDUCE takes (OP, (axes...)) such as (ADD, (0)), or (OP, (axes...), FAST), "
            f"got {_shown(arg)}"
        )
    return arg[0], arg[1], len(arg) == 3


def fold_identity(op: Op, dtype: DType) -> int | float:
    """Where a fold of `op` over `dtype` starts, so that it equals starting from the first
    element (uir.md 8): -0.0, not +0.0, for a float sum, since -0.0 + x is x for every x and
    +0.0 + -0.0 is +0.0; the lowest value for MAX and the highest for MIN."""
    if op is Op.ADD:
        return -0.0 if dtype.is_float else 0
    if op is Op.MUL:
        return 1.0 if dtype.is_float else 1
    if dtype.is_float:
        return -float("inf") if op is Op.MAX else float("inf")
    return dtype.min if op is Op.MAX else dtype.max


def reduce(x: Type, arg: Any) -> Type:
    """`REDUCE x (OP, (axes...))`: x's shape without the folded axes (rank 0 when all are)."""
    op, axes, _ = reduce_arg(arg)
    if op not in REDUCE_OPS:
        raise ShapeError(f"REDUCE folds with ADD, MUL, MAX or MIN, not {op}")
    if not x.dtype.is_number:
        raise ShapeError(f"REDUCE takes numbers, got {x}")
    rank = len(x.shape)
    if rank == 0:
        raise ShapeError(f"REDUCE folds axes of a shaped value, and {x} is a scalar")
    if not axes:
        raise ShapeError("REDUCE needs at least one axis: (OP, ()) folds nothing")
    for a in axes:
        if not 0 <= a < rank:
            raise ShapeError(f"REDUCE axis {a} is not an axis of {x} (0 to {rank - 1})")
    if any(a >= b for a, b in pairwise(axes)):
        raise ShapeError(
            f"REDUCE axes must be distinct and in increasing order, got {format_arg(axes)}"
        )
    return Type(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in axes))


# ---- movement ops (uir.md section 9) ----------------------------------------------------------
# Each takes one shaped value and gives a shaped value of the same dtype (rank 1 to 8).


def movable(op: Op, x: Type) -> None:
    """A movement op moves the elements of a shaped value: a scalar has none to move."""
    if not x.shape:
        raise ShapeError(
            f"{op} moves the elements of a shaped value, and {x} is a scalar "
            "(EXPAND makes a scalar shaped)"
        )


def _ints(op: Op, arg: Any, what: str) -> tuple[int, ...]:
    """`(a, b, ...)` of ints; any other form fails, saying `what` the op takes."""
    if not (isinstance(arg, tuple) and all(_is_int(a) for a in arg)):
        raise ShapeError(f"{op} takes {what}, got {_shown(arg)}")
    return arg


def _pairs(op: Op, x: Type, arg: Any, example: str) -> Pairs:
    """PAD's and SHRINK's argument: exactly one pair of ints per axis of `x`."""
    ok = isinstance(arg, tuple) and all(
        isinstance(p, tuple) and len(p) == 2 and all(_is_int(v) for v in p) for p in arg
    )
    if not ok:
        raise ShapeError(
            f"{op} takes one pair of ints per axis, such as {example}, got {_shown(arg)}"
        )
    if len(arg) != len(x.shape):
        raise ShapeError(f"{op} of {x} needs one pair per axis ({len(x.shape)}), got {len(arg)}")
    return arg


def reshape(x: Type, shape: Sequence[int]) -> Type:
    """The same elements in row-major order, in another shape of the same count."""
    movable(Op.RESHAPE, x)
    out = shaped(x.dtype, shape)
    if not out.shape:
        raise ShapeError(f"RESHAPE gives a shaped value, not the scalar {out}")
    if x.size != out.size:
        raise ShapeError(
            f"RESHAPE keeps the element count: {x} has {x.size} elements and {out} has {out.size}"
        )
    return out


def permute(x: Type, order: Any) -> Type:
    """Result axis d is x's axis order[d] (numpy.transpose)."""
    movable(Op.PERMUTE, x)
    order = _ints(Op.PERMUTE, order, "an axis order such as (1, 0)")
    rank = len(x.shape)
    if sorted(order) != list(range(rank)):
        raise ShapeError(
            f"PERMUTE order {format_arg(order)} is not a permutation of the axes of {x} "
            f"(0 to {rank - 1}, each once)"
        )
    return Type(x.dtype, tuple(x.shape[a] for a in order))


def pad(x: Type, pairs: Any) -> Type:
    """The dtype's zero around x: `before` elements ahead of each axis, `after` behind it."""
    movable(Op.PAD, x)
    pairs = _pairs(Op.PAD, x, pairs, "((1, 1))")
    for axis, (before, after) in enumerate(pairs):
        if before < 0 or after < 0:
            raise ShapeError(
                f"PAD only adds elements: the pair ({before}, {after}) of axis {axis} is below 0 "
                "(SHRINK removes elements)"
            )
    return Type(x.dtype, tuple(d + b + a for d, (b, a) in zip(x.shape, pairs, strict=True)))


def shrink(x: Type, pairs: Any) -> Type:
    """The window `[begin, end)` of each axis of a value."""
    movable(Op.SHRINK, x)
    pairs = _pairs(Op.SHRINK, x, pairs, "((0, 2))")
    for axis, ((begin, end), dim) in enumerate(zip(pairs, x.shape, strict=True)):
        if not 0 <= begin < end <= dim:
            raise ShapeError(
                f"SHRINK pair ({begin}, {end}) of axis {axis} of {x} lies outside "
                f"0 <= begin < end <= {dim}"
            )
    return Type(x.dtype, tuple(e - b for b, e in pairs))


def flip(x: Type, axes: Any) -> Type:
    """x with the listed axes reversed: distinct, increasing axes of x."""
    movable(Op.FLIP, x)
    axes = _ints(Op.FLIP, axes, "the axes to reverse, such as (0)")
    if not axes:
        raise ShapeError("FLIP needs at least one axis: () flips nothing")
    rank = len(x.shape)
    if not (all(0 <= a < rank for a in axes) and all(a < b for a, b in pairwise(axes))):
        raise ShapeError(
            f"FLIP axes must be distinct, in increasing order and in [0, {rank}) "
            f"(the axes of {x}), got {format_arg(axes)}"
        )
    return x


def stack(srcs: Sequence[Type]) -> Type:
    """k values of one type `T[s...]` (or k scalars `T`) give `T[k, s...]`: a new leading axis."""
    if not srcs:
        raise ShapeError("STACK needs at least one source")
    first = srcs[0]
    for s in srcs[1:]:
        if s != first:
            raise ShapeError(f"STACK takes values of one type, got {first} and {s}")
    return shaped(first.dtype, (len(srcs), *first.shape))
