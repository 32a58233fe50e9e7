"""UOp graph -> one CUDA C translation unit: the kernels of a program, run in order (week 7).

Each kernel of the schedule (uir.core.kernels) is one `__global__`: a kernel that is a top-level
loop over a PARALLEL range has threads sharing that range's iterations (and those of PARALLEL
ranges nested directly inside it, flattened into one index), in a grid-stride loop whose
condition is the bounds check; any other kernel is one thread that runs its statements in order,
as the C backend's kernel function would. Statements render through
the C backend's `Emitter`, so every op means here exactly what it means in C.

All kernels take the same parameters: the C ABI's buffers and outputs (uir.backend.c.abi), then
the scratch arrays a run allocates zeroed (`Scratch`): `uir_values`, through which a value
computed in one kernel reaches the kernels that use it, and one array per LOCAL that several
threads or kernels share. A LOCAL carried across the ranges a kernel's threads share is instead
each thread's own array (each iteration's scratch, spec/uir-week7.md rule 3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from uir.backend.c.abi import (
    Layout,
    is_memory,
    layout,
    storage_ctype,
    storage_itemsize,
    value_ctype,
    value_itemsize,
)
from uir.backend.c.prelude import Helpers
from uir.backend.c.render import ALU_RENDER, Emitter, fused_multiply_add, literal
from uir.core.bounds import bounds
from uir.core.contraction import multiply_adds
from uir.core.errors import BackendError
from uir.core.kernels import Kernel, Schedule, values_read
from uir.core.loops import is_fast, is_parallel, range_id
from uir.core.memory import buffer_of, window
from uir.core.ops import Op
from uir.core.schedule import Block, flatten
from uir.core.shapes import fold_identity
from uir.core.uop import UOp

# Threads per block of a PARALLEL kernel, and the most blocks one launches: more iterations than
# THREADS * MAX_BLOCKS run in turns of the grid-stride loop (an end loaded from memory may be as
# large as 2^31 - 1, which sizes no grid).
THREADS = 256
MAX_BLOCKS = 65536
# The most bytes of shared memory a kernel may declare statically: a block running one row keeps
# its carried LOCALs there beside each fold's THREADS partials (8 bytes each at most).
SHARED_BYTES = 48 * 1024
# The most iterations the flattened index of collapsed PARALLEL ranges may count: it is an int64.
_MAX_FLAT = 1 << 62

PRELUDE = """\
#if defined(__CUDACC_RTC__)
/* NVRTC has no system headers: the <stdint.h> and <math.h> names the helpers use. */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#define INT8_MIN (-128)
#define INT16_MIN (-32768)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295u
#define UINT64_MAX 18446744073709551615ull
#define UINT64_C(x) x##ull
/* Constant expressions, so that static tables may hold them (__int_as_float is not one). */
#define NAN (0.0f / 0.0f)
#define INFINITY (1.0f / 0.0f)
#endif"""


@dataclass(frozen=True)
class Launch:
    """One kernel as launched: its name, its grid (`blocks` of `threads`), the ranges its
    threads share (none for a kernel of one thread), and the FAST ranges whose folds the threads
    of its one block share through shared memory and barriers (`folds`; `barriers` true when it
    has any: cuda-emu then runs a block's threads so that they meet at each barrier)."""

    name: str
    blocks: int
    threads: int
    ranges: tuple[UOp, ...]
    folds: tuple[UOp, ...] = ()

    @property
    def barriers(self) -> bool:
        return bool(self.folds)


@dataclass(frozen=True)
class Scratch:
    """A zeroed array every kernel takes after the ABI's pointers: `count` elements of `ctype`,
    `itemsize` bytes each."""

    name: str
    ctype: str
    count: int
    itemsize: int


@dataclass(frozen=True)
class Rendered:
    """A program's CUDA source and what running it needs: kernels in launch order, the C ABI of
    its buffers and outputs, and the scratch arrays to allocate."""

    source: str
    kernels: tuple[Launch, ...]
    abi: Layout
    scratch: tuple[Scratch, ...]

    def parameters(self) -> list[str]:
        """Every kernel's parameters, in order (C declarations)."""
        return _parameters(self.abi, self.scratch)


