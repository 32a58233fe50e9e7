"""Interval bounds (vmin, vmax) of int and bool UOps (uir.md section 6.4).

The verifier proves INDEX ranges with them and the simplifier decides comparisons, divisions and
remainders with them. Every rule is sound for wrapping arithmetic: when the exact interval of a
result leaves its dtype, the result may have wrapped anywhere, so it gets the dtype's full range.
Floats get (-inf, inf): nothing is known about them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .ops import Op
from .uop import UOp

Interval = tuple[int, int]


def full_range(uop: UOp) -> Interval:
    dtype = uop.dtype
    if dtype.is_int or dtype.is_bool:
        return dtype.min, dtype.max
    return (-math.inf, math.inf)  # type: ignore[return-value]


def _const(uop: UOp, _: list[Interval]) -> Interval | None:
    values = uop.arg if isinstance(uop.arg, tuple) else (uop.arg,)
    if not values or not all(isinstance(v, int) for v in values):
        return None
    return int(min(values)), int(max(values))


def _tdiv(a: int, c: int) -> int:
    """Integer division truncating toward zero, as IDIV does for a positive divisor."""
    q = abs(a) // c
    return q if a >= 0 else -q


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


def _idiv(_: UOp, s: list[Interval]) -> Interval | None:
    c = _constant(s[1])
    if c is None or c <= 0:
        return None
    return _tdiv(s[0][0], c), _tdiv(s[0][1], c)  # truncation is monotonic


def _mod(_: UOp, s: list[Interval]) -> Interval | None:
    c = _constant(s[1])
    if c is None or c <= 0:
        return None
    lo, hi = s[0]
    if lo >= 0 and hi < c:
        return lo, hi
    if lo >= 0:
        return 0, min(hi, c - 1)
    if hi <= 0:
        return max(lo, -(c - 1)), 0
    return -(c - 1), c - 1


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


def vmin(uop: UOp) -> int:
    return bounds(uop)[0]


def vmax(uop: UOp) -> int:
    return bounds(uop)[1]
