"""Comparing the outputs of two runs of a program, bit for bit (uir.md section 3).

A NaN need only stay a NaN: its sign and payload are unspecified, so two correct compilers may
print the same `nan` from different bits.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtype, shape and bits, a NaN anywhere matching a NaN in the same place."""
    a, b = np.ravel(a), np.ravel(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b))) and a[~nan].tobytes() == b[~nan].tobytes()
    return a.tobytes() == b.tobytes()


def same_outputs(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    """Every output of two runs has the same bits (see same_bits)."""
    return len(a) == len(b) and all(same_bits(x, y) for x, y in zip(a, b, strict=True))


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For float arrays of one dtype: how many representable values apart a and b are, each
    element (-0 and +0 are 0 apart; NaNs are not compared here)."""
    width = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    ia, ib = (np.ravel(x).view(width).astype(np.int64) for x in (a, b))
    if width is np.int64:  # the mapping below overflows int64: compare in Python integers
        ia, ib = (np.array([int(v) for v in x], dtype=object) for x in (ia, ib))
    # sign-magnitude bits onto a line where adjacent floats differ by 1
    magnitude = (1 << (8 * a.dtype.itemsize - 1)) - 1
    ia, ib = (np.where(x < 0, -(x & magnitude), x) for x in (ia, ib))
    return np.abs(ia - ib)


def within_ulps(a: np.ndarray, b: np.ndarray, ulps: int) -> bool:
    """Equal dtype and shape; floats NaN where the other is NaN and otherwise at most `ulps`
    apart (an infinity only matches itself); anything else bit for bit."""
    if a.dtype != b.dtype or np.shape(a) != np.shape(b) or a.dtype.kind != "f":
        return same_bits(a, b)
    a, b = np.ravel(a), np.ravel(b)
    nan = np.isnan(a)
    if not np.array_equal(nan, np.isnan(b)):
        return False
    a, b = a[~nan], b[~nan]
    if not np.array_equal(np.isinf(a), np.isinf(b)) or not np.array_equal(
        a[np.isinf(a)], b[np.isinf(b)]
    ):
        return False
    return bool(np.all(ulp_distance(a, b) <= ulps))


def outputs_within_ulps(a: Sequence[np.ndarray], b: Sequence[np.ndarray], ulps: int) -> bool:
    """Every output of two runs within `ulps` (see within_ulps)."""
    return len(a) == len(b) and all(within_ulps(x, y, ulps) for x, y in zip(a, b, strict=True))
