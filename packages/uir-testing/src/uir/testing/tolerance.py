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


def _gamma(n: int | np.ndarray) -> np.ndarray:
    """Higham's gamma_n = nU / (1 - nU): the relative error of n roundings in a row."""
    n = np.asarray(n, dtype=np.float64)
    return n * U / (1 - n * U)


def attention_bound(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool, block: int | None = None
) -> np.ndarray:
    """The bound on |computed - exact| of each element of softmax(q k^T / sqrt(d) + mask) v as
    uir.tensor.attention computes it in f32: `flash_attention` with `block`, `naive_attention`
    with None (spec/uir-week10.md, "Flash attention", derives it). Shapes [..., T, d].

    Either way the output is a convex combination of the rows of v with weights W_j = 2^(s_j - m)
    (s_j = q.k_j log2(e) / sqrt(d), any shift m), and the computed output is that combination
    with each weight off by at most E, relative, in numerator and denominator: then it is off by
    at most 2E/(1 - E) max|v|, and the last rounding adds U|o|. E gathers, per row:
    - the score: a d-term dot product of products of q scaled (two roundings) and k, off by
      gamma_(d+2) A_j with A_j its sum of absolute terms (in log2 units): a weight off by
      ln(2) times that;
    - the exp2 of each weight: the rounded argument (U times its size, at most the row's spread
      of scores R) and the 2 ulp of EXP2 (4U): ln(2) U R + 4U; flash also multiplies each weight
      by the rescale exp2(m_old - m_new) of every later block, each as far off: nb of them;
    - the sums: n keys folded one at a time, rescaled once a block, times v once: flash
      gamma_(n + nb + 1); naive exps (3 roundings of the argument, not 1), their sum, the FDIV
      and the product and sum with v: 2 gamma_(n + 1)."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    *_, tq, d = q.shape
    tk = k.shape[-2]
    keys = np.arange(tk)
    seen = keys[None, :] <= np.arange(tq)[:, None] if causal else np.ones((tq, tk), dtype=bool)
    log2e = math.log2(math.e)
    a = log2e / math.sqrt(d) * (np.abs(q) @ np.swapaxes(np.abs(k), -1, -2))  # [..., Tq, Tk]
    s = log2e / math.sqrt(d) * (q @ np.swapaxes(k, -1, -2))
    delta = _gamma(d + 2) * np.where(seen, a, 0).max(axis=-1)  # per row, log2 units
    spread = np.where(seen, s, -np.inf).max(axis=-1) - np.where(seen, s, np.inf).min(axis=-1)
    spread = spread + 2 * delta
    n = seen.sum(axis=1)  # keys of each row
    if block is None:
        error = math.log(2) * delta + 3 * math.log(2) * U * spread + 4 * U + 2 * _gamma(n + 1)
    else:
        nb = -(-n // block) if causal else np.full(tq, -(-tk // block))
        per_exp = math.log(2) * U * spread + 4 * U
        error = math.log(2) * delta + nb * per_exp + _gamma(n + nb + 1)
    error = SECOND_ORDER * error
    vmax = np.abs(v).max(axis=-2, keepdims=True)  # [..., 1, dv]
    exact = reference_attention(q, k, v, causal)
    return (2 * error / (1 - error))[..., None] * vmax + U * np.abs(exact)


def reference_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """softmax(q k^T / sqrt(d) + mask) v in float64 numpy: the exact value to within 1e-15."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    tq, tk = q.shape[-2], k.shape[-2]
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = np.where(np.arange(tk)[None, :] <= np.arange(tq)[:, None], scores, -np.inf)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return (weights / weights.sum(axis=-1, keepdims=True)) @ v
