"""Registers the backend `c` through the `uir_backends` hook."""

from __future__ import annotations

from collections.abc import Iterable

from uir.core.calls import inline_calls
from uir.core.plugins import Backend, hookimpl
from uir.core.uop import UOp

from .abi import layout
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
        return render_c(sink)

    def compile(self, sink: UOp) -> CompiledProgram:
        flat = inline_calls(sink)
        return CompiledProgram(compile_shared(render_c(flat)), layout(flat), flat)


@hookimpl
def uir_backends() -> Iterable[Backend]:
    return [CBackend()]
