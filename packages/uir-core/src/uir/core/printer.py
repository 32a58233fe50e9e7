"""UOp graph to canonical text: names %0, %1, ... in a deterministic topological order."""

from __future__ import annotations

from typing import Any

from .dtypes import DType, f64
from .elements import Elements, arg_key
from .floats import shortest_text
from .ops import Op
from .uop import UOp


def format_arg(arg: Any, dtype: DType = f64) -> str:
    """An argument in the grammar of uir.md section 2; floats exact in `dtype`."""
    if isinstance(arg, Elements):
        return _format_elements(arg, dtype)
    if isinstance(arg, tuple):
        return "(" + ", ".join(format_arg(a, dtype) for a in arg) + ")"
    if isinstance(arg, bool):
        return "true" if arg else "false"
    if isinstance(arg, float):
        return shortest_text(arg, dtype if dtype.is_float else f64)
    if isinstance(arg, Op):
        return arg.name
    return str(arg)


def _format_elements(elements: Elements, dtype: DType) -> str:
    """A shaped CONST's elements as the flat tuple the text format writes, each distinct value
    formatted once (a broadcast has one; a week-4 constant rarely has many)."""
    packed = elements.packed
    if packed is not None and packed.typecode in "qQ":
        return "(" + ", ".join(map(str, packed)) + ")"  # ints print as themselves
    texts: dict[Any, str] = {}
    words = []
    for value in elements:
        key = arg_key(value)
        text = texts.get(key)
        if text is None:
            text = texts[key] = format_arg(value, dtype)
        words.append(text)
    return "(" + ", ".join(words) + ")"


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
