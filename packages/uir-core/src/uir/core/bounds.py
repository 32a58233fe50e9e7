"""Interval bounds (vmin, vmax) of int and bool UOps (uir.md section 6.4).

The verifier proves INDEX ranges with them and the simplifier decides comparisons, divisions and
remainders with them. Every rule is sound for wrapping arithmetic: when the exact interval of a
result leaves its dtype, the result may have wrapped anywhere, so it gets the dtype's full range.
Floats get (-inf, inf): nothing is known about them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .elements import Elements
from .ops import Op
from .uop import UOp

Interval = tuple[int, int]


def full_range(uop: UOp) -> Interval:
    dtype = uop.dtype
    if dtype.is_int or dtype.is_bool:
        return dtype.min, dtype.max
    return (-math.inf, math.inf)  # type: ignore[return-value]


def _const(uop: UOp, _: list[Interval]) -> Interval | None:
    values = uop.arg if isinstance(uop.arg, (tuple, Elements)) else (uop.arg,)
    if not values or not all(isinstance(v, int) for v in values):
        return None
    return int(min(values)), int(max(values))


def _tdiv(a: int, c: int) -> int:
    """Integer division truncating toward zero, as IDIV does (c != 0)."""
    q = abs(a) // abs(c)
    return q if (a >= 0) == (c > 0) else -q


def _add(_: UOp, s: list[Interval]) -> Interval:
    return s[0][0] + s[1][0], s[0][1] + s[1][1]


def _sub(_: UOp, s: list[Interval]) -> Interval:
    return s[0][0] - s[1][1], s[0][1] - s[1][0]


def _mul(_: UOp, s: list[Interval]) -> Interval:
    corners = [a * b for a in s[0] for b in s[1]]
    return min(corners), max(corners)


def _neg(_: UOp, s: list[Interval]) -> Interval:
    return -s[0][1], -s[0][0]


def _max(_: UOp, s: list[Interval]) -> Interval:
    return max(s[0][0], s[1][0]), max(s[0][1], s[1][1])


def _min(_: UOp, s: list[Interval]) -> Interval:
    return min(s[0][0], s[1][0]), min(s[0][1], s[1][1])


def _where(_: UOp, s: list[Interval]) -> Interval:
    if s[0] == (1, 1):
        return s[1]
    if s[0] == (0, 0):
        return s[2]
    return min(s[1][0], s[2][0]), max(s[1][1], s[2][1])


def _constant(s: Interval) -> int | None:
    return s[0] if s[0] == s[1] else None


def _and(uop: UOp, s: list[Interval]) -> Interval | None:
    if uop.dtype.is_bool:
        return s[0][0] & s[1][0], s[0][1] & s[1][1]
    nonneg = [hi for lo, hi in s if lo >= 0]
    return (0, min(nonneg)) if nonneg else None  # x & c with c >= 0 lies in [0, c]


def _or(uop: UOp, s: list[Interval]) -> Interval | None:
    if uop.dtype.is_bool:
        return s[0][0] | s[1][0], s[0][1] | s[1][1]
    return None


def _nonzero_parts(d: Interval) -> list[Interval]:
    """The divisor interval without 0, as its negative and positive parts."""
    parts = []
    if d[0] < 0:
        parts.append((d[0], min(d[1], -1)))
    if d[1] > 0:
        parts.append((max(d[0], 1), d[1]))
    return parts


def _idiv(_: UOp, s: list[Interval]) -> Interval | None:
    """x / d: on a divisor range of one sign, the exact quotient is monotonic in each operand,
    so its extremes lie at the corners, and truncation keeps them there. A divisor range that
    holds 0 adds x/0 = -1. MIN / -1 is 2**31 exactly, which leaves the type: full range."""
    a = s[0]
    quotients = [_tdiv(n, d) for lo, hi in _nonzero_parts(s[1]) for n in a for d in (lo, hi)]
    if s[1][0] <= 0 <= s[1][1]:
        quotients.append(-1)
    return min(quotients), max(quotients)


def _mod(_: UOp, s: list[Interval]) -> Interval | None:
    """x % d takes x's sign and is smaller than |d| in magnitude, and is x itself when |x| < |d|;
    d = 0 gives x (the total semantics). A non-negative x whose range crosses no multiple of a
    constant d keeps its order: [lo % d, hi % d]."""
    (lo, hi), (d_lo, d_hi) = s
    parts = _nonzero_parts(s[1])
    results = [(lo, hi)] if d_lo <= 0 <= d_hi else []
    if parts:
        largest = max(abs(d_lo), abs(d_hi)) - 1  # |x % d| <= |d| - 1
        smallest = min(min(abs(p) for p in part) for part in parts)
        m = abs(d_lo)
        if -smallest < lo and hi < smallest:
            results.append((lo, hi))  # |x| < |d| for every d: x % d is x
        elif d_lo == d_hi and lo >= 0 and hi - lo < m and lo % m <= hi % m:
            results.append((lo % m, hi % m))
        else:
            r_lo = 0 if lo >= 0 else max(lo, -largest)
            r_hi = 0 if hi <= 0 else min(hi, largest)
            results.append((r_lo, r_hi))
    return min(r[0] for r in results), max(r[1] for r in results)


def _shr(uop: UOp, s: list[Interval]) -> Interval | None:
    c = _constant(s[1])
    if c is None or s[0][0] < 0:
        return None
    c &= uop.dtype.bits - 1
    return s[0][0] >> c, s[0][1] >> c


def _cast(uop: UOp, s: list[Interval]) -> Interval | None:
    src = uop.src[0].dtype
    if not (src.is_int or src.is_bool):
        return None
    lo, hi = s[0]
    if uop.dtype.is_bool:
        return (0, 0) if lo == hi == 0 else (int(lo > 0 or hi < 0), 1)
    return lo, hi  # kept when it fits the target; a wider interval becomes the full range


def _compare(test: Callable[[Interval, Interval], bool | None]):
    def rule(uop: UOp, s: list[Interval]) -> Interval:
        if not uop.src[0].dtype.is_float:
            decided = test(s[0], s[1])
            if decided is not None:
                return int(decided), int(decided)
        return 0, 1

    return rule


def _lt(a: Interval, b: Interval) -> bool | None:
    return True if a[1] < b[0] else False if a[0] >= b[1] else None


def _le(a: Interval, b: Interval) -> bool | None:
    return True if a[1] <= b[0] else False if a[0] > b[1] else None


def _eq(a: Interval, b: Interval) -> bool | None:
    if a[0] == a[1] == b[0] == b[1]:
        return True
    return False if a[1] < b[0] or b[1] < a[0] else None


def _ne(a: Interval, b: Interval) -> bool | None:
    decided = _eq(a, b)
    return None if decided is None else not decided


def _range(_: UOp, s: list[Interval]) -> Interval:
    return 0, max(s[0][1] - 1, 0)


def _same(_: UOp, s: list[Interval]) -> Interval:
    """STAGE, EXPAND and the movement ops: elements of the source, moved but unchanged."""
    return s[0]


def _pad(_: UOp, s: list[Interval]) -> Interval:
    """The source's elements and the zero around them."""
    return min(s[0][0], 0), max(s[0][1], 0)


