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

from uir.core.dtypes import I32, Type
from uir.core.engine import Origins, graph_rewrite
from uir.core.errors import BackendError
from uir.core.loops import range_id
from uir.core.memory import Kind, kind, version_of
from uir.core.ops import ALU, Op
from uir.core.pattern import P, Rules
from uir.core.shapes import fold_identity, reduce_arg
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
    fusible: frozenset[UOp]  # REDUCEs read by one kernel only: fused into it (`_fused`)
    # values too dear to compute once per reader (`_kept`) -> whether one kernel reads them all
    costly: dict[UOp, bool]
    materialized: dict[UOp, UOp] = field(default_factory=dict)  # value -> its buffer's version
    # (REDUCE, index) -> its element; (costly value, index of a row) -> the row's scratch
    fused: dict[tuple[UOp, Index], UOp] = field(default_factory=dict)
    # every RANGE rangeify made -> the loops around it, outermost first, itself last
    chains: dict[UOp, Index] = field(default_factory=dict)
    # (consumer's index, the nest's (trip, FAST) per axis) -> the fold nests made there, each
    # with the REDUCEs folding in it (`_shared_nest`)
    nests: dict[tuple, list[tuple[Index, list[UOp]]]] = field(default_factory=dict)
    reaches: dict[UOp, frozenset[UOp]] = field(default_factory=dict)  # REDUCE -> its source's UOps

    @classmethod
    def of(cls, sink: UOp, fuse: bool = True) -> Context:
        """Ids above every id the program uses, the versions its effects write, and what the
        fusion policy fuses (nothing with `fuse` false: week 4's policy, for comparisons)."""
        uops = sink.toposort(bodies=False)

        def above(op: Op, id_of: Callable[[UOp], int]) -> int:
            return max((id_of(u) + 1 for u in uops if u.op is op), default=0)

        written = frozenset(
            v for u in uops if u.op is Op.STORE for v in _built_on(version_of(u.src[0]))
        )

        def slot(u: UOp) -> int:
            return u.arg

        return cls(
            above(Op.RANGE, range_id),
            above(Op.LOCAL, slot),
            above(Op.BUFFER, slot),
            written,
            *(_fusion(uops) if fuse else (frozenset(), {})),
        )


_SHARED = object()  # the owner of a value that more than one kernel reads

COSTLY = frozenset({Op.EXP2, Op.LOG2, Op.SIN, Op.SQRT})
"""Ops too dear to compute again for each reader of their result (spec/uir-week6.md 2.3)."""


def _fusion(uops: Sequence[UOp]) -> tuple[frozenset[UOp], dict[UOp, bool]]:
    """The fusion policy (spec/uir-week6.md section 2): the REDUCEs that one kernel reads, each
    fused into that kernel, and the values of a COSTLY op with more than one reader, each
    materialized once instead of computed at every read.

    A kernel is named by what it materializes (a STAGE, a REDUCE of its own, an output, a
    STORE); a value computed element by element belongs to the kernel of its readers when they
    are all in one. Walking from the SINK towards the leaves, a REDUCE read by one kernel joins
    it (its source is then computed there too); one read by two kernels is materialized once,
    not folded again in each. A costly value read by one kernel is kept there, a row at a time
    (`_kept`); read by two, it is a buffer of its own."""
    users: dict[UOp, set[UOp]] = {}
    for u in uops:
        for s in u.src:
            users.setdefault(s, set()).add(u)
    owner: dict[UOp, object] = {}
    fusible: set[UOp] = set()
    costly: dict[UOp, bool] = {}

    def kernel_of(user: UOp, value: UOp) -> object:
        if user.op is Op.SINK:
            return value  # an output is written by a fill of its own
        if user in fusible or (_computed_in_place(user) and owner[user] is not _SHARED):
            return owner[user]
        if _computed_in_place(user) and user not in costly:
            return _SHARED  # recomputed in each kernel reading it, its sources too
        return user  # materialized: a kernel of its own

    broadcast: set[UOp] = set()  # values a fold reads through an EXPAND: a kernel of their own
    for u in reversed(uops):  # readers before what they read
        if u in broadcast:
            owner[u] = u
            continue
        kernels = {kernel_of(user, u) for user in users.get(u, ())}
        owner[u] = kernels.pop() if len(kernels) == 1 else _SHARED
        if u.op is Op.REDUCE:
            for value in _broadcast_into(u):
                broadcast.add(value)
                costly[value] = False  # materialized whole (`_kept`)
        if u.op is Op.REDUCE and _folds_last(u) and owner[u] is not _SHARED:
            fusible.add(u)
        elif u.op in COSTLY and _computed_in_place(u) and len(users.get(u, ())) > 1:
            costly[u] = owner[u] is not _SHARED
    return frozenset(fusible), costly


