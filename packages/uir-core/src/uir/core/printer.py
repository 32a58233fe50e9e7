"""UOp graph to canonical text: names %0, %1, ... in a deterministic topological order."""

from __future__ import annotations

from typing import Any

from .dtypes import DType, f64
from .floats import shortest_text
from .ops import Op
from .uop import UOp


def format_arg(arg: Any, dtype: DType = f64) -> str:
    """An argument in the grammar of uir.md section 2; floats exact in `dtype`."""
    if isinstance(arg, tuple):
        return "(" + ", ".join(format_arg(a, dtype) for a in arg) + ")"
    if isinstance(arg, bool):
        return "true" if arg else "false"
    if isinstance(arg, float):
        return shortest_text(arg, dtype if dtype.is_float else f64)
    if isinstance(arg, Op):
        return arg.name
    return str(arg)


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