def _stack(_: UOp, s: list[Interval]) -> Interval | None:
    """Every element is an element of one of the sources (a STACK has at least one)."""
    if not s:
        return None
    return min(lo for lo, _ in s), max(hi for _, hi in s)


RULES: dict[Op, Callable[[UOp, list[Interval]], Interval | None]] = {
    Op.CONST: _const,
    Op.ADD: _add,
    Op.SUB: _sub,
    Op.MUL: _mul,
    Op.NEG: _neg,
    Op.MAX: _max,
    Op.MIN: _min,
    Op.WHERE: _where,
    Op.AND: _and,
    Op.OR: _or,
    Op.IDIV: _idiv,
    Op.MOD: _mod,
    Op.SHR: _shr,
    Op.CAST: _cast,
    Op.CMPLT: _compare(_lt),
    Op.CMPLE: _compare(_le),
    Op.CMPEQ: _compare(_eq),
    Op.CMPNE: _compare(_ne),
    Op.RANGE: _range,
    Op.STAGE: _same,
    Op.EXPAND: _same,
    Op.RESHAPE: _same,
    Op.PERMUTE: _same,
    Op.SHRINK: _same,
    Op.FLIP: _same,
    Op.PAD: _pad,
    Op.STACK: _stack,
    # No REDUCE: rangeify materializes it into a LOCAL, and a LOAD has its dtype's full range
    # (uir.md 6.4); bounds known before rangeify but lost after it would let simplify drop a
    # gate's conjunct, or the verifier accept an INDEX, that the lowered program cannot prove.
}


def _compute(uop: UOp, srcs: list[Interval]) -> Interval:
    full = full_range(uop)
    rule = RULES.get(uop.op)
    if rule is None or not (uop.dtype.is_int or uop.dtype.is_bool):
        return full
    found = rule(uop, srcs)
    if found is None or found[0] < full[0] or found[1] > full[1]:
        return full  # unknown, or the exact result may have wrapped: anything is possible
    return found


def bounds(uop: UOp) -> Interval:
    """The interval [vmin, vmax] that every value of `uop` lies in, cached on the UOp."""
    if uop._bounds is not None:
        return uop._bounds
    stack: list[tuple[UOp, bool]] = [(uop, False)]
    while stack:
        node, ready = stack.pop()
        if node._bounds is not None:
            continue
        if not ready:
            stack.append((node, True))
            stack.extend((s, False) for s in node.src if s._bounds is None)
            continue
        result = _compute(node, [s._bounds for s in node.src])
        object.__setattr__(node, "_bounds", result)
    return uop._bounds


