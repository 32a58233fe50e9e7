"""Algebraic and symbolic simplification: identities, constant reassociation, and division,
remainder, comparison and MAX/MIN decided by interval bounds (uir.md section 6.4).

Every rule states the condition under which it holds. Integers wrap modulo 2**bits, so an identity
of wrapping arithmetic (x + 0, reassociation, x - x) holds for every value, while one of exact
arithmetic ((x*c)/c is x) needs the bounds to show that nothing wraps. IDIV and MOD truncate and
are total (x/0 is -1, x%0 is x, MIN/-1 is MIN), which the conditions respect. Float rules must keep
every bit of every result (uir.md section 3): x + 0.0, x * 0.0, x - x and reassociation all fail
for floats (see spec/rewrites.md for counterexamples), so those rules match ints only. The one
liberty taken is the one the spec grants: a NaN's sign and payload are unspecified.

The integer rules are proven with Z3 for wrapping 32-bit arithmetic, signed and unsigned, in
tests/test_proofs.py.
"""

from __future__ import annotations

import hashlib
import weakref

from uir.core.bounds import bounds, full_range
from uir.core.ops import ALU, COMMUTATIVE, Op
from uir.core.pattern import BOOLS, FLOATS, INTS, NUMBERS, P, Rules
from uir.core.uop import UOp, arg_key

from .fold import fold_rules

# --- helpers the conditions use ------------------------------------------------------------------


def _cannot_wrap(uop: UOp) -> bool:
    """Whether `uop`'s exact result always fits its dtype.

    bounds() gives the exact interval when it fits and the full range when it may have wrapped; a
    full range is read as "may have wrapped" even when the exact one happens to be full too.
    """
    return bounds(uop) != full_range(uop)


def _value(c: UOp) -> int:
    return int(c.arg)


def _magnitude_below(x: UOp, c: UOp) -> bool:
    """|x| < |c| for every value of x, from its bounds."""
    lo, hi = bounds(x)
    limit = abs(_value(c))
    return -limit < lo and hi < limit


def _wrapless(value: int, like: UOp) -> bool:
    """Whether the exact integer `value` is a value of `like`'s dtype: computing it did not wrap."""
    dtype = like.dtype
    return dtype.min <= value <= dtype.max


# --- rewrites that need more than an expression --------------------------------------------------


def constant_by_bounds(u: UOp) -> UOp | None:
    """An int or bool op whose bounds hold one value is that value (bounds are sound)."""
    if u.type.shape or u.op is Op.CONST:
        return None
    lo, hi = bounds(u)
    return u.const_like(lo) if lo == hi else None


