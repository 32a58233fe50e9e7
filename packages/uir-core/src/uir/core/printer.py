"""UOp graph to canonical text: names %0, %1, ... in a deterministic topological order."""

from __future__ import annotations

from .arguments import format_arg
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
