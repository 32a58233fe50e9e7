"""The derivative of every op (uir.md section 10.4, spec/uir-week9.md section 3), as one rule table.

`GRADIENT.rewrite(uop, ctx=g)`, with `g` the gradient flowing into `uop` (a UOp of `uop`'s
type), gives a tuple holding one gradient per source of `uop` (None where nothing flows), or None
when nothing flows into any source: an op with no rule (a comparison, TRUNC, BITCAST, an int op,
a LOAD, a CONST) is a constant. The rules are tried only on the UOps `uir.core.gradients`
lets a gradient through, so a rule may take its UOp's dtype to be a float. Rules build with
UOp's typed builders, so a rule that built a mistyped UOp fails where it does so.
"""

from __future__ import annotations

from uir.core.dtypes import I32, Type, i32
from uir.core.floats import round_decimal
from uir.core.ops import Op
from uir.core.pattern import FLOATS, P, Rules
from uir.core.shapes import reduce_arg
from uir.core.uop import UOp

Grads = tuple[UOp | None, ...]

# ln 2 and pi / 2 to 40 digits: rounded once to each dtype (uir.md section 3).
_LN2 = ("6931471805599453094172321214581765680755", -40)
_HALF_PI = ("1570796326794896619231321691639751442099", -39)


def _constant(like: UOp, digits_exponent: tuple[str, int]) -> UOp:
    return like.const_like(round_decimal(*digits_exponent, like.dtype))


def _add(a: UOp, b: UOp) -> UOp:
    return a.alu(Op.ADD, b)


def _mul(a: UOp, b: UOp) -> UOp:
    return a.alu(Op.MUL, b)


def _div(a: UOp, b: UOp) -> UOp:
    return a.alu(Op.FDIV, b)


def _neg(a: UOp) -> UOp:
    return a.alu(Op.NEG)


def _zero(like: UOp) -> UOp:
    return like.const_like(0.0)


# ---- arithmetic ----------------------------------------------------------------------------


def _max_min(ret: UOp, ctx: UOp, larger: bool) -> Grads:
    """MAX (MIN alike): `g` to the larger (smaller) source, `g/2` to each when they are equal."""
    a, b = ret.src
    tie = a.alu(Op.CMPEQ, b).where(_mul(ctx, ctx.const_like(0.5)), _zero(ctx))
    a_wins = b.alu(Op.CMPLT, a) if larger else a.alu(Op.CMPLT, b)
    b_wins = a.alu(Op.CMPLT, b) if larger else b.alu(Op.CMPLT, a)
    return a_wins.where(ctx, tie), b_wins.where(ctx, tie)


def _fdiv(ret: UOp, ctx: UOp) -> Grads:
    """a / b: `g/b` to a and `-(g/b) * (a/b)`, that is `-g*a/b^2`, to b; `a/b` is the result."""
    per_b = _div(ctx, ret.src[1])
    return per_b, _neg(_mul(per_b, ret))


# ---- REDUCE and the movement ops -----------------------------------------------------------


def _kept(value: UOp, shape: tuple[int, ...], axes: tuple[int, ...]) -> UOp:
    """`value`, of `shape` with `axes` folded away, broadcast back over them to `shape`."""
    if value.type.shape:
        ones = tuple(1 if d in axes else n for d, n in enumerate(shape))
        value = value.reshape(ones)
    return value.expand(shape)


def _reduce(ret: UOp, ctx: UOp) -> Grads | None:
    """REDUCE ADD: `g` expanded over the folded axes. REDUCE MAX/MIN: `g` shared equally by the
    elements equal to the result. REDUCE MUL has no rule (the verifier rejects a path through
    it)."""
    x = ret.src[0]
    fold, axes, _ = reduce_arg(ret.arg)
    shape = x.type.shape
    if fold is Op.ADD:
        return (_kept(ctx, shape, axes),)
    if fold not in (Op.MAX, Op.MIN):
        return None
    chosen = x.alu(Op.CMPEQ, _kept(ret, shape, axes))
    count = chosen.cast(x.dtype).reduce(Op.ADD, axes)
    share = _kept(_div(ctx, count), shape, axes)
    return (chosen.where(share, _zero(x)),)


def _expand(ret: UOp, ctx: UOp) -> Grads:
    """EXPAND: `g` summed over the broadcast axes (numpy's rule: right-aligned, each source dim
    equal to the result's or 1), then shaped as the source."""
    source = ret.src[0].type.shape
    result = ret.type.shape
    lead = len(result) - len(source)
    axes = tuple(range(lead)) + tuple(
        lead + d for d, n in enumerate(source) if n == 1 and result[lead + d] != 1
    )
    if not axes:  # the same shape
        return (ctx,)
    summed = ctx.reduce(Op.ADD, axes)
    if summed.type.shape == source:
        return (summed,)
    # Only ones remain of the source's dims; a scalar becomes shaped by EXPAND, not RESHAPE.
    return (summed.reshape(source) if summed.type.shape else summed.expand(source),)


