"""Linear forms: an int expression as a sum of products `c1*t1 + c2*t2 + ... + k`.

The simplifier reads every chain of ADD, SUB, NEG and MUL by a constant as one linear form, so like
terms combine wherever they sit in the chain (`((a*-4) + 1) + a*4` is the form `1`), and division,
remainder and comparison rules see every coefficient at once. A term is any UOp that is not such an
op (a PARAM, a load, an IDIV, a product of two unknowns); its coefficient is an integer modulo
2**bits. Wrapping integers form a ring, so a form equals its expression for every value.

`render` builds the canonical expression of a form: the terms sorted (positive coefficients first,
then by fingerprint), each commutative op's sources in canonical order, the constant last. Every
prefix of a rendered chain is itself rendered, so a rendered expression is a fixpoint.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from uir.core.bounds import Interval, bounds
from uir.core.ops import ALU, Op
from uir.core.uop import UOp

from .order import order_key

# A chain with more distinct terms stays as it is: merging forms copies them, and a bound keeps a
# long sum (an unrolled reduction) from costing time quadratic in its length.
MAX_TERMS = 16


@dataclass(frozen=True)
class Form:
    """`sum(coef * term) + const`; `ops` counts the ADD, SUB, NEG and MUL ops spent on it."""

    terms: dict[UOp, int]
    const: int
    ops: int

    def interval(self) -> Interval:
        """The exact (unwrapped) range of the form's value, from its terms' bounds."""
        lo = hi = self.const
        for term, coef in self.terms.items():
            a, b = bounds(term)
            lo, hi = lo + min(coef * a, coef * b), hi + max(coef * a, coef * b)
        return lo, hi


_forms: weakref.WeakKeyDictionary[UOp, Form] = weakref.WeakKeyDictionary()
# Every UOp `render` built: each is the canonical expression of its own form (a prefix of a
# rendered chain is rendered), so the simplifier need not rebuild it to find that out.
_rendered: weakref.WeakSet[UOp] = weakref.WeakSet()


def is_rendered(u: UOp) -> bool:
    """Whether u is an expression `render` built: canonical already."""
    return u in _rendered


def is_linear_int(u: UOp) -> bool:
    """A scalar int UOp: the ones linear forms describe."""
    return u.dtype.is_int and not u.type.shape


def _parts(u: UOp) -> list[UOp] | None:
    """The sources a form of `u` is built from, or None when `u` is a term of its own."""
    if u.op in (Op.ADD, Op.SUB) or u.op is Op.NEG:
        return list(u.src)
    if u.op is Op.MUL and (u.src[0].op is Op.CONST or u.src[1].op is Op.CONST):
        return list(u.src)
    return None


def _wrap(u: UOp, value: int) -> int:
    return u.dtype.wrap(value)


def _combine(u: UOp, forms: list[Form]) -> Form:
    if u.op is Op.MUL:
        scale, other = (forms[1], forms[0]) if u.src[1].op is Op.CONST else (forms[0], forms[1])
        factor = scale.const
        terms = {t: _wrap(u, c * factor) for t, c in other.terms.items()}
        return Form(
            {t: c for t, c in terms.items() if c}, _wrap(u, other.const * factor), other.ops + 1
        )
    if u.op is Op.NEG:
        (only,) = forms
        terms = {t: _wrap(u, -c) for t, c in only.terms.items()}
        return Form(terms, _wrap(u, -only.const), only.ops + 1)
    sign = -1 if u.op is Op.SUB else 1
    a, b = forms
    terms = dict(a.terms)
    for t, c in b.terms.items():
        coef = _wrap(u, terms.get(t, 0) + sign * c)
        if coef:
            terms[t] = coef
        else:
            terms.pop(t, None)
    return Form(terms, _wrap(u, a.const + sign * b.const), a.ops + b.ops + 1)


def linear_form(uop: UOp) -> Form:
    """The linear form of a scalar int UOp, cached per UOp (computed without recursion)."""
    stack = [uop]
    while stack:
        node = stack[-1]
        if node in _forms:
            stack.pop()
            continue
        parts = _parts(node) if is_linear_int(node) else None
        if node.op is Op.CONST and not node.type.shape and node.dtype.is_int:
            _forms[node] = Form({}, _wrap(node, node.arg), 0)
            stack.pop()
            continue
        if parts is None:
            _forms[node] = Form({node: 1}, 0, 0)
            stack.pop()
            continue
        missing = [s for s in parts if s not in _forms]
        if missing:
            stack.extend(missing)
            continue
        form = _combine(node, [_forms[s] for s in parts])
        _forms[node] = form if len(form.terms) <= MAX_TERMS else Form({node: 1}, 0, 0)
        stack.pop()
    return _forms[uop]


def signed(value: int, like: UOp) -> int:
    """A coefficient or constant as the signed number it stands for (u32's 2**32 - 1 is -1)."""
    bits = like.dtype.bits
    value = like.dtype.wrap(value)
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


def term_cost(term: UOp) -> int:
    """The ops a term spends itself: 1 for an ALU op; leaves and loads count nothing here."""
    return 1 if term.op in ALU else 0


def render_ops(terms: dict[UOp, int], const: int, like: UOp) -> int:
    """The ADD/SUB/NEG/MUL ops `render` spends on a form, without building it."""
    return _render(terms, const, like, build=False)[0]


def render(terms: dict[UOp, int], const: int, like: UOp) -> UOp:
    """The canonical expression of the form `terms + const`, typed like `like`."""
    built = _render(terms, const, like, build=True)[1]
    assert built is not None
    stack = [built]
    while stack:  # the chain's own nodes, down to its terms
        node = stack.pop()
        if node not in _rendered and node.op in (Op.ADD, Op.SUB, Op.NEG, Op.MUL):
            _rendered.add(node)
            stack.extend(s for s in node.src if s not in terms)
    return built


def _render(terms: dict[UOp, int], const: int, like: UOp, build: bool) -> tuple[int, UOp | None]:
    """Positive terms first (by fingerprint), then the negative ones subtracted, then the
    constant; a sum of negative terms starts from its constant (`5 - x`, not `-x + 5`)."""
    const = signed(const, like)
    items = sorted(
        ((t, signed(c, like)) for t, c in terms.items()),
        key=lambda tc: (tc[1] < 0, order_key(tc[0])),
    )
    ops, acc = 0, None
    if not items or (items[0][1] < 0 and const):
        acc = like.const_like(const) if build else None
        const = 0
        if not items:
            return 0, acc
        started = True
    else:
        started = False
    for term, coef in items:
        scaled = None
        if build:
            scaled = _scaled(term, abs(coef) if started else coef)
        mul = abs(coef) != 1
        if not started:
            started = True
            if coef == -1:
                ops += 1
                acc = term.alu(Op.NEG) if build else None
            else:
                ops += mul
                acc = scaled
            continue
        ops += 1 + mul
        if build:
            assert acc is not None and scaled is not None
            acc = acc.alu(Op.SUB, scaled) if coef < 0 else _binary(Op.ADD, acc, scaled)
    if const:
        ops += 1
        if build:
            assert acc is not None
            if const < 0 and -const <= like.dtype.max:
                acc = acc.alu(Op.SUB, like.const_like(-const))
            else:
                acc = _binary(Op.ADD, acc, like.const_like(const))
    return ops, acc


def _binary(op: Op, a: UOp, b: UOp) -> UOp:
    if order_key(a) > order_key(b):
        a, b = b, a
    return a.alu(op, b)


def _scaled(term: UOp, coef: int) -> UOp:
    return term if coef == 1 else term.alu(Op.MUL, term.const_like(coef))


def fits(interval: Interval, like: UOp) -> bool:
    """Whether an exact interval lies in `like`'s dtype: a form over it then equals it exactly."""
    return like.dtype.min <= interval[0] and interval[1] <= like.dtype.max


def exact_interval(terms: dict[UOp, int], const: int, like: UOp) -> Interval:
    """The exact range of `terms + const`, each number read as the signed one it stands for.

    The form is congruent to its expression modulo 2**bits; when this interval fits the dtype,
    the two are equal, with no wrap anywhere that matters.
    """
    signed_terms = {t: signed(c, like) for t, c in terms.items()}
    return Form(signed_terms, signed(const, like), 0).interval()
