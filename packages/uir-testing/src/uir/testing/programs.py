"""Hypothesis strategies for random, well-typed, verified programs: the project's one generator.

`programs()` draws a SINK built step by step from a pool of the values built so far. Each kind of
step is one drawing method of `_Builder`, listed in STEPS with the week whose ops it draws:

- week 1: the ALU ops over the chosen dtypes, CONSTs with the edge values that break careless
  compilers (INT_MIN, -1, 0, NaN, -0.0, inf, 2**24, the smallest subnormal), chains of small
  constants that algebraic rules match, index arithmetic, STACK, INDEX with indices the verifier
  can prove in range, and CALLs whose bodies nest further CALLs and reuse the same PARAM slots;
- week 2: global BUFFERs (zeroed or initialised, slots with gaps) and LOCALs, LOADs and STOREs
  through SHRINK windows at constant, masked, clamped or gated indices, stores chained by AFTERs
  (some naming an earlier version and every store since), and loads of older versions;
- week 3: loop nests (one or two RANGEs, nested, an inner end computed from the outer counter or
  loaded from memory, zero-trip loops) around a store (where several iterations hit one element,
  the later wins) or an accumulator (init store, AFTER over the range, load-update-store, END,
  AFTER over the END, read), with gated accesses; trip counts stay small (at most MAX_TRIPS per
  loop) so that the interpreter runs every program fast;
- week 4: shaped values of rank 1 (uir.md section 8): elementwise ALU ops, compares, WHERE, CAST
  and BITCAST on identical shapes, EXPAND of a scalar or a one-element vector, REDUCE (ADD, MUL,
  MAX, MIN) of a number vector to a scalar, STAGE, and whole-buffer LOADs and STOREs of buffer
  versions and their windows. Shaped values are drawn outside loops only (a loop step draws
  scalars from the pool), as the spec requires;
- week 5: shaped values of rank 1 to 4 (now and then a RESHAPE gives 5 to MAX_RANK), and every
  week-4 step at those ranks, REDUCE over any axes (to a smaller shaped value or a scalar) and a
  whole-buffer LOAD RESHAPEd to any shape, a STORE of a value RESHAPEd to rank 1; chains of
  movement ops (RESHAPE, PERMUTE, EXPAND, PAD, SHRINK of a value, FLIP) drawn as
  uir.testing.movement draws them, and STACK of shaped values. No value exceeds MAX_ELEMENTS;
- week 6: what the fusion policy decides on (spec/uir-week6.md section 2): a value combined with
  a REDUCE of its own last axes spread back over them (a row softmax's `x - max(x)`, a row
  normalization), now and then through a costly op read twice (SQRT, or EXP2, LOG2 and SIN
  where approximate ops are admitted), so that reductions fold inside their reader's row loop
  and rows are kept in scratch.

A later week adds its ops as a new drawing method and a STEPS entry, not a new generator. Every
program drawn passes `uir.core.verify.verify`, so a test can run it, print it, rewrite it or
compile it, and compare.

    from hypothesis import given
    from uir.testing.programs import programs

    @given(programs(week=2))
    def test_something(sink): ...

One choice keeps differential tests exact: a float that may be a NaN is never BITCAST to another
dtype. uir.md section 3 leaves a NaN's sign and payload unspecified, so two correct compilers may
disagree on those bits; every other way a NaN can reach an output (printing, comparing, CAST) is
fully specified.
"""

from __future__ import annotations

import math
import struct
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from hypothesis import strategies as st

from uir.core.dtypes import BOOL, I32, VOID, DType, Type, bf16, bool_, f32, i32
from uir.core.ops import MAX_RANK, Op
from uir.core.uop import UOp
from uir.testing import movement

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
INT_EDGES = (I32_MIN, I32_MIN + 1, -7, -4, -1, 0, 1, 2, 3, 4, 7, 8, 31, 32, 100, 2**24 + 1, I32_MAX)
FLOAT_EDGES = (
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
    0.1,  # rounds differently in every float dtype
    65504.0,  # the largest f16
    16777216.0,  # 2**24: adding 1 rounds back to it in f32
    -2.5,  # truncates toward zero
    2.0**31,  # just past INT32_MAX: a CAST to i32 saturates
    -(2.0**63),  # INT64_MIN exactly; 2**63 and 2**64 saturate i64 and u64
    2.0**63,
    2.0**64,
    3.4028234663852886e38,  # the largest f32
    1.401298464324817e-45,  # the smallest f32 subnormal
    -1.1754943508222875e-38,  # the smallest f32 normal, negated
)

WEEK1_DTYPES = (bool_, i32, f32)
INT_BINARY = (Op.ADD, Op.SUB, Op.MUL, Op.IDIV, Op.MOD, Op.MAX, Op.MIN, Op.AND, Op.OR, Op.XOR)
INT_BINARY += (Op.SHL, Op.SHR)
FLOAT_BINARY = (Op.ADD, Op.SUB, Op.MUL, Op.FDIV, Op.MAX, Op.MIN)
BOOL_BINARY = (Op.AND, Op.OR, Op.XOR)
EXACT_UNARY = (Op.NEG, Op.SQRT, Op.RECIP, Op.TRUNC)
APPROXIMATE_UNARY = (Op.EXP2, Op.LOG2, Op.SIN)  # specified to 2 ulp only (uir.md section 4)
COMPARES = (Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE)
MAX_CALL_DEPTH = 2
MAX_TRIPS = 4  # the most iterations of one drawn loop: every end is at most this
SHAPED_SIZES = (1, 2, 3, 4, 5, 16)  # week 4: 1 to 5 meet memory's sizes; 16 is a longer fold
REDUCE_OPS = (Op.ADD, Op.MUL, Op.MAX, Op.MIN)
MAX_ELEMENTS = 96  # week 5: the most elements of one shaped value, so that it runs fast

