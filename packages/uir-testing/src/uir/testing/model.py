"""An independent model of what a program means (uir.md sections 3-6), for differential tests.

The reference interpreter is what every student compiler is graded against, so its tests need an
answer worked out another way. This model shares no code with uir.core's semantics, interpreter,
CALL substitution, memory or schedule: it reads only the UOp graph and the dtype descriptions, and
follows the spec's words directly:

- ints are Python ints, wrapped explicitly after every operation;
- f16, f32 and f64 arithmetic is numpy's float16, float32 and float64, whose operations round
  once;
- BITCAST goes through `struct`;
- a CALL evaluates its body in an environment binding each PARAM slot to an argument's value
  (nothing is substituted); an argument at a slot the body never uses is never evaluated, and
  what only such arguments reach (effects, loops) is dead, as in the inlined program
  (spec/uir-week1.md section 8.3);
- memory is functional: each version of a buffer is its own tuple of contents, and a STORE
  makes the next version from the one it writes. A fully ordered program chains the stores to a
  buffer (uir.md 6.3), so the version "after every dep" of an AFTER is the one the newest of its
  stores makes. No schedule is computed.
- loops (uir.md section 7) are explicit iteration over the END structure: every value is
  evaluated under an environment binding the counters of the RANGEs it is inside. An END's
  result for a buffer is the state after its last iteration; the state after one iteration is
  the newest write of the effects that run directly in it (its STOREs, and the inner ENDs run to
  their last iteration). A STORE in loops that its version is outside, and a loop-carried AFTER,
  build on the state after the previous iteration of those loops in nest order (or, in the first,
  on the version itself and the AFTER's other deps). No loop nest or schedule is computed.
  Finding an iteration's predecessor walks its loop's iterations, so the cost grows with the
  square of a trip count: fine for generated programs (at most a few iterations per loop).

- shaped values (uir.md sections 8 and 9, any rank) are flat tuples in row-major order, the shape
  read from the type: an elementwise op applies the scalar op to each tuple of elements; each
  movement op (EXPAND included) is its rule from the spec, applied to every index of the result
  one by one: which source index holds that element (a PAD's zero where none does); a STACK of
  shaped values puts its sources' tuples one after another; REDUCE is a Python loop per result
  element that folds from the first element, in row-major order over the reduced axes, through
  the scalar op; STAGE is its value, and a whole-buffer LOAD or STORE reads or writes a slice of
  a version's contents. No numpy array operation is used.

It covers the week-1 ops over bool, every int dtype, f16, f32 and f64, week-2 memory, week-3
loops and week-4 and week-5 shaped values at any rank. EXP2,
LOG2 and SIN are computed in float64 and rounded, which is within their 2 ulp but need not be
bit-equal to another implementation: compare programs without them (`approximate=False`).

    run(sink) -> one flat numpy array per SINK source, as uir.core.interpret.evaluate gives
"""

from __future__ import annotations

import itertools
import math
import struct
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from uir.core.dtypes import DType
from uir.core.ops import Op
from uir.core.uop import UOp

Scalar = Any  # bool, int, np.float32 or np.float64


@dataclass(frozen=True)
class Version:
    """The contents of one version of a buffer, and how many stores came before it."""

    contents: tuple[Scalar, ...]
    stores: int


@dataclass(frozen=True)
class Ref:
    """A memory reference: `size` elements of `version` from `begin` on."""

    version: Version
    begin: int
    size: int


@dataclass(frozen=True)
class Place:
    """An INDEX of memory: element `at` of `version`, or None where the gate is false."""

    version: Version
    at: int | None


@dataclass(frozen=True)
class Write:
    """A STORE: the version it writes, and where and what (nowhere where the gate is false). A
    whole-buffer STORE writes the tuple `values` from `at` on; a scalar STORE one value."""

    version: Version
    at: int | None
    values: tuple[Scalar, ...]

    def next_version(self) -> Version:
        contents = list(self.version.contents)
        if self.at is not None:
            contents[self.at : self.at + len(self.values)] = self.values
        return Version(tuple(contents), self.version.stores + 1)


