"""Constant folding: an ALU op on constants becomes the constant it computes.

The value comes from `uir.core.semantics.apply`, the very table the interpreter runs, so folding
and running can never disagree: wrapping, total division, NaN, -0.0 and the single rounding of
floats all come out as the interpreter would compute them. Folding a NaN gives the canonical NaN
constant; uir.md section 3 leaves a NaN's sign and payload unspecified.
"""

from __future__ import annotations

import math

import numpy as np

from uir.core.arrays import const_array
from uir.core.dtypes import DType
from uir.core.ops import ALU, Op
from uir.core.pattern import P, Rules
from uir.core.semantics import apply
from uir.core.uop import UOp


def python_value(value: object, dtype: DType) -> bool | int | float:
    """A numpy scalar as the Python value a CONST of `dtype` holds."""
    if dtype.is_bool:
        return bool(value)
    if dtype.is_int:
        return int(value)  # type: ignore[call-overload]
    number = float(value)  # type: ignore[arg-type]
    return math.nan if math.isnan(number) else number  # the canonical NaN prints and parses back


def const_of(value: np.ndarray, like: UOp) -> UOp:
    """A CONST of `like`'s type holding `value` (a scalar, or all elements in row-major order)."""
    if like.type.shape:
        arg: object = tuple(python_value(v, like.dtype) for v in np.ravel(value))
    else:
        arg = python_value(value, like.dtype)
    return UOp(Op.CONST, like.type, (), arg)


def _is_vector(uop: UOp) -> bool:
    return bool(uop.type.shape)


def _all_constant(uop: UOp) -> bool:
    return all(s.op is Op.CONST for s in uop.src)


def fold_alu(alu: UOp) -> UOp:
    """An ALU op whose sources are all constants, computed by the semantics table."""
    values = [const_array(s) for s in alu.src]
    result = apply(alu.op, alu.dtype, values, [s.dtype for s in alu.src])
    return const_of(result, alu)


def _in_range(index: UOp, size: int) -> bool:
    # A verified program's indices are in range; checking again keeps folding from turning an
    # unverified program's bad access into a wrong constant instead of an error.
    return 0 <= index.arg < size


def element_of_stack(stack: UOp, i: UOp) -> UOp | None:
    """INDEX of a STACK at a constant: the stacked element itself."""
    return stack.src[i.arg] if _in_range(i, len(stack.src)) else None


def element_of_const(vector: UOp, i: UOp) -> UOp | None:
    """INDEX of a shaped CONST at a constant: a scalar CONST."""
    if not _in_range(i, len(vector.arg)):
        return None
    return UOp(Op.CONST, vector.type.scalar, (), vector.arg[i.arg])


fold_rules = Rules(
    [
        (P(ALU, name="alu", where=_all_constant), fold_alu),
        (P(Op.INDEX, src=(P(Op.STACK, name="stack"), P.cvar("i"))), element_of_stack),
        (
            P(Op.INDEX, src=(P(Op.CONST, name="vector", where=_is_vector), P.cvar("i"))),
            element_of_const,
        ),
    ]
)