BROADCAST_COST = 4
"""The ops (ALU ops and loads) per element above which a value a fold reads through a broadcast
is materialized once instead of computed in the fold's loop (spec/uir-week6.md 2.3)."""


def _broadcast_into(reduce: UOp) -> list[UOp]:
    """The elementwise values that `reduce`'s fused source reads through an EXPAND and that cost
    BROADCAST_COST ops or more an element. The fold's loop nest runs over the broadcast axes
    too, so a fused value under an EXPAND is computed again for every element of them: the
    gradient of a GELU feeding a matmul's K loop was computed once per output column. Each
    is materialized once (a LOCAL filled by a kernel of its own) and the fold loads it."""
    found: list[UOp] = []
    seen: set[UOp] = set()
    stack: list[tuple[UOp, bool]] = [(reduce.src[0], False)]
    while stack:
        u, broadcast = stack.pop()
        if u in seen or not _computed_in_place(u):
            continue
        seen.add(u)
        if u.op is Op.EXPAND:
            broadcast = broadcast or u.type.size > u.src[0].type.size
        elif broadcast and u.op in ALU:
            if _element_cost(u) >= BROADCAST_COST:
                found.append(u)
            continue  # computed once, or cheap enough (and its sources cheaper) to recompute
        stack.extend((s, broadcast) for s in u.src if s.type.shape)
    return found


def _element_cost(value: UOp) -> int:
    """The ALU ops and loads that computing one element of `value` in place spends (each
    distinct UOp once), stopping at what is read from memory."""
    cost, seen, stack = 0, set(), [value]
    while stack:
        u = stack.pop()
        if u in seen:
            continue
        seen.add(u)
        if not _computed_in_place(u):
            cost += 1  # a load of a materialized value
            continue
        cost += u.op in ALU or u.op is Op.LOAD
        stack.extend(s for s in u.src if s.type.shape)
    return cost


def _folds_last(reduce: UOp) -> bool:
    """Whether a shaped REDUCE folds its source's last axes only (a row sum, not a column sum)."""
    _, axes, _ = reduce_arg(reduce.arg)
    rank = len(reduce.src[0].type.shape)
    return bool(reduce.type.shape) and sorted(axes) == list(range(rank - len(axes), rank))


def _computed_in_place(uop: UOp) -> bool:
    """Whether rangeify computes the elements of `uop` where they are read (fused), not into a
    buffer of their own."""
    if not uop.type.shape or kind(uop) is not Kind.VALUE:
        return False
    if uop.op in ALU or uop.op in INDEX_MAPS or uop.op is Op.PAD:
        return True
    return uop.op in (Op.LOAD, Op.CONST) or (uop.op is Op.STACK and _stacks_shapes(uop))


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


def _new_local(type_: Type, ctx: Context) -> UOp:
    """A LOCAL with a fresh id: every materialized value and scratch has a buffer of its own."""
    ctx.next_local += 1
    return UOp(Op.LOCAL, type_, (), ctx.next_local - 1)


def _new_range(end: int, ctx: Context, parallel: bool, fast: bool = False) -> UOp:
    # A fresh id for every loop: two loops over one bound are distinct RANGEs (uir.md 7).
    ctx.next_range += 1
    rid = ctx.next_range - 1
    return UOp.range(_const(end), rid, parallel, fast)


def _output_range(end: int, ctx: Context) -> UOp:
    """A loop over the elements of a result: its iterations are independent by construction,
    which PARALLEL promises (spec/uir-week7.md)."""
    return _new_range(end, ctx, parallel=True)


def _reduce_range(end: int, ctx: Context, fast: bool = False) -> UOp:
    """A loop over a reduced axis: it carries an accumulator, so it runs in order; a FAST
    REDUCE's is marked FAST, which lets a backend split its fold (spec/uir-week8.md 1.1)."""
    return _new_range(end, ctx, parallel=False, fast=fast)


def _flat(index: Index, shape: Sequence[int]) -> UOp:
    """The row-major position of `index` in a buffer holding a value of `shape`."""
    if not index:
        return _const(0)
    flat = index[0]
    for i, dim in zip(index[1:], shape[1:], strict=True):
        flat = _plus(flat if dim == 1 else flat.alu(Op.MUL, _const(dim)), i)
    return flat


