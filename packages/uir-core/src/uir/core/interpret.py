"""The reference interpreter: the meaning of a verified program, registered as backend `interp`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np

from .calls import inline_calls
from .errors import BackendError
from .ops import ALU, Op
from .plugins import Backend, hookimpl
from .semantics import apply
from .uop import UOp

Values = dict[UOp, np.ndarray]


def _const(uop: UOp, values: Values) -> np.ndarray:
    return np.array(uop.arg, dtype=uop.dtype.storage).reshape(uop.type.shape)


def _alu(uop: UOp, values: Values) -> np.ndarray:
    srcs = [values[s] for s in uop.src]
    return apply(uop.op, uop.dtype, srcs, [s.dtype for s in uop.src])


def _stack(uop: UOp, values: Values) -> np.ndarray:
    return np.stack([values[s] for s in uop.src]).astype(uop.dtype.storage)


def _index(uop: UOp, values: Values) -> np.ndarray:
    return np.asarray(values[uop.src[0]][int(values[uop.src[1]])])


EVALUATE: dict[Op, Callable[[UOp, Values], np.ndarray]] = {
    Op.CONST: _const,
    Op.STACK: _stack,
    Op.INDEX: _index,
    **{op: _alu for op in ALU},
}


def evaluate(sink: UOp) -> list[np.ndarray]:
    """The value of each SINK source of a verified program, in order."""
    values: Values = {}
    flat = inline_calls(sink)
    for uop in flat.toposort():
        if uop.op is Op.SINK:
            continue
        run = EVALUATE.get(uop.op)
        if run is None:
            raise BackendError(f"the interpreter cannot run {uop.op}")
        values[uop] = run(uop, values)
    return [values[s] for s in flat.src]


class _Interpreted:
    def __init__(self, sink: UOp) -> None:
        self.sink = sink

    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        return evaluate(self.sink)


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