# numpy's f16 arithmetic rounds through f32, which is still one correct rounding for + - * / and
# sqrt (f32 has more than twice f16's significand bits plus two); bf16 has no numpy type.
FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
STRUCT = {"i8": "b", "u8": "B", "i16": "h", "u16": "H", "f16": "e", "i32": "i", "u32": "I"}
STRUCT |= {"f32": "f", "i64": "q", "u64": "Q", "f64": "d"}


def wrap(value: int, dtype: DType) -> int:
    """`value` modulo 2**bits, read as two's complement for a signed dtype (uir.md section 3)."""
    value %= 2**dtype.bits
    if dtype.signed and value >= 2 ** (dtype.bits - 1):
        value -= 2**dtype.bits
    return value


def scalar(value: Any, dtype: DType) -> Scalar:
    """A literal or a value as the model holds it in `dtype`."""
    if dtype.is_bool:
        return bool(value)
    if dtype.is_int:
        return wrap(int(value), dtype)
    if dtype.name not in FLOATS:
        raise NotImplementedError(f"the model has no {dtype.name} arithmetic")
    return FLOATS[dtype.name](value)


def zero(dtype: DType) -> Scalar:
    return scalar(0, dtype)


# --- the ALU ops (uir.md section 4) ---


def idiv(a: int, b: int, dtype: DType) -> int:
    """C division, total: the quotient rounds toward zero, x/0 is all ones, MIN/-1 wraps to MIN."""
    if b == 0:
        return wrap(-1, dtype)
    quotient = abs(a) // abs(b)
    return wrap(-quotient if (a < 0) != (b < 0) else quotient, dtype)


def mod(a: int, b: int, dtype: DType) -> int:
    """C remainder, total: it takes the dividend's sign, and x%0 is x."""
    if b == 0:
        return a
    remainder = abs(a) % abs(b)
    return wrap(-remainder if a < 0 else remainder, dtype)


def maximum(a: Scalar, b: Scalar, is_max: bool) -> Scalar:
    """IEEE 754-2019 maximum/minimum for floats: NaN propagates, and -0 < +0."""
    if isinstance(a, np.floating):
        if math.isnan(a) or math.isnan(b):
            return a if math.isnan(a) else b
        if a == b == 0:
            a_first = bool(np.signbit(b)) if is_max else bool(np.signbit(a))
            return a if a_first else b
    return (a if a > b else b) if is_max else (a if a < b else b)


def shift(a: int, b: int, dtype: DType, left: bool) -> int:
    count = b % dtype.bits  # b & (bits - 1) for a power-of-two width
    # Python's >> is arithmetic: right for a signed value, and logical for an unsigned one, which
    # the model holds as a non-negative int
    return wrap(a << count, dtype) if left else a >> count


def approximate(fn: Any, x: Scalar) -> Scalar:
    with np.errstate(all="ignore"):
        return type(x)(fn(np.float64(x)))


def alu(op: Op, dtype: DType, args: list[Scalar], source: DType) -> Scalar:
    """The value of one ALU op; `dtype` is the result's, `source` the first source's."""
    if op is Op.CAST:
        return cast(args[0], source, dtype)
    if op is Op.BITCAST:
        return bitcast(args[0], source, dtype)
    if op is Op.WHERE:
        return args[1] if args[0] else args[2]
    if op in (Op.CMPLT, Op.CMPLE, Op.CMPEQ, Op.CMPNE):
        a, b = args
        return bool({Op.CMPLT: a < b, Op.CMPLE: a <= b, Op.CMPEQ: a == b, Op.CMPNE: a != b}[op])
    if op in (Op.MAX, Op.MIN):
        return maximum(*args, is_max=op is Op.MAX)
    if dtype.is_bool:
        a, b = args
        return {Op.AND: a and b, Op.OR: a or b, Op.XOR: a != b}[op]
    if dtype.is_int:
        return int_alu(op, dtype, args)
    with np.errstate(all="ignore"):  # inf and NaN results are the point, not a warning
        return float_alu(op, args)


