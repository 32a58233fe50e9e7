"""A compiled program run many times in this process on buffers that persist (uir.core.runtime).

The shared library is loaded once (runtime.CompiledProgram) and each global buffer is one
64-byte aligned numpy array of ABI elements (abi.py), allocated once; the value outputs get
arrays allocated once too. A run calls the entry point here, with no fork, on their addresses:
nothing is copied in, and only the SINK sources are copied out (as `CompiledProgram.run` gives
them). The price of running in this process: a crash of the generated code (an out-of-bounds
access, a stack overflow) kills this process; `uir run` and the graders use the forked runner.
The `cuda-emu` backend's CPU build loads as a CompiledProgram too and runs through this class.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from uir.core.arrays import buffer_contents
from uir.core.dtypes import DType, Type, bf16, f16
from uir.core.runtime import HostMemory, Memory, require_open

from .abi import Layout, abi_numpy, from_abi, to_abi
from .runtime import CompiledProgram

# Each array starts on a cache line, as the forked runner's do (runtime.shared_copies).
ALIGN = 64


def aligned_zeros(count: int, dtype: np.dtype) -> np.ndarray:
    """A flat zeroed array of `count` elements whose first byte is on an ALIGN boundary (a view
    of a slightly larger block, which it keeps alive)."""
    dtype = np.dtype(dtype)
    nbytes = count * dtype.itemsize
    block = np.zeros(nbytes + ALIGN, dtype=np.uint8)
    start = -block.ctypes.data % ALIGN
    return block[start : start + nbytes].view(dtype)


def _views(abi: Layout, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """The ABI elements of each SINK source within the entry point's arrays (in parameter
    order): a value output's array, or the window of a buffer."""
    count = len(abi.buffers)
    buffers = dict(zip((b.slot for b in abi.buffers), arrays[:count], strict=True))
    views = []
    for back in abi.readbacks:
        if back.output is not None:
            views.append(arrays[count + back.output])
        else:
            assert back.slot is not None
            views.append(buffers[back.slot][back.begin : back.begin + back.length])
    return views


def _reader(view: np.ndarray, dtype: DType, shape: tuple[int, ...]) -> Callable[[], np.ndarray]:
    """A function copying `view` out as the interpreter gives a value of `dtype` and `shape`
    (abi.from_abi, with its plain case's conversion looked up once)."""
    if dtype in (f16, bf16) or dtype.is_bool:
        return lambda: from_abi(view, dtype).reshape(shape)
    storage = dtype.storage
    return lambda: view.astype(storage).reshape(shape)  # astype copies


class AbiMemory(HostMemory):
    """A global buffer as the C ABI holds it: bools as bytes, f16 and bf16 as their bits."""

    def __init__(self, backend: str, slot: int, type: Type) -> None:
        super().__init__(backend, slot, type, aligned_zeros(type.size, abi_numpy(type.dtype)))

    def encode(self, values: np.ndarray) -> np.ndarray:
        return to_abi(values, self.type.dtype)

    def decode(self, raw: np.ndarray) -> np.ndarray:
        return from_abi(raw, self.type.dtype)


class CompiledSession:
    """A CompiledProgram and its buffers, run in this process (uir.core.runtime.Session)."""

    def __init__(
        self, program: CompiledProgram, backend: str, shared: Mapping[int, Memory]
    ) -> None:
        self.program = program
        self.closed = False
        self.memory: dict[int, AbiMemory] = {}
        abi = program.abi
        for b in abi.buffers:
            given = shared.get(b.slot)
            if given is None:
                own = AbiMemory(backend, b.slot, b.type)
                own.contents()[...] = to_abi(buffer_contents(b.buffer), b.type.dtype)
                own.owner = self
                given = own
            assert isinstance(given, AbiMemory)  # open_session checked its backend and type
            self.memory[b.slot] = given
        outputs = [aligned_zeros(t.size, abi_numpy(t.dtype)) for t in abi.outputs]
        arrays = [*(self.memory[b.slot].contents() for b in abi.buffers), *outputs]
        self._pointers = tuple(a.ctypes.data for a in arrays)
        # What each SINK source reads after a run, worked out once (as runtime.read_back does
        # it per run): the arrays never move, so neither do the views.
        self._readers = [
            _reader(view, source.dtype, source.type.shape)
            for view, source in zip(_views(abi, arrays), program.sink.src, strict=True)
        ]

    def run(self) -> list[np.ndarray]:
        # A shared buffer freed by its own session would leave a dangling address: refuse.
        require_open(self.memory, self.closed)
        self.program.call(self._pointers)
        return [read() for read in self._readers]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._pointers, self._readers = (), []
            for m in self.memory.values():
                if m.owner is self:
                    m.free()

    def __enter__(self) -> CompiledSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
