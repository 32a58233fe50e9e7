"""Loading a compiled program with ctypes and running it on numpy buffers (ABI in abi.py)."""

from __future__ import annotations

import ctypes
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from uir.core.arrays import buffer_contents
from uir.core.uop import UOp

from .abi import ENTRY, Layout, abi_numpy, from_abi, to_abi


def initial_contents(abi: Layout, inputs: Mapping[int, np.ndarray] | None) -> dict[int, np.ndarray]:
    """Each global buffer's starting contents in ABI form: an input, its init CONST, or zeros."""
    inputs = inputs or {}
    return {
        b.slot: to_abi(buffer_contents(b.buffer, inputs.get(b.slot)), b.type.dtype)
        for b in abi.buffers
    }


class CompiledProgram:
    """A loaded shared library and the ABI of its entry point."""

    def __init__(self, library: Path, abi: Layout, sink: UOp, entry: str = ENTRY) -> None:
        self.abi = abi
        self.sink = sink
        self._library = ctypes.CDLL(str(library))
        self._entry = getattr(self._library, entry)
        self._entry.argtypes = [ctypes.c_void_p] * len(abi.arg_types)
        self._entry.restype = None

    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        """Run once on fresh buffers; one array per SINK source, as the interpreter gives it."""
        buffers = initial_contents(self.abi, inputs)
        outputs = [np.zeros(t.size, dtype=abi_numpy(t.dtype)) for t in self.abi.outputs]
        arrays = [*(buffers[b.slot] for b in self.abi.buffers), *outputs]
        self._entry(*(a.ctypes.data for a in arrays))
        results = []
        for source, back in zip(self.sink.src, self.abi.readbacks, strict=True):
            if back.output is not None:
                raw = outputs[back.output]
            else:
                assert back.slot is not None
                raw = buffers[back.slot][back.begin : back.begin + back.length]
            results.append(from_abi(raw, source.dtype).reshape(source.type.shape))
        return results