def int_alu(op: Op, dtype: DType, args: list[int]) -> int:
    if op is Op.NEG:
        return wrap(-args[0], dtype)
    a, b = args
    if op is Op.IDIV:
        return idiv(a, b, dtype)
    if op is Op.MOD:
        return mod(a, b, dtype)
    if op in (Op.SHL, Op.SHR):
        return shift(a, b, dtype, op is Op.SHL)
    # Python's & | ^ on negative ints act on their infinite two's complement: right once wrapped
    exact = {
        Op.ADD: a + b,
        Op.SUB: a - b,
        Op.MUL: a * b,
        Op.AND: a & b,
        Op.OR: a | b,
        Op.XOR: a ^ b,
    }
    return wrap(exact[op], dtype)


def float_alu(op: Op, args: list[Scalar]) -> Scalar:
    x = args[0]
    unary = {
        Op.NEG: lambda: -x,
        Op.SQRT: lambda: np.sqrt(x),
        Op.RECIP: lambda: type(x)(1) / x,
        Op.TRUNC: lambda: np.trunc(x),
        Op.EXP2: lambda: approximate(np.exp2, x),
        Op.LOG2: lambda: approximate(np.log2, x),
        Op.SIN: lambda: approximate(np.sin, x),
    }
    if op in unary:
        return unary[op]()
    b = args[1]
    return {Op.ADD: x + b, Op.SUB: x - b, Op.MUL: x * b, Op.FDIV: x / b}[op]


def cast(x: Scalar, source: DType, dtype: DType) -> Scalar:
    """CAST (uir.md section 4): to bool is `x != 0`; float to int truncates and saturates, NaN
    gives 0; int to int keeps the low bits; to a float rounds once."""
    if dtype.is_bool:
        return bool(x != 0)
    if dtype.is_int:
        if source.is_float:
            if math.isnan(x):
                return 0
            if math.isinf(x):
                return dtype.max if x > 0 else dtype.min
            return min(max(math.trunc(float(x)), dtype.min), dtype.max)
        return wrap(int(x), dtype)
    if source.is_float:
        with np.errstate(over="ignore"):  # too big for the dtype: inf, as uir.md 4 says
            return scalar(x, dtype)  # numpy's float conversion rounds once
    return int_to_float(int(x), dtype)


def int_to_float(x: int, dtype: DType) -> Scalar:
    """`x` rounded once to the float dtype, to nearest with ties to even, in integer arithmetic
    (going through float64 first would round twice for ints wider than 53 bits)."""
    magnitude = abs(x)
    drop = max(magnitude.bit_length() - dtype.mantissa, 0)  # bits below the significand
    kept, rest, half = magnitude >> drop, magnitude & ((1 << drop) - 1), (1 << drop) >> 1
    if drop and (rest > half or (rest == half and kept % 2 == 1)):
        kept += 1
    value = float(kept << drop)  # at most `mantissa` significant bits: exact in float64
    with np.errstate(over="ignore"):  # too big for the dtype: inf
        return scalar(-value if x < 0 else value, dtype)


def bitcast(x: Scalar, source: DType, dtype: DType) -> Scalar:
    if source.name not in STRUCT or dtype.name not in STRUCT:
        raise NotImplementedError(f"the model has no bits for {source.name} or {dtype.name}")
    raw = struct.pack("<" + STRUCT[source.name], x)
    return scalar(struct.unpack("<" + STRUCT[dtype.name], raw)[0], dtype)


# --- evaluation ---


Env = dict[UOp, int]  # each RANGE a value is inside -> its counter in this iteration


