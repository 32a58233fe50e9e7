"""Rangeify: shaped values lowered to loops over scalars (uir.md section 8, spec/rangeify.md).

The output is a week-3 program: every element of a shaped value gets its index from RANGEs, and
every shaped result lives in a buffer written by a STORE inside loops, closed by an END and read
through an AFTER of that END.

One internal form carries the lowering: `INDEX T v i0 .. i(r-1)`, element `(i0, ..)` of the shaped
value `v` of rank r (for rank 1 this is week 1's INDEX of a value). The rules, run top-down so that
they meet a value before its operands, push such an INDEX towards the leaves:

- elementwise ops (ALU, WHERE, compares, CAST, BITCAST) are fused: the element of `a + b` is the
  element of `a` plus the element of `b`, recomputed at each use;
- a movement op maps the index (`INDEX_MAPS`: EXPAND, RESHAPE, PERMUTE, SHRINK, FLIP): the maps
  compose as the INDEX passes through one op after another; PAD gates the read of a source
  held in memory (a gated INDEX), and picks a computed source's element, read at a clamped index,
  by a WHERE; a STACK of shaped values picks its source by a WHERE chain;
- a whole-buffer LOAD becomes a scalar LOAD of the element (fused) unless some effect of the
  program overwrites the version it reads: a fused LOAD would then run in a loop that may come
  after that effect, so such a LOAD is first copied into a LOCAL (a snapshot);
- STAGE and REDUCE are materialized, once each, into a new LOCAL: the element is a LOAD of it;
- a uniform shaped CONST gives its scalar; other small vectors (STACK, shaped CONST) stay as
  week 1's INDEX of a value.

Outputs are materialized too: a shaped SINK source (other than a STACK or CONST, which are week 1
values already) is written into a new global BUFFER whose contents are printed, and a whole-buffer
STORE becomes a loop of scalar STOREs into its own target.

The index arithmetic is left as the maps build it: the simplifier cleans it next, with the bounds
of the new RANGEs (uir.rewrite.passes.lower_shapes).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from uir.core.dtypes import I32, VOID, DType, Type
from uir.core.engine import Origins, graph_rewrite
from uir.core.errors import BackendError
from uir.core.loops import range_id
from uir.core.memory import Kind, kind, version_of
from uir.core.ops import ALU, PARALLEL, Op
from uir.core.pattern import P, Rules
from uir.core.uop import UOp

Index = tuple[UOp, ...]
"""One i32 scalar per axis of a shaped value: which element."""

IndexMap = Callable[[UOp, Index], Index]
"""A movement op's map: (the op, an index of its result) -> the index of its source."""


@dataclass
class Context:
    """What the rules share while lowering one program: fresh ids and what is materialized."""

    next_range: int
    next_local: int
    next_slot: int
    written: frozenset[UOp]  # buffer versions some effect of the program writes
    materialized: dict[UOp, UOp] = field(default_factory=dict)  # value -> its buffer's version

    @classmethod
    def of(cls, sink: UOp) -> Context:
        """Ids above every id the program uses, and the versions its effects write."""
        uops = sink.toposort(bodies=False)

        def above(op: Op, id_of: Callable[[UOp], int]) -> int:
            return max((id_of(u) + 1 for u in uops if u.op is op), default=0)

        written = frozenset(
            v for u in uops if u.op is Op.STORE for v in _built_on(version_of(u.src[0]))
        )

        def slot(u: UOp) -> int:
            return u.arg

        return cls(
            above(Op.RANGE, range_id), above(Op.LOCAL, slot), above(Op.BUFFER, slot), written
        )


def _built_on(version: UOp) -> list[UOp]:
    """`version` and every older version of its memory under it: a STORE to an AFTER carried
    across a loop (an accumulator's `AFTER b init r`, or `AFTER b r` around an inner init)
    overwrites the version `b` the loop starts from, though no STORE names `b` itself."""
    found = [version]
    while version.op is Op.AFTER:
        version = version_of(version.src[0])
        found.append(version)
    return found


# --- ranges and indices ----------------------------------------------------------------------


def _const(value: int) -> UOp:
    return UOp(Op.CONST, I32, (), value)


