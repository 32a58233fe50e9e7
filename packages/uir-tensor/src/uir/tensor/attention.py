"""Attention as UOps (week 10): the naive formula from shaped ops, and flash attention as a
schedule of loops that never holds the T x T scores (spec/uir-week10.md, "Flash attention").

Both compute `softmax(q k^T / sqrt(d) + mask) v` for f32 values `q: [..., Tq, d]`,
`k: [..., Tk, d]` and `v: [..., Tk, dv]` (the leading axes, batch and heads, are equal for all
three; rank 2 at least), giving `[..., Tq, dv]`. With `causal`, query t sees the keys 0..t (then
Tq must equal Tk). exp is EXP2 with the factor log2(e), as every UIR softmax.

- `naive_attention` writes the formula with shaped ops and STAGEs the masked scores and the
  probabilities: two values of [..., Tq, Tk] in memory, the reference path.
- `flash_attention` writes the loops itself, at the level of spec/uir-week3.md (RANGE, END,
  LOCAL accumulators carried by AFTER): for each query row (a PARALLEL range), a sequential loop
  over blocks of keys keeps a running max m, a running sum l and an accumulator acc[dv], rescaled
  by exp2(m_old - m_new) when a block raises the max (the online softmax). What a row holds is
  O(d + dv + block); besides it, k transposed ([..., d, Tk] padded to whole blocks) and the
  output ([..., Tq, dv]): O(T d), never [..., Tq, Tk].

The loops are the program's own, so their ids must not be those of any other RANGE or LOCAL of
the program: they are taken above every id found under q, k and v. Two attentions that share no
graph (two heads built apart) may therefore get equal ids, which the verifier rejects (two
stores to one version); give all heads to one call as a leading axis instead.
"""

from __future__ import annotations

import math

import numpy as np

from uir.core.dtypes import F32, I32, Type, f32, i32
from uir.core.loops import range_id
from uir.core.memory import Kind, kind
from uir.core.ops import Op
from uir.core.shapes import ShapeError
from uir.core.uop import UOp

LOG2E = math.log2(math.e)


def _f32(x: float) -> UOp:
    """An f32 CONST of `x` rounded to f32 once, here (a CONST holds a value of its dtype)."""
    return UOp.const(F32, float(np.float32(x)))


def _i32(x: int) -> UOp:
    return UOp.const(I32, x)


def _shapes(
    name: str, q: UOp, k: UOp, v: UOp, causal: bool
) -> tuple[tuple[int, ...], int, int, int, int]:
    """(leading axes, Tq, Tk, d, dv) of an attention's operands, or a ShapeError naming `name`
    and the shapes that do not fit."""
    for label, x in (("q", q), ("k", k), ("v", v)):
        if kind(x) is not Kind.VALUE:
            raise ShapeError(f"{name}: {label} is {x.op} {x.type}, not a value (LOAD it first)")
        if x.dtype is not f32 or len(x.type.shape) < 2:
            raise ShapeError(
                f"{name}: {label} must be an f32 value of shape [..., T, d], not {x.type}"
            )
    *lead, tq, d = q.type.shape
    *klead, tk, dk = k.type.shape
    *vlead, tv, dv = v.type.shape
    if klead != lead or vlead != lead:
        raise ShapeError(
            f"{name}: q {q.type}, k {k.type} and v {v.type} must have the same leading axes"
        )
    if dk != d:
        raise ShapeError(f"{name}: q {q.type} and k {k.type} differ in their last axis")
    if tv != tk:
        raise ShapeError(f"{name}: k {k.type} and v {v.type} hold different numbers of keys")
    if causal and tq != tk:
        raise ShapeError(
            f"{name}: a causal mask needs as many queries as keys, got q {q.type} and k {k.type}"
        )
    return tuple(lead), tq, tk, d, dv


# --- the reference: shaped ops, scores and probabilities materialized ------------------------