def _parameters(abi: Layout, scratch: Sequence[Scratch]) -> list[str]:
    # __restrict__: no two parameters overlap (the C ABI, and scratch arrays are separate).
    params = [f"{storage_ctype(b.type.dtype)} *__restrict__ buf{b.slot}" for b in abi.buffers]
    params += [f"{storage_ctype(t.dtype)} *__restrict__ out{i}" for i, t in enumerate(abi.outputs)]
    params += [f"{s.ctype} *__restrict__ {s.name}" for s in scratch]
    return params


@dataclass
class _Part:
    """A kernel of the schedule as CUDA launches it (`kernel` None for the one-thread kernel that
    only copies the outputs out, after a last kernel that is a PARALLEL loop)."""

    kernel: Kernel | None
    ranges: tuple[UOp, ...] = ()  # the PARALLEL ranges its threads share; () for one thread
    body: Block | None = None  # for a PARALLEL part: the innermost collapsed loop's body
    folds: dict[int, _Fold] | None = None  # top-level item -> the FAST fold a block shares

    @property
    def items(self) -> list[UOp | Block]:
        return [] if self.kernel is None else list(self.kernel.items)

    @property
    def statements(self) -> tuple[UOp, ...]:
        return () if self.kernel is None else self.kernel.statements


def _collapse(loop: Block) -> tuple[tuple[UOp, ...], Block]:
    """The PARALLEL ranges of a top-level PARALLEL loop that threads can share, outermost first,
    and the body the threads run for each combination of them. An inner PARALLEL loop joins when
    everything else in the loop around it is a value that reads no memory (so running it once per
    inner iteration changes nothing) and its end is computed outside the nest (the grid is sized
    before the kernel runs)."""
    assert loop.range is not None
    ranges, items = [loop.range], []
    inner: Block | None = loop
    flat = 1
    while inner is not None:
        assert inner.range is not None
        flat *= max(bounds(inner.range.src[0])[1], 1)
        blocks = [i for i in inner.body if isinstance(i, Block)]
        others = [i for i in inner.body if not isinstance(i, Block)]
        nxt = blocks[0] if len(blocks) == 1 else None
        joins = (
            nxt is not None
            and nxt.range is not None
            and is_parallel(nxt.range)
            and all(u.op not in (Op.LOAD, Op.STORE) for u in others)
            and nxt.range.src[0] not in set(flatten(loop))
            and flat * max(bounds(nxt.range.src[0])[1], 1) <= _MAX_FLAT
        )
        if not joins:
            items += inner.body
            break
        assert nxt is not None and nxt.range is not None
        items += others
        ranges.append(nxt.range)
        inner = nxt
    return tuple(ranges), Block(None, items)


@dataclass(frozen=True)
class _Fold:
    """A top-level nest of loops over FAST ranges (spec/uir-week8.md 1.1), each directly inside
    the one before, whose innermost body folds one term into one accumulator: `store` writes
    `combine` (the accumulator's `load` OP the term) back to `place`, whose index is computed
    before the nest. The outer loops' bodies hold only values (`values`, which read no memory).
    The iterations of the whole nest may be split over the threads of a block, each folding a
    share from the identity, the shares combined by a tree."""

    loop: Block
    ranges: tuple[UOp, ...]
    values: tuple[UOp, ...]
    body: tuple[UOp, ...]
    place: UOp
    load: UOp
    combine: UOp
    store: UOp

    @property
    def term(self) -> UOp:
        a, b = self.combine.src
        return b if a is self.load else a


_FOLD_OPS = (Op.ADD, Op.MUL, Op.MAX, Op.MIN)


