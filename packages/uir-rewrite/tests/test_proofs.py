"""Every rule of uir.rewrite.simplify proven with Z3, by name (issue 8, issue 17).

`PROOFS` maps each rule name of `simplify.NAMED_RULES` to the theorems that prove it, with the
rule's condition as the premise (a condition on bounds is a premise on the variables' intervals);
a test fails when a rule has no theorem, or a theorem no rule. The models, as uir.md section 4
defines the operations:
- `BitVec32`: 32-bit bit-vectors, i32 and u32, wrapping like the hardware.
- `Exact`: unbounded integers restricted to the type's range, where the wrap is an explicit
  modulo. Z3 decides division by a constant such as 3 at once here and needs minutes in
  bit-vectors (where only powers of two are quick), so theorems of kind "exact" are proven here
  for a fixed set of divisors, and those marked `every_divisor` also with the divisor symbolic.
  The premises of those rules exclude wrapping, which is what makes the model describe the same
  values.
- `Float32`: IEEE 754 binary32; two results agree when their bits are equal or both are NaN.
- `Bool`: bools.

Theorems compare through the model (`m.le`, `m.lt`), never with Python's operators, which Z3
reads as signed comparisons of bit-vectors.

`to_bitvec(uop, params)` turns an i32 UOp graph over PARAMs into a bit-vector term, so a rewrite
the code actually performed can be proven equal to what it replaced, for all 2**32 values of each
PARAM.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
import z3

from uir.core.dtypes import I32
from uir.core.ops import Op
from uir.core.uop import UOp
from uir.rewrite.passes import simplify

BITS = 32
MIN, MAX = -(2 ** (BITS - 1)), 2 ** (BITS - 1) - 1


class BitVec32:
    """32-bit bit-vectors, signed (i32) or not (u32), with the total IDIV/MOD of uir.md 4."""

    def __init__(self, signed: bool = True) -> None:
        self.signed = signed
        self.name = "i32" if signed else "u32"
        self.lowest, self.highest = (MIN, MAX) if signed else (0, 2**BITS - 1)

    def var(self, name: str) -> z3.BitVecRef:
        return z3.BitVec(name, BITS)

    def const(self, value: int) -> z3.BitVecRef:
        return z3.BitVecVal(value, BITS)

    def in_range(self, value: z3.ExprRef) -> z3.BoolRef:
        return z3.BoolVal(True)  # every bit-vector is a value of the type

    def lt(self, a, b) -> z3.BoolRef:
        return a < b if self.signed else z3.ULT(a, b)

    def le(self, a, b) -> z3.BoolRef:
        return a <= b if self.signed else z3.ULE(a, b)

    def add(self, a, b):
        return a + b

    def sub(self, a, b):
        return a - b

    def mul(self, a, b):
        return a * b

    def neg(self, a):
        return -a

    def idiv(self, a, b):
        # x/0 is all ones (-1, or the largest u32); MIN/-1 is MIN, as RISC-V defines them
        if not self.signed:
            return z3.If(b == 0, self.const(-1), z3.UDiv(a, b))
        overflow = z3.And(a == MIN, b == -1)
        return z3.If(b == 0, self.const(-1), z3.If(overflow, self.const(MIN), a / b))

    def mod(self, a, b):
        if not self.signed:
            return z3.If(b == 0, a, z3.URem(a, b))
        return z3.If(b == 0, a, z3.If(b == -1, self.const(0), z3.SRem(a, b)))

    def max(self, a, b):
        return z3.If(self.le(b, a), a, b)

    def min(self, a, b):
        return z3.If(self.le(a, b), a, b)

    def and_(self, a, b):
        return a & b

    def or_(self, a, b):
        return a | b

    def xor(self, a, b):
        return a ^ b

    def shl(self, a, b):
        return a << (b & (BITS - 1))

    def shr(self, a, b):
        count = b & (BITS - 1)
        return a >> count if self.signed else z3.LShR(a, count)  # arithmetic when signed

    def differ(self, lhs, rhs) -> z3.BoolRef:
        return lhs != rhs

    def exact(self, v: z3.BitVecRef) -> z3.BitVecRef:
        """v widened to 64 bits, where sums and products of two 32-bit values are exact."""
        return z3.SignExt(BITS, v) if self.signed else z3.ZeroExt(BITS, v)

    def add_fits(self, a, b) -> z3.BoolRef:
        """The exact sum is a value of the type: the addition does not wrap."""
        return self.exact(a) + self.exact(b) == self.exact(a + b)

    def mul_fits(self, a, b) -> z3.BoolRef:
        return self.exact(a) * self.exact(b) == self.exact(a * b)


class Exact:
    """Mathematical integers kept in the type's range by an explicit wrap after each operation."""

    def __init__(self, signed: bool = True) -> None:
        self.signed = signed
        self.name = "i32" if signed else "u32"
        self.lowest, self.highest = (MIN, MAX) if signed else (0, 2**BITS - 1)

    def var(self, name: str) -> z3.ArithRef:
        return z3.Int(name)

    def const(self, value: int) -> z3.ArithRef:
        return z3.IntVal(value)

    def in_range(self, value: z3.ArithRef) -> z3.BoolRef:
        return z3.And(value >= self.lowest, value <= self.highest)

    def lt(self, a, b) -> z3.BoolRef:
        return a < b

    def le(self, a, b) -> z3.BoolRef:
        return a <= b

    def wrap(self, v: z3.ArithRef) -> z3.ArithRef:
        # The modulo only where it is needed: Z3 then settles the no-wrap cases without it.
        return z3.If(self.in_range(v), v, (v - self.lowest) % (2**BITS) + self.lowest)

    def add(self, a, b):
        return self.wrap(a + b)

    def sub(self, a, b):
        return self.wrap(a - b)

    def mul(self, a, b):
        return self.wrap(a * b)

    def neg(self, a):
        return self.wrap(-a)

    def _tdiv(self, a, b):
        """Truncating division of integers, b != 0 (Z3's own div is Euclidean)."""
        magnitude = z3.If(a >= 0, a, -a) / z3.If(b >= 0, b, -b)
        return z3.If((a >= 0) == (b >= 0), magnitude, -magnitude)

    def idiv(self, a, b):
        all_ones = self.const(-1 if self.signed else self.highest)
        return z3.If(b == 0, all_ones, self.wrap(self._tdiv(a, b)))

    def mod(self, a, b):
        return z3.If(b == 0, a, a - b * self._tdiv(a, b))

    def max(self, a, b):
        return z3.If(a >= b, a, b)

    def min(self, a, b):
        return z3.If(a <= b, a, b)

    def differ(self, lhs, rhs) -> z3.BoolRef:
        return lhs != rhs

    def exact(self, v: z3.ArithRef) -> z3.ArithRef:
        return v

    def add_fits(self, a, b) -> z3.BoolRef:
        return self.in_range(a + b)

    def mul_fits(self, a, b) -> z3.BoolRef:
        return self.in_range(a * b)


class Float32:
    """IEEE 754 binary32 with round-to-nearest-even, as uir.md section 3 defines f32. Two results
    agree when they have the same bits, or are both NaN (a NaN's sign and payload are free)."""

    signed = True
    name = "f32"
    sort = z3.Float32()

    def var(self, name: str) -> z3.FPRef:
        return z3.FP(name, self.sort)

    def const(self, value: float) -> z3.FPRef:
        return z3.FPVal(value, self.sort)

    def in_range(self, value) -> z3.BoolRef:
        return z3.BoolVal(True)

    def differ(self, lhs, rhs) -> z3.BoolRef:
        if not (z3.is_fp(lhs) and z3.is_fp(rhs)):
            return lhs != rhs  # a comparison's bool result
        return z3.Not(z3.Or(z3.And(z3.fpIsNaN(lhs), z3.fpIsNaN(rhs)), lhs == rhs))

    def add(self, a, b):
        return z3.fpAdd(z3.RNE(), a, b)

    def sub(self, a, b):
        return z3.fpSub(z3.RNE(), a, b)

    def mul(self, a, b):
        return z3.fpMul(z3.RNE(), a, b)

    def fdiv(self, a, b):
        return z3.fpDiv(z3.RNE(), a, b)

    def neg(self, a):
        return z3.fpNeg(a)

    def lt(self, a, b):
        return z3.fpLT(a, b)

    def _pick(self, a, b, b_wins):
        # IEEE 754-2019 maximum/minimum: a NaN propagates, and -0 < +0
        return z3.If(z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b)), z3.fpNaN(self.sort), z3.If(b_wins, b, a))

    def max(self, a, b):
        negative_zero_first = z3.And(z3.fpIsZero(a), z3.fpIsZero(b), z3.fpIsNegative(a))
        return self._pick(a, b, z3.Or(z3.fpLT(a, b), negative_zero_first))

    def min(self, a, b):
        negative_zero_second = z3.And(z3.fpIsZero(a), z3.fpIsZero(b), z3.fpIsNegative(b))
        return self._pick(a, b, z3.Or(z3.fpLT(b, a), negative_zero_second))


