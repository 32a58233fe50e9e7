"""The kernels of a program lowered to loops: what the compiling backends run, `--stats` counts.

A *kernel* is one piece of the top level of the loop nest (uir.core.schedule.loop_schedule): a
top-level loop over a PARALLEL range, whose iterations may run at once (a GPU's threads share
them), or a maximal run of the other top-level statements and loops, which runs in order. The
kernels run one after another in schedule order, so whatever one kernel writes, the next reads.

The schedule is made once, by `schedule_kernels`, from the program the pipeline lowered
(uir.core.plugins.prepare), and handed to the backend whole: the C backend renders one function
per kernel and a driver calling them in order, the CUDA backend one `__global__` per kernel. No
consumer rebuilds the loop nest or re-cuts it. See spec/architecture.md for why a schedule is a
view of a lowered program rather than UOps of its own.

Values cross kernels: a scalar loaded in one kernel may be the end of the next kernel's loop. Each
value has a *home*, the first kernel that computes it; a kernel reading a value homed elsewhere
lists it in `values_in`, its home lists it in `values_out`, and the backend carries it across
(C through a variable of the driver, CUDA through a scratch array). CONSTs never cross: a
kernel renders every constant it reads itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property

from .errors import BackendError, VerifyError
from .loops import is_parallel
from .memory import buffer_of, is_memory
from .ops import Op
from .schedule import Block, flatten, loop_schedule
from .uop import UOp

# Ops that do no work of their own: memory references and places only steer the accesses that
# use them, and the SINK only names the outputs.
_SILENT = frozenset({Op.BUFFER, Op.LOCAL, Op.AFTER, Op.SHRINK, Op.END, Op.SINK})


@dataclass(frozen=True)
class Kernel:
    """One kernel of a schedule: the top-level items it runs, in order, and what it touches.

    `parallel` is true for a kernel that is one top-level loop over a PARALLEL range (`loop`);
    its iterations are independent (spec/uir-week7.md). `reads` and `writes` are the buffers
    (BUFFER or LOCAL) it loads from and stores to, in first-use order."""

    index: int
    items: tuple[UOp | Block, ...]
    parallel: bool
    values_in: tuple[UOp, ...] = ()
    values_out: tuple[UOp, ...] = ()
    constants: tuple[UOp, ...] = ()

    @cached_property
    def statements(self) -> tuple[UOp, ...]:
        """Every statement the kernel runs, loops flattened (each RANGE before its body)."""
        return tuple(flatten(Block(None, list(self.items))))

    @property
    def loop(self) -> Block | None:
        """The PARALLEL loop a parallel kernel is, else None."""
        item = self.items[0] if self.parallel else None
        return item if isinstance(item, Block) else None

    @cached_property
    def reads(self) -> tuple[UOp, ...]:
        found = (buffer_of(u.src[0]) for u in self.statements if u.op is Op.LOAD)
        return tuple(dict.fromkeys(found))

    @cached_property
    def writes(self) -> tuple[UOp, ...]:
        found = (buffer_of(u.src[0]) for u in self.statements if u.op is Op.STORE)
        return tuple(dict.fromkeys(found))

    @property
    def name(self) -> str:
        return f"kernel{self.index}"

    @property
    def summary(self) -> str:
        """`kernel0 (parallel loop): reads buf0, local1; writes buf1`: how `--stats`, `uir opt
        --kernels` and the rendered code's comments name a kernel."""
        kind = "parallel loop" if self.parallel else "in order"
        reads = ", ".join(buffer_name(b) for b in self.reads) or "-"
        writes = ", ".join(buffer_name(b) for b in self.writes) or "-"
        return f"{self.name} ({kind}): reads {reads}; writes {writes}"


def buffer_bytes(root: UOp) -> int:
    """The bytes a BUFFER or LOCAL holds."""
    return root.type.size * root.dtype.itemsize


def buffer_name(root: UOp) -> str:
    """How kernel listings name a BUFFER or LOCAL: `buf0` (slot 0), `local3` (id 3)."""
    return f"buf{root.arg}" if root.op is Op.BUFFER else f"local{root.arg}"


