"""Z3 models of 32-bit integer arithmetic as uir.md section 4 defines it, for proving rules.

Two models of the same operations, each for i32 and for u32:
- `BitVec32`: 32-bit bit-vectors, wrapping like the hardware; every int rule is proven here.
- `Exact`: unbounded integers restricted to the type's range, where the wrap is an explicit
  modulo. Z3 cannot decide 32-bit division by a symbolic divisor in reasonable time, so the
  division rules are proven in bit-vectors for every dividend and a fixed set of divisors, and in
  exact integers for every divisor. The premises of those rules exclude wrapping, which is what
  makes the exact model describe the same values.

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

    def exact(self, v: z3.ArithRef) -> z3.ArithRef:
        return v

    def add_fits(self, a, b) -> z3.BoolRef:
        return self.in_range(a + b)

    def mul_fits(self, a, b) -> z3.BoolRef:
        return self.in_range(a * b)


Model = BitVec32 | Exact


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


def counterexample(model: Model, theorem: Theorem, fixed: dict[str, int] | None = None):
    """None when the theorem holds in `model`, else Z3's counterexample (or 'unknown')."""
    fixed = fixed or {}
    values = {v: model.const(fixed[v]) if v in fixed else model.var(v) for v in theorem.variables}
    premise, lhs, rhs = theorem.claim(model, **values)
    solver = z3.Solver()
    solver.set("timeout", 30_000)
    solver.add(*(model.in_range(v) for v in values.values()))
    solver.add(premise, lhs != rhs)
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
    solver.set("timeout", 30_000)
    solver.add(to_bitvec(before, params) != to_bitvec(after, params))
    return solver.check() == z3.unsat


# --- the theorems: one per int rule of uir.rewrite.simplify, with the rule's stated condition -----

T = Theorem
# Divisors for the bit-vector proofs of rules whose divisor is a constant. Z3 settles these in
# seconds; with 3 or 7 in the split rules it needs minutes (the exact-integer proofs below cover
# every divisor).
DIVISORS = tuple({"c": c} for c in (1, 2, 3, 4, 7, 16, -1, -3, -16))
POSITIVE_DIVISORS = tuple({"c": c} for c in (1, 2, 4, 16, 1 << 20))