def _new_range(end: int, ctx: Context, parallel: bool) -> UOp:
    # A fresh id for every loop: two loops over one bound are distinct RANGEs (uir.md 7).
    ctx.next_range += 1
    rid = ctx.next_range - 1
    return UOp(Op.RANGE, I32, (_const(end),), (rid, PARALLEL) if parallel else rid)


def _output_range(end: int, ctx: Context) -> UOp:
    """A loop over the elements of a result: its iterations are independent by construction,
    which PARALLEL promises (spec/uir-week7.md)."""
    return _new_range(end, ctx, parallel=True)


def _reduce_range(end: int, ctx: Context) -> UOp:
    """A loop over a reduced axis: it carries an accumulator, so it runs in order."""
    return _new_range(end, ctx, parallel=False)


def _flat(index: Index, shape: Sequence[int]) -> UOp:
    """The row-major position of `index` in a buffer holding a value of `shape`."""
    if not index:
        return _const(0)
    flat = index[0]
    for i, dim in zip(index[1:], shape[1:], strict=True):
        flat = flat.alu(Op.MUL, _const(dim)).alu(Op.ADD, i)
    return flat


def element(value: UOp, index: Index) -> UOp:
    """Element `index` of `value` (a scalar is its own only element), as the rules will lower it."""
    if not value.type.shape:
        return value
    return UOp(Op.INDEX, value.type.scalar, (value, *index))


def _expand_map(expand: UOp, index: Index) -> Index:
    """numpy's broadcast, right-aligned: a source axis of size 1 is read at 0."""
    shape = expand.src[0].type.shape
    kept = index[len(index) - len(shape) :]
    return tuple(_const(0) if dim == 1 else i for i, dim in zip(kept, shape, strict=True))


def _reshape_map(reshape: UOp, index: Index) -> Index:
    """Row-major: the result's index flattened, then split by the source's dims (div and mod;
    the simplifier removes those the ranges make unnecessary)."""
    flat = _flat(index, reshape.type.shape)
    shape = reshape.src[0].type.shape
    source = []
    for d, dim in enumerate(shape):
        stride = math.prod(shape[d + 1 :])
        i = flat if stride == 1 else flat.alu(Op.IDIV, _const(stride))
        source.append(i if d == 0 else i.alu(Op.MOD, _const(dim)))  # axis 0 needs no wrap
    return tuple(source)


def _permute_map(permute: UOp, index: Index) -> Index:
    """Result axis d is source axis order[d] (numpy.transpose)."""
    source: list[UOp] = list(index)
    for d, axis in enumerate(permute.arg):
        source[axis] = index[d]
    return tuple(source)


def _shrink_map(shrink: UOp, index: Index) -> Index:
    """The window's element i is the source's element begin + i."""
    begins = (begin for begin, _ in shrink.arg)
    return tuple(i.alu(Op.ADD, _const(b)) if b else i for i, b in zip(index, begins, strict=True))


def _flip_map(flip: UOp, index: Index) -> Index:
    """A reversed axis of size n reads element n-1-i."""
    shape = flip.type.shape
    return tuple(
        _const(shape[d] - 1).alu(Op.SUB, i) if d in flip.arg else i for d, i in enumerate(index)
    )


INDEX_MAPS: dict[Op, IndexMap] = {
    Op.EXPAND: _expand_map,
    Op.RESHAPE: _reshape_map,
    Op.PERMUTE: _permute_map,
    Op.SHRINK: _shrink_map,
    Op.FLIP: _flip_map,
}
"""Each movement op's index map: every element of the result is one element of the source.
PAD and STACK select instead (`_padded`, `_stacked`): an element there is a choice."""


