"""Scalar dtypes and shaped types (uir.md section 3)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class DTypeKind(enum.Enum):
    VOID = "void"
    BOOL = "bool"
    SINT = "sint"
    UINT = "uint"
    FLOAT = "float"


@dataclass(frozen=True, eq=False)
class DType:
    """A scalar dtype; `mantissa` counts a float's significand bits, the hidden bit included.

    There is one object per dtype (the constants below, also found by name in DTYPES), so dtypes
    compare and hash by identity: `dtype is bf16`, never `dtype.name == "bf16"`.
    """

    name: str
    kind: DTypeKind
    bits: int
    mantissa: int = 0
    exponent: int = 0

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> tuple:
        return (dtype_named, (self.name,))  # unpickles to the one object of this dtype

    @property
    def itemsize(self) -> int:
        """The bytes of one element in a buffer: a bool takes a byte."""
        return max(1, self.bits // 8)

    # What the kind and bits imply, worked out once per dtype: every walk asks these of nearly
    # every UOp, and a property recomputing them from an Enum was measurable in `uir check`.
    is_void: bool = field(init=False, repr=False)
    is_int: bool = field(init=False, repr=False)
    is_float: bool = field(init=False, repr=False)
    is_bool: bool = field(init=False, repr=False)
    is_number: bool = field(init=False, repr=False)
    signed: bool = field(init=False, repr=False)
    min: int = field(init=False, repr=False)  # smallest value of an int or bool dtype
    max: int = field(init=False, repr=False)  # largest value of an int or bool dtype

    def __post_init__(self) -> None:
        kind, bits = self.kind, self.bits
        is_int = kind in (DTypeKind.SINT, DTypeKind.UINT)
        signed = kind is DTypeKind.SINT
        facts = {
            "is_void": kind is DTypeKind.VOID,
            "is_int": is_int,
            "is_float": kind is DTypeKind.FLOAT,
            "is_bool": kind is DTypeKind.BOOL,
            "is_number": is_int or kind is DTypeKind.FLOAT,
            "signed": signed,
            "min": -(1 << (bits - 1)) if signed else 0,
            "max": 1
            if kind is DTypeKind.BOOL
            else ((1 << (bits - 1)) - 1 if signed else (1 << bits) - 1),
        }
        for name, value in facts.items():
            object.__setattr__(self, name, value)

    @property
    def storage(self) -> np.dtype:
        """The numpy dtype that holds values of this dtype (bf16 lives in float32)."""
        # numpy is imported on first use, not with this module: parsing, checking and printing
        # never need it, and importing it was most of the start-up time of every `uir` process.
        import numpy as np

        return np.dtype(_STORAGE[self.name])

    def wrap(self, value: int) -> int:
        """Reduce a Python int to this int dtype, modulo 2**bits (two's complement)."""
        value &= (1 << self.bits) - 1
        if self.signed and value >= 1 << (self.bits - 1):
            value -= 1 << self.bits
        return value


_STORAGE = {
    "void": "bool",
    "bool": "bool",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "bf16": "float32",
    "f32": "float32",
    "f64": "float64",
}

void = DType("void", DTypeKind.VOID, 0)
bool_ = DType("bool", DTypeKind.BOOL, 1)
i8 = DType("i8", DTypeKind.SINT, 8)
i16 = DType("i16", DTypeKind.SINT, 16)
i32 = DType("i32", DTypeKind.SINT, 32)
i64 = DType("i64", DTypeKind.SINT, 64)
u8 = DType("u8", DTypeKind.UINT, 8)
u16 = DType("u16", DTypeKind.UINT, 16)
u32 = DType("u32", DTypeKind.UINT, 32)
u64 = DType("u64", DTypeKind.UINT, 64)
f16 = DType("f16", DTypeKind.FLOAT, 16, mantissa=11, exponent=5)
bf16 = DType("bf16", DTypeKind.FLOAT, 16, mantissa=8, exponent=8)
f32 = DType("f32", DTypeKind.FLOAT, 32, mantissa=24, exponent=8)
f64 = DType("f64", DTypeKind.FLOAT, 64, mantissa=53, exponent=11)

DTYPES: dict[str, DType] = {
    d.name: d for d in (void, bool_, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64)
}


def dtype_named(name: str) -> DType:
    """The dtype called `name` (`i32`, `f32`, ...)."""
    return DTYPES[name]


@dataclass(frozen=True)
class Type:
    """A dtype with a shape; the shape is () for a scalar."""

    dtype: DType
    shape: tuple[int, ...] = ()

    def __str__(self) -> str:
        if not self.shape:
            return self.dtype.name
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"

    __repr__ = __str__

    @property
    def scalar(self) -> Type:
        return Type(self.dtype)

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    def with_dtype(self, dtype: DType) -> Type:
        return Type(dtype, self.shape)


VOID = Type(void)
BOOL = Type(bool_)
I32 = Type(i32)
F32 = Type(f32)
