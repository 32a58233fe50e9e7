"""The hook implementations `uir` finds through this package's entry point: one pass, one backend.

A UOp has four fields: `op` (an `Op`), `type` (a `Type`: `dtype` and `shape`, `()` for a scalar;
`uop.dtype` is short for `uop.type.dtype`), `src` (the tuple of its sources) and `arg` (its
argument, None when it has none). UOps are immutable and hash-consed: build new ones, never change
one, and two equal statements are one object.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from uir.core.arguments import format_arg
from uir.core.engine import graph_rewrite
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.pattern import INTS, P, Rules
from uir.core.plugins import Backend, Pass, hookimpl
from uir.core.uop import UOp

# ---- a pass: a table of rules run by core's rewrite engine --------------------------------------

# `x * 2` of ints becomes `x + x`: integers wrap, so both are the same value for every x. (For
# floats it is exact too, but this example keeps to the rule it can state in one line.)
DOUBLING = Rules(
    [
        (P.var("x", INTS) * 2, lambda x: x.alu(Op.ADD, x)),
    ]
)


def add_for_doubling(sink: UOp) -> UOp:
    """The program with every integer `x * 2` written `x + x`."""
    return graph_rewrite(sink, DOUBLING)


@hookimpl
def uir_passes() -> Iterable[Pass]:
    # Stage "simplify", right after the built-in simplify pass (which would fold constants first).
    # The pipeline checks that the result verifies and prints what the input printed.
    return [
        Pass(
            "doubling",
            "simplify",
            "x * 2 of ints as x + x (an example plugin's pass)",
            add_for_doubling,
            after="simplify",
        )
    ]


# ---- a backend -------------------------------------------------------------------------------


class Listed:
    """What `compile` returns: something with `run(inputs)` giving one array per SINK source."""

    def __init__(self, sink: UOp) -> None:
        self.sink = sink

    def run(self, inputs: Mapping[int, object] | None = None) -> list:
        # A real backend runs the code it generated here. This one hands the program to the
        # reference interpreter, so that its outputs are right while its `render` is the example.
        return evaluate(self.sink, inputs)


class ListingBackend:
    """A backend taking `form = "program"`: it receives the program after the optimizing passes,
    a SINK with shaped values whole. A backend declaring `form = "kernels"` receives a
    `uir.core.kernels.Schedule` instead: the program lowered to loops and cut into kernels."""

    name = "listing"
    description = "one line per UOp: op, type, sources, argument (an example plugin's backend)"
    form = "program"

    def available(self) -> tuple[bool, str]:
        return True, ""  # a backend needing a compiler or a driver says here why it cannot run

    def render(self, sink: UOp) -> str:
        names: dict[UOp, str] = {}
        lines = []
        for uop in sink.toposort():  # sources before their users
            names[uop] = f"v{len(names)}"
            srcs = " ".join(names[s] for s in uop.src)
            arg = "" if uop.arg is None else f" {format_arg(uop.arg)}"
            lines.append(f"{names[uop]}: {uop.op.name} {uop.type} ({srcs}){arg}")
        return "\n".join(lines) + "\n"

    def compile(self, sink: UOp) -> Listed:
        return Listed(sink)


@hookimpl
def uir_backends() -> Iterable[Backend]:
    return [ListingBackend()]