class Bool:
    """bool values: AND, OR, XOR and comparisons of bools (uir.md section 4)."""

    signed = True
    name = "bool"

    def var(self, name: str) -> z3.BoolRef:
        return z3.Bool(name)

    def const(self, value: bool) -> z3.BoolRef:
        return z3.BoolVal(value)

    def in_range(self, value) -> z3.BoolRef:
        return z3.BoolVal(True)

    def differ(self, lhs, rhs) -> z3.BoolRef:
        return lhs != rhs

    def and_(self, a, b):
        return z3.And(a, b)

    def or_(self, a, b):
        return z3.Or(a, b)

    def xor(self, a, b):
        return z3.Xor(a, b)


Model = BitVec32 | Exact | Float32 | Bool


@dataclass(frozen=True)
class Theorem:
    """`premise -> lhs == rhs` for all values of the variables (and constants, where symbolic).

    `claim(m, **values)` builds (premise, lhs, rhs) in model m. `divisors` gives the values some
    variables (the rule's constants) take in the bit-vector proof, where Z3 cannot decide it with
    them symbolic (None: every variable stays symbolic); negative ones are skipped for u32.
    `signed_only` marks rules that only exist for signed ints (their constant is negative).
    """

    name: str
    variables: tuple[str, ...]
    claim: Callable[..., tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef]]
    divisors: tuple[dict[str, int], ...] | None = None
    signed_only: bool = False
    kind: str = "int"  # the models it is proven in: "int" (i32, u32), "float" (f32), "bool"
    every_divisor: bool = False  # also proven in exact integers with the divisors symbolic


# Z3's bound on each proof: its resource count, which is the same on every machine, not a
# wall-clock timeout, which a loaded machine reaches (issue 24). The hardest proof here counts
# 19.5 million; past 25 times that a proof is "unknown", however fast the machine.
RLIMIT = 500_000_000


def counterexample(model: Model, theorem: Theorem, fixed: dict[str, int] | None = None):
    """None when the theorem holds in `model`, else Z3's counterexample (or 'unknown')."""
    fixed = fixed or {}
    values = {v: model.const(fixed[v]) if v in fixed else model.var(v) for v in theorem.variables}
    premise, lhs, rhs = theorem.claim(model, **values)
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT)
    solver.add(*(model.in_range(v) for v in values.values()))
    solver.add(premise, model.differ(lhs, rhs))
    result = solver.check()
    if result == z3.unsat:
        return None
    return solver.model() if result == z3.sat else "unknown"


# --- UOp graphs as bit-vector terms --------------------------------------------------------------

_BINARY: dict[Op, Callable[[BitVec32, z3.ExprRef, z3.ExprRef], z3.ExprRef]] = {
    Op.ADD: BitVec32.add,
    Op.SUB: BitVec32.sub,
    Op.MUL: BitVec32.mul,
    Op.IDIV: BitVec32.idiv,
    Op.MOD: BitVec32.mod,
    Op.MAX: BitVec32.max,
    Op.MIN: BitVec32.min,
    Op.AND: BitVec32.and_,
    Op.OR: BitVec32.or_,
    Op.XOR: BitVec32.xor,
    Op.SHL: BitVec32.shl,
    Op.SHR: BitVec32.shr,
}
_COMPARE = {
    Op.CMPLT: lambda a, b: a < b,
    Op.CMPLE: lambda a, b: a <= b,
    Op.CMPEQ: lambda a, b: a == b,
    Op.CMPNE: lambda a, b: a != b,
}


def to_bitvec(root: UOp, params: dict[int, z3.ExprRef]) -> z3.ExprRef:
    """The i32 (or bool) graph under `root` as a Z3 term; PARAM slot i is params[i]."""
    m = BitVec32()
    term: dict[UOp, z3.ExprRef] = {}
    for u in root.toposort():
        s = [term[x] for x in u.src]
        if u.op is Op.PARAM:
            term[u] = params[u.arg]
        elif u.op is Op.CONST:
            term[u] = z3.BoolVal(u.arg) if u.dtype.is_bool else m.const(u.arg)
        elif u.op is Op.NEG:
            term[u] = m.neg(s[0])
        elif u.op in _BINARY and u.dtype.is_int:
            term[u] = _BINARY[u.op](m, *s)
        elif u.op in (Op.AND, Op.OR, Op.XOR) and u.dtype.is_bool:
            term[u] = {Op.AND: z3.And, Op.OR: z3.Or, Op.XOR: z3.Xor}[u.op](*s)
        elif u.op in _COMPARE:
            term[u] = _COMPARE[u.op](*s)
        elif u.op is Op.WHERE:
            term[u] = z3.If(*s)
        else:
            raise NotImplementedError(f"no bit-vector model of {u.op} {u.type}")
    return term[root]


def equivalent(before: UOp, after: UOp, slots: int) -> bool:
    """Whether two i32 graphs over PARAMs 0..slots-1 agree for every value of every PARAM."""
    params = {i: z3.BitVec(f"p{i}", BITS) for i in range(slots)}
    solver = z3.Solver()
    solver.set("rlimit", RLIMIT)
    solver.add(to_bitvec(before, params) != to_bitvec(after, params))
    return solver.check() == z3.unsat


# --- the theorems: every rule of uir.rewrite.simplify, by name, with its stated condition ---------

T = Theorem
# Divisors for the bit-vector proofs of rules whose divisor is a constant. Z3 settles these in
# seconds; with 3 or 7 in the split rules it needs minutes (the exact-integer proofs below cover
# every divisor).
DIVISORS = tuple({"c": c} for c in (1, 2, 3, 4, 7, 16, -1, -3, -16))
POSITIVE_DIVISORS = tuple({"c": c} for c in (1, 2, 4, 16, 1 << 20))
NEGATIVE_DIVISORS = tuple({"c": c} for c in (-1, -2, -3, -16, MIN + 1))
# (g, d) pairs for the rules that take a common factor g out of a divisor g*d
FACTORS = tuple({"g": g, "d": d} for g, d in ((2, 1), (2, 2), (4, 4), (4, 3), (8, 2)))


def _abs(v):
    return z3.If(v >= 0, v, -v)


def _below(m: Model, x, c) -> z3.BoolRef:
    """|x| < |c|, computed exactly (|MIN| does not fit an i32)."""
    wx, wc = m.exact(x), m.exact(c)
    return z3.And(-_abs(wc) < wx, wx < _abs(wc))


def _positive(m: Model, v) -> z3.BoolRef:
    return m.lt(m.const(0), v)


def _fits(m: Model, wide) -> z3.BoolRef:
    """An exact (widened) value is a value of the type: computing it did not wrap."""
    return z3.And(m.exact(m.const(m.lowest)) <= wide, wide <= m.exact(m.const(m.highest)))


def _split(m: Model, t, y, c) -> z3.BoolRef:
    product, zero = m.mul(t, c), m.const(0)
    return z3.And(
        _positive(m, c),
        m.le(zero, y),
        m.mul_fits(t, c),
        m.add_fits(product, y),
        m.le(zero, m.add(product, y)),
    )


def _identity(name: str, lhs: Callable, rhs: Callable, signed_only: bool = False, kind="int"):
    """A one-variable theorem with no condition: lhs(m, x) == rhs(m, x)."""
    return T(name, ("x",), lambda m, x: (True, lhs(m, x), rhs(m, x)), None, signed_only, kind)


def _same(m, x):
    return x


def _zero(m, x):
    return m.const(0)