def naive_attention(q: UOp, k: UOp, v: UOp, causal: bool = True) -> UOp:
    """`softmax(q k^T / sqrt(d) + mask) v` from shaped ops (module docstring), the masked scores
    and the probabilities each STAGEd: [..., Tq, Tk] in memory, twice."""
    lead, tq, tk, d, dv = _shapes("naive_attention", q, k, v, causal)
    axis = len(lead)  # the query axis; keys at axis + 1
    grid = (*lead, tq, tk)
    # [..., Tq, Tk, d] folded on its last axis: the classic nest, each score one dot product
    qe = q.reshape((*lead, tq, 1, d)).expand((*grid, d))
    ke = k.reshape((*lead, 1, tk, d)).expand((*grid, d))
    scores = qe.alu(Op.MUL, ke).reduce(Op.ADD, (axis + 2,))
    scores = scores.alu(Op.MUL, _f32(1 / math.sqrt(d)).expand(grid))
    if causal:
        seen = causal_mask(tq, tk).expand(grid)
        scores = seen.where(scores, _f32(-math.inf).expand(grid))
    scores = scores.stage()
    keep = (*lead, tq, 1)
    top = scores.reduce(Op.MAX, (axis + 1,)).reshape(keep).expand(grid)
    e = scores.alu(Op.SUB, top).alu(Op.MUL, _f32(LOG2E).expand(grid))
    e = UOp(Op.EXP2, e.type, (e,))
    total = e.reduce(Op.ADD, (axis + 1,)).reshape(keep).expand(grid)
    probs = e.alu(Op.FDIV, total).stage()
    # [..., Tq, Tk, dv] folded on the keys: rows of v read in order (spec/rangeify.md 2)
    pe = probs.reshape((*grid, 1)).expand((*grid, dv))
    ve = v.reshape((*lead, 1, tk, dv)).expand((*grid, dv))
    return pe.alu(Op.MUL, ve).reduce(Op.ADD, (axis + 1,))


# --- flash attention: the loops written out ----------------------------------------------------


class _Ids:
    """Fresh RANGE and LOCAL ids, above every id under the given roots."""

    def __init__(self, *roots: UOp) -> None:
        uops = {u for r in roots for u in r.toposort()}
        self.range_id = max((range_id(u) + 1 for u in uops if u.op is Op.RANGE), default=0)
        self.local_id = max((u.arg + 1 for u in uops if u.op is Op.LOCAL), default=0)

    def range(self, end: UOp | int, parallel: bool = False) -> UOp:
        self.range_id += 1
        return UOp.range(_i32(end) if isinstance(end, int) else end, self.range_id - 1, parallel)

    def local(self, size: int) -> UOp:
        self.local_id += 1
        return UOp(Op.LOCAL, Type(f32, (size,)), (), self.local_id - 1)


def _plus(a: UOp, b: UOp) -> UOp:
    """`a + b` without adding a zero, so that index expressions stay small."""
    if b.op is Op.CONST and b.arg == 0:
        return a
    if a.op is Op.CONST and a.arg == 0:
        return b
    return a.alu(Op.ADD, b)


def _times(a: UOp, n: int) -> UOp:
    return a if n == 1 else a.alu(Op.MUL, _i32(n))


def _flat(x: UOp) -> UOp:
    """`x` as a rank-1 value, the form an INDEX of a value takes (uir.md 5)."""
    if len(x.type.shape) == 1:
        return x
    if x.op is Op.RESHAPE and len(x.src[0].type.shape) == 1:
        return x.src[0]  # a buffer's LOAD reshaped: index the LOAD itself
    return x.reshape((x.type.size,))


def _in_memory(x: UOp) -> UOp:
    """`x` flat, read from memory where a loop indexes it: a buffer's LOAD (or a table, or a
    STAGE) as it is; anything else STAGEd once, since rangeify computes a value's element at
    each read, and the key loops read every element of k and v about T times."""
    flat = _flat(x)
    return flat if flat.op in (Op.LOAD, Op.CONST, Op.STAGE) else flat.stage()


