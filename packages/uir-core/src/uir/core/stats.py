"""What a program does when it runs, counted on its loop nest: loops, memory traffic, arithmetic.

`uir run --stats` prints these for the program after the passes, so for a shaped program they
count what rangeify fused and what it materialized (spec/rangeify.md). Each statement counts once
per iteration of the loops around it: trip counts multiply down the nest. A loop whose end is not
a constant is counted at the largest trip count its bounds allow, and a gated access as if its
gate held; either makes the figures upper bounds (`exact` false).
"""

from __future__ import annotations

from dataclasses import dataclass

from .bounds import bounds
from .calls import inline_calls
from .dtypes import DType
from .ops import ALU, Op
from .schedule import Block, loop_schedule
from .uop import UOp


@dataclass
class Stats:
    kernels: int = 0  # top-level loop nests
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


def _itemsize(dtype: DType) -> int:
    return max(1, dtype.bits // 8)  # a bool is a byte in every buffer


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
            stats.kernels += block.range is None
            _count(item, runs * _trip_count(item.range, stats), stats)
        elif item.op in ALU:
            stats.ops += runs * item.type.size
        elif item.op is Op.REDUCE:  # a program that was not rangeified: one op per element
            stats.ops += runs * item.src[0].type.size
        elif item.op is Op.LOAD:
            _gated(item.src[0], stats)
            stats.bytes_read += runs * item.type.size * _itemsize(item.dtype)
        elif item.op is Op.STORE:
            _gated(item.src[0], stats)
            value = item.src[1]
            stats.bytes_written += runs * value.type.size * _itemsize(value.dtype)


def program_stats(sink: UOp) -> Stats:
    """The counts of a verified program (see the module docstring)."""
    stats = Stats()
    _count(loop_schedule(inline_calls(sink)), 1, stats)
    return stats