Draw = Callable[[st.SearchStrategy], object]


@dataclass(frozen=True)
class Options:
    """What a program may contain.

    `week` admits the steps of that week and the weeks before it; `dtypes` are the scalar dtypes
    values are drawn in (INDEX arithmetic is i32 whatever they are); `approximate` admits EXP2,
    LOG2 and SIN, which two correct implementations may compute 2 ulp apart; `max_steps` bounds
    the values built at the top level (CALL bodies add their own, up to MAX_CALL_DEPTH levels
    deep); `max_outputs` bounds the SINK's value sources (week 2 adds final buffer versions).
    """

    week: int = 1
    dtypes: tuple[DType, ...] = WEEK1_DTYPES
    approximate: bool = True
    max_steps: int = 20
    max_outputs: int = 3


def int_values(dtype: DType = i32) -> st.SearchStrategy[int]:
    """Values of an int dtype, edge values often."""
    edges = sorted({dtype.wrap(v) for v in INT_EDGES} | {dtype.min, dtype.max})
    return st.one_of(st.sampled_from(edges), st.integers(dtype.min, dtype.max))


def float_values(dtype: DType = f32) -> st.SearchStrategy[float]:
    """Values exact in a float dtype, edge values often."""
    width = 32 if dtype is bf16 else dtype.bits  # bf16 values: f32 values, the low half cut
    values = st.one_of(st.sampled_from(FLOAT_EDGES), st.floats(width=width))
    return values.map(lambda v: exact_float(v, dtype))


def exact_float(value: float, dtype: DType) -> float:
    """`value` made exact in `dtype` (NaN stays NaN; bf16 keeps the upper half of the f32)."""
    if math.isnan(value) or dtype.bits == 64:
        return value
    if dtype is bf16:
        bits = struct.unpack("<I", struct.pack("<f", value))[0] & 0xFFFF0000
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    with np.errstate(over="ignore"):
        return float(np.float16(value) if dtype.bits == 16 else np.float32(value))


def _const(type_: Type, value: object) -> UOp:
    return UOp(Op.CONST, type_, (), value)


def _binary(op: Op, a: UOp, b: UOp) -> UOp:
    return UOp(op, BOOL if op in COMPARES else a.type, (a, b))


def _binary_ops(dtype: DType) -> tuple[Op, ...]:
    return BOOL_BINARY if dtype.is_bool else INT_BINARY if dtype.is_int else FLOAT_BINARY


def _i32(value: int) -> UOp:
    return _const(I32, value)


@dataclass
class _Memory:
    """One BUFFER or LOCAL while its program is drawn: every version so far, the newest last,
    and the STORE that made each version after the first."""

    versions: list[UOp]
    stores: list[UOp] = field(default_factory=list)

    @property
    def current(self) -> UOp:
        return self.versions[-1]

    @property
    def dtype(self) -> DType:
        return self.current.dtype

    @property
    def size(self) -> int:
        return self.current.type.shape[0]

    @property
    def is_global(self) -> bool:
        return self.versions[0].op is Op.BUFFER