def _padded(pad: UOp, index: Index, ctx: Context) -> UOp:
    """An element of PAD: the source's element where the index lies inside it, else the dtype's
    zero (spec/uir-week5.md 11.4). The validity is a gate mask. Where the source, through index
    maps, is read from memory, the mask gates that read's INDEX: a gated-off LOAD reads nothing
    and gives the zero. Otherwise the element is computed, and a WHERE picks it or the zero; a
    WHERE computes both branches, so the source is read at a clamped index, in range whatever
    the gate says. The simplifier drops the clamps and compares that the ranges make
    unnecessary."""
    shape = pad.src[0].type.shape
    shifted, clamped, inside = [], [], []
    for i, dim, (before, after) in zip(index, shape, pad.arg, strict=True):
        j = i.alu(Op.SUB, _const(before)) if before else i
        shifted.append(j)
        if before:
            inside.append(_const(before).alu(Op.CMPLE, i))
            j = j.alu(Op.MAX, _const(0))
        if after:
            inside.append(i.alu(Op.CMPLT, _const(before + dim)))
            j = j.alu(Op.MIN, _const(dim - 1))
        clamped.append(j)
    if not inside:
        return element(pad.src[0], tuple(shifted))
    gate = functools.reduce(lambda a, b: a.alu(Op.AND, b), inside)
    source, at = pad.src[0], tuple(shifted)
    while source.op in INDEX_MAPS:
        source, at = source.src[0], INDEX_MAPS[source.op](source, at)
    memory = _memory_of(source, ctx)
    if memory is not None:
        return _load(memory, at, source.type.shape, source.dtype, gate)
    value = element(pad.src[0], tuple(clamped))
    return gate.alu(Op.WHERE, value, value.const_like(0))


def _stacked(stack: UOp, index: Index) -> UOp:
    """An element of a STACK of shaped values: the leading index picks the source, through a
    chain of WHERE (the last source where no earlier one is picked)."""
    which, rest = index[0], index[1:]
    choice = element(stack.src[-1], rest)
    for k in range(len(stack.src) - 2, -1, -1):
        picked = which.alu(Op.CMPEQ, _const(k))
        choice = picked.alu(Op.WHERE, element(stack.src[k], rest), choice)
    return choice


# --- materializing: loops that write buffers ---------------------------------------------------


def _buffer_type(value: UOp) -> Type:
    return Type(value.dtype, (value.type.size,))  # buffers are flat (uir.md 6.1)


def _fill(dest: UOp, shape: Sequence[int], at: Callable[[Index], UOp], ctx: Context) -> UOp:
    """The effect storing `at(index)` for every index of `shape` into `dest` (a buffer version or
    window of that many elements), row-major: the END of a loop nest (a STORE for a scalar)."""
    ranges = tuple(_output_range(dim, ctx) for dim in shape)
    value = at(ranges)
    place = UOp(Op.INDEX, value.type, (dest, _flat(ranges, shape)))
    store = UOp(Op.STORE, VOID, (place, value))
    return UOp(Op.END, VOID, (store, *ranges)) if ranges else store


def _store(dest: UOp, value: UOp, ctx: Context) -> UOp:
    """The effect writing `value` (shaped, or a scalar) into `dest`."""
    return _fill(dest, value.type.shape, lambda index: element(value, index), ctx)


def _identity(op: Op, dtype: DType) -> int | float:
    """The start of a fold equal to starting from the first element (uir.md 8): -0.0, not +0.0,
    for a float sum, since -0.0 + x is x for every x and +0.0 + -0.0 is +0.0."""
    if op is Op.ADD:
        return -0.0 if dtype.is_float else 0
    if op is Op.MUL:
        return 1.0 if dtype.is_float else 1
    if dtype.is_float:
        return -float("inf") if op is Op.MAX else float("inf")
    return dtype.min if op is Op.MAX else dtype.max


