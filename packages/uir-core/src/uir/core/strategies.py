"""Hypothesis strategies for random, well-typed, verified week-1 programs (test support only).

`programs()` draws a SINK whose graph uses every week-1 op over bool, i32 and f32: the ALU ops,
CONSTs with the edge values that break careless compilers (INT_MIN, -1, 0, NaN, -0.0, inf,
2**24, the smallest subnormal), CALLs whose bodies nest further CALLs and reuse the same PARAM
slots, STACK, and INDEX with indices the verifier can prove in range. Every program it draws passes
`uir.core.verify.verify`, so a test can run it, print it, rewrite it or compile it, and compare.

    from hypothesis import given
    from uir.core.strategies import programs

    @given(programs())
    def test_something(sink): ...

This module imports hypothesis, a dev dependency; library code never imports it.

One choice keeps differential tests exact: a float is never BITCAST to an int. uir.md section 3
leaves a NaN's sign and payload unspecified, so two correct compilers may disagree on those bits;
every other way a NaN can reach an output (printing, comparing, CAST) is fully specified.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from hypothesis import strategies as st

from .dtypes import BOOL, F32, I32, VOID, Type
from .ops import Op
from .uop import UOp

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
INT_EDGES = (I32_MIN, I32_MIN + 1, -7, -4, -1, 0, 1, 2, 3, 4, 7, 8, 31, 32, 100, 2**24 + 1, I32_MAX)
F32_EDGES = (
    math.nan,
    math.inf,
    -math.inf,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    3.0,
    16777216.0,  # 2**24: adding 1 rounds back to it
    3.4028234663852886e38,  # the largest f32
    1.401298464324817e-45,  # the smallest subnormal
    -1.1754943508222875e-38,  # the smallest normal, negated
)

SCALARS = (BOOL, I32, F32)
INT_BINARY = (Op.ADD, Op.SUB, Op.MUL, Op.IDIV, Op.MOD, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR)
INT_BINARY += (Op.SHL, Op.SHR)
FLOAT_BINARY = (Op.ADD, Op.SUB, Op.MUL, Op.FDIV, Op.MAX, Op.MIN)
BOOL_BINARY = (Op.AND, Op.OR, Op.XOR)
FLOAT_UNARY = (Op.NEG, Op.SQRT, Op.RECIP, Op.TRUNC, Op.EXP2, Op.LOG2, Op.SIN)
COMPARES = (Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE)
MAX_CALL_DEPTH = 2

Draw = Callable[[st.SearchStrategy], object]


def int_values() -> st.SearchStrategy[int]:
    """i32 values, edge values often."""
    return st.one_of(st.sampled_from(INT_EDGES), st.integers(I32_MIN, I32_MAX))


def f32_values() -> st.SearchStrategy[float]:
    """f32 values (exact in f32), edge values often."""
    return st.one_of(st.sampled_from(F32_EDGES), st.floats(width=32))


def _const(type_: Type, value: object) -> UOp:
    return UOp(Op.CONST, type_, (), value)


def _binary(op: Op, a: UOp, b: UOp) -> UOp:
    return UOp(op, BOOL if op in COMPARES else a.type, (a, b))


@dataclass
class _Builder:
    """Grows one program (or one CALL body) from a pool of the values built so far."""

    draw: Draw
    depth: int = 0
    slots: tuple[Type, ...] = ()  # the PARAM types of the body being built (none at the top)
    pool: dict[Type, list[UOp]] = field(default_factory=lambda: {t: [] for t in SCALARS})
    vectors: list[UOp] = field(default_factory=list)

    # --- values to build on ---

    def leaf(self, type_: Type) -> UOp:
        if type_ == BOOL:
            return _const(BOOL, self.draw(st.booleans()))
        if type_ == I32:
            return _const(I32, self.draw(int_values()))
        return _const(F32, self.draw(f32_values()))

    def pick(self, type_: Type) -> UOp:
        """A value of `type_` from the pool (recent ones more often), or a new constant."""
        values = self.pool[type_]
        if not values or self.draw(st.integers(0, 4)) == 0:
            return self.leaf(type_)
        back = self.draw(st.integers(0, min(len(values), 6) - 1))
        return values[-1 - back]

    def add(self, uop: UOp) -> UOp:
        (self.vectors if uop.type.shape else self.pool[uop.type]).append(uop)
        return uop

    def nonnegative(self, top: int) -> UOp:
        """An int provably in [0, top]: x AND top (bounds give [0, top] for a constant top >= 0)."""
        return _binary(Op.AND, self.pick(I32), _const(I32, top))

    # --- the kinds of step ---

    def alu(self) -> UOp:
        type_ = self.draw(st.sampled_from(SCALARS))
        kind = self.draw(st.sampled_from(("binary", "unary", "compare", "where", "cast")))
        if kind == "unary" and type_ != BOOL:
            op = Op.NEG if type_ == I32 else self.draw(st.sampled_from(FLOAT_UNARY))
            return UOp(op, type_, (self.pick(type_),))
        if kind == "compare":
            ops = COMPARES if type_ != BOOL else (Op.CMPEQ, Op.CMPNE)
            return _binary(self.draw(st.sampled_from(ops)), self.pick(type_), self.pick(type_))
        if kind == "where":
            return UOp(Op.WHERE, type_, (self.pick(BOOL), self.pick(type_), self.pick(type_)))
        if kind == "cast":
            source = self.draw(st.sampled_from(SCALARS))
            if self.draw(st.booleans()) and source != BOOL and type_ != BOOL:
                # BITCAST i32->f32, i32->i32 or f32->f32; never a float to an int (see above)
                source = I32 if type_ == F32 else type_
                return UOp(Op.BITCAST, type_, (self.pick(source),))
            return UOp(Op.CAST, type_, (self.pick(source),))
        ops = {BOOL: BOOL_BINARY, I32: INT_BINARY, F32: FLOAT_BINARY}[type_]
        return _binary(self.draw(st.sampled_from(ops)), self.pick(type_), self.pick(type_))

    def index_expression(self) -> UOp:
        """(a*k + b), divided or reduced by c: the arithmetic movement ops leave behind."""
        c = self.draw(st.sampled_from((1, 2, 3, 4, 8, 16, 5)))
        a = self.nonnegative(self.draw(st.sampled_from((3, 15, 255, 65535, I32_MAX))))
        k = c * self.draw(st.sampled_from((1, 2, 3, -1)))
        b = self.nonnegative(self.draw(st.sampled_from((c - 1, c, 2 * c - 1, 7))))
        total = _binary(Op.ADD, _binary(Op.MUL, a, _const(I32, k)), b)
        op = self.draw(st.sampled_from((Op.IDIV, Op.MOD, Op.ADD)))
        return total if op is Op.ADD else _binary(op, total, _const(I32, c))

    def chain(self) -> UOp:
        """x op x, (x op c1) op c2, or (x op c1) op (x op c2), with small constants: the shapes
        algebraic rules match (x - x, reassociation, distribution, like terms)."""
        type_ = self.draw(st.sampled_from((I32, I32, F32, BOOL)))
        ops = {BOOL: BOOL_BINARY, I32: INT_BINARY, F32: FLOAT_BINARY}[type_]
        x = self.pick(type_)
        if type_ == I32 and self.draw(st.booleans()):
            x = self.nonnegative(self.draw(st.sampled_from((3, 255, 65535))))  # rules need bounds
        shape = self.draw(st.sampled_from(("same", "constants", "terms")))
        if shape == "same":
            return _binary(self.draw(st.sampled_from(ops)), x, x)
        first = self.draw(st.sampled_from(ops))
        second = first if self.draw(st.booleans()) else self.draw(st.sampled_from(ops))
        inner = _binary(first, x, self.small_constant(type_))
        if shape == "constants":
            return _binary(second, inner, self.small_constant(type_))
        other = _binary(self.draw(st.sampled_from(ops)), x, self.small_constant(type_))
        return _binary(second, inner, other)

    def small_constant(self, type_: Type) -> UOp:
        if type_ == I32:
            return _const(I32, self.draw(st.sampled_from((0, 1, -1, 2, 3, 4, 32, I32_MIN))))
        if type_ == F32:
            return _const(F32, self.draw(st.sampled_from((0.0, -0.0, 1.0, -1.0, 2.0))))
        return _const(BOOL, self.draw(st.booleans()))

    def stack(self) -> UOp:
        type_ = self.draw(st.sampled_from(SCALARS))
        count = self.draw(st.integers(1, 4))
        if self.draw(st.integers(0, 3)) == 0:
            values = tuple(self.leaf(type_).arg for _ in range(count))
            return _const(Type(type_.dtype, (count,)), values)
        return UOp(
            Op.STACK, Type(type_.dtype, (count,)), tuple(self.pick(type_) for _ in range(count))
        )

    def index(self) -> UOp:
        vector = self.draw(st.sampled_from(self.vectors)) if self.vectors else self.stack()
        top = vector.type.shape[0] - 1
        how = self.draw(st.sampled_from(("const", "and", "mod", "clamp", "where")))
        if how == "const":
            i = _const(I32, self.draw(st.integers(0, top)))
        elif how == "and":
            i = self.nonnegative(top)
        elif how == "mod":
            i = _binary(Op.MOD, self.nonnegative(I32_MAX), _const(I32, top + 1))
        elif how == "clamp":
            low = _binary(Op.MAX, self.pick(I32), _const(I32, 0))
            i = _binary(Op.MIN, low, _const(I32, top))
        else:
            pair = (_const(I32, self.draw(st.integers(0, top))) for _ in range(2))
            i = UOp(Op.WHERE, I32, (self.pick(BOOL), *pair))
        return UOp(Op.INDEX, vector.type.scalar, (vector, i))

    def call(self) -> UOp:
        """A CALL of a fresh closed body. Slots are numbered from 0 in every body; a nested body
        often takes the slot types of the body around it, so that it reuses the very PARAM UOps
        of that body (hash-consing makes them one), which substitution must keep apart."""
        if self.slots and self.draw(st.booleans()):
            slots = self.slots[: self.draw(st.integers(1, len(self.slots)))]
        else:
            count = self.draw(st.integers(0, 3))
            slots = tuple(self.draw(st.sampled_from(SCALARS)) for _ in range(count))
        inner = _Builder(self.draw, self.depth + 1, slots)
        for slot, type_ in enumerate(slots):
            inner.add(UOp(Op.PARAM, type_, (), slot))
        inner.grow(self.draw(st.integers(1, 12 if self.depth == 0 else 4)))
        body = inner.result()
        extra = tuple(
            self.draw(st.sampled_from(SCALARS)) for _ in range(self.draw(st.integers(0, 1)))
        )
        args = tuple(self.pick(t) for t in slots + extra)
        return UOp(Op.CALL, body.type, (body, *args))

    def grow(self, steps: int) -> None:
        kinds = ["alu"] * 5 + ["chain", "chain", "index_expression", "stack", "index"]
        if self.depth < MAX_CALL_DEPTH:
            # Calls are frequent at the top: inside a body, PARAMs are values no pass can know,
            # which is where symbolic rules (not folding) have to be right.
            kinds += ["call"] * (3 if self.depth == 0 else 1)
        for _ in range(steps):
            self.add(getattr(self, self.draw(st.sampled_from(kinds)))())

    def result(self) -> UOp:
        """One value built here (recent ones more often): a CALL body's result."""
        built = [u for values in self.pool.values() for u in values] + self.vectors
        if not built:
            return self.leaf(self.draw(st.sampled_from(SCALARS)))
        return self.draw(st.sampled_from(built[-8:]))


@st.composite
def _programs(draw: Draw, max_steps: int, max_outputs: int) -> UOp:
    builder = _Builder(draw)
    builder.grow(draw(st.integers(min(4, max_steps), max_steps)))
    outputs = tuple(builder.result() for _ in range(draw(st.integers(1, max_outputs))))
    return UOp(Op.SINK, VOID, outputs)


def programs(max_steps: int = 20, max_outputs: int = 3) -> st.SearchStrategy[UOp]:
    """Random verified week-1 programs, as their SINK UOp.

    `max_steps` bounds the values built at the top level (CALL bodies add their own, up to
    MAX_CALL_DEPTH levels deep); `max_outputs` bounds the SINK's sources.
    """
    return _programs(max_steps, max_outputs)
