"""Registers the backend `c` through the `uir_backends` hook."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from uir.core.calls import inline_calls
from uir.core.dtypes import DType
from uir.core.kernels import Schedule, require_schedule
from uir.core.plugins import Backend, hookimpl
from uir.core.runtime import Memory
from uir.core.uop import UOp

from .abi import ENTRY, layout
from .printing import format_values
from .render import render_c, render_kernels
from .runtime import CompiledProgram, default_threads
from .session import CompiledSession
from .toolchain import compile_shared, compiler


class CBackend:
    """C99 without undefined behaviour, compiled by the system C compiler and run through ctypes."""

    name = "c"
    description = "C99 via $CC or cc, loaded with ctypes"
    form = "kernels"

    def available(self) -> tuple[bool, str]:
        if compiler() is None:
            return False, "no C compiler found (set $CC or install cc)"
        return True, ""

    def render(self, program: object) -> str:
        return render_c(require_schedule(program, self.name))

    def render_kernels(self, program: object) -> list[str]:
        return render_kernels(require_schedule(program, self.name))

    def compile(self, program: object) -> CompiledProgram:
        schedule = require_schedule(program, self.name)
        source = schedule.source
        return CompiledProgram(compile_shared([render_c(schedule)]), layout(source), source)

    def session(
        self, program: object, source: UOp, memory: Mapping[int, Memory]
    ) -> CompiledSession:
        """The program compiled and loaded once, run in this process on persistent buffers
        (uir.core.runtime.open_session)."""
        return CompiledSession(self.compile(program), self.name, memory)

    def format_outputs(
        self, values: Sequence[np.ndarray], dtypes: Sequence[DType], threads: int | None
    ) -> list[str]:
        return format_values(values, dtypes, threads or default_threads())


@hookimpl
def uir_backends() -> Iterable[Backend]:
    return [CBackend()]


def compile_many(schedules: Sequence[Schedule]) -> list[CompiledProgram]:
    """Compile several programs' schedules with one compiler run (each C compile costs tens of
    ms): program i gets entry point `uir_program_i` in a shared library."""
    entries = [f"{ENTRY}_{i}" for i in range(len(schedules))]
    library = compile_shared([render_c(s, e) for s, e in zip(schedules, entries, strict=True)])
    return [
        CompiledProgram(library, layout(s.source), s.source, e)
        for s, e in zip(schedules, entries, strict=True)
    ]


def load_source(source: str, sink: UOp) -> CompiledProgram:
    """Compile C source written for the program under `sink` as written (by this renderer or by
    a student's) and load it under the ABI of abi.py: the render grader runs a student's
    `render` output so."""
    flat = inline_calls(sink)
    return CompiledProgram(compile_shared([source]), layout(flat), flat)