def _plus(a: UOp, b: UOp) -> UOp:
    """`a + b`, without adding a zero: an index built through several movement ops then stays
    one UOp, so that two reads of one element of a fused REDUCE are one (hash-consing)."""
    if _is_zero(b):
        return a
    return b if _is_zero(a) else a.alu(Op.ADD, b)


def _is_zero(u: UOp) -> bool:
    return u.op is Op.CONST and u.arg == 0


def element(value: UOp, index: Index) -> UOp:
    """Element `index` of `value` (a scalar is its own only element), as the rules will lower it."""
    if not value.type.shape:
        return value
    return value.index(*index)


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
        return _load(memory, at, source.type.shape, gate)
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
    _nest_under((), ranges, ctx)
    value = at(ranges)
    store = dest.index(_flat(ranges, shape)).store(value)
    return store.end(*ranges) if ranges else store


def _store(dest: UOp, value: UOp, ctx: Context) -> UOp:
    """The effect writing `value` (shaped, or a scalar) into `dest`."""
    return _fill(dest, value.type.shape, lambda index: element(value, index), ctx)


def _reduce(dest: UOp, reduce: UOp, ctx: Context, around: Index | None = None) -> UOp:
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
    the nest.

    Materialized (`around` None), the outer loops are the reduction's own and `dest` holds every
    accumulator. Fused (`_fused`, every reduced axis last), `around` is the consumer's index of
    the kept axes: the fold runs inside the consumer's loops, and `dest` holds the one
    accumulator of an iteration of them, each iteration's own scratch (spec/uir-week7.md rule
    3), which the AFTER starting it lists."""
    (source,) = reduce.src
    op, axes, fast = reduce_arg(reduce.arg)  # FAST or not: the week-4 order is a legal one
    shape = source.type.shape
    first = min(axes, default=len(shape))
    if around is None:
        outer = tuple(_output_range(shape[d], ctx) for d in range(first))
        _nest_under((), outer, ctx)
        chain, start, held = outer, dest, reduce.type.shape
    else:
        outer, chain = around, _chain_of(around, ctx) or ()
        start = dest.after(*chain) if chain else dest
        held = ()
    # The nest carries the accumulators across all its loops, kept axes' too: none is PARALLEL.
    # Only a reduced axis's range is FAST: a kept axis nested among them still runs in order.
    # A fused plain fold may share its nest with a sibling's (`_shared_nest`); a FAST one keeps
    # its own, since the CUDA block fold splits one accumulator's nest across a block's threads.
    dims = tuple((shape[d], fast and d in axes) for d in range(first, len(shape)))
    shareable = around is not None and not fast
    nest = _shared_nest(reduce, around, dims, ctx) if shareable else None
    if nest is None:
        nest = tuple(_reduce_range(trip, ctx, fold_fast) for trip, fold_fast in dims)
        _nest_under(chain, nest, ctx)
        if shareable:
            ctx.nests.setdefault((around, dims), []).append((nest, [reduce]))
    index = outer + nest
    kept = [d for d in range(first, len(shape)) if d not in axes]
    scalar = reduce.type.scalar

    def accumulator(memory: UOp, inner: Index) -> UOp:
        at = inner if around is not None else outer + inner
        return memory.index(_flat(at, held))

    fresh = tuple(_output_range(shape[d], ctx) for d in kept)  # the init loop's own
    _nest_under(chain, fresh, ctx)
    init = accumulator(start, fresh).store(_identity_const(op, scalar))
    if fresh:
        init = init.end(*fresh)
    carried = dest.after(init, *nest)
    place = accumulator(carried, tuple(index[d] for d in kept))
    total = place.load().alu(op, element(source, index))
    end = place.store(total).end(*nest)
    return end.end(*outer) if outer and around is None else end


def _fused(reduce: UOp, index: Index, ctx: Context) -> UOp | None:
    """Element `index` of `reduce` folded inside the loops of the kernel reading it (the fusion
    policy, spec/uir-week6.md section 2), or None when that would fold one element more than
    once: when the loops around the consumer's index run more iterations than the REDUCE has
    elements. A row softmax reads the row maximum at its row index: the max loop runs once a
    row, inside the row loop. Only a REDUCE whose reduced axes are the last ones is fusible
    (`_fusion`): one with a kept axis inside a reduced one keeps its own nest, the
    program's axis order being its loop order (spec/rangeify.md 2)."""
    key = (reduce, index)
    found = ctx.fused.get(key)
    if found is not None:
        return found
    chain = _chain_of(index, ctx)
    if chain is None or _trips(chain) > reduce.type.size:
        return None
    local = _new_local(Type(reduce.dtype, (1,)), ctx)
    done = local.after(_reduce(local, reduce, ctx, index))
    found = ctx.fused[key] = _load(done, (), ())
    return found