def _fold(item: UOp | Block) -> _Fold | None:
    """The fold a top-level FAST nest is, or None when it is anything else (a loop that is not
    FAST, two inner loops, memory touched outside the innermost body, another store, the
    accumulator read by more than its update, a gated accumulator, an end computed inside)."""
    if not isinstance(item, Block) or item.range is None or not is_fast(item.range):
        return None
    inside = set(flatten(item))
    ranges, values = [item.range], []
    body = item.body
    while any(isinstance(i, Block) for i in body):
        blocks = [i for i in body if isinstance(i, Block)]
        others = [i for i in body if not isinstance(i, Block)]
        inner = blocks[0]
        if len(blocks) != 1 or inner.range is None or not is_fast(inner.range):
            return None
        if any(u.op in (Op.LOAD, Op.STORE) for u in others):
            return None
        values += others
        ranges.append(inner.range)
        body = inner.body
    if any(r.src[0] in inside for r in ranges):
        return None  # the grid's count is known before the nest runs
    stores = [u for u in body if isinstance(u, UOp) and u.op is Op.STORE]
    if len(stores) != 1:
        return None
    (store,) = stores
    place, combine = store.src
    if combine.op not in _FOLD_OPS or place.op is not Op.INDEX or len(place.src) != 2:
        return None
    loads = [s for s in combine.src if s.op is Op.LOAD and s.src[0] is place]
    if len(loads) != 1 or combine.src[0] is combine.src[1]:
        return None
    (load,) = loads
    root = window(place.src[0]).buffer
    if root.op is not Op.LOCAL or place.src[1] in inside:
        return None
    for u in inside:
        if u is combine or u is store or u is load:
            continue
        if load in u.src or combine in u.src:
            return None  # the running value is read by more than its update
        if u.op is Op.LOAD and window(u.src[0].src[0]).buffer is root:
            return None
    items = tuple(u for u in body if isinstance(u, UOp))
    return _Fold(item, tuple(ranges), tuple(values), items, place, load, combine, store)


def _roots(items: Sequence[UOp | Block], op: Op) -> set[UOp]:
    found = set()
    for u in flatten(Block(None, list(items))):
        if u.op is op and _place(u.src[0]):
            found.add(window(u.src[0].src[0]).buffer)
    return found


def _folds(items: Sequence[UOp | Block]) -> dict[int, _Fold] | None:
    """The FAST folds of a one-thread kernel that the threads of one block can share, by their
    position among its items, or None when the kernel cannot run on a block. Every thread runs
    the statements outside the folds, all but thread 0 only for their values: a STORE runs in
    thread 0 alone, and so does every loop that is no fold (a barrier after it) and everything
    after the last fold. So between two barriers no thread may LOAD a buffer that thread 0
    stores there."""
    items = list(items)
    folds = {k: f for k, item in enumerate(items) if (f := _fold(item)) is not None}
    if not folds:
        return None
    last = max(folds)
    segment: list[UOp | Block] = []
    for k, item in enumerate(items[: last + 1]):
        if k in folds:
            if _roots(segment, Op.LOAD) & _roots(segment, Op.STORE):
                return None
            segment = []
        elif isinstance(item, Block):
            # thread 0 runs the loop, a barrier after it: nothing before it in its segment may
            # read what it stores
            if _roots(segment, Op.LOAD) & _roots([*segment, item], Op.STORE):
                return None
            segment = []
        else:
            segment.append(item)
    return folds


def _parts(schedule: Schedule) -> list[_Part]:
    parts = []
    for kernel in schedule.kernels:
        if kernel.loop is not None:
            ranges, body = _collapse(kernel.loop)
            parts.append(_Part(kernel, ranges, body, _folds(body.body)))
        else:
            parts.append(_Part(kernel, folds=_folds(kernel.items)))
    if schedule.outputs and (not parts or parts[-1].ranges):
        parts.append(_Part(None))  # a thread that copies the outputs
    return parts


def _place(uop: UOp) -> bool:
    return uop.op is Op.INDEX and is_memory(uop.src[0])


class _KernelEmitter(Emitter):
    """The C backend's emitter with CUDA's memory: LOCALs live in scratch arrays, or in each
    thread's own array when carried across this kernel's thread ranges; no heap."""

    def __init__(
        self,
        flat: UOp,
        abi: Layout,
        helpers: Helpers,
        shared: dict[UOp, str],
        block: set[UOp] | None = None,
    ) -> None:
        super().__init__(flat, abi, helpers)
        self.shared = shared  # LOCAL -> its scratch array
        self.block_locals = block or set()  # LOCALs each block's own, in its shared memory

    def pointer(self, root: UOp) -> str:
        if root.op is Op.LOCAL and root in self.shared:
            return self.shared[root]
        if root.op is Op.LOCAL and root in self.block_locals and root not in self.locals:
            # each iteration writes before it reads (rule 3): no zeroing, which __shared__ lacks
            name = self.locals[root] = f"local{len(self.locals)}"
            ctype = storage_ctype(root.dtype)
            self.declarations.append(f"__shared__ {ctype} {name}[{root.type.size}];")
        return super().pointer(root)

    def heap_array(self, ctype: str, name: str, size: int) -> None:
        raise BackendError(
            f"an array of {size} {ctype} does not fit the 64 KiB a CUDA thread keeps of its own "
            "(a LOCAL carried across the ranges of the threads is each thread's own)"
        )


