"""Registers the backend `c` through the `uir_backends` hook."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from uir.core.calls import inline_calls
from uir.core.plugins import Backend, hookimpl
from uir.core.uop import UOp

from .abi import ENTRY, layout
from .render import render_c
from .runtime import CompiledProgram
from .toolchain import compile_shared, compiler


class CBackend:
    """C99 without undefined behaviour, compiled by the system C compiler and run through ctypes."""

    name = "c"
    description = "C99 via $CC or cc, loaded with ctypes"

    def available(self) -> tuple[bool, str]:
        if compiler() is None:
            return False, "no C compiler found (set $CC or install cc)"
        return True, ""

    def render(self, sink: UOp) -> str:
        return render_c(inline_calls(sink))

    def compile(self, sink: UOp) -> CompiledProgram:
        flat = inline_calls(sink)
        return CompiledProgram(compile_shared([render_c(flat)]), layout(flat), flat)


@hookimpl
def uir_backends() -> Iterable[Backend]:
    return [CBackend()]


def compile_many(sinks: Sequence[UOp]) -> list[CompiledProgram]:
    """Compile several programs with one compiler run (each C compile costs tens of ms): program i
    gets entry point `uir_program_i` in a shared library."""
    flats = [inline_calls(s) for s in sinks]
    entries = [f"{ENTRY}_{i}" for i in range(len(flats))]
    library = compile_shared([render_c(f, e) for f, e in zip(flats, entries, strict=True)])
    return [CompiledProgram(library, layout(f), f, e) for f, e in zip(flats, entries, strict=True)]


def load_source(source: str, sink: UOp) -> CompiledProgram:
    """Compile C source written for the program under `sink` (by this renderer or by a student's)
    and load it under the ABI of abi.py: the render grader runs a student's `render` output so."""
    flat = inline_calls(sink)
    return CompiledProgram(compile_shared([source]), layout(flat), flat)