# Gated accesses (uir.md section 6.4): a gate's conjuncts that compare an int UOp with a constant
# bound that UOp where the gate holds, as (lowest, highest) given the constant on the right or left.
_NARROW_RIGHT: dict[Op, Callable[[int], tuple[int | None, int | None]]] = {
    Op.CMPLT: lambda c: (None, c - 1),  # x < c
    Op.CMPLE: lambda c: (None, c),  # x <= c
    Op.CMPEQ: lambda c: (c, c),  # x == c
}
_NARROW_LEFT: dict[Op, Callable[[int], tuple[int | None, int | None]]] = {
    Op.CMPLT: lambda c: (c + 1, None),  # c < x
    Op.CMPLE: lambda c: (c, None),  # c <= x
    Op.CMPEQ: lambda c: (c, c),  # c == x
}


def _conjuncts(gate: UOp) -> list[UOp]:
    """The leaves of the AND tree at the top of a bool gate."""
    leaves, stack, seen = [], [gate], set()
    while stack:
        g = stack.pop()
        if g in seen:
            continue
        seen.add(g)
        if g.op is Op.AND and g.dtype.is_bool:
            stack.extend(g.src)
        else:
            leaves.append(g)
    return leaves


def gate_facts(gate: UOp) -> dict[UOp, Interval] | None:
    """The bounds that hold for int UOps wherever `gate` is true; None when it is never true.

    Besides the UOp a conjunct compares, a conjunct on `c*t + k` (one term, read by `linear_form`)
    bounds `t`: `-1 < -t` gives `t <= 0`, whatever sign or scale the simplifier left.
    """
    if bounds(gate) == (0, 0):
        return None
    facts: dict[UOp, Interval] = {}
    for leaf in _conjuncts(gate):
        if leaf.op not in _NARROW_RIGHT or not leaf.src[0].dtype.is_int:
            continue
        a, b = leaf.src
        right, left = _constant(bounds(b)), _constant(bounds(a))
        if right is not None:
            x, (lo, hi) = a, _NARROW_RIGHT[leaf.op](right)
        elif left is not None:
            x, (lo, hi) = b, _NARROW_LEFT[leaf.op](left)
        else:
            continue
        known_lo, known_hi = bounds(x)
        within = (known_lo if lo is None else lo, known_hi if hi is None else hi)
        narrowed = [(x, within)]
        reduced = _reduced(x, within)
        if reduced is not None:
            sum_terms, (s_lo, s_hi) = reduced
            if s_lo > s_hi:
                return None  # no integer value of the sum puts x there: the gate never holds
            if len(sum_terms) == 1 and x not in sum_terms:
                narrowed.append((next(iter(sum_terms)), (s_lo, s_hi)))
        for y, (lo, hi) in narrowed:
            known_lo, known_hi = facts.get(y, bounds(y))
            lo, hi = max(known_lo, lo), min(known_hi, hi)
            if lo > hi:
                return None  # this conjunct contradicts the bounds of y, or another conjunct
            facts[y] = (lo, hi)
    return facts


def gated_bounds(uop: UOp, gate: UOp) -> Interval | None:
    """The bounds of `uop` where `gate` holds, or None when the gate never holds.

    The UOps the gate bounds are narrowed and every rule above them recomputed in a local table:
    the per-UOp cache keeps the ungated bounds, which hold everywhere.
    """
    facts = gate_facts(gate)
    if facts is None:
        return None
    if not facts:
        return bounds(uop)
    local: dict[UOp, Interval] = {}
    stack: list[tuple[UOp, bool]] = [(uop, False)]
    while stack:
        node, ready = stack.pop()
        if node in local:
            continue
        # Only ops with a rule read their sources' bounds; below anything else nothing changes.
        reads_sources = node.op in RULES and bool(node.src)
        if not ready and reads_sources:
            stack.append((node, True))
            stack.extend((s, False) for s in node.src if s not in local)
            continue
        lo, hi = bounds(node)
        if reads_sources:
            new_lo, new_hi = _compute(node, [local[s] for s in node.src])
            lo, hi = max(lo, new_lo), min(hi, new_hi)
        if node in facts:
            lo, hi = max(lo, facts[node][0]), min(hi, facts[node][1])
        if lo > hi:
            return None  # the gate contradicts what every value of `node` satisfies
        local[node] = (lo, hi)
    lo, hi = local[uop]
    through = _through_linear_facts(uop, facts, local)
    if through is not None:
        lo, hi = max(lo, through[0]), min(hi, through[1])
    return (lo, hi) if lo <= hi else None