def _shared_nest(reduce: UOp, around: Index, dims: tuple, ctx: Context) -> Index | None:
    """A fold nest that `reduce`, fused at the consumer's index `around`, can share with the
    sibling folds already in it (spec/uir-week6.md 2.2): the same loops under the same consumer
    iteration, and no fold of it and `reduce` reading the other's result (which needs the
    other's loops finished first). None when there is none."""
    for nest, folds in ctx.nests.get((around, dims), ()):
        if all(
            other not in _reached(reduce, ctx) and reduce not in _reached(other, ctx)
            for other in folds
        ):
            folds.append(reduce)
            return nest
    return None


def _reached(reduce: UOp, ctx: Context) -> frozenset[UOp]:
    found = ctx.reaches.get(reduce)
    if found is None:
        found = ctx.reaches[reduce] = frozenset(reduce.src[0].toposort())
    return found


def _nest_under(chain: Index, ranges: Index, ctx: Context) -> None:
    """Record that `ranges` nest, outermost first, inside the loops `chain`."""
    for k, r in enumerate(ranges):
        ctx.chains[r] = chain + ranges[: k + 1]


def _ranges_in(index: Index) -> set[UOp]:
    return {u for i in index for u in i.toposort() if u.op is Op.RANGE}


def _chain_of(index: Index, ctx: Context) -> Index | None:
    """The loops that an expression of `index` runs inside (outermost first): the chain of its
    innermost RANGE, or None when its RANGEs are not all on one chain of loops rangeify made (a
    program's own loop: its trip count is unknown here)."""
    ranges = _ranges_in(index)
    chains = [ctx.chains.get(r) for r in ranges]
    if any(c is None for c in chains):
        return None
    longest = max(chains, key=len, default=())
    return longest if ranges <= set(longest) else None


def _trips(chain: Index) -> int:
    """How many times a statement inside the loops `chain` runs (their ends are constants)."""
    return math.prod(r.src[0].arg for r in chain)


def _identity_const(op: Op, scalar: Type) -> UOp:
    return UOp(Op.CONST, scalar, (), fold_identity(op, scalar.dtype))


def _materialized(value: UOp, ctx: Context) -> UOp:
    """The version of a new LOCAL holding the STAGE, REDUCE or whole-buffer LOAD `value` once
    computed: each is computed once, however many elements of it are read."""
    if value.op is Op.STAGE and value.src[0].op in (Op.STAGE, Op.REDUCE):
        return _materialized(value.src[0], ctx)  # already materialized: no second copy
    found = ctx.materialized.get(value)
    if found is None:
        local = _new_local(_buffer_type(value), ctx)
        if value.op is Op.REDUCE:
            done = _reduce(local, value, ctx)
        elif value.op is Op.STAGE:
            done = _store(local, value.src[0], ctx)
        elif value.op in ALU:  # a costly value that several kernels read (`_kept`)
            done = _fill(local, value.type.shape, lambda i: _elementwise(value, i), ctx)
        else:  # a snapshot of the memory a whole-buffer LOAD reads
            shape, memory = value.type.shape, value.src[0]
            done = _fill(local, shape, lambda i: _load(memory, i, shape), ctx)
        found = ctx.materialized[value] = local.after(done)
    return found


def _load(memory: UOp, index: Index, shape: Sequence[int], gate: UOp | None = None) -> UOp:
    """Element `index` of the value of `shape` that `memory` holds flat, read (if `gate`)."""
    return memory.index(_flat(index, shape), gate=gate).load()


def _memory_of(value: UOp, ctx: Context) -> UOp | None:
    """The memory the elements of `value` are loaded from, or None where they are computed: a
    STAGE's or REDUCE's LOCAL, a whole-buffer LOAD's buffer version (or a snapshot of it, taken
    before some effect of the program overwrites it: a fused LOAD would run in a loop that may
    come after that effect)."""
    if value.op in (Op.STAGE, Op.REDUCE):
        return _materialized(value, ctx)
    if value.op is Op.LOAD and value.type.shape:  # a scalar LOAD is a value, read once
        memory = value.src[0]
        return _materialized(value, ctx) if version_of(memory) in ctx.written else memory
    return None