class _Renderer:
    def __init__(self, schedule: Schedule, prefix: str) -> None:
        self.flat = schedule.sink
        self.prefix = prefix
        self.abi = layout(schedule.source)
        self.helpers = Helpers()
        self.parts = _parts(schedule)
        outputs = schedule.outputs
        self.home = schedule.home
        self.imports = [
            self._imports(k, part, outputs if k == len(self.parts) - 1 else [])
            for k, part in enumerate(self.parts)
        ]
        self.slots: dict[UOp, int] = {}  # value -> its first uint64 slot in uir_values
        count = 0
        for names in self.imports:
            for uop in names:
                if uop.op is not Op.CONST and uop not in self.slots:
                    self.slots[uop] = count
                    count += -(-value_itemsize(uop.dtype) * uop.type.size // 8)
        self.scratch: list[Scratch] = [Scratch("uir_values", "uint64_t", count, 8)] if count else []
        self.shared: dict[UOp, str] = {}
        for part in self.parts:
            private = self._private(part)
            for uop in part.statements:
                root = self._root(uop)
                if (
                    root is not None
                    and root.op is Op.LOCAL
                    and root not in private
                    and root not in self.shared
                ):
                    name = self.shared[root] = f"scratch{len(self.shared)}"
                    ctype, itemsize = storage_ctype(root.dtype), storage_itemsize(root.dtype)
                    self.scratch.append(Scratch(name, ctype, root.type.size, itemsize))

    @staticmethod
    def _root(uop: UOp) -> UOp | None:
        if _place(uop):
            return window(uop.src[0]).buffer
        return None

    def _private(self, part: _Part) -> set[UOp]:
        """The LOCALs carried across the ranges a kernel's threads share: each iteration's own
        scratch (spec/uir-week7.md rule 3), so each thread's own array."""
        found = set()
        for uop in part.statements:
            if uop.op is Op.AFTER and set(uop.src[1:]) & set(part.ranges):
                root = buffer_of(uop)
                if root.op is Op.LOCAL:
                    found.add(root)
        return found

    def _imports(self, k: int, part: _Part, outputs: list[UOp]) -> list[UOp]:
        """The values kernel `k` reads (the outputs too, for the last) that it does not compute
        itself, and every CONST it reads: CONSTs render where they are read, not in the walk."""
        wanted = dict.fromkeys([*values_read(part.statements), *outputs])
        return [v for v in wanted if v.op is Op.CONST or self.home.get(v) != k]

    def kernel(self, k: int, part: _Part) -> tuple[Launch, str]:
        private = self._private(part)
        shared = {r: n for r, n in self.shared.items() if r not in private}
        # one block per iteration, its carried LOCALs in shared memory, when they fit in it
        room = sum(r.type.size * storage_itemsize(r.dtype) for r in private)
        room += len(part.folds or ()) * THREADS * 8
        rows = bool(part.ranges and part.folds) and room <= SHARED_BYTES
        emitter = _KernelEmitter(
            self.flat, self.abi, self.helpers, shared, private if rows else None
        )
        for uop in self.imports[k]:
            self._import(emitter, uop)
        folds: tuple[UOp, ...] = ()
        tail = len(emitter.body)
        if rows:
            assert part.body is not None and part.folds is not None
            launch = self._block_rows(emitter, part.ranges, part.body, part.folds)
            folds = tuple(r for f in part.folds.values() for r in f.ranges)
        elif part.ranges:
            assert part.body is not None
            launch = self._grid_loop(emitter, part.ranges, part.body)
        elif part.folds:
            tail = self._block_folds(emitter, part.items, part.folds)
            launch = (1, THREADS)
            folds = tuple(r for f in part.folds.values() for r in f.ranges)
        else:
            emitter.block(Block(None, part.items), set())
            launch = (1, 1)
        self._export(emitter, k, part)
        if k == len(self.parts) - 1:
            emitter.outputs()
        if folds and not rows:
            # after the last fold only thread 0 runs: what it stores and copies out is the one
            # thread's result
            emitter.body[tail:] = [f"    {line}" for line in emitter.body[tail:]]
            emitter.body.insert(tail, "if (threadIdx.x == 0) {")
            emitter.body.append("}")
        name = f"{self.prefix}_kernel{k}"
        lines = [*emitter.declarations, *emitter.body]
        body = "\n".join(f"    {line}" for line in lines)
        params = ", ".join(_parameters(self.abi, self.scratch))
        text = f'extern "C" __global__ void {name}({params}) {{\n{body}\n}}'
        return Launch(name, launch[0], launch[1], part.ranges, folds), text

    def _import(self, emitter: Emitter, uop: UOp) -> None:
        """Make a value computed elsewhere known to this kernel: a CONST again, else read back
        from the slots its kernel wrote."""
        if uop.op is Op.CONST:
            emitter.statement(uop)
            return
        name = emitter.fresh(uop)
        ctype = value_ctype(uop.dtype)
        dims = f"[{uop.type.size}]" if uop.type.shape else ""
        target = name if uop.type.shape else f"&{name}"
        emitter.body.append(f"{ctype} {name}{dims};")
        emitter.body.append(f"memcpy({target}, uir_values + {self.slots[uop]}, sizeof {name});")

    def _export(self, emitter: Emitter, k: int, part: _Part) -> None:
        """Write each value this kernel computes that a later kernel reads into its slots."""
        for uop in part.statements:
            if uop in self.slots and self.home.get(uop) == k:
                name = emitter.names[uop]
                source = name if uop.type.shape else f"&{name}"
                emitter.body.append(
                    f"memcpy(uir_values + {self.slots[uop]}, {source}, sizeof {name});"
                )

    def _block_folds(
        self, emitter: Emitter, items: list[UOp | Block], folds: dict[int, _Fold]
    ) -> int:
        """The items of a one-thread kernel run by the THREADS threads of one block: each FAST
        fold split over them, everything else as one thread would (STOREs by thread 0, values by
        all). Returns where in the body the tail after the last fold starts, which the caller
        makes thread 0's alone."""
        last = max(folds)
        for k, item in enumerate(items[: last + 1]):
            if k in folds:
                self._block_fold(emitter, folds[k], len([f for f in folds if f < k]))
            elif isinstance(item, Block):
                # a loop that is no fold: thread 0's, published by a barrier
                start = len(emitter.body)
                emitter.loop(item, set())
                emitter.body[start:] = [f"    {line}" for line in emitter.body[start:]]
                emitter.body.insert(start, "if (threadIdx.x == 0) {")
                emitter.body += ["}", "__syncthreads();"]
            elif item.op is Op.CONST:
                continue  # CONSTs are imported
            elif item.op is Op.STORE:
                start = len(emitter.body)
                emitter.statement(item)
                emitter.body[start:] = [
                    f"if (threadIdx.x == 0) {line}" for line in emitter.body[start:]
                ]
            else:
                emitter.statement(item)
        tail = len(emitter.body)
        emitter.block(Block(None, items[last + 1 :]), set())
        return tail

    def _block_fold(self, emitter: Emitter, fold: _Fold, n: int) -> None:
        """One FAST fold across the block: thread t folds iterations t, t + THREADS, ... from the
        identity (its terms in order), the THREADS partial folds meet in shared memory and are
        combined pairwise by a tree (a barrier after each level), and thread 0 folds the
        result into the accumulator. A barrier before publishes thread 0's earlier stores (the
        accumulator's init), one after publishes the accumulator."""
        dtype = fold.combine.dtype
        ctype = value_ctype(dtype)
        part, red, step = f"uir_part{n}", f"uir_red{n}", f"uir_s{n}"
        a_load = fold.combine.src[0] is fold.load

        def combine(acc: str, term: str) -> str:
            args = [acc, term] if a_load else [term, acc]
            return ALU_RENDER[fold.combine.op](emitter.ctx, fold.combine, args)

        # The thread's own share folds its products into `part` with one rounding each, when
        # the term is a MUL that only this fold reads (uir.core.contraction).
        mul = multiply_adds(fold.loop).get(fold.combine)
        if mul is not None:
            emitter.absorbed.add(mul)

        identity = literal(fold_identity(fold.combine.op, dtype), dtype)
        lines = emitter.body
        lines.append("__syncthreads();")
        lines.append("{")
        start = len(lines)
        widths = []
        for r in fold.ranges:
            bound = emitter.names[r.src[0]]
            width = f"uir_n{n}_{len(widths)}"
            # an end <= 0 runs no iteration: its count is 0, and so is the product
            lines.append(f"const int64_t {width} = {bound} > 0 ? (int64_t){bound} : 0;")
            widths.append(width)
        lines.append(f"{ctype} {part} = {identity};")
        iterations = " * ".join(widths)
        lines.append(
            f"for (int64_t {step} = threadIdx.x; {step} < {iterations}; {step} += blockDim.x) {{"
        )
        inner = len(lines)
        # the flattened index split back into the nest's counters, the innermost fastest
        remaining = step
        for r, width in reversed(list(zip(fold.ranges, widths, strict=True))):
            counter = emitter.fresh(r)
            index = remaining if r is fold.ranges[0] else f"{remaining} % {width}"
            lines.append(f"const int32_t {counter} = (int32_t)({index});")
            remaining = f"({remaining} / {width})"
        skip = {fold.load, fold.combine, fold.store}
        body = [*fold.values, *(u for u in fold.body if u not in skip)]
        emitter.block(Block(None, body), set())
        if mul is None:
            lines.append(f"{part} = {combine(part, emitter.names[fold.term])};")
        else:
            a, b = (emitter.names[s] for s in mul.src)
            lines.append(f"{part} = {fused_multiply_add(dtype, a, b, part)};")
        lines[inner:] = [f"    {line}" for line in lines[inner:]]
        lines.append("}")
        lines.append(f"__shared__ {ctype} {red}[{THREADS}];")
        lines.append(f"{red}[threadIdx.x] = {part};")
        lines.append("__syncthreads();")
        lines.append("for (unsigned int w = blockDim.x / 2; w > 0; w >>= 1) {")
        pair = combine(f"{red}[threadIdx.x]", f"{red}[threadIdx.x + w]")
        lines.append(f"    if (threadIdx.x < w) {red}[threadIdx.x] = {pair};")
        lines.append("    __syncthreads();")
        lines.append("}")
        element = emitter.element(fold.place)
        value = emitter.encode(dtype, combine(emitter.decode(dtype, element), f"{red}[0]"))
        lines.append(f"if (threadIdx.x == 0) {element} = {value};")
        lines[start:] = [f"    {line}" for line in lines[start:]]
        lines.append("}")
        lines.append("__syncthreads();")

    def _block_rows(
        self, emitter: Emitter, ranges: tuple[UOp, ...], body: Block, folds: dict[int, _Fold]
    ) -> tuple[int, int]:
        """A PARALLEL nest whose iterations fold FAST reductions (a row softmax, a row sum): one
        block per iteration (block b runs iterations b, b + blocks, ...), its THREADS threads
        sharing each fold as a one-thread kernel's block does. The LOCALs carried across the
        ranges are each block's own, in shared memory, so that what thread 0 stores there the
        others read after a barrier. Every thread of a block runs the same iterations, so all
        meet at every barrier."""
        rows = _counts(emitter, ranges, "uir_rows")
        emitter.body.append(
            f"for (int64_t uir_row = blockIdx.x; uir_row < {rows}; uir_row += gridDim.x) {{"
        )
        start = len(emitter.body)
        _counters(emitter, ranges, "uir_rows", "uir_row")
        tail = self._block_folds(emitter, body.body, folds)
        emitter.body[tail:] = [f"    {line}" for line in emitter.body[tail:]]
        emitter.body.insert(tail, "if (threadIdx.x == 0) {")
        emitter.body.append("}")
        # the next iteration's stores by thread 0 wait for every thread to finish this one
        emitter.body.append("__syncthreads();")
        emitter.body[start:] = [f"    {line}" for line in emitter.body[start:]]
        emitter.body.append("}")
        return min(max(_iterations(ranges), 1), MAX_BLOCKS), THREADS

    def _grid_loop(self, emitter: Emitter, ranges: tuple[UOp, ...], body: Block) -> tuple[int, int]:
        """The threads of the grid share the combinations of `ranges` (the last fastest, so
        neighbouring threads touch neighbouring elements), each thread from its global index on
        in steps of the whole grid; iterations past the ends run nowhere."""
        total = _counts(emitter, ranges, "n")
        emitter.body.append(
            f"for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < {total}; "
            "t += (int64_t)gridDim.x * blockDim.x) {"
        )
        start = len(emitter.body)
        _counters(emitter, ranges, "n", "t")
        emitter.block(body, set())
        emitter.body[start:] = [f"    {line}" for line in emitter.body[start:]]
        emitter.body.append("}")
        blocks = min(max(-(-_iterations(ranges) // THREADS), 1), MAX_BLOCKS)
        return blocks, THREADS

    def render(self) -> Rendered:
        kernels, texts = [], []
        for k, part in enumerate(self.parts):
            kernel, text = self.kernel(k, part)
            kernels.append(kernel)
            texts.append(text)
        header = _header(self.abi, kernels, self.scratch)
        parts = [header, PRELUDE, self.helpers.text(), *texts]
        source = "\n\n".join(p for p in parts if p) + "\n"
        return Rendered(source, tuple(kernels), self.abi, tuple(self.scratch))


def _counts(emitter: Emitter, ranges: tuple[UOp, ...], prefix: str) -> str:
    """Declare `{prefix}0, 1, ...`, each range's iteration count, and return their product: the
    iterations of the flattened nest."""
    counts = []
    for r in ranges:
        end = emitter.names[r.src[0]]
        count = f"{prefix}{len(counts)}"
        # An end <= 0 runs no iteration: its count is 0, and so is the product.
        emitter.body.append(f"const int64_t {count} = {end} > 0 ? (int64_t){end} : 0;")
        counts.append(count)
    return " * ".join(counts)


def _counters(emitter: Emitter, ranges: tuple[UOp, ...], prefix: str, flat: str) -> None:
    """Declare each range's counter from `flat`, an index into the flattened nest whose counts
    `_counts` declared under `prefix`: the last range fastest, the first takes what is left."""
    rest = flat
    for i, r in reversed(list(enumerate(ranges))):
        count = f"{prefix}{i}"
        counter = emitter.fresh(r)
        last = r is ranges[0]
        index = rest if last else f"{rest} % {count}"
        emitter.body.append(f"const int32_t {counter} = (int32_t)({index});")
        rest = f"({rest} / {count})"


def _iterations(ranges: tuple[UOp, ...]) -> int:
    """The most iterations the flattened nest can have, from its ends' bounds."""
    return math.prod(max(bounds(r.src[0])[1], 0) for r in ranges)


def _header(abi: Layout, kernels: list[Launch], scratch: list[Scratch]) -> str:
    lines = [
        "/* Rendered by the UIR CUDA backend (uir.backend.cuda). Compile with --fmad=false",
        " * -default-device (NVRTC), or for the CPU under the emulation header (cuda-emu).",
        " * Kernels, launched in this order, each with every parameter below:",
    ]
    for k in kernels:
        shared = ", ".join(f"RANGE id {range_id(r)}" for r in k.ranges) or "one thread"
        if k.folds:
            ids = ", ".join(str(range_id(r)) for r in k.folds)
            shared = f"one block folding FAST RANGE id {ids} (shared memory, barriers)"
        lines.append(f" *   {k.name}<<<{k.blocks}, {k.threads}>>>: {shared}")
    lines.append(" * Parameters: the C backend's ABI (buffers in slot order, then outputs), then")
    lines.append(" * zeroed scratch arrays:")
    for s in scratch:
        lines.append(f" *   {s.name}: {s.ctype}[{s.count}]")
    if not scratch:
        lines.append(" *   (none)")
    lines.append(" */")
    return "\n".join(lines)


def render_cuda(schedule: Schedule, prefix: str = "uir") -> Rendered:
    """The CUDA translation unit of a program's schedule of kernels (uir.core.plugins.prepare
    makes it), with its launches and scratch: one `__global__` per kernel of the schedule, and
    a last one-thread kernel copying the value outputs when the schedule ends in a PARALLEL
    loop. Kernels are named `{prefix}_kernel0, 1, ...`: programs bundled into one unit need
    distinct prefixes."""
    return _Renderer(schedule, prefix).render()


def bundle(sources: list[str]) -> str:
    """Several programs' sources (rendered with distinct prefixes) as one translation unit, each
    in a namespace of its own: one NVRTC or C++ compiler run for many programs (tests)."""
    return "\n".join(f"namespace uir_p{i} {{\n{s}}}\n" for i, s in enumerate(sources))