@dataclass
class _Builder:
    """Grows one program (or one CALL body) from a pool of the values built so far."""

    draw: Draw
    options: Options
    depth: int = 0
    slots: tuple[Type, ...] = ()  # the PARAM types of the body being built (none at the top)
    pool: defaultdict[Type, list[UOp]] = field(default_factory=lambda: defaultdict(list))
    vectors: list[UOp] = field(default_factory=list)
    memories: list[_Memory] = field(default_factory=list)
    ranges: int = 0  # RANGEs drawn so far: each takes a new id, so no two are one UOp

    # --- values to build on ---

    @property
    def scalars(self) -> tuple[Type, ...]:
        return tuple(Type(d) for d in self.options.dtypes)

    def pick_type(self) -> Type:
        return self.draw(st.sampled_from(self.scalars))

    def literal(self, dtype: DType) -> object:
        if dtype.is_bool:
            return self.draw(st.booleans())
        if dtype.is_int:
            return self.draw(int_values(dtype))
        return self.draw(float_values(dtype))

    def leaf(self, type_: Type) -> UOp:
        return _const(type_, self.literal(type_.dtype))

    def pick(self, type_: Type) -> UOp:
        """A value of `type_` from the pool (recent ones more often), or a new constant."""
        values = self.pool[type_]
        if not values or self.draw(st.integers(0, 4)) == 0:
            return self.leaf(type_)
        back = self.draw(st.integers(0, min(len(values), 6) - 1))
        return values[-1 - back]

    def add(self, uop: UOp) -> UOp:
        if uop.dtype.is_void or uop.op in (Op.BUFFER, Op.LOCAL, Op.AFTER):
            return uop  # effects and memory are not values to compute with
        (self.vectors if uop.type.shape else self.pool[uop.type]).append(uop)
        return uop

    def nonnegative(self, top: int) -> UOp:
        """An int provably in [0, top]: x AND top (bounds give [0, top] for a constant top >= 0)."""
        return _binary(Op.AND, self.pick(I32), _i32(top))

    def in_range(self, top: int) -> UOp:
        """An i32 the verifier can prove lies in [0, top], one of the ways uir.md 6.4 allows."""
        how = self.draw(st.sampled_from(("const", "and", "mod", "clamp", "where")))
        if how == "const":
            return _i32(self.draw(st.integers(0, top)))
        if how == "and":
            return self.nonnegative(top)
        if how == "mod":
            return _binary(Op.MOD, self.nonnegative(I32_MAX), _i32(top + 1))
        if how == "clamp":
            return _binary(Op.MIN, _binary(Op.MAX, self.pick(I32), _i32(0)), _i32(top))
        pair = (_i32(self.draw(st.integers(0, top))) for _ in range(2))
        return UOp(Op.WHERE, I32, (self.pick(BOOL), *pair))

    # --- week 1: the kinds of step ---

    def alu(self) -> UOp:
        return self.alu_of(self.pick_type(), self.pick)

    def alu_of(self, type_: Type, pick: Callable[[Type], UOp]) -> UOp:
        """An ALU op giving `type_`, a scalar or (week 4) a shaped type, whose operands `pick`
        draws: every operand of an elementwise op has the result's shape (no implicit
        broadcast)."""
        dtype = type_.dtype
        kind = self.draw(st.sampled_from(("binary", "unary", "compare", "where", "cast")))
        if kind == "unary" and not dtype.is_bool:
            unary = EXACT_UNARY + (APPROXIMATE_UNARY if self.options.approximate else ())
            op = Op.NEG if dtype.is_int else self.draw(st.sampled_from(unary))
            return UOp(op, type_, (pick(type_),))
        if kind == "compare":
            ops = COMPARES if not dtype.is_bool else (Op.CMPEQ, Op.CMPNE)
            op = self.draw(st.sampled_from(ops))
            return UOp(op, type_.with_dtype(bool_), (pick(type_), pick(type_)))
        if kind == "where":
            return UOp(Op.WHERE, type_, (pick(type_.with_dtype(bool_)), pick(type_), pick(type_)))
        if kind == "cast":
            if self.draw(st.booleans()) and not dtype.is_bool:
                return self.bitcast(type_, pick)
            return UOp(Op.CAST, type_, (pick(type_.with_dtype(self.pick_type().dtype)),))
        op = self.draw(st.sampled_from(_binary_ops(dtype)))
        return _binary(op, pick(type_), pick(type_))

    def bitcast(self, type_: Type, pick: Callable[[Type], UOp]) -> UOp:
        """A BITCAST to `type_` from a dtype of its width: any int value, the same float type, or
        a constant of non-NaN floats (see the module docstring)."""
        widths = [d for d in self.options.dtypes if d.bits == type_.dtype.bits and not d.is_bool]
        source = type_.with_dtype(self.draw(st.sampled_from(widths)))
        if source.dtype.is_float and source != type_:
            literals = [self.literal(source.dtype) for _ in range(source.size)]
            literals = [0.5 if math.isnan(v) else v for v in literals]
            value = tuple(literals) if source.shape else literals[0]
            return UOp(Op.BITCAST, type_, (_const(source, value),))
        return UOp(Op.BITCAST, type_, (pick(source),))

    def index_expression(self) -> UOp:
        """(a*k + b), divided or reduced by c: the arithmetic movement ops leave behind."""
        c = self.draw(st.sampled_from((1, 2, 3, 4, 8, 16, 5)))
        a = self.nonnegative(self.draw(st.sampled_from((3, 15, 255, 65535, I32_MAX))))
        k = c * self.draw(st.sampled_from((1, 2, 3, -1)))
        b = self.nonnegative(self.draw(st.sampled_from((c - 1, c, 2 * c - 1, 7))))
        total = _binary(Op.ADD, _binary(Op.MUL, a, _i32(k)), b)
        op = self.draw(st.sampled_from((Op.IDIV, Op.MOD, Op.ADD)))
        return total if op is Op.ADD else _binary(op, total, _i32(c))

    def chain(self) -> UOp:
        """x op x, (x op c1) op c2, or (x op c1) op (x op c2), with small constants: the shapes
        algebraic rules match (x - x, reassociation, distribution, like terms)."""
        type_ = self.draw(st.sampled_from((I32, I32, *self.scalars)))
        ops = _binary_ops(type_.dtype)
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
        dtype = type_.dtype
        if dtype.is_int:
            # the extremes let a division's guards go when bounds prove the divisor nonzero
            values = {dtype.wrap(v) for v in (0, 1, -1, 2, 3, 4, 32)} | {dtype.min, dtype.max}
            return _const(type_, self.draw(st.sampled_from(sorted(values))))
        if dtype.is_float:
            return _const(type_, self.draw(st.sampled_from((0.0, -0.0, 1.0, -1.0, 2.0))))
        return _const(type_, self.draw(st.booleans()))

    def stack(self) -> UOp:
        type_ = self.pick_type()
        shaped = Type(type_.dtype, (self.draw(st.integers(1, 4)),))
        if self.draw(st.integers(0, 3)) == 0:
            return _const(shaped, tuple(self.literal(type_.dtype) for _ in range(shaped.size)))
        return UOp(Op.STACK, shaped, tuple(self.pick(type_) for _ in range(shaped.size)))

    def index(self) -> UOp:
        rank1 = [v for v in self.vectors if len(v.type.shape) == 1]  # INDEX takes rank 1 only
        vector = self.draw(st.sampled_from(rank1)) if rank1 else self.stack()
        i = self.in_range(vector.type.shape[0] - 1)
        return UOp(Op.INDEX, vector.type.scalar, (vector, i))

    def call(self) -> UOp:
        """A CALL of a fresh closed body. Slots are numbered from 0 in every body; a nested body
        often takes the slot types of the body around it, so that it reuses the very PARAM UOps
        of that body (hash-consing makes them one), which substitution must keep apart."""
        if self.slots and self.draw(st.booleans()):
            slots = self.slots[: self.draw(st.integers(1, len(self.slots)))]
        else:
            slots = tuple(self.pick_type() for _ in range(self.draw(st.integers(0, 3))))
        inner = _Builder(self.draw, self.options, self.depth + 1, slots)
        for slot, type_ in enumerate(slots):
            inner.add(UOp(Op.PARAM, type_, (), slot))
        inner.grow(self.draw(st.integers(1, 12 if self.depth == 0 else 4)))
        body = inner.result()
        extra = tuple(self.pick_type() for _ in range(self.draw(st.integers(0, 1))))
        args = tuple(self.pick(t) for t in slots + extra)
        return UOp(Op.CALL, body.type, (body, *args))

    # --- week 2: memory (uir.md section 6) ---

    def memory(self) -> _Memory:
        """A new global BUFFER (zeroed or from a CONST) or LOCAL. Slots leave gaps, and the C ABI
        must still pass buffers in slot order."""
        shaped = Type(self.pick_type().dtype, (self.draw(st.integers(1, 5)),))
        if self.draw(st.integers(0, 3)) == 0:
            ids = sum(1 for m in self.memories if not m.is_global)
            uop = UOp(Op.LOCAL, shaped, (), ids)
        else:
            slot = max((m.versions[0].arg + 1 for m in self.memories if m.is_global), default=0)
            slot += self.draw(st.integers(0, 1))
            init = () if self.draw(st.booleans()) else (self.leaf_vector(shaped),)
            uop = UOp(Op.BUFFER, shaped, init, slot)
        self.memories.append(memory := _Memory([uop]))
        return memory

    def leaf_vector(self, shaped: Type) -> UOp:
        return _const(shaped, tuple(self.literal(shaped.dtype) for _ in range(shaped.size)))

    def some_memory(self, avoid: tuple[_Memory, ...] = ()) -> _Memory:
        """A memory drawn so far or a new one, never one of `avoid`."""
        memories = [m for m in self.memories if all(m is not a for a in avoid)]
        if not memories or self.draw(st.integers(0, 5)) == 0:
            return self.memory()
        return self.draw(st.sampled_from(memories))

    def place(self, memory: _Memory) -> UOp:
        """An INDEX of the current version, maybe through a SHRINK window: at an index proven in
        range, or at any i32 with a gate `0 <= i < size` that may be false."""
        reference = self.window(memory.current)
        size, element = reference.type.shape[0], Type(memory.dtype)
        if self.draw(st.integers(0, 2)) > 0:
            return UOp(Op.INDEX, element, (reference, self.in_range(size - 1)))
        i = self.pick(I32)
        low, high = _binary(Op.CMPLE, _i32(0), i), _binary(Op.CMPLT, i, _i32(size))
        return UOp(Op.INDEX, element, (reference, i, _binary(Op.AND, low, high)))

    def load(self) -> UOp:
        memory = self.some_memory()
        return UOp(Op.LOAD, Type(memory.dtype), (self.place(memory),))

    def old_load(self) -> UOp:
        """A LOAD of an older version, which must run before the store that replaced it. Its
        index is a constant: an index computed from later loads could close a cycle."""
        memory = self.some_memory()
        version = self.draw(st.sampled_from(memory.versions))
        place = UOp(
            Op.INDEX,
            Type(memory.dtype),
            (version, _i32(self.draw(st.integers(0, memory.size - 1)))),
        )
        return UOp(Op.LOAD, Type(memory.dtype), (place,))

    def store(self) -> UOp:
        """A STORE to the current version, and the AFTER that is the next version: usually
        `AFTER current store`, sometimes an earlier version with every store since, in any order
        (uir.md 6.3: the version once all of them have happened)."""
        memory = self.some_memory()
        store = UOp(Op.STORE, VOID, (self.place(memory), self.pick(Type(memory.dtype))))
        memory.stores.append(store)
        since = 1
        if len(memory.versions) > 1 and self.draw(st.integers(0, 3)) == 0:
            since = self.draw(st.integers(2, len(memory.versions)))
        deps = tuple(self.draw(st.permutations(memory.stores[-since:])))
        base = memory.versions[-since]
        memory.versions.append(UOp(Op.AFTER, base.type, (base, *deps)))
        return memory.current

    # --- week 3: loops (uir.md section 7) ---
    #
    # A loop step draws its whole nest and closes it before it returns, so that nothing inside a
    # range ever reaches the pool: every later step builds on values inside no range, and every
    # program stays valid by construction. Inside a loop, values come from the pool, the counters
    # and loads of memories the loop does not write (a loop reads what it writes only through a
    # loop-carried AFTER).

    def trip_end(self, outer: UOp | None = None) -> UOp:
        """The end of a new RANGE, at most MAX_TRIPS: a positive constant, a constant <= 0 (a
        zero-trip loop), a value loaded from memory and clamped, or, inside an `outer` loop, its
        counter plus -1, 0 or 1 (a triangular loop, whose first iterations may run no inner
        iteration)."""
        how = self.draw(st.sampled_from(("const", "const", "zero", "loaded", "triangular")))
        if how == "zero":
            return _i32(self.draw(st.integers(-2, 0)))
        if how == "triangular" and outer is not None:
            return _binary(Op.ADD, outer, _i32(self.draw(st.integers(-1, 1))))
        if how == "loaded":
            loaded = self.load()
            if loaded.type != I32:
                loaded = UOp(Op.CAST, I32, (loaded,))
            return _binary(Op.MIN, loaded, _i32(MAX_TRIPS))
        return _i32(self.draw(st.integers(1, MAX_TRIPS)))

    def new_range(self, outer: UOp | None = None) -> UOp:
        self.ranges += 1
        return UOp(Op.RANGE, I32, (self.trip_end(outer),), self.ranges - 1)

    def loop_ranges(self) -> tuple[UOp, ...]:
        """One RANGE, or two (outer first) that the caller nests."""
        outer = self.new_range()
        return (outer, self.new_range(outer)) if self.draw(st.booleans()) else (outer,)

    def counter_place(self, reference: UOp, counters: tuple[UOp, ...]) -> UOp:
        """An INDEX of `reference` at an index built from every counter (so the access is inside
        every loop), proven in range by a MOD or a MIN, or gated (the gate may be false)."""
        size = reference.type.shape[0]
        flat = counters[0]
        for counter in counters[1:]:
            scale = self.draw(st.sampled_from((1, 2, size)))
            flat = _binary(Op.ADD, _binary(Op.MUL, flat, _i32(scale)), counter)
        element = Type(reference.dtype)
        how = self.draw(st.sampled_from(("mod", "min", "gate")))
        if how == "mod":  # small sizes make several iterations hit one element: the later wins
            return UOp(Op.INDEX, element, (reference, _binary(Op.MOD, flat, _i32(size))))
        if how == "min":
            return UOp(Op.INDEX, element, (reference, _binary(Op.MIN, flat, _i32(size - 1))))
        i = _binary(Op.ADD, flat, _i32(self.draw(st.integers(-1, 1))))  # padding on both sides
        low, high = _binary(Op.CMPLE, _i32(0), i), _binary(Op.CMPLT, i, _i32(size))
        return UOp(Op.INDEX, element, (reference, i, _binary(Op.AND, low, high)))

    def loop_value(
        self, dtype: DType, counters: tuple[UOp, ...], written: tuple[_Memory, ...]
    ) -> UOp:
        """A value of `dtype` computed in the loops of `counters`: from a counter, the pool, or a
        load (maybe gated) of a memory the loop does not write, and sometimes two combined."""
        type_ = Type(dtype)

        def one() -> UOp:
            how = self.draw(st.sampled_from(("counter", "pool", "load")))
            if how == "pool":
                return self.pick(type_)
            if how == "counter":
                value = self.draw(st.sampled_from(counters))
            else:
                memory = self.some_memory(avoid=written)
                place = self.counter_place(self.window(memory.current), counters)
                value = UOp(Op.LOAD, Type(memory.dtype), (place,))
            return value if value.type == type_ else UOp(Op.CAST, type_, (value,))

        value = one()
        if self.draw(st.booleans()):
            value = _binary(self.draw(st.sampled_from(_binary_ops(dtype))), value, one())
        return value

    def fill_loop(self) -> UOp:
        """A store in a loop nest to a version from before it, then the version after the END.
        Two nested ranges are closed by one END or by an END of an END (the inner first)."""
        counters = self.loop_ranges()
        memory = self.some_memory()
        place = self.counter_place(self.window(memory.current), counters)
        store = UOp(Op.STORE, VOID, (place, self.loop_value(memory.dtype, counters, (memory,))))
        if len(counters) == 2 and self.draw(st.booleans()):
            end = UOp(Op.END, VOID, (UOp(Op.END, VOID, (store, counters[1])), counters[0]))
        else:
            end = UOp(Op.END, VOID, (store, *counters))
        return self.written(memory, end)

    def written(self, memory: _Memory, effect: UOp) -> UOp:
        """Record `effect` (a STORE or END writing `memory`) and return the version after it."""
        memory.stores.append(effect)
        memory.versions.append(UOp(Op.AFTER, memory.current.type, (memory.current, effect)))
        return memory.current

    def accumulate(self) -> UOp:
        """An accumulator (uir.md section 7): an init store, an AFTER carrying the buffer across
        the ranges, load-update-store, END, and the AFTER over the END read back. Two ranges are
        carried together (one END closes both), or nest as a matmul's do: the init runs in the
        outer loop (through an AFTER carrying the accumulator across it), the update in the inner
        one, and the outer loop stores each result to another memory."""
        counters = self.loop_ranges()
        nested = len(counters) == 2 and self.draw(st.booleans())
        watched = not nested and self.draw(st.booleans())
        acc = self.some_memory()
        # a nested accumulator's outer loop, or a watcher, also writes a second memory: neither
        # may be read in the loops
        written = (acc, self.some_memory(avoid=(acc,))) if nested or watched else (acc,)
        z = _i32(self.draw(st.integers(0, acc.size - 1)))
        type_ = Type(acc.dtype)
        base = acc.current
        if nested:
            outer = UOp(Op.AFTER, base.type, (base, counters[0]))
            start = self.loop_value(acc.dtype, counters[:1], written)
            init = UOp(Op.STORE, VOID, (UOp(Op.INDEX, type_, (outer, z)), start))
        else:
            init = UOp(Op.STORE, VOID, (UOp(Op.INDEX, type_, (base, z)), self.pick(type_)))
        across = counters[1:] if nested else counters
        carried = UOp(Op.AFTER, base.type, (base, init, *across))
        at = UOp(Op.INDEX, type_, (carried, z))
        old = UOp(Op.LOAD, type_, (at,))
        ops = _binary_ops(acc.dtype)
        # most accumulators add: the first op (ADD, or AND for bool) weighs as much as the rest
        op = self.draw(st.sampled_from(ops[:1] * len(ops) + ops))
        update = _binary(op, old, self.loop_value(acc.dtype, counters, written))
        done = UOp(Op.END, VOID, (UOp(Op.STORE, VOID, (at, update)), *across))
        if not nested:
            self.written(acc, init)
            after = self.written(acc, done)
            if watched:
                self.watch(carried, z, across, written[1])
            return UOp(Op.LOAD, type_, (UOp(Op.INDEX, type_, (after, z)),))
        after = UOp(Op.AFTER, base.type, (base, done))
        result = UOp(Op.LOAD, type_, (UOp(Op.INDEX, type_, (after, z)),))
        out = written[1]
        if result.dtype is not out.dtype:
            result = UOp(Op.CAST, Type(out.dtype), (result,))
        place = self.counter_place(self.window(out.current), counters[:1])
        end = UOp(Op.END, VOID, (UOp(Op.STORE, VOID, (place, result)), counters[0]))
        self.written(acc, end)  # the outer END waits for every store to the accumulator too
        return self.written(out, end)

    def watch(self, carried: UOp, z: UOp, counters: tuple[UOp, ...], seen: _Memory) -> None:
        """A second END of the accumulator's loops: each iteration copies the accumulator's
        element, as it was before this iteration's update, to `seen`. Its LOAD is not a source
        of the update (a gate that always holds makes it another UOp than the update's), so only
        the rule that a LOAD runs before the STORE replacing its version orders the two."""
        type_ = Type(carried.dtype)
        always = _binary(Op.CMPLE, _i32(0), counters[0])
        before = UOp(Op.LOAD, type_, (UOp(Op.INDEX, type_, (carried, z, always)),))
        if before.dtype is not seen.dtype:
            before = UOp(Op.CAST, Type(seen.dtype), (before,))
        place = self.counter_place(self.window(seen.current), counters)
        self.written(seen, UOp(Op.END, VOID, (UOp(Op.STORE, VOID, (place, before)), *counters)))

    # --- week 4: shaped values (uir.md section 8) ---

    def shaped_type(self, dtype: DType | None = None) -> Type:
        """A shaped type: rank 1 until week 5, then rank 1 to 4 (dims of 1 to 4, of 1 to 3 at
        rank 4, so at most 81 elements)."""
        dtype = dtype or self.pick_type().dtype
        if self.options.week < 5 or self.draw(st.booleans()):
            return Type(dtype, (self.draw(st.sampled_from(SHAPED_SIZES)),))
        rank = self.draw(st.integers(2, 4))
        dims = st.integers(1, 3 if rank == 4 else 4)
        return Type(dtype, tuple(self.draw(st.lists(dims, min_size=rank, max_size=rank))))

    def pick_shaped(self, type_: Type) -> UOp:
        """A shaped value of `type_` built so far (recent ones more often), or a new one: a CONST,
        an EXPAND of a scalar or (week 5) a RESHAPE of a value of as many elements."""
        values = [v for v in self.vectors if v.type == type_]
        if values and self.draw(st.integers(0, 3)) > 0:
            return values[-1 - self.draw(st.integers(0, min(len(values), 6) - 1))]
        if self.options.week >= 5:
            alike = [
                v
                for v in self.vectors
                if v.dtype is type_.dtype and v.type.size == type_.size and v.type != type_
            ]
            if alike and self.draw(st.booleans()):
                return movement.reshape(self.draw(st.sampled_from(alike[-6:])), type_.shape)
        if self.draw(st.booleans()):
            return self.leaf_vector(type_)
        return UOp(Op.EXPAND, type_, (self.pick(type_.scalar),))

    def elementwise(self) -> UOp:
        return self.alu_of(self.shaped_type(), self.pick_shaped)

    def expand(self) -> UOp:
        """EXPAND of a scalar, or of a one-element vector, to a longer shape."""
        type_ = self.shaped_type()
        if self.draw(st.booleans()):
            return UOp(Op.EXPAND, type_, (self.pick(type_.scalar),))
        one = self.pick_shaped(Type(type_.dtype, (1,)))
        return UOp(Op.EXPAND, type_, (one,))

    def reduce(self) -> UOp:
        """REDUCE of a shaped number value over some of its axes (a rank-1 value to a scalar
        until week 5), each result element folded from its first element."""
        numbers = [d for d in self.options.dtypes if d.is_number]
        if not numbers:
            return self.elementwise()
        x = self.pick_shaped(self.shaped_type(self.draw(st.sampled_from(numbers))))
        op = self.draw(st.sampled_from(REDUCE_OPS))
        axes: tuple[int, ...] = (0,)
        if self.options.week >= 5:
            rank = len(x.type.shape)
            axes = tuple(sorted(self.draw(st.sets(st.integers(0, rank - 1), min_size=1))))
        return movement.reduce(x, op, axes)

    def stage(self) -> UOp:
        """STAGE of a shaped value or (less often) a scalar: the identity on values."""
        if self.draw(st.integers(0, 3)) == 0:
            value = self.pick(self.pick_type())
        else:
            value = self.pick_shaped(self.shaped_type())
        return UOp(Op.STAGE, value.type, (value,))

    def whole_load(self) -> UOp:
        """A whole-buffer LOAD of a memory's current version, or of a window of it; from week 5
        often RESHAPEd to another shape (a buffer is rank 1, a value any rank)."""
        reference = self.window(self.some_memory().current)
        loaded = UOp(Op.LOAD, reference.type, (reference,))
        if self.options.week >= 5 and self.draw(st.booleans()):
            return movement.reshape(loaded, movement.split(self.draw, reference.type.size))
        return loaded

    def whole_store(self) -> UOp:
        """A whole-buffer STORE of a shaped value to a memory's current version (or a window of
        it), and the AFTER that is the next version; from week 5 the value may have any shape of
        as many elements, RESHAPEd to rank 1 to be stored."""
        memory = self.some_memory()
        reference = self.window(memory.current)
        size = reference.type.shape[0]
        if self.options.week >= 5 and self.draw(st.booleans()):
            shaped = Type(memory.dtype, movement.split(self.draw, size))
            value = movement.reshape(self.pick_shaped(shaped), (size,))
        else:
            value = self.pick_shaped(reference.type)
        store = UOp(Op.STORE, VOID, (reference, value))
        return self.written(memory, store)

    # --- week 5: movement ops at any rank (uir.md section 9) ---

    def movement(self) -> UOp:
        """A chain of one to three movement ops from a shaped value, each drawn as
        uir.testing.movement draws it; a move that would exceed MAX_ELEMENTS is left out. Now
        and then a RESHAPE gives a rank of 5 to MAX_RANK."""
        if self.vectors and self.draw(st.booleans()):
            value = self.draw(st.sampled_from(self.vectors[-8:]))
        else:
            value = self.pick_shaped(self.shaped_type())
        for _ in range(self.draw(st.integers(1, 3))):
            if self.draw(st.integers(0, 7)) == 0:
                dims = movement.split(self.draw, value.type.size, (5, MAX_RANK))
                moved = movement.reshape(value, dims)
            else:
                kind = self.draw(st.sampled_from(movement.MOVES))
                moved, _ = movement.move(self.draw, kind, value)
            if moved.type.size <= MAX_ELEMENTS:
                value = moved
        return value

    def stack_values(self) -> UOp:
        """STACK of two or three shaped values of one type: a new leading axis."""
        type_, count = self.shaped_type(), self.draw(st.integers(2, 3))
        while type_.size * count > MAX_ELEMENTS:
            type_ = Type(type_.dtype, type_.shape[1:])  # drop leading axes until it fits
        return movement.stack(*(self.pick_shaped(type_) for _ in range(count)))

    # --- week 6: fusion (spec/uir-week6.md) ---

    def rows(self) -> UOp:
        """`x OP spread(REDUCE(x) over its last axes)`: the reduction's reader iterates over its
        kept axes, the pattern the fusion policy folds inside the reader's loops. Now and then
        `x` is a costly op's result, which the REDUCE and the combination both read."""
        numbers = [d for d in self.options.dtypes if d.is_number]
        if not numbers:
            return self.elementwise()
        x = self.pick_shaped(self.shaped_type(self.draw(st.sampled_from(numbers))))
        shape = x.type.shape
        floats = x.dtype.is_float
        if floats and self.draw(st.booleans()):
            costly = (Op.SQRT, *(APPROXIMATE_UNARY if self.options.approximate else ()))
            x = UOp(self.draw(st.sampled_from(costly)), x.type, (x,))
        folded = self.draw(st.integers(1, len(shape)))
        axes = tuple(range(len(shape) - folded, len(shape)))
        reduced = movement.reduce(x, self.draw(st.sampled_from(REDUCE_OPS)), axes)
        kept = (*shape[: len(shape) - folded], *(1,) * folded)
        source = movement.reshape(reduced, kept) if reduced.type.shape else reduced
        spread = UOp(Op.EXPAND, x.type, (source,))
        op = self.draw(st.sampled_from((Op.ADD, Op.SUB, Op.MUL, Op.MAX, Op.MIN)))
        if floats and self.draw(st.booleans()):
            op = Op.FDIV
        return UOp(op, x.type, (x, spread))

    # --- the program ---

    def grow(self, steps: int) -> None:
        kinds: list[Callable[[_Builder], UOp]] = []
        for step in STEPS:
            if step.week <= self.options.week and (self.depth == 0 or step.in_bodies):
                kinds += [step.draw] * step.weight
        if self.depth < MAX_CALL_DEPTH:
            # Calls are frequent at the top: inside a body, PARAMs are values no pass can know,
            # which is where symbolic rules (not folding) have to be right.
            kinds += [_Builder.call] * (3 if self.depth == 0 else 1)
        for _ in range(steps):
            self.add(self.draw(st.sampled_from(kinds))(self))

    def result(self) -> UOp:
        """One value built here (recent ones more often): a CALL body's result or an output."""
        built = [u for values in self.pool.values() for u in values] + self.vectors
        if not built:
            return self.leaf(self.pick_type())
        return self.draw(st.sampled_from(built[-8:]))

    def outputs(self) -> tuple[UOp, ...]:
        values = tuple(
            self.result() for _ in range(self.draw(st.integers(1, self.options.max_outputs)))
        )
        # the newest version of a global buffer prints its contents (uir.md 6.3), all of them
        # or a window
        buffers = tuple(
            self.window(m.current)
            for m in self.memories
            if m.is_global and self.draw(st.integers(0, 3))
        )
        return values + buffers

    def window(self, version: UOp) -> UOp:
        """`version`, or sometimes a SHRINK window of it."""
        size = version.type.shape[0]
        begin = self.draw(st.integers(0, size - 1))
        end = self.draw(st.integers(begin + 1, size))
        if (begin, end) == (0, size) or self.draw(st.booleans()):
            return version
        return UOp(Op.SHRINK, Type(version.dtype, (end - begin,)), (version,), ((begin, end),))