def _reduce(dest: UOp, reduce: UOp, ctx: Context) -> UOp:
    """The END of the loops folding `reduce` into `dest`: for each output element, an accumulator
    in `dest` starts at the identity and takes every element of the reduced axes in row-major
    order, the loop-carried AFTER of uir.md 7 (`matmul_by_hand` of week 3 has the same shape).

    The loops nest in the order of the source's axes. The kept axes before the first reduced
    one are outermost, and the accumulators of each of their iterations are initialized first,
    by a loop of their own over the kept axes after it; then the remaining axes, reduced and
    kept, nest as the source lists them. A kept axis written after a reduced one thus runs
    inside it: a matmul written [M,K,N] with K folded runs i, k, j, its innermost loop reading
    rows of b and updating a row of accumulators in order. Each accumulator still takes its
    terms in the row-major order of the reduced axes, so the result is the same bits whatever
    the nest."""
    (source,) = reduce.src
    op, axes = reduce.arg
    shape = source.type.shape
    first = min(axes, default=len(shape))
    outer = tuple(_output_range(shape[d], ctx) for d in range(first))
    # The nest carries the accumulators across all its loops, kept axes' too: none is PARALLEL.
    nest = tuple(_reduce_range(shape[d], ctx) for d in range(first, len(shape)))
    index = outer + nest
    kept = [d for d in range(first, len(shape)) if d not in axes]
    scalar = reduce.type.scalar

    def accumulator(memory: UOp, inner: Index) -> UOp:
        return UOp(Op.INDEX, scalar, (memory, _flat(outer + inner, reduce.type.shape)))

    fresh = tuple(_output_range(shape[d], ctx) for d in kept)  # the init loop's own
    init = UOp(Op.STORE, VOID, (accumulator(dest, fresh), _identity_const(op, scalar)))
    if fresh:
        init = UOp(Op.END, VOID, (init, *fresh))
    carried = UOp(Op.AFTER, dest.type, (dest, init, *nest))
    place = accumulator(carried, tuple(index[d] for d in kept))
    total = UOp(op, scalar, (UOp(Op.LOAD, scalar, (place,)), element(source, index)))
    end = UOp(Op.END, VOID, (UOp(Op.STORE, VOID, (place, total)), *nest))
    return UOp(Op.END, VOID, (end, *outer)) if outer else end


def _identity_const(op: Op, scalar: Type) -> UOp:
    return UOp(Op.CONST, scalar, (), _identity(op, scalar.dtype))


def _materialized(value: UOp, ctx: Context) -> UOp:
    """The version of a new LOCAL holding the STAGE, REDUCE or whole-buffer LOAD `value` once
    computed: each is computed once, however many elements of it are read."""
    if value.op is Op.STAGE and value.src[0].op in (Op.STAGE, Op.REDUCE):
        return _materialized(value.src[0], ctx)  # already materialized: no second copy
    found = ctx.materialized.get(value)
    if found is None:
        local = UOp(Op.LOCAL, _buffer_type(value), (), ctx.next_local)
        ctx.next_local += 1
        if value.op is Op.REDUCE:
            done = _reduce(local, value, ctx)
        elif value.op is Op.STAGE:
            done = _store(local, value.src[0], ctx)
        else:  # a snapshot of the memory a whole-buffer LOAD reads
            shape, memory = value.type.shape, value.src[0]
            done = _fill(local, shape, lambda i: _load(memory, i, shape, value.dtype), ctx)
        found = ctx.materialized[value] = UOp(Op.AFTER, local.type, (local, done))
    return found


def _load(
    memory: UOp, index: Index, shape: Sequence[int], dtype: DType, gate: UOp | None = None
) -> UOp:
    scalar = Type(dtype)
    at = (memory, _flat(index, shape)) + ((gate,) if gate is not None else ())
    return UOp(Op.LOAD, scalar, (UOp(Op.INDEX, scalar, at),))


def _memory_of(value: UOp, ctx: Context) -> UOp | None:
    """The memory the elements of `value` are loaded from, or None where they are computed: a
    STAGE's or REDUCE's LOCAL, a whole-buffer LOAD's buffer version (or a snapshot of it, taken
    before some effect of the program overwrites it: a fused LOAD would run in a loop that may
    come after that effect)."""
    if value.op in (Op.STAGE, Op.REDUCE):
        return _materialized(value, ctx)
    if value.op is Op.LOAD:
        memory = value.src[0]
        return _materialized(value, ctx) if version_of(memory) in ctx.written else memory
    return None


# --- the rules -------------------------------------------------------------------------------


def _element_of(ix: UOp, ctx: Context) -> UOp | None:
    """Push an INDEX of a shaped value one op towards the leaves (module docstring)."""
    value, index = ix.src[0], ix.src[1:]
    op, shape = value.op, value.type.shape
    if op in ALU:
        return UOp(op, ix.type, tuple(element(s, index) for s in value.src), value.arg)
    if op in INDEX_MAPS:
        return element(value.src[0], INDEX_MAPS[op](value, index))
    if op is Op.PAD:
        return _padded(value, index, ctx)
    if op is Op.STACK and _stacks_shapes(value):
        return _stacked(value, index)
    memory = _memory_of(value, ctx)
    if memory is not None:
        return _load(memory, index, shape, value.dtype)
    if op is Op.CONST:
        if value.arg.is_fill:
            return UOp(Op.CONST, ix.type, (), value.arg[0])
        if len(shape) == 1:
            return None  # week 1's INDEX of a vector constant: a table in C
        flat = value.replace(type=_buffer_type(value))
        return UOp(Op.INDEX, ix.type, (flat, _flat(index, shape)))
    if op is Op.STACK and len(shape) == 1:
        return None  # week 1's INDEX of a small vector
    if op is Op.CALL:
        raise BackendError("rangeify needs the program's CALLs inlined first")
    raise BackendError(f"rangeify cannot lower an element of {op} {value.type}")


