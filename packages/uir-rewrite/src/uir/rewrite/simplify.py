"""Algebraic and symbolic simplification: identities, sums of products, and division, remainder,
comparison and MAX/MIN decided by interval bounds (uir.md section 6.4).

Every rule states the condition under which it holds. Integers wrap modulo 2**bits, so an identity
of wrapping arithmetic (x + 0, like terms, x - x) holds for every value, while one of exact
arithmetic ((x*c)/c is x) needs the bounds to show that nothing wraps. IDIV and MOD truncate and
are total (x/0 is -1, x%0 is x, MIN/-1 is MIN), which the conditions respect. Float rules must keep
every bit of every result (uir.md section 3): x + 0.0, x * 0.0, x - x and reassociation all fail
for floats (see spec/rewrites.md for counterexamples), so those rules match ints only. The one
liberty taken is the one the spec grants: a NaN's sign and payload are unspecified.

Chains of ADD, SUB, NEG and MUL by constants are read as linear forms (linear.py) and rebuilt in
one canonical order, so like terms meet whatever order the chain was written in. Division,
remainder and comparison by a constant work on the whole form at once.

Every rule has a name, and tests/test_proofs.py holds a Z3 theorem for each name (wrapping i32
and u32, f32 for the float rules, bools for the bool ones); a rule without one fails a test.
"""

from __future__ import annotations

import math

from uir.core.bounds import bounds
from uir.core.ops import ALU, COMMUTATIVE, Op
from uir.core.pattern import BOOLS, FLOATS, INTS, NUMBERS, P, Pat, Rewrite, Rule, Rules
from uir.core.uop import UOp

from .fold import fold_rules
from .linear import (
    exact_interval,
    fits,
    is_linear_int,
    is_rendered,
    linear_form,
    render,
    render_ops,
    signed,
    term_cost,
)
from .order import order_key

# --- helpers the conditions use ------------------------------------------------------------------


def _value(c: UOp) -> int:
    return int(c.arg)


def _magnitude_below(x: UOp, c: UOp) -> bool:
    """|x| < |c| for every value of x, from its bounds."""
    lo, hi = bounds(x)
    limit = abs(_value(c))
    return -limit < lo and hi < limit


def _no_looser(new: UOp, old: UOp) -> bool:
    """Whether `new`'s bounds lie within `old`'s: a rewrite must never cost a proof (an INDEX the
    verifier proved in range must stay provable), so one that would loosen them is not made."""
    (a, b), (lo, hi) = bounds(new), bounds(old)
    return lo <= a and b <= hi


def _tight(new: UOp | None, old: UOp) -> UOp | None:
    return new if new is not None and new is not old and _no_looser(new, old) else None


def _tree_ops(u: UOp) -> int:
    """The ALU ops of the expression under u, each distinct UOp once."""
    return sum(node.op in ALU for node in u.toposort())


def _cost(terms: dict[UOp, int], const: int, like: UOp) -> int:
    return render_ops(terms, const, like) + sum(term_cost(t) for t in terms)


# --- rewrites decided by bounds ------------------------------------------------------------------


def constant_by_bounds(u: UOp) -> UOp | None:
    """An int or bool op whose bounds hold one value is that value (bounds are sound)."""
    if u.type.shape or u.op is Op.CONST:
        return None
    lo, hi = bounds(u)
    return u.const_like(lo) if lo == hi else None


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


# --- sums of products ----------------------------------------------------------------------------


def _merge(terms: dict[UOp, int], const: int, y: UOp, scale: int) -> int:
    """Add scale * (the form of y) into terms; the new constant is returned."""
    form = linear_form(y)
    for t, c in form.terms.items():
        _add_term(terms, t, scale * c)
    return y.dtype.wrap(const + scale * form.const)


def _divisor(u: UOp, op: Op) -> int | None:
    """The constant divisor of an IDIV or MOD by a scalar int constant."""
    if u.op is op and u.src[1].op is Op.CONST and not u.src[1].type.shape:
        return _value(u.src[1])
    return None


def _add_term(terms: dict[UOp, int], term: UOp, coef: int) -> None:
    total = term.dtype.wrap(terms.get(term, 0) + coef)
    if total:
        terms[term] = total
    else:
        terms.pop(term, None)


def _quotient_views(terms: dict[UOp, int]) -> list[tuple[UOp, UOp, UOp]]:
    """(quotient term, y, c) for each term that computes y / c with c a constant: an IDIV term
    itself, and x / (a*c) read as y / c with y = x / a when y % c is a term too (a, c > 0),
    which is what (x/a)/c becomes."""
    views = []
    for t in terms:
        if _divisor(t, Op.IDIV) is not None:
            views.append((t, t.src[0], t.src[1]))
        c = _divisor(t, Op.MOD)
        y = t.src[0] if c is not None else None
        a = _divisor(y, Op.IDIV) if y is not None else None
        if a is not None and a > 0 and c > 0 and a * c <= y.dtype.max:
            x = y.src[0]
            quotient = x.alu(Op.IDIV, x.const_like(a * c))
            if quotient in terms:
                views.append((quotient, y, t.src[1]))
    return views


