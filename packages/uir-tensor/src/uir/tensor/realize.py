"""Running tensors: one program per call, compiled once per graph and backend.

`realize(*tensors)` builds the SINK of the tensors' values and of every pending assignment
(`Tensor.assign`: a STORE into the buffer, its version printed by an AFTER), opens a persistent
session for it (uir.core.runtime.open_session) or finds the one already open for the same graph,
and runs it. Hash-consing makes the graph of a training step the same UOp at every step, so the
step is compiled at the first and only run after that; the parameters stay in the backend's
memory between runs, shared by every program that reads them.

The backend is the innermost `device(name)` context's, else `default_backend()`: the C backend
when a C compiler exists, else the interpreter.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator

import numpy as np

from uir.core.ops import Op
from uir.core.plugins import Registry, load_registry
from uir.core.printer import print_program
from uir.core.runtime import Session, open_session
from uir.core.uop import UOp

from .buffers import BUFFERS, Buffer
from .tensor import Tensor, TensorError

_pending: dict[int, tuple[Buffer, UOp]] = {}  # slot -> (buffer, the value to store)
_sessions: dict[tuple[str, UOp], Session] = {}
_device: list[str] = []
_registry: list[Registry] = []


def registry() -> Registry:
    if not _registry:
        _registry.append(load_registry())
    return _registry[0]


def default_backend() -> str:
    ok, _ = registry().backend("c").available()
    return "c" if ok else "interp"


@contextlib.contextmanager
def device(name: str) -> Iterator[None]:
    """Run every realize inside the block on backend `name` (interp, c, cuda, cuda-emu)."""
    registry().backend(name)  # an unknown name fails here, naming the installed ones
    _device.append(name)
    try:
        yield
    finally:
        _device.pop()


def current_backend() -> str:
    return _device[-1] if _device else default_backend()


def pending_assign(buffer: Buffer, value: UOp) -> None:
    _pending[buffer.slot] = (buffer, value)


# SINK -> its buffers: a training step realizes the same SINK every step, and walking its
# graph (over a thousand UOps) each time would cost more than building it.
_graph_buffers: weakref.WeakKeyDictionary[UOp, list[Buffer]] = weakref.WeakKeyDictionary()


def _buffers_of(root: UOp) -> list[Buffer]:
    cached = _graph_buffers.get(root)
    if cached is not None:
        return cached
    found = []
    for u in root.toposort():
        if u.op is Op.BUFFER:
            buffer = BUFFERS.get(u)
            if buffer is None:
                raise TensorError(f"realize: BUFFER {u.arg} was not made by uir.tensor")
            found.append(buffer)
    _graph_buffers[root] = found
    return found


def program(*tensors: Tensor) -> UOp:
    """The SINK `realize(*tensors)` would run now: the tensors' values, then a STORE (seen
    through its AFTER) of every pending assignment. The same computation is the same UOp."""
    stores = [buffer.uop.after(buffer.uop.store(value)) for buffer, value in _pending.values()]
    return UOp.sink(*(t.uop for t in tensors), *stores)


def realize(*tensors: Tensor, backend: str | None = None) -> list[np.ndarray]:
    """Run the tensors' values and every pending assignment as one program; the tensors'
    values as numpy arrays of their shapes."""
    name = backend or current_backend()
    sink = program(*tensors)
    session = _sessions.get((name, sink))
    buffers = _buffers_of(sink)
    if session is None:
        shared = {b.slot: b.memory[name] for b in buffers if name in b.memory}
        session = open_session(sink, name, shared, registry=registry())
        _sessions[(name, sink)] = session
    for b in buffers:
        if b.memory.get(name) is not session.memory[b.slot]:
            b.attach(name, session.memory[b.slot])
    _pending.clear()
    outputs = session.run()
    return [np.asarray(out).reshape(t.shape) for out, t in zip(outputs, tensors, strict=False)]


def close_sessions() -> None:
    """Close every open session (freeing its compiled program and memory), each buffer's
    contents first copied back to the host: the tensors keep their values, and the next
    realize compiles afresh."""
    for buffer in list(BUFFERS.values()):
        if buffer.memory:
            buffer.host = buffer.read()
            buffer.memory = {}
    for session in _sessions.values():
        session.close()
    _sessions.clear()


def to_uir(*tensors: Tensor) -> str:
    """The program computing `tensors` (and every pending assignment, which stays pending) as
    .uir text, each buffer's current contents written in as its init CONST: `uir run` prints the
    tensors' values, then each assigned buffer's new contents."""
    sink = program(*tensors)
    with_data = {b.uop: b.with_contents() for b in _buffers_of(sink)}
    return print_program(substitute(sink, with_data))


def substitute(root: UOp, replace: dict[UOp, UOp]) -> UOp:
    """`root` with each UOp in `replace` swapped for its value, rebuilt bottom-up."""
    done: dict[UOp, UOp] = {}
    for u in root.toposort():
        if u in replace:
            done[u] = replace[u]
        else:
            src = tuple(done[s] for s in u.src)
            done[u] = u if src == u.src else u.replace(src=src)
    return done[root]