# Bounds through sums (an extension section 6.4 allows: "a compiler may know more"). A gate that
# bounds `r + dr` narrows `3*r + 3*dr + c - 4` too, although that sum holds no `r + dr` UOp: a
# rewrite that reassociates a gated index (the simplifier's sums of products) must not cost its
# proof. Both are read as exact integer sums of terms and the index is split into multiples of
# the gated sums plus a rest.
LinearForm = tuple[dict[UOp, int], int]
_MAX_LINEAR_NODES = 64  # a larger expression is read as it is (this is a bound, not a search)


def _exact(node: UOp) -> bool:
    """Whether `node` computes its exact integer result: the interval its rule gives from its
    sources' bounds fits its dtype, so it cannot have wrapped."""
    found = RULES[node.op](node, [bounds(s) for s in node.src])
    low, high = full_range(node)
    return found is not None and low <= found[0] and found[1] <= high


def linear_form(uop: UOp) -> LinearForm | None:
    """`uop` as `sum(coef * term) + const` over the integers, expanding the ADD, SUB, NEG and MUL
    by a constant that cannot wrap; None for an int expression too large to read."""
    terms: dict[UOp, int] = {}
    const, visited = 0, 0
    stack = [(uop, 1)]
    while stack:
        node, coef = stack.pop()
        visited += 1
        if visited > _MAX_LINEAR_NODES:
            return None
        value = _constant(bounds(node))
        if value is not None:
            const += coef * value
        elif node.op in (Op.ADD, Op.SUB, Op.NEG, Op.MUL) and node.dtype.is_int and _exact(node):
            if node.op is Op.ADD:
                stack.extend((s, coef) for s in node.src)
            elif node.op is Op.SUB:
                stack.extend(((node.src[0], coef), (node.src[1], -coef)))
            elif node.op is Op.NEG:
                stack.append((node.src[0], -coef))
            else:
                factors = [_constant(bounds(s)) for s in node.src]
                if factors[1] is not None:
                    stack.append((node.src[0], coef * factors[1]))
                elif factors[0] is not None:
                    stack.append((node.src[1], coef * factors[0]))
                else:
                    terms[node] = terms.get(node, 0) + coef
        else:
            terms[node] = terms.get(node, 0) + coef
    return {t: c for t, c in terms.items() if c}, const


def _multiple(terms: dict[UOp, int], of: dict[UOp, int]) -> int | None:
    """The integer `a != 0` with `terms[t] == a * of[t]` for every term t of `of`, if any."""
    first, coef = next(iter(of.items()))
    a, rest = divmod(terms.get(first, 0), coef)
    if rest or not a or any(terms.get(t, 0) != a * c for t, c in of.items()):
        return None
    return a


def _reduced(x: UOp, within: Interval) -> tuple[dict[UOp, int], Interval] | None:
    """Where int `x` lies in `within`, its linear form `g*s + k` as the sum `s`, whose coefficients
    are coprime and the first positive, and the interval `s` lies in: `2*a - 4*b + 1` in [1, 9]
    is `a - 2*b` in [0, 4], `-t` in [0, 5] is `t` in [-5, 0]. None for a constant or an
    expression too large to read."""
    if not x.dtype.is_int:
        return None
    form = linear_form(x)
    if form is None or not form[0]:
        return None
    terms, k = form
    g = math.gcd(*terms.values())
    if next(iter(terms.values())) < 0:
        g = -g  # dividing by a negative g swaps the ends
    first, last = (within[0] - k, within[1] - k) if g > 0 else (within[1] - k, within[0] - k)
    return {t: c // g for t, c in terms.items()}, (-(-first // g), last // g)


def _through_linear_facts(
    uop: UOp, facts: dict[UOp, Interval], local: dict[UOp, Interval]
) -> Interval | None:
    """Bounds of `uop` as multiples of the gated sums in `facts` (each reduced by `_reduced`) plus
    a rest bounded term by term (each term narrowed as the gate narrows it); None when no gated
    sum divides it out. A gated sum of one term is a fact on that term already (`gate_facts`)."""
    if not uop.dtype.is_int:
        return None
    sums = [s for x, within in facts.items() if (s := _reduced(x, within)) and len(s[0]) > 1]
    form = linear_form(uop) if sums else None
    if form is None:
        return None
    terms, lo = dict(form[0]), form[1]
    hi, used = lo, False
    for of, (s_lo, s_hi) in sums:
        a = _multiple(terms, of)
        if a is None:
            continue
        for t in of:
            del terms[t]
        lo, hi, used = lo + min(a * s_lo, a * s_hi), hi + max(a * s_lo, a * s_hi), True
    if not used:
        return None
    for t, coef in terms.items():
        t_lo, t_hi = local.get(t, bounds(t))
        lo, hi = lo + min(coef * t_lo, coef * t_hi), hi + max(coef * t_lo, coef * t_hi)
    return lo, hi