def _element(x: UOp, at: UOp) -> UOp:
    return x.index(at).load() if x.op in (Op.LOCAL, Op.AFTER) else x.index(at)


def flash_attention(q: UOp, k: UOp, v: UOp, causal: bool = True, block: int = 64) -> UOp:
    """`softmax(q k^T / sqrt(d) + mask) v` (module docstring) as the online-softmax schedule of
    spec/uir-week10.md: one PARALLEL loop over the query rows; in each, the row of q scaled by
    log2(e)/sqrt(d), then a sequential loop over blocks of `block` keys (the last block of a
    row may be shorter: Tk need not be a multiple of `block`, and a causal row stops at its own
    key) computing the block's scores, its max, its exps and their sum, and adding them,
    rescaled, to the row's accumulators; then acc / l is the output row."""
    lead, tq, tk, d, dv = _shapes("flash_attention", q, k, v, causal)
    if not isinstance(block, int) or isinstance(block, bool) or block < 1:
        raise ShapeError(f"flash_attention: block must be an int >= 1, not {block!r}")
    heads = math.prod(lead)
    width = min(block, tk)
    blocks = -(-tk // width)
    padded = blocks * width
    # k transposed, [..., d, blocks * width], zeros past Tk: the scores of a block are then
    # `width` dot products whose terms lie side by side, folded in lockstep over c by a loop of
    # constant trip count (a C compiler vectorizes it), past Tk computed and never read
    axes = len(lead)
    kt = k.permute((*range(axes), axes + 1, axes))
    if padded > tk:
        kt = kt.pad(((0, 0),) * (axes + 1) + ((0, padded - tk),))
    qf, ktf, vf = _flat(q), kt.reshape((kt.type.size,)).stage(), _in_memory(v)
    ids = _Ids(q, ktf, vf)

    out = ids.local(heads * tq * dv)
    qs, state, acc = ids.local(d), ids.local(2), ids.local(dv)  # state: m at 0, l at 1
    top, scores, probs = ids.local(1), ids.local(width), ids.local(width)
    zero, one = _i32(0), _i32(1)

    t = ids.range(tq, parallel=True)
    h = ids.range(heads, parallel=True) if heads > 1 else None
    row = (h, t) if h is not None else (t,)
    head = zero if h is None else h
    q_row = _times(_plus(_times(head, tq), t), d)  # where row (h, t) of q starts
    v_head = _times(head, tk * dv)
    out_row = _times(_plus(_times(head, tq), t), dv)

    # the row of q, scaled into log2 units once: every score is then one dot product
    c1 = ids.range(d)
    scaled = qf.index(_plus(q_row, c1)).alu(Op.MUL, _f32(LOG2E / math.sqrt(d)))
    q_done = qs.after(qs.after(*row, c1).index(c1).store(scaled).end(c1))

    # m = -inf, l = 0 (the fold identity -0.0), acc = 0: a row's own scratch (uir-week7.md rule 3)
    set_m = state.after(*row).index(zero).store(_f32(-math.inf))
    set_l = state.after(set_m).index(one).store(_f32(-0.0))
    c2 = ids.range(dv)
    set_acc = acc.after(*row, c2).index(c2).store(_f32(-0.0)).end(c2)

    # blocks of keys: a causal row t sees keys 0..t, so blocks 0..t // width
    if causal:
        b = ids.range(t.alu(Op.IDIV, _i32(width)).alu(Op.ADD, one))
        stop = t.alu(Op.ADD, one)
    else:
        b = ids.range(blocks)
        stop = _i32(tk)
    first = _times(b, width)
    n = _i32(width).alu(Op.MIN, stop.alu(Op.SUB, first))  # the keys of this block: >= 1

    def key(j: UOp) -> UOp:
        # first + j < stop <= Tk always (j < n); the MIN only proves the index in range where
        # the bounds of first + j (up to blocks * width - 1) pass Tk - 1 (uir-week2.md 5)
        at = _plus(first, j)
        return at if tk % width == 0 else at.alu(Op.MIN, _i32(tk - 1))

    carried = state.after(set_l, b)  # m and l after the earlier blocks
    m_old = carried.index(zero).load()
    l_old = carried.index(one).load()

    # scores[j] = sum_c qs[c] * kt[c, first + j] for all `width` keys of the block (past the
    # row's last key too: never read), c outside, j inside: `width` independent folds in
    # lockstep, each folding c in order
    j0 = ids.range(width)
    set_s = scores.after(*row, b, j0).index(j0).store(_f32(-0.0)).end(j0)
    c3, j1 = ids.range(d), ids.range(width)
    s_c = scores.after(set_s, c3, j1).index(j1)
    at = _plus(_times(_plus(_times(head, d), c3), padded), _plus(first, j1))
    term = _element(q_done, c3).alu(Op.MUL, ktf.index(at))
    s_done = scores.after(s_c.store(s_c.load().alu(Op.ADD, term)).end(c3, j1))

    # m_new = max(m_old, the block's scores)
    set_top = top.after(*row, b).index(zero).store(m_old)
    j2 = ids.range(n)
    m_j = top.after(set_top, j2).index(zero)
    top_done = m_j.store(m_j.load().alu(Op.MAX, _element(s_done, j2))).end(j2)
    m_new = top.after(top_done).index(zero).load()
    alpha = m_old.alu(Op.SUB, m_new)
    alpha = UOp(Op.EXP2, F32, (alpha,))  # 0 for the first block: m_old is -inf

    # p[j] = exp2(s[j] - m_new); l = l_old * alpha + sum_j p[j]; m = m_new
    j3 = ids.range(n)
    p = _element(s_done, j3).alu(Op.SUB, m_new)
    p = UOp(Op.EXP2, F32, (p,))
    p_done = probs.after(probs.after(*row, b, j3).index(j3).store(p).end(j3))
    set_m_new = carried.index(zero).store(m_new)
    rescale_l = state.after(set_m_new).index(one).store(l_old.alu(Op.MUL, alpha))
    l_j = state.after(rescale_l, j3).index(one)
    l_done = l_j.store(l_j.load().alu(Op.ADD, p)).end(j3)

    # acc = acc * alpha + sum_j p[j] v[key j]: j outside, the row of v read in order inside
    c4 = ids.range(dv)
    a_c = acc.after(set_acc, b, c4).index(c4)
    rescaled = a_c.store(a_c.load().alu(Op.MUL, alpha)).end(c4)
    j5, c5 = ids.range(n), ids.range(dv)
    a_jc = acc.after(rescaled, j5, c5).index(c5)
    weighted = _element(p_done, j5).alu(
        Op.MUL, vf.index(_plus(v_head, _plus(_times(key(j5), dv), c5)))
    )
    acc_done = a_jc.store(a_jc.load().alu(Op.ADD, weighted)).end(j5, c5)

    # the row: acc / l
    l_final = state.after(l_done.end(b)).index(one).load()
    acc_final = acc.after(acc_done.end(b))
    c6 = ids.range(dv)
    written = out.index(_plus(out_row, c6)).store(_element(acc_final, c6).alu(Op.FDIV, l_final))
    rows_done = written.end(c6).end(*row)
    return out.after(rows_done).load().reshape((*lead, tq, dv))


def causal_mask(tq: int, tk: int) -> UOp:
    """bool [Tq, Tk]: key j is seen by query t when j <= t."""
    rows = UOp.const(Type(i32, (tq,)), tuple(range(tq))).reshape((tq, 1)).expand((tq, tk))
    cols = UOp.const(Type(i32, (tk,)), tuple(range(tk))).reshape((1, tk)).expand((tq, tk))
    return cols.alu(Op.CMPLE, rows)


__all__ = ["LOG2E", "causal_mask", "flash_attention", "naive_attention"]
