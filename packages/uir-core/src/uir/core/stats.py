"""What a program does when it runs, counted on its kernels: loops, memory traffic, arithmetic.

`uir run --stats` prints these for the schedule of kernels the program became after the passes,
so for a shaped program they count what rangeify fused and what it materialized
(spec/rangeify.md), kernel by kernel. Each statement counts once
per iteration of the loops around it: trip counts multiply down the nest. A loop whose end is not
a constant is counted at the largest trip count its bounds allow, and a gated access as if its
gate held; either makes the figures upper bounds (`exact` false).
"""

from __future__ import annotations

from dataclasses import dataclass

from .bounds import bounds
from .calls import inline_calls
from .kernels import Kernel, Schedule, buffer_bytes, schedule_kernels
from .ops import ALU, Op
from .schedule import Block
from .uop import UOp


@dataclass
class Stats:
    kernels: int = 0  # uir.core.kernels: PARALLEL top-level loops, runs of other statements
    loops: int = 0  # loops of the nest, inner ones included (each counted once, not per run)
    bytes_read: int = 0  # by LOADs, from global buffers and LOCALs alike
    bytes_written: int = 0  # by STOREs
    ops: int = 0  # ALU operations executed (a shaped one counts once per element)
    exact: bool = True

    def describe(self) -> str:
        """One line: `kernels 1, loops 1, bytes read 8, bytes written 4, ops 2`."""
        line = (
            f"kernels {self.kernels}, loops {self.loops}, bytes read {self.bytes_read}, "
            f"bytes written {self.bytes_written}, ops {self.ops}"
        )
        return line if self.exact else f"{line} (upper bounds: a loop end or a gate varies)"


def _trip_count(rng: UOp, stats: Stats) -> int:
    end = rng.src[0]
    if end.op is Op.CONST:
        return max(end.arg, 0)
    stats.exact = False
    return max(bounds(end)[1], 0)


def _gated(place: UOp, stats: Stats) -> None:
    if place.op is Op.INDEX and len(place.src) == 3:
        stats.exact = False


def _count(block: Block, runs: int, stats: Stats) -> None:
    for item in block.body:
        if isinstance(item, Block):
            assert item.range is not None
            stats.loops += 1
            _count(item, runs * _trip_count(item.range, stats), stats)
        elif item.op in ALU:
            stats.ops += runs * item.type.size
        elif item.op is Op.REDUCE:  # a program that was not rangeified: one op per element
            stats.ops += runs * item.src[0].type.size
        elif item.op is Op.LOAD:
            _gated(item.src[0], stats)
            stats.bytes_read += runs * item.type.size * item.dtype.itemsize
        elif item.op is Op.STORE:
            _gated(item.src[0], stats)
            value = item.src[1]
            stats.bytes_written += runs * value.type.size * value.dtype.itemsize


def kernel_stats(kernel: Kernel) -> Stats:
    """The counts of one kernel of a schedule (`kernels` is 1)."""
    stats = Stats(kernels=1)
    _count(Block(None, list(kernel.items)), 1, stats)
    return stats


def describe_kernel(kernel: Kernel) -> str:
    """One kernel's counts on one line: `loops 1, bytes read 8, bytes written 4, ops 2`."""
    return kernel_stats(kernel).describe().removeprefix("kernels 1, ")


def schedule_stats(schedule: Schedule) -> Stats:
    """The counts of a whole schedule: the sum of its kernels'."""
    total = Stats()
    for kernel in schedule.kernels:
        k = kernel_stats(kernel)
        total.kernels += 1
        total.loops += k.loops
        total.bytes_read += k.bytes_read
        total.bytes_written += k.bytes_written
        total.ops += k.ops
        total.exact = total.exact and k.exact
    return total


def intermediate_bytes(schedule: Schedule) -> int:
    """The bytes of the LOCALs the schedule's kernels use (rangeify's materialized values and the
    program's own scratch), all together: what the backends allocate, each LOCAL for the whole
    run (spec/uir-week6.md 2.6: no buffer is reused yet)."""
    roots = dict.fromkeys(r for k in schedule.kernels for r in (*k.reads, *k.writes))
    return sum(buffer_bytes(r) for r in roots if r.op is Op.LOCAL)


@dataclass(frozen=True)
class Peak:
    """The most bytes of scratch live at once, and the first kernel that holds them (None when
    the schedule has no scratch)."""

    bytes: int
    kernel: Kernel | None

    def describe(self) -> str:
        """`peak scratch: 192 bytes, while kernel1 runs`."""
        where = f", while {self.kernel.name} runs" if self.kernel is not None else ""
        return f"peak scratch: {self.bytes} bytes{where}"


def peak_scratch(schedule: Schedule) -> Peak:
    """The peak of scratch memory over the run (spec/uir-week6.md section 3): a LOCAL is live
    from the first kernel that touches it to the last (what a kernel writes for a later one to
    read lives across every kernel between), and the peak is the largest sum of live LOCALs
    while one kernel runs. A kernel's scratch counts once, though a backend running a PARALLEL
    loop's iterations at once holds one copy of each iteration's own LOCALs per thread."""
    first: dict[UOp, int] = {}
    last: dict[UOp, int] = {}
    for kernel in schedule.kernels:
        for root in (*kernel.reads, *kernel.writes):
            if root.op is Op.LOCAL:
                first.setdefault(root, kernel.index)
                last[root] = kernel.index
    peak = Peak(0, None)
    for kernel in schedule.kernels:
        live = sum(buffer_bytes(r) for r in first if first[r] <= kernel.index <= last[r])
        if live > peak.bytes:
            peak = Peak(live, kernel)
    return peak


def describe_schedule(schedule: Schedule) -> str:
    """What `uir run --stats` prints: the summary line, then one line per kernel (what it is,
    the buffers it reads and writes, its counts), then the bytes of intermediate buffers and
    the peak of scratch memory."""
    lines = [f"stats: {schedule_stats(schedule).describe()}"]
    lines.extend(f"  {kernel.summary}; {describe_kernel(kernel)}" for kernel in schedule.kernels)
    lines.append(f"  intermediate buffers: {intermediate_bytes(schedule)} bytes")
    lines.append(f"  {peak_scratch(schedule).describe()}")
    return "\n".join(lines) + "\n"


def program_stats(sink: UOp) -> Stats:
    """The counts of a verified program as written (see the module docstring), its statements
    cut into kernels as a lowered program's would be."""
    flat = inline_calls(sink)
    return schedule_stats(schedule_kernels(flat, flat))


def memory_needed(sink: UOp) -> tuple[int, int]:
    """What a program as written holds in memory at least: the bytes of its buffers (BUFFERs and
    LOCALs) together, and of its largest value or buffer. What an out-of-memory error quotes."""
    everything = sink.toposort()
    sizes = [u.type.size * u.dtype.itemsize for u in everything if not u.dtype.is_void]
    buffers = sum(
        u.type.size * u.dtype.itemsize for u in everything if u.op in (Op.BUFFER, Op.LOCAL)
    )
    return buffers, max(sizes, default=0)