def _permute(ret: UOp, ctx: UOp) -> Grads:
    """PERMUTE: `g` through the inverse permutation."""
    order = ret.arg
    return (ctx.permute(sorted(range(len(order)), key=order.__getitem__)),)


def _pad(ret: UOp, ctx: UOp) -> Grads:
    """PAD: the window of `g` where the source lies."""
    source = ret.src[0].type.shape
    return (
        ctx.shrink([(before, before + n) for (before, _), n in zip(ret.arg, source, strict=True)]),
    )


def _shrink(ret: UOp, ctx: UOp) -> Grads:
    """SHRINK of a value: `g` padded with zeros back to the source's shape."""
    source = ret.src[0].type.shape
    return (ctx.pad([(begin, n - end) for (begin, end), n in zip(ret.arg, source, strict=True)]),)


def _stack(ret: UOp, ctx: UOp) -> Grads:
    """STACK: source i gets slice i of `g` along the new leading axis."""
    rest = ret.type.shape[1:]
    if not rest:  # week 1's vector of scalars
        return tuple(ctx.index(UOp.const(I32, i)) for i in range(len(ret.src)))
    full = [(0, n) for n in rest]
    return tuple(ctx.shrink([(i, i + 1), *full]).reshape(rest) for i in range(len(ret.src)))


def _index(ret: UOp, ctx: UOp) -> Grads:
    """INDEX of a rank-1 value: `g` at the indexed element, zeros elsewhere; none to the
    index."""
    vector, at = ret.src
    (size,) = vector.type.shape
    iota = UOp.const(Type(i32, (size,)), tuple(range(size)))
    chosen = iota.alu(Op.CMPEQ, at.expand((size,)))
    return chosen.where(ctx.expand((size,)), _zero(vector)), None


def _where(ctx: UOp, c: UOp) -> Grads:
    """WHERE: `g` to a where c holds, to b elsewhere, nothing to c."""
    zero = _zero(ctx)
    return None, c.where(ctx, zero), c.where(zero, ctx)


F = FLOATS
RET = "ret"

GRADIENT = Rules(
    [
        (P(Op.ADD, F), lambda ctx: (ctx, ctx)),
        (P(Op.SUB, F), lambda ctx: (ctx, _neg(ctx))),
        (P(Op.NEG, F), lambda ctx: (_neg(ctx),)),
        (P(Op.MUL, F, name=RET), lambda ret, ctx: (_mul(ctx, ret.src[1]), _mul(ctx, ret.src[0]))),
        (P(Op.FDIV, F, name=RET), _fdiv),
        (P(Op.RECIP, F, name=RET), lambda ret, ctx: (_neg(_mul(_mul(ctx, ret), ret)),)),
        (P(Op.SQRT, F, name=RET), lambda ret, ctx: (_div(ctx, _mul(ret, ret.const_like(2.0))),)),
        (P(Op.EXP2, F, name=RET), lambda ret, ctx: (_mul(_mul(ctx, ret), _constant(ret, _LN2)),)),
        (
            P(Op.LOG2, F, src=(P.var("x"),)),
            lambda x, ctx: (_div(ctx, _mul(x, _constant(x, _LN2))),),
        ),
        (
            P(Op.SIN, F, src=(P.var("x"),)),
            lambda x, ctx: (_mul(ctx, _constant(x, _HALF_PI).alu(Op.SUB, x).alu(Op.SIN)),),
        ),
        (P(Op.MAX, F, name=RET), lambda ret, ctx: _max_min(ret, ctx, larger=True)),
        (P(Op.MIN, F, name=RET), lambda ret, ctx: _max_min(ret, ctx, larger=False)),
        (P(Op.WHERE, F, src=(P.var("c"), P(), P())), _where),
        (P(Op.CAST, F, src=(P.var("x", F),)), lambda x, ctx: (ctx.cast(x.dtype),)),
        (P(Op.STAGE, F), lambda ctx: (ctx,)),
        (P(Op.REDUCE, F, name=RET), _reduce),
        (P(Op.EXPAND, F, name=RET), _expand),
        (P(Op.RESHAPE, F, name=RET), lambda ret, ctx: (ctx.reshape(ret.src[0].type.shape),)),
        (P(Op.PERMUTE, F, name=RET), _permute),
        (P(Op.FLIP, F, name=RET), lambda ret, ctx: (ctx.flip(ret.arg),)),
        (P(Op.PAD, F, name=RET), _pad),
        (P(Op.SHRINK, F, name=RET), _shrink),
        (P(Op.STACK, F, name=RET), _stack),
        (P(Op.INDEX, F, name=RET), _index),
    ]
)