def _outputs(sink: UOp, ctx: Context) -> UOp | None:
    """Each shaped value the SINK prints, written into a new global BUFFER it prints instead.

    When one is, every value the SINK prints is (a scalar into a BUFFER of one element), each
    with a slot above the program's, in SINK order: the C ABI (spec/uir-week2-c.md section 1:
    buffers in slot order, then one output per value SINK source in SINK order) of the result is
    then the program's own, pointer for pointer, so C rendered after this pass runs under the
    ABI derived from the program as written."""
    if not any(_needs_buffer(s) for s in sink.src):
        return None
    sources = []
    for source in sink.src:
        if kind(source) is Kind.VALUE:
            buffer = UOp(Op.BUFFER, _buffer_type(source), (), ctx.next_slot)
            ctx.next_slot += 1
            source = UOp(Op.AFTER, buffer.type, (buffer, _store(buffer, source, ctx)))
        sources.append(source)
    return sink.replace(src=tuple(sources))


def _needs_buffer(source: UOp) -> bool:
    """Whether a SINK source is a shaped value that only loops can compute: not a memory
    reference, and not one of week 1's small vectors, which a week-3 program prints as they are."""
    if not source.type.shape or kind(source) is not Kind.VALUE:
        return False
    return source.op is not Op.CONST and not (source.op is Op.STACK and not _stacks_shapes(source))


def _stacks_shapes(stack: UOp) -> bool:
    """Whether a STACK stacks shaped values (week 5), not scalars (week 1's small vector)."""
    return bool(stack.src[0].type.shape)


def _is_element(uop: UOp) -> bool:
    return kind(uop) is Kind.VALUE and bool(uop.src) and bool(uop.src[0].type.shape)


def _is_whole(uop: UOp) -> bool:
    return kind(uop.src[0]) is Kind.MEMORY


def _is_scalar(uop: UOp) -> bool:
    return not uop.type.shape


rangeify_rules = Rules(
    [
        (P(Op.SINK, name="sink"), _outputs),
        (P(Op.INDEX, name="ix").such_that(_is_element), _element_of),
        # A scalar REDUCE (every axis folded) is read from its one-element LOCAL.
        (
            P(Op.REDUCE, name="r").such_that(_is_scalar),
            lambda r, ctx: _load(_materialized(r, ctx), (), (), r.dtype),
        ),
        # A scalar is computed once already, outside every loop: STAGE has nothing to add.
        (P(Op.STAGE, src=(P.var("x"),)).such_that(_is_scalar), lambda x: x),
        # A whole-buffer STORE writes its target element by element.
        (
            P(Op.STORE, src=(P.var("dest"), P.var("value"))).such_that(_is_whole),
            _store,
        ),
    ]
)


def rangeify(flat: UOp, origins: Origins | None = None) -> UOp:
    """The program under `flat`, its CALLs inlined (uir.core.calls.inline_calls), with every
    shaped value lowered to loops; the very same object when it has none. `origins` records what
    each new UOp stands for."""
    if not any(map(_to_lower, flat.toposort(bodies=False))):
        return flat  # most programs of weeks 1-3: no walk of the rules at all
    return graph_rewrite(flat, rangeify_rules, Context.of(flat), bottom_up=False, origins=origins)


def _to_lower(uop: UOp) -> bool:
    """Whether rangeify has something to do with `uop` (week 1's vectors and their INDEX stay)."""
    if uop.op in (Op.REDUCE, Op.STAGE) or (uop.op is Op.STORE and _is_whole(uop)):
        return True
    return _needs_buffer(uop)
