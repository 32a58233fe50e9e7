"""The global buffers behind parameters, optimizer state and inputs.

A buffer has one slot number for the life of the process, so every program that reads it names
the same BUFFER: a training step and an evaluation program share a parameter. Its contents live
in one place at a time: on the host (`host`) until a program first runs on a backend, then in
that backend's Memory, which every later session of that backend shares (uir.core.runtime).
The BUFFER in the graph carries no init CONST, so the graph, and with it the compiled program,
does not change when the values do; `to_uir` writes the current values in.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

from uir.core.dtypes import Type
from uir.core.ops import Op
from uir.core.runtime import Memory
from uir.core.uop import UOp

_slots = itertools.count()
# BUFFER UOp -> its Buffer, for finding a graph's buffers. Keyed weakly by the UOp (which the
# Buffer references only weakly): a Buffer lives as long as some graph or tensor reads its
# BUFFER, even when the tensor that made it is gone (`(Tensor.parameter(a) * 2).numpy()`, an
# optimizer dropped after `step()`), and is freed with the last graph that reads it.
BUFFERS: weakref.WeakKeyDictionary[UOp, Buffer] = weakref.WeakKeyDictionary()


class Buffer:
    """One global buffer: its BUFFER UOp, and where its contents are now."""

    def __init__(self, type: Type, values: np.ndarray | None) -> None:
        self.type = type
        uop = UOp(Op.BUFFER, type, (), next(_slots))
        self._uop = weakref.ref(uop)
        self.host = np.zeros(type.size, dtype=type.dtype.storage) if values is None else values
        self.memory: dict[str, Memory] = {}  # backend name -> the Memory holding the contents
        self.slot: int = uop.arg
        BUFFERS[uop] = self
        # Until `load` gives the caller a graph reading it, the BUFFER needs one strong holder.
        self._new: UOp | None = uop

    @property
    def uop(self) -> UOp:
        """The BUFFER (alive while a graph or the tensor made with this buffer reads it)."""
        uop = self._uop()
        assert uop is not None, "a Buffer outlived every graph reading it"
        return uop

    def load(self, shape: tuple[int, ...]) -> UOp:
        """The whole buffer read as a value of `shape` (the caller's graph now holds the BUFFER)."""
        from .tensor import reshaped

        value = self.uop.load()
        self._new = None
        return reshaped(value, shape) if shape != self.type.shape else value

    def write(self, values: np.ndarray) -> None:
        self.host = np.array(values, dtype=self.type.dtype.storage).reshape(self.type.size)
        for memory in self.memory.values():
            memory.write(self.host)

    def read(self) -> np.ndarray:
        """The current contents: from the backend that last ran on them, else the host copy."""
        for memory in self.memory.values():
            return memory.read()
        return self.host.copy()

    def attach(self, backend: str, memory: Memory) -> None:
        """`memory` now holds this buffer for `backend`: filled with the current contents."""
        memory.write(self.read())
        # One backend owns the contents at a time: another's copy would go stale.
        self.memory = {backend: memory}

    def with_contents(self) -> UOp:
        """The BUFFER with its current contents as an init CONST (a self-contained program)."""
        values = self.read()
        kind = float if self.type.dtype.is_float else bool if self.type.dtype.is_bool else int
        return UOp(
            Op.BUFFER,
            self.type,
            (UOp.const(self.type, tuple(kind(v) for v in values.tolist())),),
            self.slot,
        )