@dataclass(frozen=True)
class Step:
    """A kind of step: the drawing method, the week whose ops it draws, how often it is drawn,
    and whether it may be drawn inside a CALL body (a body is closed: no memory there). CALLs,
    whose frequency depends on the nesting depth, are drawn by `_Builder.grow` itself."""

    draw: Callable[[_Builder], UOp]
    week: int
    weight: int
    in_bodies: bool = True


STEPS = (
    Step(_Builder.alu, week=1, weight=5),
    Step(_Builder.chain, week=1, weight=2),
    Step(_Builder.index_expression, week=1, weight=1),
    Step(_Builder.stack, week=1, weight=1),
    Step(_Builder.index, week=1, weight=1),
    Step(_Builder.load, week=2, weight=3, in_bodies=False),
    Step(_Builder.old_load, week=2, weight=1, in_bodies=False),
    Step(_Builder.store, week=2, weight=3, in_bodies=False),
    Step(_Builder.fill_loop, week=3, weight=3, in_bodies=False),
    Step(_Builder.accumulate, week=3, weight=3, in_bodies=False),
    Step(_Builder.elementwise, week=4, weight=4),
    Step(_Builder.expand, week=4, weight=1),
    Step(_Builder.reduce, week=4, weight=3),
    Step(_Builder.stage, week=4, weight=1),
    Step(_Builder.whole_load, week=4, weight=2, in_bodies=False),
    Step(_Builder.whole_store, week=4, weight=2, in_bodies=False),
    Step(_Builder.movement, week=5, weight=12),  # as often as the week-4 steps together
    Step(_Builder.stack_values, week=5, weight=2),
    Step(_Builder.rows, week=6, weight=6),
)