class _Frame:
    """The values of one evaluation of one graph: the top level, or one CALL's body with its
    arguments bound to the PARAM slots (a body has no loops: uir.md section 7)."""

    def __init__(self, args: tuple[Any, ...] = (), root: UOp | None = None) -> None:
        self.args = args
        self.values: dict[tuple[UOp, frozenset[tuple[UOp, int]]], Any] = {}
        self.inside: dict[UOp, frozenset[UOp]] = {}
        # the effects the program runs (a STORE or END not under the SINK never runs)
        program = root.toposort(bodies=False) if root is not None else []
        run = reached(root) if root is not None else set()
        self.effects = [u for u in program if u.op in (Op.STORE, Op.END) and u in run]
        # each RANGE -> how many loops are around it: an END inside loops Q listing r1 .. rn
        # puts rk inside Q and r1 .. r(k-1)
        self.depth = {
            r: len(self.ranges(end)) + k
            for end in self.effects
            if end.op is Op.END
            for k, r in enumerate(end.src[1:])
        }

    def ranges(self, uop: UOp) -> frozenset[UOp]:
        """The RANGEs `uop` is inside: those it reaches without passing an END listing them."""
        if uop not in self.inside:
            found = frozenset().union(*(self.ranges(s) for s in operands(uop)))
            if uop.op is Op.RANGE:
                found |= {uop}
            elif uop.op is Op.END:
                found -= set(uop.src[1:])
            self.inside[uop] = found
        return self.inside[uop]

    def value(self, uop: UOp, env: Env | None = None) -> Any:
        env = env or {}
        key = (uop, frozenset((r, env[r]) for r in self.ranges(uop)))
        if key not in self.values:
            self.values[key] = self.compute(uop, env)
        return self.values[key]

    def compute(self, uop: UOp, env: Env) -> Any:
        op, dtype = uop.op, uop.dtype
        if op is Op.PARAM:
            return self.args[uop.arg]
        if op is Op.RANGE:
            return env[uop]
        if op is Op.CALL:
            used = used_slots(uop.src[0])
            args = tuple(
                self.value(s, env) if i in used else None for i, s in enumerate(uop.src[1:])
            )
            return _Frame(args).value(uop.src[0])
        if op is Op.CONST:
            if uop.type.shape:
                return tuple(scalar(v, dtype) for v in uop.arg)
            return scalar(uop.arg, dtype)
        if op in (Op.BUFFER, Op.LOCAL):
            size = uop.type.shape[0]
            contents = self.value(uop.src[0]) if uop.src else (zero(dtype),) * size
            return Ref(Version(contents, 0), 0, size)
        if op is Op.AFTER:
            return Ref(self.after(uop, env), 0, uop.type.shape[0])
        srcs = [self.value(s, env) for s in uop.src]
        if op is Op.STACK:
            # of shaped values, element (j, i...) is element (i...) of source j: row-major, the
            # sources' elements one after another
            return sum(srcs, ()) if uop.src[0].type.shape else tuple(srcs)
        if op is Op.INDEX:
            return index(srcs)
        if op is Op.SHRINK and isinstance(srcs[0], Ref):  # a window of memory (week 2)
            (begin, _end), ref = uop.arg[0], srcs[0]
            return Ref(ref.version, ref.begin + begin, uop.type.shape[0])
        if op is Op.LOAD:
            place = srcs[0]
            if isinstance(place, Ref):  # a whole-buffer LOAD (uir.md section 8)
                return place.version.contents[place.begin : place.begin + place.size]
            return zero(dtype) if place.at is None else place.version.contents[place.at]
        if op is Op.STORE:
            # in loops its version is outside, a store writes that version in every iteration,
            # each on the state the previous iteration left (the later iteration wins)
            loops = self.ranges(uop) - self.ranges(version_of(uop))
            previous = self.previous(loops, env)
            base = srcs[0].version
            if previous is not None:  # this very store ran in it: its state is not None
                base = self.after_iteration(buffer_of(uop), loops, previous)
            if isinstance(srcs[0], Ref):  # a whole-buffer STORE, never in a loop
                return Write(base, srcs[0].begin, srcs[1])
            return Write(base, srcs[0].at, (srcs[1],))
        if op is Op.SINK:
            return [flat(v) for v in srcs]
        return shaped(uop, srcs)

    def after(self, uop: UOp, env: Env) -> Version:
        """The version an AFTER names: past the previous iteration of the loops it carries the
        buffer across, or (in their first iteration, or with none) after every other dep."""
        buffer = buffer_of(uop)
        carried = frozenset(d for d in uop.src[1:] if d.op is Op.RANGE)
        previous = self.previous(carried, env)
        if previous is not None:
            state = self.after_iteration(buffer, carried, previous)
            # that iteration wrote nothing to the buffer: the state it started from
            return state if state is not None else self.after(uop, previous)
        states = [self.value(uop.src[0], env).version]
        for dep in uop.src[1:]:
            if dep.op is Op.STORE:
                states.append(self.value(dep, env).next_version())
            elif dep.op is Op.END:
                states.append(self.after_loop(dep, buffer, env))
        return max((s for s in states if s is not None), key=lambda v: v.stores)

    def nest_order(self, loops: frozenset[UOp]) -> tuple[UOp, ...]:
        return tuple(sorted(loops, key=self.depth.__getitem__))

    def iterations(self, loops: tuple[UOp, ...], env: Env) -> list[Env]:
        """Every iteration of `loops` (outermost first) in order, the other counters of `env`
        fixed; each end is evaluated where its loop starts."""
        found = [env]
        for rng in loops:
            found = [e | {rng: k} for e in found for k in range(self.value(rng.src[0], e))]
        return found

    def previous(self, loops: frozenset[UOp], env: Env) -> Env | None:
        """The iteration of `loops` just before the one `env` is in, or None in the first."""
        if not loops:
            return None
        order = self.nest_order(loops)
        now = tuple(env[r] for r in order)
        earlier = [e for e in self.iterations(order, env) if tuple(e[r] for r in order) < now]
        return earlier[-1] if earlier else None

    def run_in(self, buffer: UOp, loops: frozenset[UOp], env: Env) -> list[UOp]:
        """The effects that run directly in an iteration of `loops` (`env` binds the counters):
        STOREs to `buffer` and ENDs inside every loop of `loops` and no other loop."""
        return [
            e
            for e in self.effects
            if loops <= self.ranges(e) <= env.keys() and (e.op is Op.END or buffer_of(e) is buffer)
        ]

    def after_iteration(self, buffer: UOp, loops: frozenset[UOp], env: Env) -> Version | None:
        """The buffer after the iteration `env` of `loops`, or None where nothing wrote it."""
        states = []
        for effect in self.run_in(buffer, loops, env):
            if effect.op is Op.STORE:
                states.append(self.value(effect, env).next_version())
            else:
                states.append(self.after_loop(effect, buffer, env))
        return max((s for s in states if s is not None), key=lambda v: v.stores, default=None)

    def after_loop(self, end: UOp, buffer: UOp, env: Env) -> Version | None:
        """The buffer after every iteration of the loops `end` closes; with no iteration that
        writes it, the state its first one would have started from (None: it never writes it)."""
        listed = end.src[1:]
        # first to last: each iteration builds on the one before, already known, so that the
        # evaluation never recurses through every earlier iteration
        states = [
            self.after_iteration(buffer, frozenset(listed), it)
            for it in self.iterations(listed, env)
        ]
        written = [s for s in states if s is not None]
        if written:
            return written[-1]
        return self.before_loop(buffer, frozenset(listed), env | {r: 0 for r in listed})

    def before_loop(self, buffer: UOp, loops: frozenset[UOp], first: Env) -> Version | None:
        """The state the first iteration of `loops` (`first`: every counter 0, whether or not the
        loops run) would start from: the oldest state its effects build on."""
        states = []
        for effect in self.run_in(buffer, loops, first):
            if effect.op is Op.STORE:
                states.append(self.value(effect, first).version)
            else:
                inner = effect.src[1:]
                states.append(
                    self.before_loop(buffer, frozenset(inner), first | {r: 0 for r in inner})
                )
        return min((s for s in states if s is not None), key=lambda v: v.stores, default=None)


