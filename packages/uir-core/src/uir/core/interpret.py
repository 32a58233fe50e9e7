"""The reference interpreter: the meaning of a verified program, registered as backend `interp`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from .calls import inline_calls
from .errors import BackendError
from .memory import buffer_of
from .ops import ALU, Op
from .plugins import Backend, hookimpl
from .schedule import Block, loop_schedule
from .semantics import apply
from .uop import UOp


@dataclass(frozen=True)
class Window:
    """A memory reference at run time: `size` elements of `buffer` from `begin` on."""

    buffer: UOp
    begin: int
    size: int


@dataclass(frozen=True)
class Place:
    """An INDEX of memory at run time: one element of `buffer`, or None where the gate is false."""

    buffer: UOp
    at: int | None


Value = np.ndarray | Window | Place | None
Values = dict[UOp, Value]
Memory = dict[UOp, np.ndarray]  # each BUFFER and LOCAL -> its current contents


def _const(uop: UOp, values: Values, memory: Memory) -> np.ndarray:
    return np.array(uop.arg, dtype=uop.dtype.storage).reshape(uop.type.shape)


def _alu(uop: UOp, values: Values, memory: Memory) -> np.ndarray:
    srcs = [values[s] for s in uop.src]
    return apply(uop.op, uop.dtype, srcs, [s.dtype for s in uop.src])


def _stack(uop: UOp, values: Values, memory: Memory) -> np.ndarray:
    return np.stack([values[s] for s in uop.src]).astype(uop.dtype.storage)


def _index(uop: UOp, values: Values, memory: Memory) -> Value:
    source, i = values[uop.src[0]], int(values[uop.src[1]])
    if not isinstance(source, Window):
        return np.asarray(source[i])
    if len(uop.src) == 3 and not bool(values[uop.src[2]]):
        return Place(source.buffer, None)  # gated off: the place is never touched
    return Place(source.buffer, source.begin + i)


def _buffer(uop: UOp, values: Values, memory: Memory) -> Window:
    # Contents live in `memory`, set up before the run; a version is the whole buffer.
    return Window(uop, 0, uop.type.shape[0])


def _shrink(uop: UOp, values: Values, memory: Memory) -> Window:
    outer = values[uop.src[0]]
    assert isinstance(outer, Window)
    return Window(outer.buffer, outer.begin + uop.arg[0][0], uop.type.shape[0])


def _after(uop: UOp, values: Values, memory: Memory) -> Window:
    # The deps have run already (the schedule puts them first), so the version is just the buffer.
    return Window(buffer_of(uop), 0, uop.type.shape[0])


def _load(uop: UOp, values: Values, memory: Memory) -> np.ndarray:
    place = values[uop.src[0]]
    assert isinstance(place, Place)
    if place.at is None:
        return np.zeros((), dtype=uop.dtype.storage)  # a gated-off load yields zero (+0.0)
    return np.array(memory[place.buffer][place.at])


def _store(uop: UOp, values: Values, memory: Memory) -> None:
    place = values[uop.src[0]]
    assert isinstance(place, Place)
    if place.at is not None:
        memory[place.buffer][place.at] = values[uop.src[1]]


EVALUATE: dict[Op, Callable[[UOp, Values, Memory], Value]] = {
    Op.CONST: _const,
    Op.STACK: _stack,
    Op.INDEX: _index,
    Op.BUFFER: _buffer,
    Op.LOCAL: _buffer,
    Op.SHRINK: _shrink,
    Op.AFTER: _after,
    Op.LOAD: _load,
    Op.STORE: _store,
    **{op: _alu for op in ALU},
}


def initial_memory(sink: UOp, inputs: Mapping[int, np.ndarray] | None = None) -> Memory:
    """Every buffer's starting contents: `inputs[slot]`, else its CONST, else zeros (LOCALs)."""
    inputs = inputs or {}
    memory: Memory = {}
    for uop in sink.toposort(bodies=False):
        if uop.op not in (Op.BUFFER, Op.LOCAL):
            continue
        storage, size = uop.dtype.storage, uop.type.shape[0]
        if uop.op is Op.BUFFER and uop.arg in inputs:
            given = np.asarray(inputs[uop.arg])
            if given.size != size:
                raise BackendError(f"input {uop.arg} has {given.size} elements, not {size}")
            memory[uop] = np.array(given, dtype=storage).reshape(size)
        elif uop.src:
            memory[uop] = np.array(uop.src[0].arg, dtype=storage).reshape(size)
        else:
            memory[uop] = np.zeros(size, dtype=storage)
    return memory


def _output(value: Value, memory: Memory) -> np.ndarray:
    if isinstance(value, Window):
        return memory[value.buffer][value.begin : value.begin + value.size].copy()
    assert isinstance(value, np.ndarray)
    return value


def evaluate(sink: UOp, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
    """The value of each SINK source of a verified program, in order; a memory reference gives
    its contents when the program ends. `inputs` replaces global buffers' contents by slot."""
    values: Values = {}
    flat = inline_calls(sink)
    memory = initial_memory(flat, inputs)
    _run_block(loop_schedule(flat), values, memory)
    return [_output(values[s], memory) for s in flat.src]


def _run_block(block: Block, values: Values, memory: Memory) -> None:
    for item in block.body:
        if isinstance(item, Block):
            counter = item.range
            assert counter is not None
            for i in range(int(values[counter.src[0]])):  # no iterations when end <= 0
                values[counter] = np.array(i, dtype=np.int32)
                _run_block(item, values, memory)
        elif item.op is Op.END:
            values[item] = None  # its loops have run: the block before it
        elif item.op is not Op.SINK:
            run = EVALUATE.get(item.op)
            if run is None:
                raise BackendError(f"the interpreter cannot run {item.op}")
            values[item] = run(item, values, memory)


class _Interpreted:
    def __init__(self, sink: UOp) -> None:
        self.sink = sink

    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        return evaluate(self.sink, inputs)


class Interpreter:
    """The reference semantics, element by element with numpy; always available."""

    name = "interp"
    description = "reference interpreter (numpy, bit-exact)"

    def available(self) -> tuple[bool, str]:
        return True, ""

    def render(self, sink: UOp) -> str:
        raise BackendError("the interpreter renders no source code")

    def compile(self, sink: UOp) -> _Interpreted:
        return _Interpreted(sink)


@hookimpl
def uir_backends() -> Iterable[Backend]:
    return [Interpreter()]
