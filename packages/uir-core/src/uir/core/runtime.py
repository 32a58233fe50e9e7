"""A program compiled once and run many times on global buffers that persist between runs.

`uir run` and the graders run each program once, in a forked child, on fresh buffers (each
backend's `Compiled`). Training runs one step thousands of times: its parameters and optimizer
state must stay in the backend's own memory (host memory for C, device memory for CUDA) from one
run to the next, never copied per step. A `Session` is that: it owns (or shares) one `Memory` per
global buffer, and each `run` executes the program in this process on their current contents.
spec/runtime.md is the normative text.

`open_session` is the one way in: it verifies the program, brings it to the backend's form as
`uir run` does (uir.core.plugins.prepare) and asks the backend for a session (its optional
method `session`, see plugins.Backend). `HostMemory` is the storage of the backends whose
buffers are numpy arrays in this process (the interpreter's, and C's in their ABI form).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .calls import inline_calls
from .dtypes import Type
from .errors import BackendError
from .ops import Op
from .parse import Program
from .uop import UOp
from .verify import verify

if TYPE_CHECKING:
    from .plugins import Backend, Registry


class Memory(Protocol):
    """One global buffer's storage on a backend: it outlives any one run."""

    type: Type  # the BUFFER's type: its dtype and element count
    backend: str  # the name of the backend whose storage it is
    slot: int  # the BUFFER's slot in the program whose session allocated it

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


def global_buffers(source: UOp) -> dict[int, UOp]:
    """Each global BUFFER of the program as written (CALLs inlined), by slot, in slot order:
    the buffers a session holds memory for."""
    found = {u.arg: u for u in inline_calls(source).toposort(bodies=False) if u.op is Op.BUFFER}
    return dict(sorted(found.items()))


def check_shared(
    source: UOp, backend: str, memory: Mapping[int, Memory] | None
) -> dict[int, Memory]:
    """`memory` (the slots a new session shares) checked against the program's buffers: each
    slot one of its BUFFERs, each Memory `backend`'s and of that BUFFER's exact type."""
    buffers = global_buffers(source)
    shared = dict(memory or {})
    seen: dict[int, int] = {}  # id of a Memory -> the first slot given it
    for slot, given in shared.items():
        if id(given) in seen:
            raise BackendError(
                f"shared memory for slot {slot} is also given for slot {seen[id(given)]}: a "
                f"program's buffers never overlap (compiled code assumes so)"
            )
        seen[id(given)] = slot
        if slot not in buffers:
            known = ", ".join(map(str, buffers)) or "none"
            raise BackendError(
                f"shared memory for slot {slot}: the program has no BUFFER {slot} "
                f"(its buffers' slots: {known})"
            )
        wanted = buffers[slot].type
        owner = getattr(given, "backend", None)
        if owner != backend:
            raise BackendError(
                f"shared memory for slot {slot} belongs to backend '{owner}', not '{backend}' "
                f"(a session runs on its own backend's memory)"
            )
        if getattr(given, "type", None) != wanted:
            raise BackendError(
                f"shared memory for slot {slot} holds {getattr(given, 'type', '?')}, but "
                f"BUFFER {slot} is {wanted}"
            )
        if getattr(given, "closed", False):
            raise BackendError(f"shared memory for slot {slot} was freed (its session closed)")
    return shared


def flat_values(slot: int, type: Type, values: np.ndarray) -> np.ndarray:
    """`values` flat, for a Memory.write into slot `slot` of `type`; BackendError when they are
    not `type.size` elements."""
    values = np.asarray(values)
    if values.size != type.size:
        raise BackendError(
            f"slot {slot} holds {type} ({type.size} elements): cannot write {values.size} "
            f"elements (shape {values.shape})"
        )
    return values.reshape(-1)


class HostMemory:
    """A global buffer's storage as one flat numpy array in this process: `array` holds the
    elements as `raw` dtype (the interpreter's storage dtype, or a backend's ABI form), and
    `encode`/`decode` convert between it and the interpreter's form. The array is allocated
    once and never replaced: compiled code may hold its address."""

    def __init__(self, backend: str, slot: int, type: Type, array: np.ndarray) -> None:
        self.backend = backend
        self.slot = slot
        self.type = type
        self.array: np.ndarray | None = array
        self.owner: object | None = None  # the session that allocated it and frees it

    def encode(self, values: np.ndarray) -> np.ndarray:
        """`values` (in the dtype's storage form) as elements of `array`."""
        return np.asarray(values, dtype=self.type.dtype.storage)

    def decode(self, raw: np.ndarray) -> np.ndarray:
        """Elements of `array` in the dtype's storage form, as a fresh array."""
        return np.array(raw, dtype=self.type.dtype.storage)

    @property
    def closed(self) -> bool:
        return self.array is None

    def contents(self) -> np.ndarray:
        """The array itself; BackendError once its session freed it."""
        if self.array is None:
            raise BackendError(
                f"the memory of slot {self.slot} was freed: the session that allocated it closed"
            )
        return self.array

    def write(self, values: np.ndarray) -> None:
        array = self.contents()
        array[...] = self.encode(flat_values(self.slot, self.type, values))

    def read(self) -> np.ndarray:
        return self.decode(self.contents())

    def free(self) -> None:
        self.array = None

    def __repr__(self) -> str:
        state = " (freed)" if self.closed else ""
        return f"<{self.backend} memory of slot {self.slot}: {self.type}{state}>"


def require_open(memory: Mapping[int, HostMemory], closed: bool) -> None:
    """BackendError when the session is closed or one of its (shared) buffers was freed."""
    if closed:
        raise BackendError("the session is closed")
    for slot, m in memory.items():
        if m.array is None:
            raise BackendError(
                f"the memory of slot {slot} was freed: the session that allocated it closed "
                f"before this one, which shares it"
            )


def open_session(
    sink: UOp,
    backend: str | Backend = "c",
    memory: Mapping[int, Memory] | None = None,
    *,
    optimize: bool = True,
    registry: Registry | None = None,
) -> Session:
    """The program under `sink` compiled once for `backend` (a name in `registry`, by default
    the installed plugins', or a Backend), ready to run many times on persistent buffers.

    The program is verified (VerifyError, as `uir check` reports it) and brought to the
    backend's form through the registry's pipeline (every optimizing pass unless `optimize` is
    false, and the lowerings the form needs). Slots in `memory` are used as they are, shared
    with whatever else holds them: each must be a BUFFER of the program, and its Memory the same
    backend's, of that BUFFER's exact type (else BackendError naming the slot). The session
    allocates every other global buffer and fills it once with its init CONST, or zeros."""
    from .plugins import form_of, load_registry, prepare  # plugins imports nothing of this

    verify(Program(sink, {}))
    registry = registry if registry is not None else load_registry()
    chosen = registry.backend(backend) if isinstance(backend, str) else backend
    opener = getattr(chosen, "session", None)
    if opener is None:
        raise BackendError(
            f"backend '{chosen.name}' cannot keep a program's buffers between runs: it has no "
            f"`session` method (uir.core.plugins.OpensSessions)"
        )
    ok, reason = chosen.available()
    if not ok:
        raise BackendError(f"backend '{chosen.name}' is not available here: {reason}")
    source = inline_calls(sink)
    shared = check_shared(source, chosen.name, memory)
    form = form_of(chosen)
    ready = prepare(sink, form, registry.pipeline(form=form, backend=chosen.name), optimize)
    return opener(ready, source, shared)