# The ring laws a linear form is built and rebuilt with (linear.py): with them, any chain of ADD,
# SUB, NEG and MUL by constants equals its form, in any order of its terms.
RING = (
    T(
        "forms add: (a*p + b*q + k1) + (a*r + k2) = a*(p + r) + b*q + (k1 + k2)",
        ("a", "b", "p", "q", "r", "k1", "k2"),
        lambda m, a, b, p, q, r, k1, k2: (
            True,
            m.add(m.add(m.add(m.mul(a, p), m.mul(b, q)), k1), m.add(m.mul(a, r), k2)),
            m.add(m.add(m.mul(a, m.add(p, r)), m.mul(b, q)), m.add(k1, k2)),
        ),
    ),
    T(
        "forms subtract: (a*p + k1) - (a*r + k2) = a*(p - r) + (k1 - k2)",
        ("a", "p", "r", "k1", "k2"),
        lambda m, a, p, r, k1, k2: (
            True,
            m.sub(m.add(m.mul(a, p), k1), m.add(m.mul(a, r), k2)),
            m.add(m.mul(a, m.sub(p, r)), m.sub(k1, k2)),
        ),
    ),
    T(
        "forms negate: -(a*p + k) = a*(-p) + (-k)",
        ("a", "p", "k"),
        lambda m, a, p, k: (
            True,
            m.neg(m.add(m.mul(a, p), k)),
            m.add(m.mul(a, m.neg(p)), m.neg(k)),
        ),
    ),
    T(
        "forms scale: (a*p + k) * c = a*(p*c) + k*c",
        ("a", "p", "k", "c"),
        lambda m, a, p, k, c: (
            True,
            m.mul(m.add(m.mul(a, p), k), c),
            m.add(m.mul(a, m.mul(p, c)), m.mul(k, c)),
        ),
    ),
    T(
        "forms render: a - b*c = a + b*(-c), and s + -k = s - k",
        ("a", "b", "c"),
        lambda m, a, b, c: (True, m.sub(a, m.mul(b, c)), m.add(a, m.mul(b, m.neg(c)))),
    ),
    T(
        "forms commute: a + b = b + a, a*b = b*a",
        ("a", "b"),
        lambda m, a, b: (True, m.add(m.mul(a, b), b), m.add(b, m.mul(b, a))),
    ),
)
# A form's exact value E is congruent to its expression x modulo 2**32; when E's exact interval
# fits the type, E is x (the premise of every rule below that reasons about exact values).
CONGRUENT = T(
    "a value congruent to x modulo 2**32 and in the type's range is x",
    ("x", "e"),
    lambda m, x, e: (z3.And(m.in_range(e), (e - x) % (2**BITS) == 0), e, x),
    kind="exact",
)
# Each with coefficient 1: a multiple m of either side follows by the ring laws ("forms scale").
# Proven in the exact-integer model of wrapping ints, where Z3 settles a division by a constant
# at once (in bit-vectors only powers of two are quick).
ODD_DIVISORS = tuple({"c": c} for c in (1, 2, 3, 4, 7, 12, 1000, -1, -3, -16, 0, MIN))
RECOMBINE = (
    T(
        "c*(y/c) + y%c = y (total semantics: any y and c)",
        ("y", "c"),
        lambda m, y, c: (True, m.add(m.mul(m.idiv(y, c), c), m.mod(y, c)), y),
        ODD_DIVISORS,
        kind="exact",
    ),
    T(
        "y - c*(y/c) = y%c",
        ("y", "c"),
        lambda m, y, c: (True, m.sub(y, m.mul(m.idiv(y, c), c)), m.mod(y, c)),
        ODD_DIVISORS,
        kind="exact",
    ),
    T(
        "a*((y/a) % b) + y%a = y % (a*b) for a, b > 0 and a*b fits",
        ("y", "a", "b"),
        lambda m, y, a, b: (
            z3.And(_positive(m, a), _positive(m, b), m.mul_fits(a, b)),
            m.add(m.mul(m.mod(m.idiv(y, a), b), a), m.mod(y, a)),
            m.mod(y, m.mul(a, b)),
        ),
        tuple({"a": a, "b": b} for a, b in ((2, 2), (4, 3), (3, 5), (16, 16), (65536, 32767))),
        kind="exact",
    ),
    T(
        "(x/a)/c is x/(a*c) for a, c > 0 with a*c fitting: a quotient by c of x/a",
        ("x", "a", "c"),
        lambda m, x, a, c: (
            z3.And(_positive(m, a), _positive(m, c), m.mul_fits(a, c)),
            m.idiv(m.idiv(x, a), c),
            m.idiv(x, m.mul(a, c)),
        ),
        tuple({"a": a, "c": c} for a, c in ((2, 2), (4, 16), (65536, 32767))),
        every_divisor=True,
    ),
)


def _exact_quotient(name: str, op: str) -> Theorem:
    """(c*q)/c = q and (c*q) % c = 0 when c*q does not wrap: the multiple-of-c case."""
    if op == "div":
        return T(
            name,
            ("q", "c"),
            lambda m, q, c: (z3.And(c != 0, m.mul_fits(q, c)), m.idiv(m.mul(q, c), c), q),
            DIVISORS,
            every_divisor=True,
        )
    return T(
        name,
        ("q", "c"),
        lambda m, q, c: (z3.And(c != 0, m.mul_fits(q, c)), m.mod(m.mul(q, c), c), m.const(0)),
        DIVISORS,
        every_divisor=True,
    )


def _factored(m: Model, y, kr, g, d) -> z3.BoolRef:
    """x = g*y + kr with 0 <= kr < g, x >= 0 exactly and fitting: a form whose coefficients and
    divisor share the factor g (y the rest of the form divided by g, constant's quotient added)."""
    wide = m.exact(y) * m.exact(g) + m.exact(kr)
    return z3.And(m.exact(kr) >= 0, m.exact(kr) < m.exact(g), wide >= 0, _fits(m, wide))


def _one_block(m: Model, q, r, f, c) -> z3.BoolRef:
    """x = c*q + r exactly (c > 0, x >= 0, fitting), with r in [c*f, c*f + c): the remainders'
    sum r, whose bounds lie in one block of c, and q + f fitting."""
    wc, wf, wr = m.exact(c), m.exact(f), m.exact(r)
    wide = m.exact(q) * wc + wr
    return z3.And(
        wide >= 0, _fits(m, wide), wf * wc <= wr, wr < wf * wc + wc, _fits(m, m.exact(q) + wf)
    )


SMALL_DIVISORS = tuple({"c": c} for c in (1, 2, 3, 4, 7, 16, 1000))

DIVIDE = (
    _exact_quotient("(c*q) / c = q when c*q does not wrap", "div"),
    T(
        "(g*y + kr) / (g*d) = y / d for 0 <= kr < g, g*y + kr >= 0 and fitting",
        ("y", "kr", "g", "d"),
        lambda m, y, kr, g, d: (
            _factored(m, y, kr, g, d),
            m.idiv(m.add(m.mul(y, g), kr), m.mul(g, d)),
            m.idiv(y, d),
        ),
        FACTORS,
        kind="exact",
    ),
    T(
        "(c*q + r) / c = q + f when r lies in [c*f, c*f + c)",
        ("q", "r", "f", "c"),
        lambda m, q, r, f, c: (
            _one_block(m, q, r, f, c),
            m.idiv(m.add(m.mul(q, c), r), c),
            m.add(q, f),
        ),
        SMALL_DIVISORS,
        kind="exact",
    ),
    T(
        "(c*q + r) / c = q + r/c when c > 0, r >= 0, c*q + r >= 0, nothing wraps",
        ("q", "r", "c"),
        lambda m, q, r, c: (
            _split(m, q, r, c),
            m.idiv(m.add(m.mul(q, c), r), c),
            m.add(q, m.idiv(r, c)),
        ),
        POSITIVE_DIVISORS,
        every_divisor=True,
    ),
)
REMAINDER = (
    _exact_quotient("(c*q) % c = 0 when c*q does not wrap", "mod"),
    T(
        "(g*y + kr) % (g*d) = (y % d)*g + kr for 0 <= kr < g, g*y + kr >= 0 and fitting",
        ("y", "kr", "g", "d"),
        lambda m, y, kr, g, d: (
            _factored(m, y, kr, g, d),
            m.mod(m.add(m.mul(y, g), kr), m.mul(g, d)),
            m.add(m.mul(m.mod(y, d), g), kr),
        ),
        FACTORS,
        kind="exact",
    ),
    T(
        "(c*q + r) % c = r - c*f when r lies in [c*f, c*f + c)",
        ("q", "r", "f", "c"),
        lambda m, q, r, f, c: (
            _one_block(m, q, r, f, c),
            m.mod(m.add(m.mul(q, c), r), c),
            m.sub(r, m.mul(f, c)),
        ),
        SMALL_DIVISORS,
        kind="exact",
    ),
    T(
        "(c*q + r) % c = r % c when c > 0, r >= 0, c*q + r >= 0, nothing wraps",
        ("q", "r", "c"),
        lambda m, q, r, c: (_split(m, q, r, c), m.mod(m.add(m.mul(q, c), r), c), m.mod(r, c)),
        POSITIVE_DIVISORS,
        every_divisor=True,
    ),
)


def _ceiling(m: Model, b, top, g) -> z3.BoolRef:
    """b = ceil(top / g) for g > 0, exactly: g*(b - 1) < top <= g*b, and b fits."""
    wb, wg = m.exact(b), m.exact(g)
    return z3.And(wg * (wb - 1) < top, top <= wg * wb)


def _floor(m: Model, b, top, g) -> z3.BoolRef:
    """b = floor(top / g) for g > 0, exactly: g*b <= top < g*(b + 1)."""
    wb, wg = m.exact(b), m.exact(g)
    return z3.And(wg * wb <= top, top < wg * (wb + 1))