# --- the rules -------------------------------------------------------------------------------


def _element_of(ix: UOp, ctx: Context) -> UOp | None:
    """Push an INDEX of a shaped value one op towards the leaves (module docstring)."""
    value, index = ix.src[0], ix.src[1:]
    op, shape = value.op, value.type.shape
    if op in ALU:
        if value in ctx.costly:
            return _kept(value, index, ctx)
        return _elementwise(value, index)
    if op in INDEX_MAPS:
        return element(value.src[0], INDEX_MAPS[op](value, index))
    if op is Op.PAD:
        return _padded(value, index, ctx)
    if op is Op.STACK and _stacks_shapes(value):
        return _stacked(value, index)
    if op is Op.REDUCE and value in ctx.fusible:
        fused = _fused(value, index, ctx)
        if fused is not None:
            return fused
    memory = _memory_of(value, ctx)
    if memory is not None:
        return _load(memory, index, shape)
    if op is Op.CONST:
        if value.arg.is_fill:
            return UOp(Op.CONST, ix.type, (), value.arg[0])
        if len(shape) == 1:
            return None  # week 1's INDEX of a vector constant: a table in C
        flat = value.replace(type=_buffer_type(value))
        return flat.index(_flat(index, shape))
    if op is Op.STACK and len(shape) == 1:
        return None  # week 1's INDEX of a small vector
    if op is Op.CALL:
        raise BackendError("rangeify needs the program's CALLs inlined first")
    raise BackendError(f"rangeify cannot lower an element of {op} {value.type}")


def _elementwise(value: UOp, index: Index) -> UOp:
    """Element `index` of an elementwise op: the op of its sources' elements."""
    return UOp(value.op, value.type.scalar, tuple(element(s, index) for s in value.src), value.arg)


def _kept(value: UOp, index: Index, ctx: Context) -> UOp:
    """Element `index` of a COSTLY value with several readers, computed once: when the loops
    around the reader run once per row of `value` (a row softmax's exps, read by the sum and by
    the division), the row is computed into a scratch LOCAL in that loop and every reader of
    that row reads it there; else `value` is materialized whole, in a kernel of its own."""
    prefix, shape = index[:-1], value.type.shape
    key = (value, prefix)
    found = ctx.fused.get(key)
    if found is None:
        chain = _chain_of(prefix, ctx)
        if not ctx.costly[value] or not chain or _trips(chain) > math.prod(shape[:-1]):
            return _load(_materialized(value, ctx), index, shape)
        local = _new_local(Type(value.dtype, (shape[-1],)), ctx)
        # a plain range: the row is the scratch of one iteration of `chain` (uir-week7.md rule 3)
        j = _reduce_range(shape[-1], ctx)
        _nest_under(chain, (j,), ctx)
        store = local.after(*chain, j).index(j).store(_elementwise(value, (*prefix, j)))
        found = ctx.fused[key] = local.after(store.end(j))
    return _load(found, index[-1:], shape[-1:])


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
            source = buffer.after(_store(buffer, source, ctx))
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
            lambda r, ctx: _load(_materialized(r, ctx), (), ()),
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


def rangeify(flat: UOp, origins: Origins | None = None, *, fuse: bool = True) -> UOp:
    """The program under `flat`, its CALLs inlined (uir.core.calls.inline_calls), with every
    shaped value lowered to loops; the very same object when it has none. `origins` records what
    each new UOp stands for. `fuse` false materializes every REDUCE and computes a costly value
    at each read, as week 4 did (benchmarks/fusion_bench.py compares the two)."""
    if not any(map(_to_lower, flat.toposort(bodies=False))):
        return flat  # most programs of weeks 1-3: no walk of the rules at all
    ctx = Context.of(flat, fuse)
    return graph_rewrite(flat, rangeify_rules, ctx, bottom_up=False, origins=origins)


def _to_lower(uop: UOp) -> bool:
    """Whether rangeify has something to do with `uop` (week 1's vectors and their INDEX stay)."""
    if uop.op in (Op.REDUCE, Op.STAGE) or (uop.op is Op.STORE and _is_whole(uop)):
        return True
    return _needs_buffer(uop)