@st.composite
def _programs(draw: Draw, options: Options) -> UOp:
    builder = _Builder(draw, options)
    builder.grow(draw(st.integers(min(4, options.max_steps), options.max_steps)))
    return UOp(Op.SINK, VOID, builder.outputs())


def programs(
    week: int = 1,
    dtypes: tuple[DType, ...] = WEEK1_DTYPES,
    *,
    approximate: bool = True,
    max_steps: int = 20,
    max_outputs: int = 3,
) -> st.SearchStrategy[UOp]:
    """Random verified programs of `week` (and the weeks before it), as their SINK UOp.

    See Options for what the arguments admit.
    """
    return _programs(Options(week, dtypes, approximate, max_steps, max_outputs))


def through_approximate_ops(sink: UOp) -> UOp:
    """`sink` with each scalar float value output replaced by EXP2, LOG2 or SIN of it, in turn.

    For programs drawn without approximate ops: every value is then computed exactly on every
    correct backend, and each output is one approximate op of such a value, so two correct
    backends agree on it within that op's 2 ulp (uir.md section 4). An approximate op feeding
    further arithmetic has no such bound (a comparison or a cast to int may turn 1 ulp into any
    difference), which is why the generator's `approximate` programs compare only a backend
    with itself."""
    outputs, turn = [], 0
    for source in sink.src:
        if source.type.shape == () and source.dtype.is_float and source.op is not Op.BUFFER:
            source = UOp(APPROXIMATE_UNARY[turn % 3], source.type, (source,))
            turn += 1
        outputs.append(source)
    return sink.replace(src=tuple(outputs))
