"""The argument of a shaped CONST: its elements in row-major order, immutable and compact.

The text format writes every element (uir.md section 2), but week 4 makes big constants common
(`const_like(0.0)` on an f32[1024,1024]), and a tuple of a million floats is slow to build, hash
and compare. `Elements` reads like that tuple (len, indexing, iteration, equality with a tuple)
and stores one of three forms, chosen by the values alone so that equal element lists are equal
objects' keys and hash-consing keeps working:

- a fill: every element the same value (a broadcast), held once with a count;
- packed: floats, or ints that fit 64 bits, or bools, held in an `array.array`;
- a plain tuple for anything else (mixed or unconverted literals in a program that will not
  verify).

UOp construction turns a shaped CONST's tuple into `Elements`, so every path yields one form.
"""

from __future__ import annotations

import math
import struct
from array import array
from collections.abc import Iterable, Iterator
from itertools import repeat
from typing import Any

_I64 = (-(1 << 63), (1 << 63) - 1)
# The numpy dtype of each array typecode the elements are packed in.
_NUMPY = {"d": "float64", "q": "int64", "Q": "uint64", "B": "bool"}
_U64 = (0, (1 << 64) - 1)


_NO_ARGUMENT = (type(None), None)


def arg_key(arg: Any) -> Any:
    """A key under which UOp arguments compare by value: floats by their bits, kinds kept apart.

    Every NaN is one key: a NaN's sign and payload are unspecified (uir.md section 3), and the
    text format has a single `nan`, so the printer could not keep them apart anyway.
    """
    if arg is None:  # most UOps have no argument
        return _NO_ARGUMENT
    if isinstance(arg, Elements):
        return arg.key
    if isinstance(arg, tuple):
        return (tuple, tuple(arg_key(a) for a in arg))
    if isinstance(arg, float):
        return (float, "nan" if math.isnan(arg) else struct.pack("<d", arg))
    return (type(arg), arg)


def _packed(values: tuple) -> array | None:
    """`values` in an array when they are all floats, all bools or all 64-bit ints; else None."""
    kinds = set(map(type, values))
    if kinds == {float}:
        if any(map(math.isnan, values)):
            values = tuple(math.nan if math.isnan(v) else v for v in values)  # one NaN: see above
        return array("d", values)
    if kinds == {bool}:
        return array("B", values)
    if kinds == {int}:
        lo, hi = min(values), max(values)
        if _I64[0] <= lo and hi <= _I64[1]:
            return array("q", values)
        if _U64[0] <= lo and hi <= _U64[1]:
            return array("Q", values)
    return None


class Elements:
    """The elements of a shaped CONST (see the module docstring); build with `Elements(values)`
    or `Elements.fill(value, count)`."""

    __slots__ = ("_count", "_fill", "_key", "_packed", "_tuple")

    def __init__(self, values: Iterable[Any]) -> None:
        values = tuple(values)
        self._count = len(values)
        self._fill: Any = None
        self._packed: array | None = None
        self._tuple: tuple | None = None
        packed = _packed(values) if values else None
        if packed is not None:
            first = packed[:1].tobytes()
            if packed.tobytes() == first * len(packed):
                self._set_fill(values[0])
            else:
                self._packed = packed
                self._key = (packed.typecode, packed.tobytes())
        elif values and all(arg_key(v) == arg_key(values[0]) for v in values):
            self._set_fill(values[0])
        else:
            self._tuple = values
            self._key = ("tuple", arg_key(values))

    @classmethod
    def fill(cls, value: Any, count: int) -> Elements:
        """`count` copies of `value` (count >= 1), without building them."""
        new = cls.__new__(cls)
        new._count, new._packed, new._tuple = count, None, None
        new._set_fill(value)
        return new

    def _set_fill(self, value: Any) -> None:
        if isinstance(value, float) and math.isnan(value):
            value = math.nan
        self._fill = value
        self._key = ("fill", arg_key(value), self._count)

    @property
    def key(self) -> Any:
        """A hashable key equal for equal element lists (floats by bits, one NaN)."""
        return self._key

    @property
    def is_fill(self) -> bool:
        """Whether every element is the same value (`self[0]`), stored once."""
        return self._tuple is None and self._packed is None and self._count > 0

    @property
    def packed(self) -> array | None:
        """The elements as an array (typecode d, q, Q or B for bools) when stored packed."""
        return self._packed

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        if self._tuple is not None:
            return iter(self._tuple)
        if self._packed is not None:
            if self._packed.typecode == "B":
                return map(bool, self._packed)
            return iter(self._packed)
        return repeat(self._fill, self._count)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        if self._tuple is not None:
            return self._tuple[index]
        if self._packed is not None:
            value = self._packed[index]
            return bool(value) if self._packed.typecode == "B" else value
        if not -self._count <= index < self._count:
            raise IndexError("Elements index out of range")
        return self._fill

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Elements):
            return self._key == other._key
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        """The elements as a flat numpy array (of `dtype` if given), without a Python loop."""
        # numpy is imported on first conversion, not with this module: parsing, checking and
        # printing never need it (see uir.core.arrays).
        import numpy as np

        if self.is_fill:
            flat = np.full(self._count, self._fill)
        elif self._packed is not None:
            flat = np.frombuffer(self._packed, dtype=_NUMPY[self._packed.typecode])
        else:
            flat = np.array(self._tuple)
        # Packed and filled elements are values of their CONST's dtype: the cast is exact.
        return flat.astype(dtype) if dtype is not None else flat.copy()

    def __reduce__(self) -> tuple:
        return (Elements, (tuple(self),))

    def __repr__(self) -> str:
        if self.is_fill:
            return f"Elements.fill({self._fill!r}, {self._count})"
        return f"Elements({tuple(self)!r})"
