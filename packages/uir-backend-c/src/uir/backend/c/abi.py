"""The C ABI of a rendered program: which pointers the entry point takes, in what order and types.

    void uir_program(B0 *restrict buf0, ..., Bk *restrict bufk, O0 *restrict out0, ...);

First one pointer per global BUFFER, in increasing slot order (slots need not be contiguous); then
one pointer per SINK source that the program computes as a value rather than names as memory, in
SINK order. No two parameters overlap, hence `restrict`. A buffer holds its elements flat; an
output holds a scalar as one element and a vector as its elements. Element types (`storage_ctype`)
keep every bit pattern defined: bools travel as uint8_t (0 or 1 written, any nonzero read as true),
f16 and bf16 as uint16_t holding their IEEE binary16 / bfloat16 bits, every other dtype as its C99
<stdint.h> or float type.

A SINK source that is a global buffer version, or a SHRINK window of one, is not copied: the caller
reads it from the buffer after the call (uir.md 6.3 makes it the buffer's last version).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from uir.core.arrays import bf16_bits, bf16_values
from uir.core.dtypes import (
    DType,
    Type,
    bf16,
    bool_,
    f16,
    f32,
    f64,
    i8,
    i16,
    i32,
    i64,
    u8,
    u16,
    u32,
    u64,
)
from uir.core.memory import is_memory, window
from uir.core.ops import Op
from uir.core.uop import UOp

ENTRY = "uir_program"

# The C type of a value in registers. f16 and bf16 values live in a float, which holds each exactly.
_VALUE_CTYPE = {
    bool_: "bool",
    i8: "int8_t",
    i16: "int16_t",
    i32: "int32_t",
    i64: "int64_t",
    u8: "uint8_t",
    u16: "uint16_t",
    u32: "uint32_t",
    u64: "uint64_t",
    f16: "float",
    bf16: "float",
    f32: "float",
    f64: "double",
}
# The C type of an element in memory, where it differs from the value type.
_STORAGE_CTYPE = {**_VALUE_CTYPE, bool_: "uint8_t", f16: "uint16_t", bf16: "uint16_t"}
_STORAGE_NUMPY = {bool_: np.uint8, f16: np.uint16, bf16: np.uint16}


def value_ctype(dtype: DType) -> str:
    """The C type holding a value of `dtype`."""
    return _VALUE_CTYPE[dtype]


def storage_ctype(dtype: DType) -> str:
    """The C type of one element of a buffer of `dtype`."""
    return _STORAGE_CTYPE[dtype]


def storage_itemsize(dtype: DType) -> int:
    """The bytes of one `storage_ctype(dtype)` element."""
    return abi_numpy(dtype).itemsize


def value_itemsize(dtype: DType) -> int:
    """The bytes of one `value_ctype(dtype)` (a float for f16 and bf16; bool is one byte on every
    ABI we compile for)."""
    return 4 if dtype in (f16, bf16) else storage_itemsize(dtype)


def abi_numpy(dtype: DType) -> np.dtype:
    """The numpy dtype whose bytes are `storage_ctype(dtype)`."""
    return np.dtype(_STORAGE_NUMPY.get(dtype, dtype.storage))


def to_abi(values: np.ndarray, dtype: DType) -> np.ndarray:
    """A fresh contiguous array of ABI elements holding `values` (in `dtype.storage`)."""
    values = np.asarray(values, dtype=dtype.storage)
    if dtype is bf16:
        return bf16_bits(values)
    if dtype is f16:
        return values.view(np.uint16).copy()
    return np.ascontiguousarray(values, dtype=abi_numpy(dtype)).copy()


def from_abi(raw: np.ndarray, dtype: DType) -> np.ndarray:
    """ABI elements back in `dtype.storage`, the form the interpreter and the printer use."""
    if dtype is bf16:
        return bf16_values(raw)
    if dtype is f16:
        return raw.view(np.float16).copy()
    if dtype.is_bool:
        return raw != 0
    return raw.astype(dtype.storage)


@dataclass(frozen=True)
class BufferArg:
    slot: int
    type: Type
    buffer: UOp  # the BUFFER, whose CONST source (if any) holds its initial contents


@dataclass(frozen=True)
class Readback:
    """How the caller finds SINK source number i: output pointer `output`, or a buffer window."""

    output: int | None = None
    slot: int | None = None
    begin: int = 0
    length: int = 0


@dataclass(frozen=True)
class Layout:
    buffers: tuple[BufferArg, ...]  # in slot order
    outputs: tuple[Type, ...]  # one per value SINK source, in SINK order
    readbacks: tuple[Readback, ...]  # one per SINK source

    @property
    def arg_types(self) -> tuple[Type, ...]:
        """The type of each pointer the entry point takes, in order."""
        return (*(b.type for b in self.buffers), *self.outputs)


def layout(sink: UOp) -> Layout:
    """The ABI of the program under `sink` (CALLs inlined or not: buffers never sit in bodies)."""
    found: dict[int, BufferArg] = {}
    for uop in sink.toposort(bodies=False):
        if uop.op is Op.BUFFER:
            found[uop.arg] = BufferArg(uop.arg, uop.type, uop)
    outputs: list[Type] = []
    readbacks: list[Readback] = []
    for source in sink.src:
        if is_memory(source):  # a global buffer's version or window (a LOCAL is never an output)
            w = window(source)
            readbacks.append(Readback(slot=w.buffer.arg, begin=w.begin, length=w.size))
        else:
            readbacks.append(Readback(output=len(outputs)))
            outputs.append(source.type)
    buffers = tuple(found[slot] for slot in sorted(found))
    return Layout(buffers, tuple(outputs), tuple(readbacks))