GCDS = tuple({"g": g} for g in (1, 2, 3, 4, 16))
QUOTIENT_DIVISORS = tuple({"d": d} for d in (1, 2, 3, 4, 16))


def _form_fits(m: Model, s, k, g):
    wide = m.exact(s) * m.exact(g) + m.exact(k)
    return _fits(m, wide), wide


def _lt_form(m, s, k, C, b, g):
    fit, _ = _form_fits(m, s, k, g)
    top = m.exact(C) - m.exact(k)
    return (z3.And(fit, _ceiling(m, b, top, g)), m.lt(m.add(m.mul(s, g), k), C), m.lt(s, b))


def _gt_form(m, s, k, C, b, g):
    fit, _ = _form_fits(m, s, k, g)
    top = m.exact(C) - m.exact(k)
    return (z3.And(fit, _floor(m, b, top, g)), m.lt(C, m.add(m.mul(s, g), k)), m.lt(b, s))


def _quotient_below(m, y, bound, d, above: bool):
    """y/d < C is y < T with T = C*d for C >= 1 and (C-1)*d + 1 for C <= 0 (T fitting);
    C < y/d is T' - 1 < y with T' that bound for C + 1."""
    wc = m.exact(bound) + (1 if above else 0)
    wd = m.exact(d)
    t = z3.If(wc >= 1, wc * wd, (wc - 1) * wd + 1)
    limit = t - 1 if above else t
    value = z3.Extract(BITS - 1, 0, limit) if isinstance(m, BitVec32) else limit
    premise = _fits(m, limit)
    if above:
        return premise, m.lt(bound, m.idiv(y, d)), m.lt(value, y)
    return premise, m.lt(m.idiv(y, d), bound), m.lt(y, value)


COMPARE = {
    "x < c, x linear": (
        T(
            "g*s + k < C is s < ceil((C - k)/g)",
            ("s", "k", "C", "b", "g"),
            _lt_form,
            GCDS,
            True,
            kind="exact",
        ),
        T(
            "y/d < C is y < C*d (C >= 1) or y < (C-1)*d + 1 (C <= 0)",
            ("y", "C", "d"),
            lambda m, y, C, d: _quotient_below(m, y, C, d, above=False),
            QUOTIENT_DIVISORS,
            True,
            kind="exact",
        ),
    ),
    "c < x, x linear": (
        T(
            "C < g*s + k is floor((C - k)/g) < s",
            ("s", "k", "C", "b", "g"),
            _gt_form,
            GCDS,
            True,
            kind="exact",
        ),
        T(
            "C < y/d is T - 1 < y, T the bound of y/d < C + 1",
            ("y", "C", "d"),
            lambda m, y, C, d: _quotient_below(m, y, C, d, above=True),
            QUOTIENT_DIVISORS,
            True,
            kind="exact",
        ),
    ),
    "x <= c": (
        T(
            "x <= C is x < C + 1 when C + 1 fits",
            ("x", "C"),
            lambda m, x, C: (
                m.lt(C, m.const(m.highest)),
                m.le(x, C),
                m.lt(x, m.add(C, m.const(1))),
            ),
        ),
    ),
    "c <= x": (
        T(
            "C <= x is C - 1 < x when C - 1 fits",
            ("x", "C"),
            lambda m, x, C: (m.lt(m.const(m.lowest), C), m.le(C, x), m.lt(m.sub(C, m.const(1)), x)),
        ),
    ),
}


def _eq_form(m, s, k, C, q, r, g):
    fit, _ = _form_fits(m, s, k, g)
    exact = m.exact(C) - m.exact(k) == m.exact(q) * m.exact(g) + m.exact(r)
    lhs = m.add(m.mul(s, g), k) == C
    # g divides C - k (r = 0): s == q; it does not (0 < r < g): never equal
    rhs = z3.If(m.exact(r) == 0, s == q, False)
    rem = m.exact(r)
    return z3.And(fit, exact, rem >= 0, rem < m.exact(g)), lhs, rhs


EQUALS = (
    T(
        "g*s + k == C is s == (C - k)/g, or false when g does not divide C - k",
        ("s", "k", "C", "q", "r", "g"),
        _eq_form,
        GCDS,
        True,
        kind="exact",
    ),
)


def _where_claim(m: Model, p, q, a, b, pick: str, tie: int, le: bool):
    """where(p < q, a, b) (or p <= q, read as q - p + 1 >= 1) is min(a, b) when, exactly,
    q - p (+1) = b - a + tie, and max(a, b) when it is a - b + tie (tie 0 or 1)."""
    f = m.exact(q) - m.exact(p) + (1 if le else 0)
    wa, wb = m.exact(a), m.exact(b)
    premise = f == (wb - wa if pick == "min" else wa - wb) + tie
    cond = m.le(p, q) if le else m.lt(p, q)
    result = m.min(a, b) if pick == "min" else m.max(a, b)
    return premise, z3.If(cond, a, b), result


def _bool_and_int(name, lhs, rhs, ones_int=-1):
    """One theorem for ints and one for bools, with `ones` all ones (-1, or true)."""
    return (
        T(
            name,
            ("x", "y"),
            lambda m, x, y: (
                True,
                lhs(m, x, y, m.const(ones_int)),
                rhs(m, x, y, m.const(ones_int)),
            ),
        ),
        T(
            name,
            ("x", "y"),
            lambda m, x, y: (True, lhs(m, x, y, m.const(True)), rhs(m, x, y, m.const(True))),
            kind="bool",
        ),
    )


def _and(m, a, b):
    return m.and_(a, b)


def _or(m, a, b):
    return m.or_(a, b)


def _xor(m, a, b):
    return m.xor(a, b)