@dataclass(frozen=True)
class Schedule:
    """A program's kernels in run order. `source` is the program as written (its CALLs inlined):
    its buffers and outputs are the ABI, whatever the passes removed. `sink` is the program the
    pipeline lowered to loops, `nest` its loop nest, of which `kernels` are the top level."""

    source: UOp
    sink: UOp
    nest: Block
    kernels: tuple[Kernel, ...]
    home: dict[UOp, int] = field(repr=False, compare=False)

    @property
    def outputs(self) -> list[UOp]:
        """The SINK sources computed as values (not read back from a buffer), in SINK order."""
        return [s for s in self.sink.src if not is_memory(s)]

    @cached_property
    def shared_locals(self) -> tuple[UOp, ...]:
        """The LOCALs more than one kernel touches: they must outlive a kernel."""
        users: dict[UOp, set[int]] = {}
        for k in self.kernels:
            for uop in k.statements:
                if uop.op is Op.INDEX and is_memory(uop.src[0]):
                    root = buffer_of(uop.src[0])
                    if root.op is Op.LOCAL:
                        users.setdefault(root, set()).add(k.index)
        return tuple(r for r, ks in users.items() if len(ks) > 1)

    @cached_property
    def crossing(self) -> tuple[UOp, ...]:
        """Every value some kernel computes and a later kernel or the outputs read, in home
        order: what a backend carries between kernels."""
        found = dict.fromkeys(v for k in self.kernels for v in k.values_out)
        return tuple(found)


def _places_seen_through(uop: UOp) -> bool:
    return uop.op is Op.INDEX and is_memory(uop.src[0])


def values_read(statements: tuple[UOp, ...] | list[UOp]) -> list[UOp]:
    """The values these statements read, in first-use order. Places are seen through: an INDEX
    of memory renders inside the access that uses it, from its index and gate."""
    seen: dict[UOp, None] = {}
    stack: list[UOp] = []
    for uop in statements:
        if uop.op in (Op.BUFFER, Op.SINK):
            continue  # a BUFFER's initial CONST is the runtime's to copy; the SINK is outputs
        stack.extend(reversed(uop.src))
        while stack:
            s = stack.pop()
            if _places_seen_through(s):
                stack.extend(reversed(s.src[1:]))
            elif not is_memory(s) and s.op not in (Op.STORE, Op.END, Op.RANGE):
                seen.setdefault(s, None)
    return list(seen)


def _does_work(item: UOp | Block) -> bool:
    if isinstance(item, Block):
        return True
    return item.op not in _SILENT and item.op is not Op.CONST and not _places_seen_through(item)


def _cut(nest: Block) -> Iterator[tuple[list[UOp | Block], bool]]:
    """The top-level items of `nest` in kernels: each PARALLEL loop alone, each run of other
    items together; a run that does no work (memory references, constants) is no kernel."""
    run: list[UOp | Block] = []
    for item in nest.body:
        if isinstance(item, Block) and item.range is not None and is_parallel(item.range):
            if any(_does_work(i) for i in run):
                yield run, False
            run = []
            yield [item], True
        else:
            run.append(item)
    if any(_does_work(i) for i in run):
        yield run, False


def schedule_kernels(source: UOp, lowered: UOp) -> Schedule:
    """The kernels of `lowered`, a verified program without CALLs or shaped values (the
    pipeline's result for a backend taking kernels); `source` is the program as written.

    A verified program always has a schedule; one that has none was broken by a pass, which is
    an internal error (BackendError), never a wrong answer."""
    try:
        nest = loop_schedule(lowered)
    except VerifyError as exc:
        raise BackendError(f"the scheduler cannot place the program: {exc.message}") from exc
    groups = list(_cut(nest))
    statements = [flatten(Block(None, items)) for items, _ in groups]
    home: dict[UOp, int] = {}
    for k, stmts in enumerate(statements):
        for uop in stmts:
            home.setdefault(uop, k)
    reads = [values_read(stmts) for stmts in statements]
    outputs = [s for s in lowered.src if not is_memory(s)]
    needed_later: set[UOp] = {o for o in outputs if o.op is not Op.CONST}
    for k, values in enumerate(reads):
        needed_later.update(v for v in values if v.op is not Op.CONST and home.get(v) != k)
    kernels = []
    for k, (items, parallel) in enumerate(groups):
        values_in = tuple(v for v in reads[k] if v.op is not Op.CONST and home.get(v) != k)
        for v in values_in:
            if v not in home:
                raise BackendError(f"the scheduler placed no kernel computing {v.op} {v.type}")
        values_out = tuple(u for u in statements[k] if u in needed_later and home[u] == k)
        constants = tuple(v for v in reads[k] if v.op is Op.CONST)
        kernels.append(Kernel(k, tuple(items), parallel, values_in, values_out, constants))
    return Schedule(source, lowered, nest, tuple(kernels), home)


def require_schedule(program: object, backend: str) -> Schedule:
    """`program` as the schedule a backend of form "kernels" takes; a UOp means the caller did
    not bring the program to the backend's form (uir.core.plugins.prepare)."""
    if not isinstance(program, Schedule):
        raise BackendError(
            f"backend '{backend}' takes a schedule of kernels (uir.core.plugins.prepare makes "
            f"one), not {type(program).__name__}"
        )
    return program