def used_slots(body: UOp) -> frozenset[int]:
    """The PARAM slots a CALL body reads: those it reaches without entering a nested body, and
    passing a nested CALL only through the arguments that CALL's body reads in turn."""
    if body not in _USED:
        _USED[body] = frozenset(u.arg for u in reached(body) if u.op is Op.PARAM)
    return _USED[body]


_USED: weakref.WeakKeyDictionary[UOp, frozenset[int]] = weakref.WeakKeyDictionary()


def operands(uop: UOp) -> tuple[UOp, ...]:
    """The sources whose values `uop` needs: a CALL's are the arguments its body reads."""
    if uop.op is not Op.CALL:
        return uop.src
    used = used_slots(uop.src[0])
    return tuple(a for i, a in enumerate(uop.src[1:]) if i in used)


def reached(root: UOp) -> set[UOp]:
    """The UOps `root` reaches through `operands`, outside CALL bodies: what runs if `root` is a
    SINK (the program as if every CALL were inlined)."""
    seen, stack = {root}, [root]
    while stack:
        for s in operands(stack.pop()):
            if s not in seen:
                seen.add(s)
                stack.append(s)
    return seen


def shaped(uop: UOp, srcs: list[Any]) -> Any:
    """An ALU op, movement op, REDUCE or STAGE on values that may be shaped (flat tuples in
    row-major order, the shape read from the type)."""
    op, dtype, source = uop.op, uop.dtype, uop.src[0].dtype
    if op is Op.STAGE:
        return srcs[0]
    if op in SOURCE_INDEX:
        return moved(uop, srcs[0])
    if op is Op.REDUCE:
        return reduce(uop, srcs[0])
    if uop.type.shape:  # elementwise: every source has the result's shape
        return tuple(alu(op, dtype, list(xs), source) for xs in zip(*srcs, strict=True))
    return alu(op, dtype, srcs, source)