F = "float"
B = "bool"
PROOFS: dict[str, tuple[Theorem, ...]] = {
    # identities of wrapping arithmetic: no condition
    "x + 0": (_identity("x + 0 = x", lambda m, x: m.add(x, m.const(0)), _same),),
    "f: x + -0.0": (
        _identity("x + -0.0 = x", lambda m, x: m.add(x, m.const(-0.0)), _same, kind=F),
    ),
    "x - 0": (_identity("x - 0 = x", lambda m, x: m.sub(x, m.const(0)), _same),),
    "f: x - 0.0": (_identity("x - 0.0 = x", lambda m, x: m.sub(x, m.const(0.0)), _same, kind=F),),
    "x * 1": (_identity("x * 1 = x", lambda m, x: m.mul(x, m.const(1)), _same),),
    "f: x * 1.0": (_identity("x * 1.0 = x", lambda m, x: m.mul(x, m.const(1.0)), _same, kind=F),),
    "x * -1": (
        _identity("x * -1 = -x", lambda m, x: m.mul(x, m.const(-1)), lambda m, x: m.neg(x), True),
    ),
    "f: x * -1.0": (
        _identity(
            "x * -1.0 = -x", lambda m, x: m.mul(x, m.const(-1.0)), lambda m, x: m.neg(x), kind=F
        ),
    ),
    "x * 0": (_identity("x * 0 = 0", lambda m, x: m.mul(x, m.const(0)), _zero),),
    "x - x": (_identity("x - x = 0", lambda m, x: m.sub(x, x), _zero),),
    "-(-x)": (
        _identity("-(-x) = x", lambda m, x: m.neg(m.neg(x)), _same),
        _identity("-(-x) = x", lambda m, x: m.neg(m.neg(x)), _same, kind=F),
    ),
    "f: x / 1.0": (_identity("x / 1.0 = x", lambda m, x: m.fdiv(x, m.const(1.0)), _same, kind=F),),
    "x / 1": (_identity("x / 1 = x", lambda m, x: m.idiv(x, m.const(1)), _same),),
    "x / -1": (
        _identity("x / -1 = -x", lambda m, x: m.idiv(x, m.const(-1)), lambda m, x: m.neg(x), True),
    ),
    "x / 0": (
        _identity(
            "x / 0 = -1 (all ones)", lambda m, x: m.idiv(x, m.const(0)), lambda m, x: m.const(-1)
        ),
    ),
    "x % 1": (_identity("x % 1 = 0", lambda m, x: m.mod(x, m.const(1)), _zero),),
    "x % -1": (_identity("x % -1 = 0", lambda m, x: m.mod(x, m.const(-1)), _zero, True),),
    "x % 0": (_identity("x % 0 = x", lambda m, x: m.mod(x, m.const(0)), _same),),
    "max(x, x)": (
        _identity("max(x, x) = x", lambda m, x: m.max(x, x), _same),
        _identity("max(x, x) = x", lambda m, x: m.max(x, x), _same, kind=F),
    ),
    "min(x, x)": (
        _identity("min(x, x) = x", lambda m, x: m.min(x, x), _same),
        _identity("min(x, x) = x", lambda m, x: m.min(x, x), _same, kind=F),
    ),
    "x & x": (
        _identity("x & x = x", lambda m, x: m.and_(x, x), _same),
        _identity("x & x = x", lambda m, x: m.and_(x, x), _same, kind=B),
    ),
    "x | x": (
        _identity("x | x = x", lambda m, x: m.or_(x, x), _same),
        _identity("x | x = x", lambda m, x: m.or_(x, x), _same, kind=B),
    ),
    "x ^ x": (
        _identity("x ^ x = 0", lambda m, x: m.xor(x, x), _zero),
        _identity("x ^ x = false", lambda m, x: m.xor(x, x), lambda m, x: m.const(False), kind=B),
    ),
    "x & 0": (_identity("x & 0 = 0", lambda m, x: m.and_(x, m.const(0)), _zero),),
    "x & -1": (_identity("x & -1 = x", lambda m, x: m.and_(x, m.const(-1)), _same, True),),
    "x | 0": (_identity("x | 0 = x", lambda m, x: m.or_(x, m.const(0)), _same),),
    "x | -1": (
        _identity(
            "x | -1 = -1", lambda m, x: m.or_(x, m.const(-1)), lambda m, x: m.const(-1), True
        ),
    ),
    "x ^ 0": (_identity("x ^ 0 = x", lambda m, x: m.xor(x, m.const(0)), _same),),
    "b: x & true": (_identity("x & true = x", lambda m, x: m.and_(x, True), _same, kind=B),),
    "b: x & false": (
        _identity("x & false = false", lambda m, x: m.and_(x, False), lambda m, x: False, kind=B),
    ),
    "b: x | false": (_identity("x | false = x", lambda m, x: m.or_(x, False), _same, kind=B),),
    "b: x | true": (
        _identity("x | true = true", lambda m, x: m.or_(x, True), lambda m, x: True, kind=B),
    ),
    "b: x ^ false": (_identity("x ^ false = x", lambda m, x: m.xor(x, False), _same, kind=B),),
    "x << c, c % 32 = 0": (
        T(
            "x << c = x when c & 31 = 0",
            ("x", "c"),
            lambda m, x, c: ((c & 31) == 0, m.shl(x, c), x),
        ),
    ),
    "x >> c, c % 32 = 0": (
        T(
            "x >> c = x when c & 31 = 0",
            ("x", "c"),
            lambda m, x, c: ((c & 31) == 0, m.shr(x, c), x),
        ),
    ),
    "x < x": (
        _identity("x < x is false", lambda m, x: m.lt(x, x), lambda m, x: False),
        _identity("x < x is false", lambda m, x: m.lt(x, x), lambda m, x: False, kind=F),
    ),
    "x == x": (
        _identity("x == x is true", lambda m, x: x == x, lambda m, x: True),
        _identity("x == x is true", lambda m, x: x == x, lambda m, x: True, kind=B),
    ),
    "x != x": (
        _identity("x != x is false", lambda m, x: x != x, lambda m, x: False),
        _identity("x != x is false", lambda m, x: x != x, lambda m, x: False, kind=B),
    ),
    "x <= x": (_identity("x <= x is true", lambda m, x: m.le(x, x), lambda m, x: True),),
    "where(true, a, b)": (
        T("where(true, a, b) = a", ("a", "b"), lambda m, a, b: (True, z3.If(True, a, b), a)),
        T(
            "where(true, a, b) = a",
            ("a", "b"),
            lambda m, a, b: (True, z3.If(True, a, b), a),
            kind=F,
        ),
    ),
    "where(false, a, b)": (
        T("where(false, a, b) = b", ("a", "b"), lambda m, a, b: (True, z3.If(False, a, b), b)),
        T(
            "where(false, a, b) = b",
            ("a", "b"),
            lambda m, a, b: (True, z3.If(False, a, b), b),
            kind=F,
        ),
    ),
    "where(c, a, a)": (
        T("where(c, a, a) = a", ("a", "b"), lambda m, a, b: (True, z3.If(m.lt(a, b), a, a), a)),
        T(
            "where(c, a, a) = a",
            ("a", "b"),
            lambda m, a, b: (True, z3.If(m.lt(a, b), a, a), a),
            kind=F,
        ),
    ),
    "where(c, true, false)": (
        _identity("where(c, true, false) = c", lambda m, x: z3.If(x, True, False), _same, kind=B),
    ),
    "cast to its own type": (
        _identity(
            "an int cast widens exactly and wraps: to its own width, that is x",
            lambda m, x: z3.Extract(BITS - 1, 0, m.exact(x)),
            _same,
        ),
    ),
    # MAX, MIN, WHERE, bitwise and bool identities
    "max(max(x, c1), c2)": (
        T(
            "max(max(x, a), b) = max(x, max(a, b))",
            ("x", "a", "b"),
            lambda m, x, a, b: (True, m.max(m.max(x, a), b), m.max(x, m.max(a, b))),
        ),
    ),
    "min(min(x, c1), c2)": (
        T(
            "min(min(x, a), b) = min(x, min(a, b))",
            ("x", "a", "b"),
            lambda m, x, a, b: (True, m.min(m.min(x, a), b), m.min(x, m.min(a, b))),
        ),
    ),
    "where(p < q, a, b) to max/min": tuple(
        T(
            f"where(p {'<=' if le else '<'} q, a, b) = {pick}(a, b) when q - p"
            f"{' + 1' if le else ''} = {'b - a' if pick == 'min' else 'a - b'} + {tie}",
            ("p", "q", "a", "b"),
            lambda m, p, q, a, b, pick=pick, tie=tie, le=le: _where_claim(
                m, p, q, a, b, pick, tie, le
            ),
            signed_only=True,
        )
        for pick in ("min", "max")
        for tie in (0, 1)
        for le in (False, True)
    ),
    **{
        f"(x {name} c1) {name} c2": tuple(
            T(
                f"(x {name} a) {name} b = x {name} (a {name} b)",
                ("x", "a", "b"),
                lambda m, x, a, b, f=f: (True, f(m, f(m, x, a), b), f(m, x, f(m, a, b))),
                kind=kind,
            )
            for kind in ("int", B)
        )
        for name, f in (("&", _and), ("|", _or), ("^", _xor))
    },
    "x & ~x": (
        *_bool_and_int(
            "x & (x ^ ones) = 0",
            lambda m, x, y, o: m.and_(x, m.xor(x, o)),
            lambda m, x, y, o: m.xor(o, o),
        ),
        T(
            "p1 < q1 and p2 < q2 with q2 - p2 = 1 - (q1 - p1) exactly: never both",
            ("p1", "q1", "p2", "q2"),
            lambda m, p1, q1, p2, q2: (
                _opposite_forms(m, p1, q1, p2, q2),
                z3.And(m.lt(p1, q1), m.lt(p2, q2)),
                False,
            ),
            signed_only=True,
        ),
        T(
            "(a < b) & (b <= a), (a <= b) & (b < a), (a == b) & (a != b) are false",
            ("a", "b"),
            lambda m, a, b: (True, z3.Or(*(z3.And(p, q) for p, q in _opposites(m, a, b))), False),
        ),
    ),
    "x | ~x": (
        *_bool_and_int(
            "x | (x ^ ones) = ones",
            lambda m, x, y, o: m.or_(x, m.xor(x, o)),
            lambda m, x, y, o: o,
        ),
        T(
            "p1 < q1 or p2 < q2 with q2 - p2 = 1 - (q1 - p1) exactly: always one",
            ("p1", "q1", "p2", "q2"),
            lambda m, p1, q1, p2, q2: (
                _opposite_forms(m, p1, q1, p2, q2),
                z3.Or(m.lt(p1, q1), m.lt(p2, q2)),
                True,
            ),
            signed_only=True,
        ),
        T(
            "(a < b) | (b <= a), (a <= b) | (b < a), (a == b) | (a != b) are true",
            ("a", "b"),
            lambda m, a, b: (True, z3.And(*(z3.Or(p, q) for p, q in _opposites(m, a, b))), True),
        ),
    ),
    "x & (x | y)": _bool_and_int(
        "x & (x | y) = x", lambda m, x, y, o: m.and_(x, m.or_(x, y)), lambda m, x, y, o: x
    ),
    "x | (x & y)": _bool_and_int(
        "x | (x & y) = x", lambda m, x, y, o: m.or_(x, m.and_(x, y)), lambda m, x, y, o: x
    ),
    "b: x == true": (_identity("(x == true) = x", lambda m, x: x == m.const(True), _same, kind=B),),
    "b: x != false": (
        _identity("(x != false) = x", lambda m, x: x != m.const(False), _same, kind=B),
    ),
    "b: x == false": (
        _identity(
            "(x == false) = x ^ true",
            lambda m, x: x == m.const(False),
            lambda m, x: m.xor(x, True),
            kind=B,
        ),
    ),
    "b: x != true": (
        _identity(
            "(x != true) = x ^ true",
            lambda m, x: x != m.const(True),
            lambda m, x: m.xor(x, True),
            kind=B,
        ),
    ),
    "b: not of a comparison": (
        T(
            "(a < b) ^ true = b <= a",
            ("a", "b"),
            lambda m, a, b: (True, z3.Not(m.lt(a, b)), m.le(b, a)),
        ),
        T(
            "(a <= b) ^ true = b < a",
            ("a", "b"),
            lambda m, a, b: (True, z3.Not(m.le(a, b)), m.lt(b, a)),
        ),
        T("(a == b) ^ true = a != b", ("a", "b"), lambda m, a, b: (True, z3.Not(a == b), a != b)),
        T("(a != b) ^ true = a == b", ("a", "b"), lambda m, a, b: (True, z3.Not(a != b), a == b)),
        T(
            "f: (a == b) ^ true = a != b (true with a NaN)",
            ("a", "b"),
            lambda m, a, b: (True, z3.Xor(z3.fpEQ(a, b), True), _fne(a, b)),
            kind=F,
        ),
        T(
            "f: (a != b) ^ true = a == b",
            ("a", "b"),
            lambda m, a, b: (True, z3.Xor(_fne(a, b), True), z3.fpEQ(a, b)),
            kind=F,
        ),
    ),
    "where(not c, a, b)": (
        T(
            "where(c ^ true, a, b) = where(c, b, a)",
            ("a", "b"),
            lambda m, a, b: (True, z3.If(z3.Xor(m.lt(a, b), True), a, b), z3.If(m.lt(a, b), b, a)),
        ),
    ),
    "where(c, false, true)": (
        _identity(
            "where(c, false, true) = c ^ true",
            lambda m, x: z3.If(x, False, True),
            lambda m, x: m.xor(x, True),
            kind=B,
        ),
    ),
    "b: where(c, x, false)": (
        T(
            "where(c, x, false) = c & x",
            ("x", "y"),
            lambda m, x, y: (True, z3.If(y, x, False), m.and_(y, x)),
            kind=B,
        ),
    ),
    "b: where(c, true, x)": (
        T(
            "where(c, true, x) = c | x",
            ("x", "y"),
            lambda m, x, y: (True, z3.If(y, True, x), m.or_(y, x)),
            kind=B,
        ),
    ),
    # decided by bounds: the premise is what sound bounds guarantee for every value
    "constant by bounds": (
        T(
            "lo <= x <= lo gives x = lo",
            ("x", "lo"),
            lambda m, x, lo: (z3.And(m.le(lo, x), m.le(x, lo)), x, lo),
        ),
    ),
    "max(x, y), x >= y": (
        T("max(x, y) = x when x >= y", ("x", "y"), lambda m, x, y: (m.le(y, x), m.max(x, y), x)),
    ),
    "min(x, y), x <= y": (
        T("min(x, y) = x when x <= y", ("x", "y"), lambda m, x, y: (m.le(x, y), m.min(x, y), x)),
    ),
    "x % c, |x| < |c|": (
        T(
            "x % c = x when |x| < |c|",
            ("x", "c"),
            lambda m, x, c: (_below(m, x, c), m.mod(x, c), x),
            DIVISORS,
            every_divisor=True,
        ),
    ),
    "x / c, |x| < |c|": (
        T(
            "x / c = 0 when |x| < |c|",
            ("x", "c"),
            lambda m, x, c: (_below(m, x, c), m.idiv(x, c), m.const(0)),
            DIVISORS,
            every_divisor=True,
        ),
    ),
    # division and remainder of a linear form: the form is x (CONGRUENT), then these
    "x / c, x linear": (CONGRUENT, *DIVIDE),
    "x % c, x linear": (CONGRUENT, *REMAINDER),
    "x % c, c < 0": (
        T(
            "x % c = x % -c for c < 0, c != MIN",
            ("x", "c"),
            lambda m, x, c: (
                z3.And(m.lt(c, m.const(0)), c != m.const(MIN)),
                m.mod(x, c),
                m.mod(x, m.neg(c)),
            ),
            NEGATIVE_DIVISORS,
            True,
            kind="exact",
        ),
    ),
    "(x / c1) / c2": (RECOMBINE[3],),
    "(y/a + k) / b": (
        T(
            "(y/a + k)/b = (y + k*a)/(a*b) for a, b > 0, y >= 0, y + k*a >= 0, fitting",
            ("y", "k", "a", "b"),
            lambda m, y, k, a, b: (
                z3.And(
                    m.le(m.const(0), y),
                    m.exact(y) + m.exact(k) * m.exact(a) >= 0,
                    _fits(m, m.exact(y) + m.exact(k) * m.exact(a)),
                    _fits(m, m.exact(k) * m.exact(a)),
                    m.mul_fits(a, b),
                ),
                m.idiv(m.add(m.idiv(y, a), k), b),
                m.idiv(m.add(y, m.mul(k, a)), m.mul(a, b)),
            ),
            tuple({"a": a, "b": b} for a, b in ((2, 2), (4, 3), (3, 16))),
            kind="exact",
        ),
    ),
    "(x % c1) % c2": (
        T(
            "(x % a) % b = x % b when a, b > 0 and b divides a",
            ("x", "a", "b", "q"),
            lambda m, x, a, b, q: (
                z3.And(_positive(m, a), _positive(m, b), m.mul_fits(b, q), a == m.mul(b, q)),
                m.mod(m.mod(x, a), b),
                m.mod(x, b),
            ),
            tuple({"a": a, "b": b} for a, b in ((4, 2), (12, 4), (16, 4), (MAX, 1))),
            every_divisor=True,
        ),
    ),
    **COMPARE,
    "x == c, x linear": (CONGRUENT, *EQUALS),
    "x != c, x linear": (CONGRUENT, *EQUALS),  # x != C is NOT (x == C): the same facts decide it
    "sum of products": (CONGRUENT, *RING, *RECOMBINE),
    "commutative operand order": (
        T(
            "a op b = b op a for + * max min & | ^ == !=",
            ("a", "b"),
            lambda m, a, b: (
                True,
                z3.And(
                    m.add(a, b) == m.add(b, a),
                    m.mul(a, b) == m.mul(b, a),
                    m.max(a, b) == m.max(b, a),
                    m.min(a, b) == m.min(b, a),
                    m.and_(a, b) == m.and_(b, a),
                    m.or_(a, b) == m.or_(b, a),
                    m.xor(a, b) == m.xor(b, a),
                    (a == b) == (b == a),
                ),
                True,
            ),
        ),
        T(
            "f: a op b = b op a for + * max min",
            ("a", "b"),
            lambda m, a, b: (
                True,
                z3.And(*(_nan_or_same(m, f(a, b), f(b, a)) for f in (m.add, m.mul, m.max, m.min))),
                True,
            ),
            kind=F,
        ),
        T(
            "b: a op b = b op a for & | ^ == !=",
            ("a", "b"),
            lambda m, a, b: (
                True,
                z3.And(
                    m.and_(a, b) == m.and_(b, a),
                    m.or_(a, b) == m.or_(b, a),
                    m.xor(a, b) == m.xor(b, a),
                    (a == b) == (b == a),
                    (a != b) == (b != a),
                ),
                True,
            ),
            kind=B,
        ),
    ),
}


