"""How a UOp's argument is written in the text format (uir.md section 2).

Kept apart from the printer, which walks graphs, so that the modules checking shapes and types
can quote an argument in a message without depending on UOp.
"""

from __future__ import annotations

from typing import Any

from .dtypes import DType, f64
from .elements import Elements, arg_key
from .floats import shortest_text
from .ops import Op


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
