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
