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
from uir.backend.c.render import Emitter
from uir.core.bounds import bounds
from uir.core.errors import BackendError
from uir.core.kernels import Kernel, Schedule, values_read
from uir.core.loops import is_parallel, range_id
from uir.core.memory import buffer_of, window
from uir.core.ops import Op
from uir.core.schedule import Block, flatten
from uir.core.uop import UOp

# Threads per block of a PARALLEL kernel, and the most blocks one launches: more iterations than
# THREADS * MAX_BLOCKS run in turns of the grid-stride loop (an end loaded from memory may be as
# large as 2^31 - 1, which sizes no grid).
THREADS = 256
MAX_BLOCKS = 65536
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
    """One kernel as launched: its name, its grid (`blocks` of `threads`), and the ranges its
    threads share (none for a kernel of one thread)."""

    name: str
    blocks: int
    threads: int
    ranges: tuple[UOp, ...]


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


def _parts(schedule: Schedule) -> list[_Part]:
    parts = []
    for kernel in schedule.kernels:
        if kernel.loop is not None:
            ranges, body = _collapse(kernel.loop)
            parts.append(_Part(kernel, ranges, body))
        else:
            parts.append(_Part(kernel))
    if schedule.outputs and (not parts or parts[-1].ranges):
        parts.append(_Part(None))  # a thread that copies the outputs
    return parts


def _place(uop: UOp) -> bool:
    return uop.op is Op.INDEX and is_memory(uop.src[0])


class _KernelEmitter(Emitter):
    """The C backend's emitter with CUDA's memory: LOCALs live in scratch arrays, or in each
    thread's own array when carried across this kernel's thread ranges; no heap."""

    def __init__(self, flat: UOp, abi: Layout, helpers: Helpers, shared: dict[UOp, str]) -> None:
        super().__init__(flat, abi, helpers)
        self.shared = shared  # LOCAL -> its scratch array

    def pointer(self, root: UOp) -> str:
        if root.op is Op.LOCAL and root in self.shared:
            return self.shared[root]
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
        emitter = _KernelEmitter(self.flat, self.abi, self.helpers, shared)
        for uop in self.imports[k]:
            self._import(emitter, uop)
        if part.ranges:
            assert part.body is not None
            launch = self._grid_loop(emitter, part.ranges, part.body)
        else:
            emitter.block(Block(None, part.items), set())
            launch = (1, 1)
        self._export(emitter, k, part)
        if k == len(self.parts) - 1:
            emitter.outputs()
        name = f"{self.prefix}_kernel{k}"
        lines = [*emitter.declarations, *emitter.body]
        body = "\n".join(f"    {line}" for line in lines)
        params = ", ".join(_parameters(self.abi, self.scratch))
        text = f'extern "C" __global__ void {name}({params}) {{\n{body}\n}}'
        return Launch(name, launch[0], launch[1], part.ranges), text

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

    def _grid_loop(self, emitter: Emitter, ranges: tuple[UOp, ...], body: Block) -> tuple[int, int]:
        """The threads of the grid share the combinations of `ranges` (the last fastest, so
        neighbouring threads touch neighbouring elements), each thread from its global index on
        in steps of the whole grid; iterations past the ends run nowhere."""
        counts = []
        for r in ranges:
            end = emitter.names[r.src[0]]
            count = f"n{len(counts)}"
            # An end <= 0 runs no iteration: its count is 0, and so is the product.
            emitter.body.append(f"const int64_t {count} = {end} > 0 ? (int64_t){end} : 0;")
            counts.append(count)
        total = " * ".join(counts)
        emitter.body.append(
            f"for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < {total}; "
            "t += (int64_t)gridDim.x * blockDim.x) {"
        )
        start = len(emitter.body)
        rest = "t"
        for r, count in reversed(list(zip(ranges, counts, strict=True))):
            counter = emitter.fresh(r)
            last = r is ranges[0]
            index = rest if last else f"{rest} % {count}"
            emitter.body.append(f"const int32_t {counter} = (int32_t)({index});")
            rest = f"({rest} / {count})"
        emitter.block(body, set())
        emitter.body[start:] = [f"    {line}" for line in emitter.body[start:]]
        emitter.body.append("}")
        iterations = 1
        for r in ranges:
            iterations *= max(bounds(r.src[0])[1], 0)
        blocks = min(max(-(-iterations // THREADS), 1), MAX_BLOCKS)
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


def _header(abi: Layout, kernels: list[Launch], scratch: list[Scratch]) -> str:
    lines = [
        "/* Rendered by the UIR CUDA backend (uir.backend.cuda). Compile with --fmad=false",
        " * -default-device (NVRTC), or for the CPU under the emulation header (cuda-emu).",
        " * Kernels, launched in this order, each with every parameter below:",
    ]
    for k in kernels:
        shared = ", ".join(f"RANGE id {range_id(r)}" for r in k.ranges) or "one thread"
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
