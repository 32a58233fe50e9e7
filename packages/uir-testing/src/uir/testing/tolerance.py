"""Worst-case error bounds of f32 results computed in the order uir.md fixes, for comparing them
with a float64 reference where bit-for-bit agreement cannot be expected (EXP2 is within 2 ulp,
and numpy sums in another order). First-order bounds in the unit roundoff U (Higham, "Accuracy
and Stability of Numerical Algorithms", chapters 2 to 4); each is widened by 1% for the
second-order terms, which are below U times the bound itself for the sizes used here."""

from __future__ import annotations

import math

import numpy as np

U = 2.0**-24
"""The unit roundoff of f32: a correctly rounded operation errs by at most U relative."""

SECOND_ORDER = 1.01


def fold_bound(terms: int, magnitude: np.ndarray) -> np.ndarray:
    """The bound on |computed - exact| of a sum of `terms` terms, each a rounded product (a dot
    product, a convolution), folded one term at a time: `terms` roundings of at most U each, on
    partial sums no larger than `magnitude`, the sum of the terms' absolute values."""
    return SECOND_ORDER * terms * U * magnitude


def softmax_bound(x: np.ndarray) -> np.ndarray:
    """The bound on the relative error of each element of uir.testing.movement.softmax of the
    rows of x, as long as every exp stays a normal f32 (arguments above -126).

    With t = (x - max) * log2(e) exactly: the computed t carries three roundings (the SUB, the
    f32 log2(e), the MUL), so an absolute error of up to 3U|t|, which 2^t turns into a relative
    error of ln(2) * 3U|t|; EXP2 adds 2 ulp, at most 4U. Call that h. The row sum of C positive
    terms, each off by at most h_max (relative), folded in order, is off by h_max + (C - 1)U; the
    FDIV adds U. So element j is off by h_j + h_max + C*U, relative."""
    shifted = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    h = 4 * U + math.log(2) * 3 * U * np.abs(shifted * math.log2(math.e))
    return SECOND_ORDER * (h + h.max(axis=1, keepdims=True) + x.shape[1] * U)