# --- shaped values at any rank (uir.md sections 8 and 9) ---

Index = tuple[int, ...]


def positions(shape: Index) -> list[Index]:
    """Every index of `shape`, in row-major order (the last axis varies fastest)."""
    return list(itertools.product(*(range(d) for d in shape)))


def flat_index(at: Index, shape: Index) -> int:
    flat = 0
    for i, d in zip(at, shape, strict=True):
        flat = flat * d + i
    return flat


# Each movement op as the spec defines it: for an index `o` of the result, the index of the
# source element found there (None: a PAD's zero), given the source's shape and the op's argument.
SourceIndex = Callable[[Index, Index, Index, Any], Index | None]  # o, shapes, arg -> source


def _expand_source(o: Index, shape: Index, result: Index, arg: Any) -> Index:
    lead = len(result) - len(shape)  # shapes align on the right; leading axes are new
    return tuple(0 if d == 1 else o[lead + a] for a, d in enumerate(shape))


def _permute_source(o: Index, shape: Index, result: Index, order: Any) -> Index:
    return tuple(o[order.index(a)] for a in range(len(shape)))  # result axis d is order[d]


def _pad_source(o: Index, shape: Index, result: Index, pairs: Any) -> Index | None:
    at = tuple(i - before for i, (before, _after) in zip(o, pairs, strict=True))
    return at if all(0 <= i < d for i, d in zip(at, shape, strict=True)) else None


def _shrink_source(o: Index, shape: Index, result: Index, pairs: Any) -> Index:
    return tuple(i + begin for i, (begin, _end) in zip(o, pairs, strict=True))


