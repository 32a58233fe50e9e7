"""UOp graph to canonical text: names %0, %1, ... in a deterministic topological order."""

from __future__ import annotations

from .arguments import format_arg
from .kernels import Schedule, buffer_bytes, buffer_name
from .ops import Op
from .schedule import Block
from .uop import UOp


def print_program(sink: UOp) -> str:
    """The canonical text of the graph under `sink`; `parse(print_program(g)).sink is g`."""
    names: dict[UOp, str] = {}
    lines = []
    for uop in sink.toposort():
        name = names[uop] = f"%{len(names)}"
        words = [name, "=", uop.op.name, str(uop.type), *(names[s] for s in uop.src)]
        if uop.arg is not None:
            words.append(format_arg(uop.arg, uop.dtype))
        lines.append(" ".join(words))
    return "\n".join(lines) + "\n"


def print_schedule(schedule: Schedule) -> str:
    """The lowered program of `schedule` in the order its kernels run it, for `uir opt
    --kernels`: a comment before each kernel says how it runs and what it reads and writes, a
    loop's body is indented under its RANGE, and a last comment says what each LOCAL is (scratch
    of one kernel, or an intermediate buffer between kernels). The text parses back to the
    same program (comments and indentation are not part of the format)."""
    names: dict[UOp, str] = {}
    lines: list[str] = []
    starts = {id(k.items[0]): k for k in schedule.kernels}

    def emit(uop: UOp, depth: int) -> None:
        name = names[uop] = f"%{len(names)}"
        words = [name, "=", uop.op.name, str(uop.type), *(names[s] for s in uop.src)]
        if uop.arg is not None:
            words.append(format_arg(uop.arg, uop.dtype))
        lines.append("  " * depth + " ".join(words))

    def walk(items: list[UOp | Block], depth: int) -> None:
        for item in items:
            if isinstance(item, Block):
                emit(item.range, depth)  # type: ignore[arg-type]
                walk(item.body, depth + 1)
            else:
                emit(item, depth)

    for item in schedule.nest.body:
        kernel = starts.get(id(item))
        if kernel is not None:
            lines.append(f"# {kernel.summary}")
        walk([item], 0)
    lines.extend(f"# {line}" for line in local_notes(schedule))
    return "\n".join(lines) + "\n"


def local_notes(schedule: Schedule) -> list[str]:
    """What each LOCAL of the schedule is for, from the kernels that touch it: `local0 (f32[3],
    12 bytes): scratch of kernel0` (`uir opt --kernels` and `uir viz` show these)."""
    touched: dict[UOp, list[str]] = {}
    for kernel in schedule.kernels:
        for root in dict.fromkeys((*kernel.writes, *kernel.reads)):
            if root.op is Op.LOCAL:
                touched.setdefault(root, []).append(kernel.name)
    found = []
    for root, kernels in sorted(touched.items(), key=lambda item: item[0].arg):
        size = f"{root.type}, {buffer_bytes(root)} bytes"
        if len(kernels) == 1:
            found.append(f"{buffer_name(root)} ({size}): scratch of {kernels[0]}")
        else:
            found.append(
                f"{buffer_name(root)} ({size}): intermediate buffer of {', '.join(kernels)}"
            )
    return found