def _opposite_forms(m: Model, p1, q1, p2, q2) -> z3.BoolRef:
    """q2 - p2 = 1 - (q1 - p1) in exact arithmetic (p1 <= q1 is q1 - p1 + 1 >= 1, the same)."""
    w = m.exact
    return w(q2) - w(p2) == 1 - (w(q1) - w(p1))


def _opposites(m: Model, a, b) -> list[tuple]:
    """The pairs of int comparisons _negation treats as each other's NOT."""
    return [(m.lt(a, b), m.le(b, a)), (m.le(a, b), m.lt(b, a)), (a == b, a != b), (a == b, b != a)]


def _fne(a, b) -> z3.BoolRef:
    """CMPNE of floats: true when either is a NaN (uir.md section 4)."""
    return z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b), z3.Not(z3.fpEQ(a, b)))


def _nan_or_same(m: Float32, a, b) -> z3.BoolRef:
    return z3.Not(m.differ(a, b))


def missing_theorems(rule_names, proofs) -> list[str]:
    """The names of rules with no theorem."""
    return sorted(name for name in rule_names if not proofs.get(name))


def test_every_simplify_rule_has_a_theorem():
    # Constant folding is the one exception: it computes with the interpreter's own semantics
    # table, which defines what every op means, so there is nothing to prove it against.
    from uir.rewrite.fold import fold_rules
    from uir.rewrite.simplify import NAMED_RULES, simplify_rules

    named = {id(rule) for rule in NAMED_RULES.values()} | {id(rule) for rule in fold_rules.rules}
    unnamed = [
        pattern for pattern, rewrite in simplify_rules.rules if id((pattern, rewrite)) not in named
    ]
    assert all(id(rule) in named for rule in simplify_rules.rules), unnamed
    assert missing_theorems(NAMED_RULES, PROOFS) == []
    assert sorted(set(PROOFS) - set(NAMED_RULES)) == []  # no theorem for a rule that is gone


