"""A program compiled once and run many times on global buffers that persist between runs.

`uir run` and the graders run each program once, in a forked child, on fresh buffers (each
backend's `Compiled`). Training runs one step thousands of times: its parameters and optimizer
state must stay in the backend's own memory (host memory for C, device memory for CUDA) from one
run to the next, never copied per step. A `Session` is that: it owns (or shares) one `Memory` per
global buffer, and each `run` executes the program in this process on their current contents.
spec/runtime.md is the normative text.

STATUS: the protocol only; the implementations are being built (issue 27 item 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np

from .dtypes import Type


class Memory(Protocol):
    """One global buffer's storage on a backend: it outlives any one run."""

    type: Type  # the BUFFER's type: its dtype and element count

    def write(self, values: np.ndarray) -> None:
        """Replace the whole contents (any shape holding `type`'s element count)."""
        ...

    def read(self) -> np.ndarray:
        """A flat copy of the contents, as the interpreter gives a buffer of `type`."""
        ...


class Session(Protocol):
    """A compiled program and the storage of its global buffers, by slot."""

    memory: Mapping[int, Memory]

    def run(self) -> list[np.ndarray]:
        """Run once on the buffers' current contents, which then hold what the program stored;
        one array per SINK source, in order, as `Compiled.run` gives them."""
        ...

    def close(self) -> None:
        """Free what the session allocated (not the memory it was given)."""
        ...
