"""Fast scalar versions of the commonest ALU ops, on plain Python numbers, for the interpreter.

`semantics.py` is the meaning of every op; these functions compute the same results on Python
ints, floats and bools instead of numpy arrays (a numpy scalar per op costs tens of
microseconds). They cover ints of every width, f32, bf16, f64 and bool; for anything else
(`scalar_op` returns None: f16, CAST, BITCAST, EXP2, LOG2, SIN) the interpreter calls
`semantics.apply`. tests/test_scalar.py checks each function bit for bit against `apply` on edge
values and random inputs, so the two can never silently disagree.

Floats: a Python float is an IEEE f64. An f32 op computes on f64 and rounds the result to f32
once. For + - * / and sqrt of f32 operands this is one correct rounding: f64 carries 53 >= 2*24+2
significant bits, so rounding the exact result first to f64 and then to f32 never differs from
rounding it to f32 directly (the double-rounding theorem). bf16 (8 bits) rounds the same way
(53 >= 2*8+2); a REDUCE over bf16 steps with these functions (`semantics.reduce`).
Ints: Python ints are exact, so every int op is computed exactly and wrapped to the dtype's width
explicitly.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from .dtypes import DType, bf16, f32, f64
from .ops import Op

Scalar = int | float | bool
_F32 = struct.Struct("<f")


def round_f32(x: float) -> float:
    """`x` rounded once to the nearest f32 (ties to even), as a Python float."""
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:  # struct refuses finite values that round to infinity
        return math.copysign(math.inf, x)


def round_bf16(x: float) -> float:
    """`x` rounded once to the nearest bf16 (ties to even), as a Python float."""
    if x != x or x == 0.0:
        return x
    if abs(x) >= 2.0**128:  # infinity, or far past the largest bf16 (scaling could overflow)
        return math.copysign(math.inf, x)
    # bf16 keeps 8 significant bits down to 2^-126 and a fixed quantum of 2^-133 below (its
    # subnormals). Scaling by a power of two is exact, and round() of a float is ties to even.
    quantum = max(math.frexp(x)[1] - 1, -126) - 7
    rounded = math.ldexp(round(math.ldexp(x, -quantum)), quantum)
    if abs(rounded) >= 2.0**128:  # past the largest bf16 by half an ulp or more
        return math.copysign(math.inf, x)
    return math.copysign(rounded, x)


def _wrapper(dtype: DType) -> Callable[[int], int]:
    mask = (1 << dtype.bits) - 1
    if not dtype.signed:
        return lambda x: x & mask
    half = 1 << (dtype.bits - 1)
    return lambda x: ((x + half) & mask) - half


def _int_ops(dtype: DType) -> dict[Op, Callable[..., Scalar]]:
    wrap = _wrapper(dtype)
    all_ones = wrap(-1)
    width = dtype.bits - 1

    def idiv(a: int, b: int) -> int:
        if b == 0:
            return all_ones  # total, as RISC-V: x / 0 is all ones
        q = abs(a) // abs(b)
        return wrap(q if (a < 0) == (b < 0) else -q)  # truncated; MIN / -1 wraps to MIN

    def mod(a: int, b: int) -> int:
        if b == 0:
            return a  # x % 0 is x
        r = abs(a) % abs(b)
        return -r if a < 0 else r  # C: the dividend's sign; MIN % -1 is 0

    def shr(a: int, b: int) -> int:
        return a >> (b & width)  # arithmetic for signed (Python ints), logical for unsigned

    ops: dict[Op, Callable[..., Scalar]] = {
        Op.ADD: lambda a, b: wrap(a + b),
        Op.SUB: lambda a, b: wrap(a - b),
        Op.MUL: lambda a, b: wrap(a * b),
        Op.NEG: lambda a: wrap(-a),
        Op.IDIV: idiv,
        Op.MOD: mod,
        Op.MAX: max,
        Op.MIN: min,
        Op.AND: lambda a, b: a & b,  # of two in-range ints, in range in either signedness
        Op.OR: lambda a, b: a | b,
        Op.XOR: lambda a, b: a ^ b,
        Op.SHL: lambda a, b: wrap(a << (b & width)),
        Op.SHR: shr,
    }
    return ops


def _fdiv(a: float, b: float) -> float:
    if b == 0.0:  # Python raises where IEEE gives an infinity or a NaN
        if a != a or a == 0.0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _sqrt(a: float) -> float:
    if a < 0.0:
        return math.nan
    return math.sqrt(a) if a == a else a


def _trunc(a: float) -> float:
    if a != a or math.isinf(a):
        return a
    return math.copysign(float(math.trunc(a)), a)  # keeps -0.0 for -0.5


def _fmax(a: float, b: float) -> float:
    """IEEE 754-2019 maximum: NaN propagates, +0 > -0."""
    if a != a or b != b:
        return math.nan
    if a == b:
        return b if math.copysign(1.0, a) < 0 else a
    return a if a > b else b


def _fmin(a: float, b: float) -> float:
    """IEEE 754-2019 minimum: NaN propagates, -0 < +0."""
    if a != a or b != b:
        return math.nan
    if a == b:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def _float_ops(dtype: DType) -> dict[Op, Callable[..., Scalar]]:
    exact: dict[Op, Callable[..., float]] = {
        Op.ADD: lambda a, b: a + b,
        Op.SUB: lambda a, b: a - b,
        Op.MUL: lambda a, b: a * b,
        Op.FDIV: _fdiv,
        Op.SQRT: _sqrt,
        Op.RECIP: lambda a: _fdiv(1.0, a),
    }
    ops: dict[Op, Callable[..., Scalar]] = {
        Op.NEG: lambda a: -a,
        Op.TRUNC: _trunc,
        Op.MAX: _fmax,
        Op.MIN: _fmin,
    }
    if dtype == f64:
        ops.update(exact)
    else:
        rounding = round_bf16 if dtype is bf16 else round_f32
        for op, fn in exact.items():
            ops[op] = lambda *xs, fn=fn, rounding=rounding: rounding(fn(*xs))
    return ops


_SHARED: dict[Op, Callable[..., Scalar]] = {
    Op.CMPLT: lambda a, b: a < b,
    Op.CMPLE: lambda a, b: a <= b,
    Op.CMPEQ: lambda a, b: a == b,
    Op.CMPNE: lambda a, b: a != b,
    Op.WHERE: lambda c, a, b: a if c else b,
}
_BOOL: dict[Op, Callable[..., Scalar]] = {
    Op.AND: lambda a, b: a and b,
    Op.OR: lambda a, b: a or b,
    Op.XOR: lambda a, b: a != b,
}
_CACHE: dict[DType, dict[Op, Callable[..., Scalar]]] = {}


def scalar_op(op: Op, operand: DType) -> Callable[..., Scalar] | None:
    """The Python-number function of `op` on scalars of dtype `operand` (for WHERE, the dtype
    of its branches), or None where only `semantics.apply` has it."""
    if op in _SHARED:
        return _SHARED[op]
    table = _CACHE.get(operand)
    if table is None:
        if operand.is_bool:
            table = _BOOL
        elif operand.is_int:
            table = _int_ops(operand)
        elif operand in (f32, bf16, f64):
            table = _float_ops(operand)
        else:
            table = {}
        _CACHE[operand] = table
    return table.get(op)