def test_a_rule_without_a_theorem_is_caught():
    assert missing_theorems(["x + 0", "a new rule"], PROOFS) == ["a new rule"]


def _cases(every_divisor: bool = False) -> list:
    """(model, theorem) pairs: each theorem in the models of its kind, or, with every_divisor,
    the theorems marked so in exact integers with their divisors left symbolic."""
    models: dict[str, list] = {
        "int": [BitVec32(True), BitVec32(False)],
        "exact": [Exact(True), Exact(False)],
        "float": [Float32()],
        "bool": [Bool()],
    }
    cases = []
    for rule, theorems in PROOFS.items():
        for t in theorems:
            if every_divisor and not t.every_divisor:
                continue
            for m in models["exact"] if every_divisor else models[t.kind]:
                if m.signed or not t.signed_only:
                    cases.append(pytest.param(m, t, id=f"{m.name}: {rule}: {t.name}"))
    return cases


@pytest.mark.parametrize(("model", "theorem"), _cases())
def test_rule_holds(model, theorem):
    for fixed in theorem.divisors or ({},):
        if model.signed or min(fixed.values(), default=0) >= 0:
            assert counterexample(model, theorem, fixed) is None, fixed


@pytest.mark.parametrize(("model", "theorem"), _cases(every_divisor=True))
def test_division_rule_holds_for_every_divisor(model, theorem):
    assert counterexample(model, theorem) is None


def test_the_conditions_are_needed():
    # Dropping a rule's condition must give a counterexample: the prover can say no.
    no_wrap_check = T(
        "(c*t)/c = t", ("t", "c"), lambda m, t, c: (c != 0, m.idiv(m.mul(t, c), c), t)
    )
    found = counterexample(BitVec32(), no_wrap_check, {"c": 3})
    assert found is not None  # e.g. t = 2**30: 3*t wraps
    negative_y = T(
        "(c*t + y)/c = t + y/c without y >= 0",
        ("t", "y", "c"),
        lambda m, t, y, c: (
            z3.And(m.mul_fits(t, c), m.add_fits(m.mul(t, c), y), m.add(m.mul(t, c), y) >= 0),
            m.idiv(m.add(m.mul(t, c), y), c),
            m.add(t, m.idiv(y, c)),
        ),
    )
    assert counterexample(BitVec32(), negative_y, {"c": 4}) is not None  # t=1, y=-1: 0 vs 1


# --- the code does what the theorems say: each rule on an instance over PARAMs ------------------

p0, p1, p2 = (UOp(Op.PARAM, I32, (), slot) for slot in range(3))


def const(value: int) -> UOp:
    return UOp(Op.CONST, I32, (), value)


def op(name: Op, *src: UOp) -> UOp:
    return src[0].alu(name, *src[1:])


def bounded(x: UOp, top: int) -> UOp:
    """x AND top: a value the bounds know lies in [0, top]."""
    return op(Op.AND, x, const(top))


i, j, k = bounded(p0, 1000), bounded(p1, 3), bounded(p2, 3)
_true = UOp(Op.CONST, op(Op.CMPLT, p0, p1).type, (), True)
_false = UOp(Op.CONST, op(Op.CMPLT, p0, p1).type, (), False)
_both = op(Op.AND, op(Op.CMPLT, p0, p1), op(Op.CMPLT, p1, p2))  # a bool no rule rewrites
x_in_0_7, y_in_0_7 = bounded(p0, 7), bounded(p1, 7)
x_in_10_17 = op(Op.ADD, x_in_0_7, const(10))
x_in_minus7_0 = op(Op.ADD, x_in_0_7, const(-7))