def _flip_source(o: Index, shape: Index, result: Index, axes: Any) -> Index:
    return tuple(
        d - 1 - i if a in axes else i for a, (i, d) in enumerate(zip(o, shape, strict=True))
    )


def _reshape_source(o: Index, shape: Index, result: Index, arg: Any) -> Index:
    flat = flat_index(o, result)  # the same row-major position, split in the source's shape
    at = []
    for d in reversed(shape):
        flat, i = divmod(flat, d)
        at.append(i)
    return tuple(reversed(at))


SOURCE_INDEX: dict[Op, SourceIndex] = {
    Op.RESHAPE: _reshape_source,
    Op.EXPAND: _expand_source,
    Op.PERMUTE: _permute_source,
    Op.PAD: _pad_source,
    Op.SHRINK: _shrink_source,
    Op.FLIP: _flip_source,
}


def moved(uop: UOp, x: Any) -> tuple[Scalar, ...]:
    """A movement op's result: each element the source's at the index its rule gives, or the
    dtype's zero (+0.0 for floats) where a PAD's rule gives none. A scalar EXPANDs as the
    one element of a shape of no axes."""
    shape, result = uop.src[0].type.shape, uop.type.shape
    elements = x if shape else (x,)
    source_index = SOURCE_INDEX[uop.op]
    found = []
    for o in positions(result):
        at = source_index(o, shape, result, uop.arg)
        found.append(zero(uop.dtype) if at is None else elements[flat_index(at, shape)])
    return tuple(found)


def reduce(uop: UOp, x: tuple[Scalar, ...]) -> Any:
    """REDUCE: each result element folds its source elements from the first, in row-major
    order over the reduced axes, one scalar op at a time (uir.md section 8)."""
    fold, axes = uop.arg[:2]  # FAST: the week-4 order is one legal order
    shape = uop.src[0].type.shape
    kept = [a for a in range(len(shape)) if a not in axes]
    results = []
    for k in positions(tuple(shape[a] for a in kept)):
        acc = None
        for r in positions(tuple(shape[a] for a in axes)):
            at = dict(zip(kept, k, strict=True)) | dict(zip(axes, r, strict=True))
            element = x[flat_index(tuple(at[a] for a in range(len(shape))), shape)]
            acc = element if acc is None else alu(fold, uop.dtype, [acc, element], uop.dtype)
        results.append(acc)
    return tuple(results) if uop.type.shape else results[0]


def version_of(uop: UOp) -> UOp:
    """The version a STORE, LOAD or INDEX of memory names, through any SHRINKs."""
    while uop.op not in (Op.BUFFER, Op.LOCAL, Op.AFTER):
        uop = uop.src[0]
    return uop


def buffer_of(uop: UOp) -> UOp:
    """The BUFFER or LOCAL under a version, window, place or STORE."""
    uop = version_of(uop)
    while uop.op is Op.AFTER:
        uop = version_of(uop.src[0])
    return uop


def index(srcs: list[Any]) -> Any:
    """INDEX of a vector is its element; INDEX of memory is a place (None where gated off)."""
    source, i = srcs[0], srcs[1]
    if isinstance(source, tuple):
        return source[i]
    if len(srcs) == 3 and not srcs[2]:
        return Place(source.version, None)
    return Place(source.version, source.begin + i)


def flat(value: Any) -> list[Scalar]:
    if isinstance(value, Ref):
        return list(value.version.contents[value.begin : value.begin + value.size])
    return list(value) if isinstance(value, tuple) else [value]


def run(sink: UOp) -> list[np.ndarray]:
    """The value of each SINK source of a verified program, flat, as a numpy array of the
    source's dtype (the one step where numpy holds the model's values)."""
    outputs = _Frame(root=sink).value(sink)
    return [np.array(v, dtype=s.dtype.storage) for v, s in zip(outputs, sink.src, strict=True)]