def reassociate_add(x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    # Wrapping addition is associative, so this holds for every value. Kept from firing when
    # c1 + c2 wraps only so that the result's bounds are never looser than the original's.
    if not _wrapless(_value(c1) + _value(c2), x):
        return None
    return x.alu(Op.ADD, c1.alu(Op.ADD, c2))


def reassociate_mul(x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    # As for ADD: wrapping multiplication is associative; the guard only keeps bounds tight.
    if not _wrapless(_value(c1) * _value(c2), x):
        return None
    return x.alu(Op.MUL, c1.alu(Op.MUL, c2))


def sub_to_add(x: UOp, c: UOp) -> UOp | None:
    """x - c is x + (-c) in wrapping arithmetic, which lets reassociation meet it.

    Valid for every int, but done for signed ints only and never for c = MIN: for those, -c
    wraps (for unsigned ints, every -c but -0 does), and x + (-c) would have looser bounds.
    """
    if not x.dtype.signed or _value(c) == x.dtype.min:
        return None
    return x.alu(Op.ADD, c.alu(Op.NEG))


def distribute(x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    """(x + c1) * c2 is x*c2 + c1*c2 (wrapping ints are a ring); guarded so bounds stay tight."""
    product = x.alu(Op.MUL, c2)
    if not (_cannot_wrap(product) and _wrapless(_value(c1) * _value(c2), x)):
        return None
    return product.alu(Op.ADD, c1.alu(Op.MUL, c2))


def combine_terms(x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    """x*c1 + x*c2 is x*(c1 + c2) in any ring; guarded so that c1 + c2 does not wrap."""
    if not _wrapless(_value(c1) + _value(c2), x):
        return None
    return x.alu(Op.MUL, c1.alu(Op.ADD, c2))


def combine_term(x: UOp, c: UOp) -> UOp | None:
    return combine_terms(x, c, c.const_like(1))


def max_by_bounds(x: UOp, y: UOp) -> UOp | None:
    """MAX(x, y) is x when every x is at least every y."""
    return x if bounds(x)[0] >= bounds(y)[1] else None


def min_by_bounds(x: UOp, y: UOp) -> UOp | None:
    """MIN(x, y) is x when every x is at most every y."""
    return x if bounds(x)[1] <= bounds(y)[0] else None


def mod_small(x: UOp, c: UOp) -> UOp | None:
    """x % c is x when |x| < |c|: truncation leaves a smaller dividend whole (any signs)."""
    return x if _magnitude_below(x, c) else None


def div_small(x: UOp, c: UOp) -> UOp | None:
    """x / c is 0 when |x| < |c|: the exact quotient lies in (-1, 1) and truncates to 0."""
    return x.const_like(0) if _magnitude_below(x, c) else None


def exact_quotient(u: UOp, c: UOp) -> UOp | None:
    """A UOp equal to u / c when u is provably c times an integer and nothing in u wraps.

    Constants divide when c does; x*k when c divides k (giving x*(k/c)); a sum when both terms
    do. The caller's rule then holds in exact arithmetic, which the no-wrap checks make real.
    """
    divisor = _value(c)
    if divisor == 0:
        return None
    if u.op is Op.CONST:
        value = _value(u)
        return u.const_like(value // divisor) if value % divisor == 0 else None
    if not _cannot_wrap(u):
        return None
    if u.op is Op.MUL and u.src[1].op is Op.CONST:
        k = _value(u.src[1])
        if k % divisor != 0:
            return None
        return u.src[0].alu(Op.MUL, u.src[1].const_like(k // divisor))
    if u.op is Op.ADD:
        left, right = (exact_quotient(s, c) for s in u.src)
        if left is None or right is None:
            return None
        return left.alu(Op.ADD, right)
    return None


def div_exact(u: UOp, c: UOp) -> UOp | None:
    """u / c with u an exact multiple of c: the quotient, for any signs (truncation is exact)."""
    return exact_quotient(u, c)


def mod_exact(u: UOp, c: UOp) -> UOp | None:
    """u % c with u an exact multiple of c is 0."""
    return None if exact_quotient(u, c) is None else u.const_like(0)


def _split_applies(total: UOp, y: UOp, c: UOp) -> bool:
    # floor((c*t + y) / c) = t + floor(y / c) for all integers; truncation equals floor when
    # both dividends are non-negative, and the sum must not wrap for c*t + y to be exact.
    return _value(c) > 0 and bounds(y)[0] >= 0 and bounds(total)[0] >= 0 and _cannot_wrap(total)


def div_split(total: UOp, u: UOp, y: UOp, c: UOp) -> UOp | None:
    """(u + y) / c is u/c + y/c when u is a multiple of c, c > 0, y >= 0 and u + y >= 0."""
    if not _split_applies(total, y, c):
        return None
    quotient = exact_quotient(u, c)
    return None if quotient is None else quotient.alu(Op.ADD, y.alu(Op.IDIV, c))


def mod_split(total: UOp, u: UOp, y: UOp, c: UOp) -> UOp | None:
    """(u + y) % c is y % c under the conditions of div_split."""
    if not _split_applies(total, y, c) or exact_quotient(u, c) is None:
        return None
    return y.alu(Op.MOD, c)


def div_div(x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    """(x / c1) / c2 is x / (c1*c2) for c1, c2 > 0 when c1*c2 fits (nested truncation)."""
    a, b = _value(c1), _value(c2)
    if a <= 0 or b <= 0 or not _wrapless(a * b, x):
        return None
    return x.alu(Op.IDIV, c1.const_like(a * b))


def mod_mod(x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    """(x % c1) % c2 is x % c2 for c1, c2 > 0 when c2 divides c1 (both keep x's sign)."""
    a, b = _value(c1), _value(c2)
    if a <= 0 or b <= 0 or a % b != 0:
        return None
    return x.alu(Op.MOD, c2)


def shift_by_zero(x: UOp, c: UOp) -> UOp | None:
    """A shift whose count is a multiple of the width shifts by 0 (the count is b & (bits-1))."""
    return x if _value(c) & (x.dtype.bits - 1) == 0 else None


# --- canonical operand order ---------------------------------------------------------------------

_fingerprints: weakref.WeakKeyDictionary[UOp, bytes] = weakref.WeakKeyDictionary()


def fingerprint(uop: UOp) -> bytes:
    """A digest of the expression under `uop`, equal across runs (unlike id() or hash()).

    Cached per UOp; the walk stops at UOps already digested, so a bottom-up rewrite digests each
    new UOp once.
    """
    stack = [uop]
    while stack:
        node = stack[-1]
        if node in _fingerprints:
            stack.pop()
            continue
        missing = [s for s in node.src if s not in _fingerprints]
        if missing:
            stack.extend(missing)
            continue
        digest = hashlib.blake2b(digest_size=8)
        digest.update(f"{node.op.name} {node.type} {arg_key(node.arg)!r}".encode())
        for s in node.src:
            digest.update(_fingerprints[s])
        _fingerprints[node] = digest.digest()
        stack.pop()
    return _fingerprints[uop]


def _order_key(uop: UOp) -> tuple[bool, bytes]:
    return (uop.op is Op.CONST, fingerprint(uop))  # constants last, so rules find them on the right


def canonical_order(u: UOp) -> UOp | None:
    """A commutative op with its two sources in one fixed order, so that a+b and b+a become one
    UOp. Valid for floats too: IEEE addition, multiplication, maximum and equality commute."""
    a, b = u.src
    if _order_key(a) <= _order_key(b):
        return None
    return u.replace(src=(b, a))


# --- the tables ----------------------------------------------------------------------------------

x = P.var("x")
xi, xf = P.var("x", INTS), P.var("x", FLOATS)
c, c1, c2 = P.cvar("c", INTS), P.cvar("c1", INTS), P.cvar("c2", INTS)
INT_OR_BOOL = INTS | BOOLS


def _zero(x: UOp) -> UOp:
    return x.const_like(0)


def _neg(x: UOp) -> UOp:
    return x.alu(Op.NEG)


def _true(u: UOp, x: UOp) -> UOp:
    return u.const_like(True)


def _false(u: UOp, x: UOp) -> UOp:
    return u.const_like(False)


identity_rules = Rules(
    [
        (xi + 0, lambda x: x),  # not for floats: -0.0 + 0.0 is +0.0
        (xf + P.const(-0.0), lambda x: x),  # every float: -0.0 + -0.0 is -0.0, and +0.0 stays
        (xi - 0, lambda x: x),
        (xf - P.const(0.0), lambda x: x),  # every float: -0.0 - +0.0 is -0.0
        (xi * 1, lambda x: x),
        (xf * P.const(1.0), lambda x: x),  # exact for every float, -0.0, inf and NaN included
        (xi * -1, _neg),
        (xf * P.const(-1.0), _neg),  # exact: multiplying by -1 only flips the sign
        (xi * 0, _zero),  # not for floats: NaN*0 and inf*0 are NaN, -1.0*0.0 is -0.0
        (xi - xi, _zero),  # not for floats: inf - inf is NaN
        (P.alu(Op.NEG, P.alu(Op.NEG, P.var("x", NUMBERS))), lambda x: x),  # -MIN wraps to MIN
        (P.alu(Op.FDIV, xf, P.const(1.0)), lambda x: x),
        (xi // 1, lambda x: x),
        (xi // -1, _neg),  # MIN / -1 is MIN, and so is -MIN
        (xi % 1, _zero),
        (xi % -1, _zero),  # MIN % -1 is 0 by the total semantics
        (P.alu(Op.MAX, x, x), lambda x: x),  # floats too: max(NaN, NaN) is NaN
        (P.alu(Op.MIN, x, x), lambda x: x),
        (P.alu(Op.AND, x, x), lambda x: x),
        (P.alu(Op.OR, x, x), lambda x: x),
        (P.alu(Op.XOR, x, x), _zero),
        (P.alu(Op.AND, xi, 0), _zero),
        (P.alu(Op.AND, xi, -1), lambda x: x),
        (P.alu(Op.OR, xi, 0), lambda x: x),
        (P.alu(Op.OR, xi, -1), lambda x: x.const_like(-1)),
        (P.alu(Op.XOR, xi, 0), lambda x: x),
        (P.alu(Op.AND, x, True), lambda x: x),
        (P.alu(Op.AND, x, False), _zero),
        (P.alu(Op.OR, x, False), lambda x: x),
        (P.alu(Op.OR, x, True), lambda x: x.const_like(True)),
        (P.alu(Op.XOR, x, False), lambda x: x),
        (P.alu(Op.SHL, xi, c), shift_by_zero),
        (P.alu(Op.SHR, xi, c), shift_by_zero),
        # x compared with itself; for floats only x < x is decided (false even for NaN)
        (P.alu(Op.CMPLT, x, x).named("u"), _false),
        (P.alu(Op.CMPEQ, P.var("x", INT_OR_BOOL), x).named("u"), _true),
        (P.alu(Op.CMPNE, P.var("x", INT_OR_BOOL), x).named("u"), _false),
        (P.alu(Op.CMPLE, xi, xi).named("u"), _true),
        # WHERE picks a branch; nothing about the branches' type matters
        (P(Op.WHERE, src=(P.const(True), P.var("a"), P.var("b"))), lambda a, b: a),
        (P(Op.WHERE, src=(P.const(False), P.var("a"), P.var("b"))), lambda a, b: b),
        (P(Op.WHERE, src=(P.var("cond"), P.var("a"), P.var("a"))), lambda cond, a: a),
        (P(Op.WHERE, src=(P.var("cond"), P.const(True), P.const(False))), lambda cond: cond),
        # a conversion to the type a value already has changes nothing
        (
            P((Op.CAST, Op.BITCAST), src=(x,), name="u"),
            lambda u, x: x if u.type == x.type else None,
        ),
    ]
)

reassociation_rules = Rules(
    [
        # ints only: float addition and multiplication are not associative (rounding)
        ((xi + c1) + c2, reassociate_add),
        ((xi * c1) * c2, reassociate_mul),
        (xi - c, sub_to_add),
        ((xi + c1) * c2, distribute),
        (xi + xi, lambda x: x.alu(Op.MUL, x.const_like(2))),
        (xi * c1 + xi * c2, combine_terms),
        (xi * c + xi, combine_term),
    ]
)

bounds_rules = Rules(
    [
        (P(ALU, INT_OR_BOOL, name="u"), constant_by_bounds),
        (P.alu(Op.MAX, xi, P.var("y", INTS)), max_by_bounds),
        (P.alu(Op.MIN, xi, P.var("y", INTS)), min_by_bounds),
        (xi % c, mod_small),
        (xi // c, div_small),
        (P.var("u", INTS) // c, div_exact),
        (P.var("u", INTS) % c, mod_exact),
        ((P.var("u", INTS) + P.var("y", INTS)).named("total") // c, div_split),
        ((P.var("u", INTS) + P.var("y", INTS)).named("total") % c, mod_split),
        ((xi // c1) // c2, div_div),
        ((xi % c1) % c2, mod_mod),
    ]
)

order_rules = Rules([(P(COMMUTATIVE, name="u"), canonical_order)])

symbolic_rules = identity_rules + reassociation_rules + bounds_rules + order_rules

# What the simplify pass runs: folding too, since rules build new constant expressions (c1 + c2).
simplify_rules = fold_rules + symbolic_rules
