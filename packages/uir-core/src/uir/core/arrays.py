"""UIR values as numpy arrays: the one place that turns CONSTs, buffers and bf16 bits into arrays.

Every value is held in its dtype's storage type (`DType.storage`; bf16 in float32). The
interpreter, constant folding and the C backend's runtime all build arrays here, so they agree.
Only the code that computes values imports this module: parsing, checking and printing never
load numpy.
"""

from __future__ import annotations

import math

import numpy as np

from .dtypes import DType, bf16
from .errors import BackendError
from .floats import float_limits
from .uop import UOp


def const_array(const: UOp) -> np.ndarray:
    """The value of a CONST: a 0-d array for a scalar, else its elements in its shape."""
    # Elements convert themselves without a Python loop (Elements.__array__).
    return np.array(const.arg, dtype=const.dtype.storage).reshape(const.type.shape)


def buffer_contents(buffer: UOp, given: np.ndarray | None = None) -> np.ndarray:
    """A BUFFER's or LOCAL's contents when the program starts, flat, as a fresh array: `given`
    (the caller's input for a global buffer), else its initial CONST, else zeros (uir.md 6.1)."""
    storage, size = buffer.dtype.storage, buffer.type.size
    if given is not None:
        given = np.asarray(given)
        if given.size != size:
            raise BackendError(f"input {buffer.arg} has {given.size} elements, not {size}")
        return np.array(given, dtype=storage).reshape(size)
    if buffer.src:
        return const_array(buffer.src[0]).reshape(size)
    return np.zeros(size, dtype=storage)


def bf16_bits(values: np.ndarray) -> np.ndarray:
    """The bfloat16 bit patterns (uint16) of bf16 values held in float32: their top 16 bits."""
    wide = np.asarray(values, dtype=np.float32)
    return (wide.view(np.uint32) >> np.uint32(16)).astype(np.uint16)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    """bf16 values in float32 from their bit patterns (any 16-bit array)."""
    narrow = np.asarray(bits).view(np.uint16)
    return (narrow.astype(np.uint32) << np.uint32(16)).view(np.float32)


def round_array(values: np.ndarray, dtype: DType) -> np.ndarray:
    """Round float64 (or wider-exact) values once to `dtype`, stored in its numpy storage type."""
    values = np.asarray(values, dtype=np.float64)
    if dtype is not bf16:
        # numpy converts float64 to float32 and float16 with one correct rounding (overflow
        # to infinity included, which is the right answer, not a problem to warn about).
        with np.errstate(over="ignore"):
            return values.astype(dtype.storage)
    p, emin, emax = float_limits(dtype)
    with np.errstate(all="ignore"):
        _, exps = np.frexp(values)  # values = m * 2**exps with 0.5 <= |m| < 1
        quantum = np.maximum(exps - 1, emin) - (p - 1)
        scale = np.ldexp(1.0, quantum)
        rounded = np.rint(values / scale) * scale  # np.rint is ties-to-even
        limit = math.ldexp(1.0, emax + 1)
        rounded = np.where(np.abs(rounded) >= limit, np.copysign(np.inf, values), rounded)
        rounded = np.where(np.isfinite(values), rounded, values)
        rounded = np.where(values == 0, values, rounded)  # keeps the sign of zero
    return rounded.astype(np.float32)