# (name, before, what it must become: worked out by hand)
INSTANCES = [
    ("x + 0", op(Op.ADD, p0, const(0)), p0),
    ("0 + x", op(Op.ADD, const(0), p0), p0),
    ("x - 0", op(Op.SUB, p0, const(0)), p0),
    ("x * 1", op(Op.MUL, p0, const(1)), p0),
    ("x * -1", op(Op.MUL, p0, const(-1)), op(Op.NEG, p0)),
    ("x * 0", op(Op.MUL, p0, const(0)), const(0)),
    ("x - x", op(Op.SUB, p0, p0), const(0)),
    ("-(-x)", op(Op.NEG, op(Op.NEG, p0)), p0),
    ("x / 1", op(Op.IDIV, p0, const(1)), p0),
    ("x / -1", op(Op.IDIV, p0, const(-1)), op(Op.NEG, p0)),
    ("x % 1", op(Op.MOD, p0, const(1)), const(0)),
    ("x % -1", op(Op.MOD, p0, const(-1)), const(0)),
    ("max(x, x)", op(Op.MAX, p0, p0), p0),
    ("min(x, x)", op(Op.MIN, p0, p0), p0),
    ("x & x", op(Op.AND, p0, p0), p0),
    ("x | x", op(Op.OR, p0, p0), p0),
    ("x ^ x", op(Op.XOR, p0, p0), const(0)),
    ("x & 0", op(Op.AND, p0, const(0)), const(0)),
    ("x & -1", op(Op.AND, p0, const(-1)), p0),
    ("x | 0", op(Op.OR, p0, const(0)), p0),
    ("x | -1", op(Op.OR, p0, const(-1)), const(-1)),
    ("x ^ 0", op(Op.XOR, p0, const(0)), p0),
    ("x << 32", op(Op.SHL, p0, const(32)), p0),
    ("x >> 0", op(Op.SHR, p0, const(0)), p0),
    ("(x + 3) + 4", op(Op.ADD, op(Op.ADD, p0, const(3)), const(4)), op(Op.ADD, p0, const(7))),
    ("(x * 3) * 4", op(Op.MUL, op(Op.MUL, p0, const(3)), const(4)), op(Op.MUL, p0, const(12))),
    ("(x - 5) + 2", op(Op.ADD, op(Op.SUB, p0, const(5)), const(2)), op(Op.SUB, p0, const(3))),
    (
        "(x + 1) * 4",
        op(Op.MUL, op(Op.ADD, i, const(1)), const(4)),
        op(Op.ADD, op(Op.MUL, i, const(4)), const(4)),
    ),
    ("x + x", op(Op.ADD, p0, p0), op(Op.MUL, p0, const(2))),
    (
        "x*3 + x*4",
        op(Op.ADD, op(Op.MUL, p0, const(3)), op(Op.MUL, p0, const(4))),
        op(Op.MUL, p0, const(7)),
    ),
    ("x*3 + x", op(Op.ADD, op(Op.MUL, p0, const(3)), p0), op(Op.MUL, p0, const(4))),
    ("max(x, y), x >= y", op(Op.MAX, x_in_10_17, y_in_0_7), x_in_10_17),
    ("max(y, x), x >= y", op(Op.MAX, y_in_0_7, x_in_10_17), x_in_10_17),
    ("min(x, y), x >= y", op(Op.MIN, x_in_10_17, y_in_0_7), y_in_0_7),
    ("x % 8, 0 <= x <= 7", op(Op.MOD, x_in_0_7, const(8)), x_in_0_7),
    ("x / 8, 0 <= x <= 7", op(Op.IDIV, x_in_0_7, const(8)), const(0)),
    ("x % 8, -7 <= x <= 0", op(Op.MOD, x_in_minus7_0, const(8)), x_in_minus7_0),
    ("x % -8, -7 <= x <= 0", op(Op.MOD, x_in_minus7_0, const(-8)), x_in_minus7_0),
    ("x / -8, -7 <= x <= 0", op(Op.IDIV, x_in_minus7_0, const(-8)), const(0)),
    ("(i*4 + j) / 4", op(Op.IDIV, op(Op.ADD, op(Op.MUL, i, const(4)), j), const(4)), i),
    ("(i*4 + j) % 4", op(Op.MOD, op(Op.ADD, op(Op.MUL, i, const(4)), j), const(4)), j),
    ("(j + i*4) / 4", op(Op.IDIV, op(Op.ADD, j, op(Op.MUL, i, const(4))), const(4)), i),
    ("(i*8) / 4", op(Op.IDIV, op(Op.MUL, i, const(8)), const(4)), op(Op.MUL, i, const(2))),
    ("(i*8) % 4", op(Op.MOD, op(Op.MUL, i, const(8)), const(4)), const(0)),
    ("(i*8) / -4", op(Op.IDIV, op(Op.MUL, i, const(8)), const(-4)), op(Op.MUL, i, const(-2))),
    (
        "(i*12 + j*4 + k) / 4",
        op(
            Op.IDIV,
            op(Op.ADD, op(Op.ADD, op(Op.MUL, i, const(12)), op(Op.MUL, j, const(4))), k),
            const(4),
        ),
        op(Op.ADD, op(Op.MUL, i, const(3)), j),
    ),
    (
        "(i*12 + j*4 + k) % 4",
        op(
            Op.MOD,
            op(Op.ADD, op(Op.ADD, op(Op.MUL, i, const(12)), op(Op.MUL, j, const(4))), k),
            const(4),
        ),
        k,
    ),
    ("(x / 4) / 8", op(Op.IDIV, op(Op.IDIV, p0, const(4)), const(8)), op(Op.IDIV, p0, const(32))),
    ("(x % 12) % 4", op(Op.MOD, op(Op.MOD, p0, const(12)), const(4)), op(Op.MOD, p0, const(4))),
    ("x < x", op(Op.CMPLT, p0, p0), UOp(Op.CONST, op(Op.CMPLT, p0, p0).type, (), False)),
    ("x <= x", op(Op.CMPLE, p0, p0), UOp(Op.CONST, op(Op.CMPLE, p0, p0).type, (), True)),
    ("x == x", op(Op.CMPEQ, p0, p0), UOp(Op.CONST, op(Op.CMPEQ, p0, p0).type, (), True)),
    ("x != x", op(Op.CMPNE, p0, p0), UOp(Op.CONST, op(Op.CMPNE, p0, p0).type, (), False)),
    (
        "x < 8, 0 <= x <= 7",
        op(Op.CMPLT, x_in_0_7, const(8)),
        UOp(Op.CONST, op(Op.CMPLT, p0, p0).type, (), True),
    ),
    (
        "8 <= x, 0 <= x <= 7",
        op(Op.CMPLE, const(8), x_in_0_7),
        UOp(Op.CONST, op(Op.CMPLT, p0, p0).type, (), False),
    ),
    # like terms meet wherever they sit in a chain (issue 17, family 5)
    (
        "((x*-4) + 1) + x*4",
        op(Op.ADD, op(Op.ADD, op(Op.MUL, p0, const(-4)), const(1)), op(Op.MUL, p0, const(4))),
        const(1),
    ),
    ("x + (-x)", op(Op.ADD, p0, op(Op.NEG, p0)), const(0)),
    (
        "(x*3 + y) + x",
        op(Op.ADD, op(Op.ADD, op(Op.MUL, p0, const(3)), p1), p0),
        op(Op.ADD, op(Op.MUL, p0, const(4)), p1),
    ),
    # quotient and remainder recombine (family 1), for every x: the total semantics keep it
    (
        "(x/4)*4 + x%4",
        op(Op.ADD, op(Op.MUL, op(Op.IDIV, p0, const(4)), const(4)), op(Op.MOD, p0, const(4))),
        p0,
    ),
    (
        "x - (x/4)*4",
        op(Op.SUB, p0, op(Op.MUL, op(Op.IDIV, p0, const(4)), const(4))),
        op(Op.MOD, p0, const(4)),
    ),
    (
        "((x/4)%3)*4 + x%4",
        op(
            Op.ADD,
            op(Op.MUL, op(Op.MOD, op(Op.IDIV, p0, const(4)), const(3)), const(4)),
            op(Op.MOD, p0, const(4)),
        ),
        op(Op.MOD, p0, const(12)),
    ),
    # division by a constant that does not divide every coefficient (family 2), 0 <= i <= 1000
    ("(i*4) / 8", op(Op.IDIV, op(Op.MUL, i, const(4)), const(8)), op(Op.IDIV, i, const(2))),
    (
        "(i*4 + 3) / 16",
        op(Op.IDIV, op(Op.ADD, op(Op.MUL, i, const(4)), const(3)), const(16)),
        op(Op.IDIV, i, const(4)),
    ),
    (
        "((i/2) + 1) / 2",
        op(Op.IDIV, op(Op.ADD, op(Op.IDIV, i, const(2)), const(1)), const(2)),
        op(Op.IDIV, op(Op.ADD, i, const(2)), const(4)),
    ),
    (
        "(i*4 + 3) % 16",
        op(Op.MOD, op(Op.ADD, op(Op.MUL, i, const(4)), const(3)), const(16)),
        op(Op.ADD, op(Op.MUL, op(Op.MOD, i, const(4)), const(4)), const(3)),
    ),
    (
        "(i*6 + j) / 3",
        op(Op.IDIV, op(Op.ADD, op(Op.MUL, i, const(6)), j), const(3)),
        op(Op.ADD, op(Op.MUL, i, const(2)), op(Op.IDIV, j, const(3))),
    ),
    ("x % -8", op(Op.MOD, p0, const(-8)), op(Op.MOD, p0, const(8))),
    # comparisons with a constant (family 3)
    ("i*4 < 13", op(Op.CMPLT, op(Op.MUL, i, const(4)), const(13)), op(Op.CMPLT, i, const(4))),
    ("i + 2 < 3", op(Op.CMPLT, op(Op.ADD, i, const(2)), const(3)), op(Op.CMPLT, i, const(1))),
    ("i/4 < 3", op(Op.CMPLT, op(Op.IDIV, i, const(4)), const(3)), op(Op.CMPLT, i, const(12))),
    ("2 < i/4", op(Op.CMPLT, const(2), op(Op.IDIV, i, const(4))), op(Op.CMPLT, const(11), i)),
    ("i <= 5", op(Op.CMPLE, i, const(5)), op(Op.CMPLT, i, const(6))),
    (
        "i*4 == 13",
        op(Op.CMPEQ, op(Op.MUL, i, const(4)), const(13)),
        UOp(Op.CONST, op(Op.CMPLT, p0, p0).type, (), False),
    ),
    (
        "i*4 + 4 == 12",
        op(Op.CMPEQ, op(Op.ADD, op(Op.MUL, i, const(4)), const(4)), const(12)),
        op(Op.CMPEQ, i, const(2)),
    ),
    # bounds of a division by a bounded variable decide it (family 4): [0, 3] / [4, 7] is 0
    ("i/(j + 4), i <= 3", op(Op.IDIV, j, op(Op.ADD, k, const(4))), const(0)),
    # MAX/MIN, WHERE, XOR and bool identities (family 6)
    (
        "max(max(x, 10), 11)",
        op(Op.MAX, op(Op.MAX, p0, const(10)), const(11)),
        op(Op.MAX, p0, const(11)),
    ),
    (
        "min(min(x, 10), 11)",
        op(Op.MIN, op(Op.MIN, p0, const(10)), const(11)),
        op(Op.MIN, p0, const(10)),
    ),
    (
        "where(x < 0, 0, x)",
        UOp(Op.WHERE, I32, (op(Op.CMPLT, p0, const(0)), const(0), p0)),
        op(Op.MAX, p0, const(0)),
    ),
    ("where(x < y, x, y)", UOp(Op.WHERE, I32, (op(Op.CMPLT, p0, p1), p0, p1)), op(Op.MIN, p0, p1)),
    ("(x ^ 5) ^ 5", op(Op.XOR, op(Op.XOR, p0, const(5)), const(5)), p0),
    ("x & ~x", op(Op.AND, p0, op(Op.XOR, p0, const(-1))), const(0)),
    ("c & !c", op(Op.AND, op(Op.CMPLT, p0, p1), op(Op.XOR, op(Op.CMPLT, p0, p1), _true)), _false),
    ("!(x < y)", op(Op.XOR, op(Op.CMPLT, p0, p1), _true), op(Op.CMPLE, p1, p0)),
    (
        "where(!c, a, b)",
        UOp(Op.WHERE, I32, (op(Op.XOR, _both, _true), p2, p0)),
        UOp(Op.WHERE, I32, (_both, p0, p2)),
    ),
    ("where(x < x, a, b)", UOp(Op.WHERE, I32, (op(Op.CMPLT, p0, p0), p1, p2)), p2),
    ("where(c, a, a)", UOp(Op.WHERE, I32, (op(Op.CMPLT, p0, p2), p1, p1)), p1),
]


@pytest.mark.parametrize(
    ("before", "after"), [(b, a) for _, b, a in INSTANCES], ids=[name for name, _, _ in INSTANCES]
)
def test_rule_instance(before, after):
    result = simplify(before)
    # the hand-written result, in canonical operand order (the only thing simplify may add)
    assert result is simplify(after)
    assert result is not before
    assert equivalent(before, result, slots=3)