def _recombinations(terms: dict[UOp, int], const: int, like: UOp):
    """Forms equal to `terms + const` with a quotient or remainder pair recombined:

    - a term m*c*(y/c) is m*y - m*(y%c): y = (y/c)*c + y%c holds for every y and c under the
      total semantics (x/0 = -1, x%0 = x; MIN/-1 = MIN, MIN%-1 = 0), so (y/c)*c + y%c is y,
      y - (y/c)*c is y%c, and a flip's (y/c)*c + (c-1 - y%c) is y - 2*(y%c) + c-1;
    - m*a*((y/a)%b) + m*(y%a) is m*(y%(a*b)) for a, b > 0 with a*b fitting the type: the two
      low digits of y in base a, b are its remainder by a*b (truncating, any sign of y).
    """
    wrap = like.dtype.wrap
    for quotient, y, c in _quotient_views(terms):
        m, divisor = signed(terms[quotient], like), _value(c)
        if divisor == 0 or m % divisor:
            continue
        new = dict(terms)
        del new[quotient]
        new_const = _merge(new, const, y, m // divisor)
        _add_term(new, y.alu(Op.MOD, c), wrap(-(m // divisor)))
        yield new, new_const
    for t, m in terms.items():
        a = _divisor(t, Op.MOD)
        if a is None or a <= 0:
            continue
        y = t.src[0]
        for digit, b in _digits_above(terms, y, a):
            if terms[digit] == wrap(m * a) and a * b <= like.dtype.max:
                new = dict(terms)
                del new[t], new[digit]
                _add_term(new, y.alu(Op.MOD, y.const_like(a * b)), m)
                yield new, const


def _digits_above(terms: dict[UOp, int], y: UOp, a: int) -> list[tuple[UOp, int]]:
    """The terms (y/a) % b, with b > 0."""
    found = []
    for t in terms:
        b = _divisor(t, Op.MOD)
        if b is None or b <= 0:
            continue
        inner = t.src[0]
        if _divisor(inner, Op.IDIV) == a and inner.src[0] is y:
            found.append((t, b))
    return found


def sum_of_products(u: UOp) -> UOp | None:
    """A chain of ADD, SUB, NEG and MUL by constants, rebuilt as its canonical sum of products,
    with quotient and remainder terms recombined where that spends fewer ops.

    Valid for every value: wrapping ints form a ring. Made when it spends no more ops than the
    chain did (so `(a+b)*4` stays as it is) and keeps the bounds as tight.
    """
    if not is_linear_int(u) or is_rendered(u):
        return None
    form = linear_form(u)
    if u in form.terms:
        return None  # a term of its own: a chain too long to read as one form
    terms, const = dict(form.terms), form.const
    cost = form.ops + sum(term_cost(t) for t in form.terms)
    improved = True
    while improved:
        improved = False
        for new, new_const in _recombinations(terms, const, u):
            if _cost(new, new_const, u) < _cost(terms, const, u):
                terms, const, improved = new, new_const, True
                break
    if _cost(terms, const, u) > cost:
        return None
    return _tight(render(terms, const, u), u)


# --- division and remainder by a constant --------------------------------------------------------


def _dividend(x: UOp) -> tuple[dict[UOp, int], int] | None:
    """x's form as signed numbers, when its exact value is x's (nothing wraps)."""
    if not is_linear_int(x):
        return None
    form = linear_form(x)
    terms = {t: signed(c, x) for t, c in form.terms.items()}
    const = signed(form.const, x)
    return (terms, const) if fits(exact_interval(terms, const, x), x) else None


def _split(terms: dict[UOp, int], const: int, d: int) -> tuple[dict, int, dict, int]:
    """Each coefficient (and the constant) as quotient and remainder by d > 0, floor-wise."""
    quotient = {t: c // d for t, c in terms.items() if c // d}
    remainder = {t: c % d for t, c in terms.items() if c % d}
    return quotient, const // d, remainder, const % d


def _split_toward_zero(terms: dict[UOp, int], const: int, d: int) -> tuple[dict, int, dict, int]:
    """As _split, but a negative coefficient keeps a remainder in (-d, 0]: a FLIP's `n-1-i` gives
    `-i`, whose floor-wise remainder d-1 would spread the remainders' sum over several blocks."""
    quotient = {t: -(-c // d) if c < 0 else c // d for t, c in terms.items()}
    remainder = {t: c - quotient[t] * d for t, c in terms.items()}
    drop = lambda part: {t: c for t, c in part.items() if c}  # noqa: E731
    return drop(quotient), const // d, drop(remainder), const % d


def _one_block(terms: dict[UOp, int], const: int, d: int, like: UOp):
    """x = d*Q + R (Q the quotients' sum, R the remainders'), split so that R lies in one block
    [d*f, d*f + d): then x/d is Q + f and x % d is R - d*f, for x >= 0 and d > 0. Returns
    (quotient terms, its constant, remainder terms, its constant, f), or None."""
    for split in (_split, _split_toward_zero):
        quotient, kq, remainder, kr = split(terms, const, d)
        lo, hi = exact_interval(remainder, kr, like)
        if lo // d == hi // d:
            return quotient, kq, remainder, kr, lo // d
    return None


def _common_factor(terms: dict[UOp, int], k: int, d: int, like: UOp) -> tuple[int, UOp, UOp] | None:
    """x = g*s + r for a factor g > 1 of d, with s the terms whose coefficients g divides and the
    rest r lying in one block [g*f, g*f + g): then x/d is (s + f)/(d/g) and x % d is
    ((s + f) % (d/g))*g + (r - g*f), for x >= 0 (floor division of g*(s + f) + (r - g*f), whose
    low part lies in [0, g)). Returns (g, s + f, r - g*f); the largest such g is taken."""
    candidates = sorted({math.gcd(d, v) for v in terms.values()} - {1}, reverse=True)
    for g0 in candidates:
        big = {t: v for t, v in terms.items() if v % g0 == 0}
        g = math.gcd(d, *big.values())
        rest = {t: v for t, v in terms.items() if v % g}
        lo, hi = exact_interval(rest, k, like)
        if lo // g == hi // g:
            f = lo // g
            inner = render({t: v // g for t, v in big.items()}, f, like)
            return g, inner, render(rest, k - g * f, like)
    return None


def _division(x: UOp, c: UOp) -> tuple[int, dict[UOp, int], int, bool] | None:
    """(d, terms, k, exact) for x / c and x % c: c's value d, x's exact form, and whether d
    divides it all; None unless it does, or d > 0 and x >= 0 (where truncation is floor)."""
    d = _value(c)
    found = _dividend(x)
    if d == 0 or found is None:
        return None
    terms, k = found
    if all(v % d == 0 for v in terms.values()) and k % d == 0:
        return d, terms, k, True
    if d < 0 or exact_interval(terms, k, x)[0] < 0:
        return None
    return d, terms, k, False


def divide(u: UOp, x: UOp, c: UOp) -> UOp | None:
    """x / c for a linear x whose exact value is x (see _dividend):

    - every coefficient and the constant a multiple of c: the exact quotient (any signs);
    - otherwise, for c > 0 and x >= 0, where truncation is floor:
      - a common factor g of c and part of x (see _common_factor): (s + f) / (c/g);
      - with each coefficient split as q*c + r (0 <= r < c, or toward zero: see _one_block),
        and R the sum of the remainders: x/c is the quotients' sum plus floor(R/c), a constant
        when R's bounds decide it, else
        (quotients) + R/c when R >= 0 and that spends no more ops.
    """
    found = _division(x, c)
    if found is None:
        return None
    d, terms, k, exact = found
    if exact:
        quotient = {t: v // d for t, v in terms.items()}
        return _tight(render(quotient, k // d, x), u)
    factored = _common_factor(terms, k, d, x)
    if factored is not None:
        g, inner, _ = factored
        return _tight(inner if d == g else inner.alu(Op.IDIV, c.const_like(d // g)), u)
    block = _one_block(terms, k, d, x)
    if block is not None:
        quotient, kq, _, _, f = block
        return _tight(render(quotient, kq + f, x), u)
    quotient, kq, remainder, kr = _split(terms, k, d)
    r_lo, _ = exact_interval(remainder, kr, x)
    if r_lo < 0 or not (quotient or kq):
        return None
    new_cost = _cost(quotient, kq, x) + 2 + _cost(remainder, kr, x)
    if new_cost > _cost(terms, k, x) + 1:
        return None
    rest = render(remainder, kr, x).alu(Op.IDIV, c)
    return _tight(render(quotient, kq, x).alu(Op.ADD, rest), u)


def remainder(u: UOp, x: UOp, c: UOp) -> UOp | None:
    """x % c for a linear x whose exact value is x, by the same decomposition as `divide`:

    - a multiple of c: 0 (any signs);
    - for c > 0 and x >= 0: with a common factor g of c and part of x (see _common_factor),
      ((s + f) % (c/g))*g + (r - g*f) when that spends no more ops (r - g*f when g is c);
      else with the remainders' sum R (see _one_block), R - floor(R/c)*c when R's bounds
      decide it, else R % c when R >= 0 and that spends fewer ops (one that spends as many
      would hide x % c from its quotient x / c, and the two recombine).
    """
    found = _division(x, c)
    if found is None:
        return None
    d, terms, k, exact = found
    if exact:
        return x.const_like(0)
    old_cost = _cost(terms, k, x) + 1
    factored = _common_factor(terms, k, d, x)
    if factored is not None:
        g, inner, low = factored
        digit = inner.alu(Op.MOD, c.const_like(d // g)).alu(Op.MUL, c.const_like(g))
        if d == g:  # (s + f) % 1 is 0: only the low part is left
            new = low
        else:
            new = digit if low.op is Op.CONST and low.arg == 0 else digit.alu(Op.ADD, low)
        found = _tight(new, u) if _tree_ops(new) <= _tree_ops(u) else None
        if found is not None:
            return found
    block = _one_block(terms, k, d, x)
    if block is not None:
        _, _, rem, kr, f = block
        return _tight(render(rem, kr - f * d, x), u)
    _, _, rem, kr = _split(terms, k, d)
    r_lo, _ = exact_interval(rem, kr, x)
    if r_lo < 0 or _cost(rem, kr, x) + 1 >= old_cost:
        return None
    return _tight(render(rem, kr, x).alu(Op.MOD, c), u)


def mod_positive(x: UOp, c: UOp) -> UOp | None:
    """x % c is x % -c: the remainder takes the dividend's sign whatever the divisor's (c != MIN,
    whose negation wraps)."""
    d = _value(c)
    if d >= 0 or -d > x.dtype.max:
        return None
    return x.alu(Op.MOD, c.const_like(-d))


def div_div(x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    """(x / c1) / c2 is x / (c1*c2) for c1, c2 > 0 when c1*c2 fits (nested truncation)."""
    a, b = _value(c1), _value(c2)
    if a <= 0 or b <= 0 or a * b > x.dtype.max:
        return None
    return x.alu(Op.IDIV, c1.const_like(a * b))


def div_add_div(u: UOp, x: UOp, c: UOp) -> UOp | None:
    """(y/a + k) / b is (y + k*a) / (a*b) for a, b > 0 when y >= 0, y + k*a >= 0 exactly and fits,
    and a*b fits: both sides are floor divisions of non-negative numbers there."""
    b = _value(c)
    form = linear_form(x) if is_linear_int(x) else None
    if form is None or len(form.terms) != 1 or b <= 0:
        return None
    ((t, coef),) = form.terms.items()
    a, k = _divisor(t, Op.IDIV), signed(form.const, x)
    if coef != 1 or a is None or a <= 0 or k == 0 or a * b > x.dtype.max:
        return None
    y = t.src[0]
    lo, hi = bounds(y)
    if lo < 0 or lo + k * a < 0 or hi + k * a > x.dtype.max:
        return None
    shifted = render(*_shifted(y, k * a), x)
    return _tight(shifted.alu(Op.IDIV, c.const_like(a * b)), u)


def _shifted(y: UOp, k: int) -> tuple[dict[UOp, int], int]:
    terms: dict[UOp, int] = {}
    const = _merge(terms, 0, y, 1)
    return terms, const + k


def mod_mod(x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    """(x % c1) % c2 is x % c2 for c1, c2 > 0 when c2 divides c1 (both keep x's sign)."""
    a, b = _value(c1), _value(c2)
    if a <= 0 or b <= 0 or a % b != 0:
        return None
    return x.alu(Op.MOD, c2)


def shift_by_zero(x: UOp, c: UOp) -> UOp | None:
    """A shift whose count is a multiple of the width shifts by 0 (the count is b & (bits-1))."""
    return x if _value(c) & (x.dtype.bits - 1) == 0 else None


# --- comparisons with a constant -----------------------------------------------------------------


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _comparable(x: UOp) -> tuple[dict[UOp, int], int, int] | None:
    """x as g*s + k with g the coefficients' gcd, when its exact value is x and s fits too."""
    found = _dividend(x)
    if found is None or not found[0]:
        return None
    terms, k = found
    g = math.gcd(*terms.values())
    s = {t: v // g for t, v in terms.items()}
    return (s, k, g) if fits(exact_interval(s, 0, x), x) else None


def _constant(x: UOp, value: int) -> UOp | None:
    return x.const_like(value) if x.dtype.min <= value <= x.dtype.max else None


def _quotient_limit(bound: int, d: int) -> int:
    """T with y/d < C exactly when y < T, for d > 0: C*d for C >= 1, (C-1)*d + 1 for C <= 0
    (truncation rounds toward zero, so the quotients 0 and below spread differently)."""
    return bound * d if bound >= 1 else (bound - 1) * d + 1


def _compare_linear(x: UOp, c: UOp, x_first: bool) -> UOp | None:
    """x < C (x_first) or C < x, for a linear x = g*s + k whose exact value is x:

    - x < C is s < ceil((C - k)/g), C < x is floor((C - k)/g) < s;
    - for x = y/d with d > 0: y/d < C is y < T, C < y/d is T' - 1 < y, with T and T' the
      limits of _quotient_limit for C and C + 1.
    """
    found = _comparable(x)
    if found is None:
        return None
    s, k, g = found
    bound = _value(c)
    if g != 1 or k != 0:
        value = _ceil_div(bound - k, g) if x_first else (bound - k) // g
        limit, rest = _constant(x, value), render(s, 0, x)
    else:
        # x is one quotient y/d itself: -(y/d) has the coefficient -1, and y/d < C says
        # nothing of -(y/d) < C
        t = next(iter(s)) if list(s.values()) == [1] else None
        d = _divisor(t, Op.IDIV) if t is not None else None
        if t is None or d is None or d <= 0:
            return None
        value = _quotient_limit(bound, d) if x_first else _quotient_limit(bound + 1, d) - 1
        limit, rest = _constant(x, value), t.src[0]
    if limit is None:
        return None
    return rest.alu(Op.CMPLT, limit) if x_first else limit.alu(Op.CMPLT, rest)


def lt_const(x: UOp, c: UOp) -> UOp | None:
    return _compare_linear(x, c, x_first=True)


def gt_const(c: UOp, x: UOp) -> UOp | None:
    return _compare_linear(x, c, x_first=False)


def le_to_lt(x: UOp, c: UOp) -> UOp | None:
    """x <= C is x < C + 1 for ints, when C + 1 fits."""
    limit = _constant(x, _value(c) + 1)
    return None if limit is None else x.alu(Op.CMPLT, limit)


def ge_to_gt(c: UOp, x: UOp) -> UOp | None:
    """C <= x is C - 1 < x for ints, when C - 1 fits."""
    limit = _constant(x, _value(c) - 1)
    return None if limit is None else limit.alu(Op.CMPLT, x)


def eq_const(u: UOp, x: UOp, c: UOp) -> UOp | None:
    """x == C (and x != C) for a linear x = g*s + k (exact): false (true) when g does not divide
    C - k, else s == (C - k)/g."""
    found = _comparable(x)
    if found is None:
        return None
    s, k, g = found
    if g == 1 and k == 0:
        return None
    difference = _value(c) - k
    if difference % g:
        return u.const_like(u.op is Op.CMPNE)
    target = _constant(x, difference // g)
    return None if target is None else render(s, 0, x).alu(u.op, target)


# --- MAX, MIN, WHERE, bitwise and bool identities ------------------------------------------------


def clamp_twice(u: UOp, x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    """max(max(x, c1), c2) is max(x, max(c1, c2)), and so for MIN: both ops are associative and
    commutative on ints."""
    pick = max if u.op is Op.MAX else min
    return x.alu(u.op, c1.const_like(pick(_value(c1), _value(c2))))


def _difference(q: UOp, p: UOp, shift: int = 0) -> tuple[dict[UOp, int], int] | None:
    """The exact q - p + shift as a form, when p and q are linear ints whose forms are exact."""
    fq, fp = _dividend(q), _dividend(p)
    if fq is None or fp is None:
        return None
    terms = dict(fq[0])
    for t, v in fp[0].items():
        terms[t] = terms.get(t, 0) - v
        if not terms[t]:
            del terms[t]
    return terms, fq[1] - fp[1] + shift


def _holds_when_positive(cond: UOp) -> tuple[dict[UOp, int], int] | None:
    """F with cond equal to F >= 1 (exactly): q - p for p < q, q - p + 1 for p <= q (ints)."""
    if cond.op not in (Op.CMPLT, Op.CMPLE) or not is_linear_int(cond.src[0]):
        return None
    p, q = cond.src
    return _difference(q, p, 1 if cond.op is Op.CMPLE else 0)


def _negated(form: tuple[dict[UOp, int], int]) -> tuple[dict[UOp, int], int]:
    return {t: -v for t, v in form[0].items()}, -form[1]


def where_to_max_min(cond: UOp, a: UOp, b: UOp) -> UOp | None:
    """where(cond, a, b) is min(a, b) when cond holds exactly when a <= b (or a < b: at a tie
    both branches are equal), and max(a, b) when it holds exactly when b <= a (or b < a), for
    ints. With cond read as F >= 1: min when F is b - a or b - a + 1, max when F is a - b or
    a - b + 1 (forms compared exactly), so where(x < 0, 0, x) and where(0 < x, x - 1, 0) are
    max(x, 0) and max(x - 1, 0)."""
    f = _holds_when_positive(cond)
    b_minus_a = _difference(b, a) if is_linear_int(a) else None
    if f is None or b_minus_a is None:
        return None
    for tie in (0, 1):
        if f == (b_minus_a[0], b_minus_a[1] + tie):
            return a.alu(Op.MIN, b)
        a_minus_b = _negated(b_minus_a)
        if f == (a_minus_b[0], a_minus_b[1] + tie):
            return a.alu(Op.MAX, b)
    return None


def constants_together(u: UOp, x: UOp, c1: UOp, c2: UOp) -> UOp | None:
    """(x op c1) op c2 is x op (c1 op c2) for AND, OR, XOR: each is associative (bit by bit)."""
    return x.alu(u.op, c1.alu(u.op, c2))


def negate_compare(cmp: UOp) -> UOp | None:
    """NOT (a < b) is b <= a, NOT (a <= b) is b < a for ints (for floats a NaN makes both false);
    NOT (a == b) is a != b and NOT (a != b) is a == b for every type, NaN included."""
    a, b = cmp.src
    flipped = {Op.CMPEQ: Op.CMPNE, Op.CMPNE: Op.CMPEQ}
    if cmp.op in flipped:
        return a.alu(flipped[cmp.op], b)
    if a.dtype.is_float:
        return None
    return b.alu(Op.CMPLE if cmp.op is Op.CMPLT else Op.CMPLT, a)


def where_not(cond: UOp, a: UOp, b: UOp) -> UOp:
    """where(NOT c, a, b) is where(c, b, a)."""
    return UOp(Op.WHERE, a.type, (cond, b, a))


# --- canonical operand order ---------------------------------------------------------------------


def canonical_order(u: UOp) -> UOp | None:
    """A commutative op with its two sources in one fixed order, so that a+b and b+a become one
    UOp. Valid for floats too: IEEE addition, multiplication, maximum and equality commute."""
    a, b = u.src
    if order_key(a) <= order_key(b):
        return None
    return u.replace(src=(b, a))


# --- the tables ----------------------------------------------------------------------------------

NamedRule = tuple[str, Pat, Rewrite]
NAMED_RULES: dict[str, Rule] = {}
"""Every rule of the symbolic tables under its name; tests/test_proofs.py proves each name."""


def table(rules: list[NamedRule]) -> Rules:
    """A rule table whose rules are registered under their names (each name once)."""
    for name, pattern, rewrite in rules:
        if name in NAMED_RULES:
            raise ValueError(f"two simplify rules are named {name!r}")
        NAMED_RULES[name] = (pattern, rewrite)
    return Rules((NAMED_RULES[name] for name, _, _ in rules), (name for name, _, _ in rules))


x = P.var("x")
xi, xf, xb = P.var("x", INTS), P.var("x", FLOATS), P.var("x", BOOLS)
yi = P.var("y", INTS)
c, c1, c2 = P.cvar("c", INTS), P.cvar("c1", INTS), P.cvar("c2", INTS)
INT_OR_BOOL = INTS | BOOLS
xib = P.var("x", INT_OR_BOOL)
anyc1, anyc2 = P.cvar("c1", INT_OR_BOOL), P.cvar("c2", INT_OR_BOOL)


def _zero(x: UOp) -> UOp:
    return x.const_like(0)


def _neg(x: UOp) -> UOp:
    return x.alu(Op.NEG)


def _true(u: UOp, x: UOp) -> UOp:
    return u.const_like(True)


def _false(u: UOp, x: UOp) -> UOp:
    return u.const_like(False)


def _not(x: UOp) -> UOp:
    return x.alu(Op.XOR, x.const_like(True))


def _compare_ints(pattern: Pat) -> Pat:
    return pattern.such_that(lambda u: is_linear_int(u.src[0]))


identity_rules = table(
    [
        ("x + 0", xi + 0, lambda x: x),  # not for floats: -0.0 + 0.0 is +0.0
        ("f: x + -0.0", xf + P.const(-0.0), lambda x: x),  # -0.0 + -0.0 is -0.0, +0.0 stays
        ("x - 0", xi - 0, lambda x: x),
        ("f: x - 0.0", xf - P.const(0.0), lambda x: x),  # every float: -0.0 - +0.0 is -0.0
        ("x * 1", xi * 1, lambda x: x),
        ("f: x * 1.0", xf * P.const(1.0), lambda x: x),  # exact, -0.0, inf and NaN included
        ("x * -1", xi * -1, _neg),
        ("f: x * -1.0", xf * P.const(-1.0), _neg),  # exact: multiplying by -1 flips the sign
        ("x * 0", xi * 0, _zero),  # not for floats: NaN*0 and inf*0 are NaN, -1.0*0.0 is -0.0
        ("x - x", xi - xi, _zero),  # not for floats: inf - inf is NaN
        ("-(-x)", P.alu(Op.NEG, P.alu(Op.NEG, P.var("x", NUMBERS))), lambda x: x),
        ("f: x / 1.0", P.alu(Op.FDIV, xf, P.const(1.0)), lambda x: x),
        ("x / 1", xi // 1, lambda x: x),
        ("x / -1", xi // -1, _neg),  # MIN / -1 is MIN, and so is -MIN
        ("x / 0", xi // 0, lambda x: x.const_like(-1)),  # the total semantics
        ("x % 1", xi % 1, _zero),
        ("x % -1", xi % -1, _zero),  # MIN % -1 is 0 by the total semantics
        ("x % 0", xi % 0, lambda x: x),
        ("max(x, x)", P.alu(Op.MAX, x, x), lambda x: x),  # floats too: max(NaN, NaN) is NaN
        ("min(x, x)", P.alu(Op.MIN, x, x), lambda x: x),
        ("x & x", P.alu(Op.AND, x, x), lambda x: x),
        ("x | x", P.alu(Op.OR, x, x), lambda x: x),
        ("x ^ x", P.alu(Op.XOR, x, x), _zero),
        ("x & 0", P.alu(Op.AND, xi, 0), _zero),
        ("x & -1", P.alu(Op.AND, xi, -1), lambda x: x),
        ("x | 0", P.alu(Op.OR, xi, 0), lambda x: x),
        ("x | -1", P.alu(Op.OR, xi, -1), lambda x: x.const_like(-1)),
        ("x ^ 0", P.alu(Op.XOR, xi, 0), lambda x: x),
        ("b: x & true", P.alu(Op.AND, x, True), lambda x: x),
        ("b: x & false", P.alu(Op.AND, x, False), _zero),
        ("b: x | false", P.alu(Op.OR, x, False), lambda x: x),
        ("b: x | true", P.alu(Op.OR, x, True), lambda x: x.const_like(True)),
        ("b: x ^ false", P.alu(Op.XOR, x, False), lambda x: x),
        ("x << c, c % 32 = 0", P.alu(Op.SHL, xi, c), shift_by_zero),
        ("x >> c, c % 32 = 0", P.alu(Op.SHR, xi, c), shift_by_zero),
        # x compared with itself; for floats only x < x is decided (false even for NaN)
        ("x < x", P.alu(Op.CMPLT, x, x).named("u"), _false),
        ("x == x", P.alu(Op.CMPEQ, xib, xib).named("u"), _true),
        ("x != x", P.alu(Op.CMPNE, xib, xib).named("u"), _false),
        ("x <= x", P.alu(Op.CMPLE, xi, xi).named("u"), _true),
        # WHERE picks a branch; nothing about the branches' type matters
        (
            "where(true, a, b)",
            P(Op.WHERE, src=(P.const(True), P.var("a"), P.var("b"))),
            lambda a, b: a,
        ),
        (
            "where(false, a, b)",
            P(Op.WHERE, src=(P.const(False), P.var("a"), P.var("b"))),
            lambda a, b: b,
        ),
        (
            "where(c, a, a)",
            P(Op.WHERE, src=(P.var("cond"), P.var("a"), P.var("a"))),
            lambda cond, a: a,
        ),
        (
            "where(c, true, false)",
            P(Op.WHERE, src=(P.var("cond"), P.const(True), P.const(False))),
            lambda cond: cond,
        ),
        # a conversion to the type a value already has changes nothing
        (
            "cast to its own type",
            P((Op.CAST, Op.BITCAST), src=(x,), name="u"),
            lambda u, x: x if u.type == x.type else None,
        ),
    ]
)


def _all_ones(c: UOp) -> bool:
    if c.dtype.is_bool:
        return c.arg is True
    return c.dtype.wrap(c.arg) == c.dtype.wrap(-1)


def _negation(x: UOp, y: UOp) -> bool:
    """Whether y is NOT x: x XOR all ones, or for comparisons of ints one that holds exactly when
    the other does not (x is F >= 1 and y is 1 - F >= 1): a < b against b <= a, x < 7 against
    6 < x, which is what NOT of a comparison becomes."""
    if y.op is Op.XOR and y.src[0] is x and _all_ones(y.src[1]):
        return True
    if {x.op, y.op} == {Op.CMPEQ, Op.CMPNE}:
        return x.src[0].dtype.is_int and (y.src in (x.src, x.src[::-1]))
    fx, fy = _holds_when_positive(x), _holds_when_positive(y)
    if fx is None or fy is None:
        return False
    terms, const = _negated(fx)
    return fy == (terms, const + 1)


def and_not(x: UOp, y: UOp) -> UOp | None:
    """x AND NOT x is 0: no bit is set in both x and NOT x."""
    return x.const_like(0) if _negation(x, y) or _negation(y, x) else None


def or_not(x: UOp, y: UOp) -> UOp | None:
    """x OR NOT x is all ones: every bit is set in x or in NOT x."""
    if not (_negation(x, y) or _negation(y, x)):
        return None
    return x.const_like(True if x.dtype.is_bool else -1)


a_, b_ = P.var("a"), P.var("b")

logic_rules = table(
    [
        ("max(max(x, c1), c2)", P.alu(Op.MAX, P.alu(Op.MAX, xi, c1), c2).named("u"), clamp_twice),
        ("min(min(x, c1), c2)", P.alu(Op.MIN, P.alu(Op.MIN, xi, c1), c2).named("u"), clamp_twice),
        (
            "where(p < q, a, b) to max/min",
            P(Op.WHERE, src=(P((Op.CMPLT, Op.CMPLE), name="cond"), a_, b_)),
            where_to_max_min,
        ),
        *(
            (
                f"(x {name} c1) {name} c2",
                P.alu(op, P.alu(op, xib, anyc1), anyc2).named("u"),
                constants_together,
            )
            for op, name in ((Op.AND, "&"), (Op.OR, "|"), (Op.XOR, "^"))
        ),
        ("x & ~x", P.alu(Op.AND, xib, P.var("y", INT_OR_BOOL)), and_not),
        ("x | ~x", P.alu(Op.OR, xib, P.var("y", INT_OR_BOOL)), or_not),
        ("x & (x | y)", P.alu(Op.AND, xib, P.alu(Op.OR, xib, P.var("y"))), lambda x, y: x),
        ("x | (x & y)", P.alu(Op.OR, xib, P.alu(Op.AND, xib, P.var("y"))), lambda x, y: x),
        ("b: x == true", P.alu(Op.CMPEQ, xb, True), lambda x: x),
        ("b: x != false", P.alu(Op.CMPNE, xb, False), lambda x: x),
        ("b: x == false", P.alu(Op.CMPEQ, xb, False), _not),
        ("b: x != true", P.alu(Op.CMPNE, xb, True), _not),
        (
            "b: not of a comparison",
            P.alu(Op.XOR, P((Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE), name="cmp"), True),
            negate_compare,
        ),
        (
            "where(not c, a, b)",
            P(Op.WHERE, src=(P.alu(Op.XOR, P.var("cond"), True), a_, b_)),
            where_not,
        ),
        (
            "where(c, false, true)",
            P(Op.WHERE, src=(P.var("cond"), P.const(False), P.const(True))),
            lambda cond: _not(cond),
        ),
        (
            "b: where(c, x, false)",
            P(Op.WHERE, src=(P.var("cond"), xb, P.const(False))),
            lambda cond, x: cond.alu(Op.AND, x),
        ),
        (
            "b: where(c, true, x)",
            P(Op.WHERE, src=(P.var("cond"), P.const(True), xb)),
            lambda cond, x: cond.alu(Op.OR, x),
        ),
    ]
)

bounds_rules = table(
    [
        ("constant by bounds", P(ALU, INT_OR_BOOL, name="u"), constant_by_bounds),
        ("max(x, y), x >= y", P.alu(Op.MAX, xi, yi), max_by_bounds),
        ("min(x, y), x <= y", P.alu(Op.MIN, xi, yi), min_by_bounds),
        ("x % c, |x| < |c|", xi % c, mod_small),
        ("x / c, |x| < |c|", xi // c, div_small),
    ]
)

division_rules = table(
    [
        ("x / c, x linear", (xi // c).named("u"), divide),
        ("x % c, x linear", (xi % c).named("u"), remainder),
        ("x % c, c < 0", xi % c, mod_positive),
        ("(x / c1) / c2", (xi // c1) // c2, div_div),
        ("(y/a + k) / b", (xi // c).named("u"), div_add_div),
        ("(x % c1) % c2", (xi % c1) % c2, mod_mod),
    ]
)

compare_rules = table(
    [
        ("x < c, x linear", P.alu(Op.CMPLT, xi, c), lt_const),
        ("c < x, x linear", P.alu(Op.CMPLT, c, xi), gt_const),
        ("x <= c", P.alu(Op.CMPLE, xi, c), le_to_lt),
        ("c <= x", P.alu(Op.CMPLE, c, xi), ge_to_gt),
        ("x == c, x linear", P.alu(Op.CMPEQ, xi, c).named("u"), eq_const),
        ("x != c, x linear", P.alu(Op.CMPNE, xi, c).named("u"), eq_const),
    ]
)

linear_rules = table(
    [("sum of products", P((Op.ADD, Op.SUB, Op.NEG, Op.MUL), INTS, name="u"), sum_of_products)]
)

order_rules = table([("commutative operand order", P(COMMUTATIVE, name="u"), canonical_order)])

symbolic_rules = (
    identity_rules
    + logic_rules
    + bounds_rules
    + division_rules
    + compare_rules
    + linear_rules
    + order_rules
)

# What the simplify pass runs: folding too, since rules build new constant expressions (c1 + c2).
simplify_rules = fold_rules + symbolic_rules
