"""Output formatting of uir.md section 11: one line per SINK source."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .dtypes import DType
from .floats import format_float

if TYPE_CHECKING:
    import numpy as np


def format_element(value: object, dtype: DType) -> str:
    if dtype.is_bool:
        return "true" if bool(value) else "false"
    if dtype.is_float:
        return format_float(float(value), dtype)  # type: ignore[arg-type]
    return str(int(value))  # type: ignore[call-overload]


def format_value(value: np.ndarray, dtype: DType) -> str:
    """A scalar, or every element in row-major order separated by single spaces."""
    # A method, not np.ravel: the CLI imports this module, and checking a program needs no numpy.
    return " ".join(format_element(v, dtype) for v in value.ravel())