THEOREMS = (
    # identities of wrapping arithmetic: no condition
    T("x + 0 = x", ("x",), lambda m, x: (True, m.add(x, m.const(0)), x)),
    T("x - 0 = x", ("x",), lambda m, x: (True, m.sub(x, m.const(0)), x)),
    T("x * 1 = x", ("x",), lambda m, x: (True, m.mul(x, m.const(1)), x)),
    T("x * -1 = -x", ("x",), lambda m, x: (True, m.mul(x, m.const(-1)), m.neg(x)), None, True),
    T("x * 0 = 0", ("x",), lambda m, x: (True, m.mul(x, m.const(0)), m.const(0))),
    T("x - x = 0", ("x",), lambda m, x: (True, m.sub(x, x), m.const(0))),
    T("-(-x) = x", ("x",), lambda m, x: (True, m.neg(m.neg(x)), x)),
    T("x / 1 = x", ("x",), lambda m, x: (True, m.idiv(x, m.const(1)), x)),
    T("x / -1 = -x", ("x",), lambda m, x: (True, m.idiv(x, m.const(-1)), m.neg(x)), None, True),
    T("x % 1 = 0", ("x",), lambda m, x: (True, m.mod(x, m.const(1)), m.const(0))),
    T("x % -1 = 0", ("x",), lambda m, x: (True, m.mod(x, m.const(-1)), m.const(0)), None, True),
    T("max(x, x) = x", ("x",), lambda m, x: (True, m.max(x, x), x)),
    T("min(x, x) = x", ("x",), lambda m, x: (True, m.min(x, x), x)),
    # reassociation and like terms: wrapping ints form a ring
    T(
        "(x + c1) + c2 = x + (c1 + c2)",
        ("x", "c1", "c2"),
        lambda m, x, c1, c2: (True, m.add(m.add(x, c1), c2), m.add(x, m.add(c1, c2))),
    ),
    T(
        "(x * c1) * c2 = x * (c1 * c2)",
        ("x", "c1", "c2"),
        lambda m, x, c1, c2: (True, m.mul(m.mul(x, c1), c2), m.mul(x, m.mul(c1, c2))),
    ),
    T(
        "x - c = x + (-c)",
        ("x", "c"),
        lambda m, x, c: (True, m.sub(x, c), m.add(x, m.neg(c))),
        None,
        True,  # the rule is for signed ints: for u32 it would loosen bounds (see sub_to_add)
    ),
    T(
        "(x + c1) * c2 = x*c2 + c1*c2",
        ("x", "c1", "c2"),
        lambda m, x, c1, c2: (True, m.mul(m.add(x, c1), c2), m.add(m.mul(x, c2), m.mul(c1, c2))),
    ),
    T("x + x = x * 2", ("x",), lambda m, x: (True, m.add(x, x), m.mul(x, m.const(2)))),
    T(
        "x*c1 + x*c2 = x*(c1 + c2)",
        ("x", "c1", "c2"),
        lambda m, x, c1, c2: (True, m.add(m.mul(x, c1), m.mul(x, c2)), m.mul(x, m.add(c1, c2))),
    ),
    # decided by bounds: the premise is what sound bounds guarantee for every value
    T("max(x, y) = x when x >= y", ("x", "y"), lambda m, x, y: (m.le(y, x), m.max(x, y), x)),
    T("min(x, y) = x when x <= y", ("x", "y"), lambda m, x, y: (m.le(x, y), m.min(x, y), x)),
    T(
        "x % c = x when |x| < |c|",
        ("x", "c"),
        lambda m, x, c: (_below(m, x, c), m.mod(x, c), x),
        DIVISORS,
    ),
    T(
        "x / c = 0 when |x| < |c|",
        ("x", "c"),
        lambda m, x, c: (_below(m, x, c), m.idiv(x, c), m.const(0)),
        DIVISORS,
    ),
    # exact quotients: u = c*t with no wrap (what exact_quotient establishes)
    T(
        "(c*t) / c = t when c*t does not wrap",
        ("t", "c"),
        lambda m, t, c: (z3.And(c != 0, m.mul_fits(t, c)), m.idiv(m.mul(t, c), c), t),
        DIVISORS,
    ),
    T(
        "(c*t) % c = 0 when c*t does not wrap",
        ("t", "c"),
        lambda m, t, c: (z3.And(c != 0, m.mul_fits(t, c)), m.mod(m.mul(t, c), c), m.const(0)),
        DIVISORS,
    ),
    T(
        "(c*t + y) / c = t + y/c when c > 0, y >= 0, c*t + y >= 0, nothing wraps",
        ("t", "y", "c"),
        lambda m, t, y, c: (
            _split(m, t, y, c),
            m.idiv(m.add(m.mul(t, c), y), c),
            m.add(t, m.idiv(y, c)),
        ),
        POSITIVE_DIVISORS,
    ),
    T(
        "(c*t + y) % c = y % c when c > 0, y >= 0, c*t + y >= 0, nothing wraps",
        ("t", "y", "c"),
        lambda m, t, y, c: (_split(m, t, y, c), m.mod(m.add(m.mul(t, c), y), c), m.mod(y, c)),
        POSITIVE_DIVISORS,
    ),
    T(
        "(x / a) / b = x / (a*b) when a, b > 0 and a*b fits",
        ("x", "a", "b"),
        lambda m, x, a, b: (
            z3.And(_positive(m, a), _positive(m, b), m.mul_fits(a, b)),
            m.idiv(m.idiv(x, a), b),
            m.idiv(x, m.mul(a, b)),
        ),
        tuple({"a": a, "b": b} for a, b in ((2, 2), (4, 16), (65536, 32767))),
    ),
    T(
        "(x % a) % b = x % b when a, b > 0 and b divides a",
        ("x", "a", "b", "q"),
        lambda m, x, a, b, q: (
            z3.And(_positive(m, a), _positive(m, b), m.mul_fits(b, q), a == m.mul(b, q)),  # q=a/b
            m.mod(m.mod(x, a), b),
            m.mod(x, b),
        ),
        tuple({"a": a, "b": b} for a, b in ((4, 2), (12, 4), (16, 4), (MAX, 1))),
    ),
)


BITWISE = (
    T("x & x = x", ("x",), lambda m, x: (True, m.and_(x, x), x)),
    T("x | x = x", ("x",), lambda m, x: (True, m.or_(x, x), x)),
    T("x ^ x = 0", ("x",), lambda m, x: (True, m.xor(x, x), m.const(0))),
    T("x & 0 = 0", ("x",), lambda m, x: (True, m.and_(x, m.const(0)), m.const(0))),
    T("x & -1 = x", ("x",), lambda m, x: (True, m.and_(x, m.const(-1)), x), None, True),
    T("x | 0 = x", ("x",), lambda m, x: (True, m.or_(x, m.const(0)), x)),
    T("x | -1 = -1", ("x",), lambda m, x: (True, m.or_(x, m.const(-1)), m.const(-1)), None, True),
    T("x ^ 0 = x", ("x",), lambda m, x: (True, m.xor(x, m.const(0)), x)),
    T("x << c = x when c & 31 = 0", ("x", "c"), lambda m, x, c: ((c & 31) == 0, m.shl(x, c), x)),
    T("x >> c = x when c & 31 = 0", ("x", "c"), lambda m, x, c: ((c & 31) == 0, m.shr(x, c), x)),
    T("x < x is false", ("x",), lambda m, x: (True, m.lt(x, x), False)),
    T("x <= x is true", ("x",), lambda m, x: (True, m.le(x, x), True)),
    T("x == x is true", ("x",), lambda m, x: (True, x == x, True)),
    T("x != x is false", ("x",), lambda m, x: (True, x != x, False)),
)


def _abs(v):
    return z3.If(v >= 0, v, -v)


def _below(m: Model, x, c) -> z3.BoolRef:
    """|x| < |c|, computed exactly (|MIN| does not fit an i32)."""
    wx, wc = m.exact(x), m.exact(c)
    return z3.And(-_abs(wc) < wx, wx < _abs(wc))


def _positive(m: Model, v) -> z3.BoolRef:
    return m.lt(m.const(0), v)


def _split(m: Model, t, y, c) -> z3.BoolRef:
    product, zero = m.mul(t, c), m.const(0)
    return z3.And(
        _positive(m, c),
        m.le(zero, y),
        m.mul_fits(t, c),
        m.add_fits(product, y),
        m.le(zero, m.add(product, y)),
    )


def _cases(models: list[Model], theorems: tuple[Theorem, ...]) -> list:
    return [
        pytest.param(m, t, id=f"{m.name}: {t.name}")
        for m in models
        for t in theorems
        if m.signed or not t.signed_only
    ]


@pytest.mark.parametrize(
    ("model", "theorem"), _cases([BitVec32(True), BitVec32(False)], THEOREMS + BITWISE)
)
def test_rule_holds_for_wrapping_32_bit_ints(model, theorem):
    for fixed in theorem.divisors or ({},):
        if model.signed or min(fixed.values(), default=0) >= 0:
            assert counterexample(model, theorem, fixed) is None, fixed


DIVISION = tuple(t for t in THEOREMS if t.divisors)


@pytest.mark.parametrize(("model", "theorem"), _cases([Exact(True), Exact(False)], DIVISION))
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
    ("x - 5", op(Op.SUB, p0, const(5)), op(Op.ADD, p0, const(-5))),
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
