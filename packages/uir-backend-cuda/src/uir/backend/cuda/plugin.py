"""Registers the backends `cuda` (NVRTC and the driver API) and `cuda-emu` (the same source on
the CPU) through the `uir_backends` hook."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from uir.backend.c.session import CompiledSession
from uir.core.kernels import require_schedule
from uir.core.plugins import Backend, Compiled, hookimpl
from uir.core.runtime import Memory, Session
from uir.core.uop import UOp

from . import driver
from .emulation import compile_emulated, cxx
from .nvrtc import compile_cubin
from .render import render_cuda


class CudaBackend:
    """CUDA C compiled by NVRTC for this machine's GPU, run through the CUDA driver API."""

    name = "cuda"
    description = "CUDA C via NVRTC, run on the GPU through the CUDA driver API"
    form = "kernels"

    def available(self) -> tuple[bool, str]:
        return driver.available()

    def render(self, program: object) -> str:
        return render_cuda(require_schedule(program, self.name)).source

    def compile(self, program: object) -> Compiled:
        schedule = require_schedule(program, self.name)
        rendered = render_cuda(schedule)
        cubin = compile_cubin(rendered.source, driver.architecture())
        return driver.GpuProgram(rendered, cubin, schedule.source)

    def session(self, program: object, source: UOp, memory: Mapping[int, Memory]) -> Session:
        """The module loaded once and the global buffers kept in device memory between runs
        (uir.core.runtime.open_session)."""
        schedule = require_schedule(program, self.name)
        rendered = render_cuda(schedule)
        cubin = compile_cubin(rendered.source, driver.architecture())
        loaded = driver.GpuProgram(rendered, cubin, schedule.source)
        return driver.GpuSession(loaded, self.name, memory)


class CudaEmuBackend:
    """The `cuda` backend's source compiled for the CPU under an emulation header."""

    name = "cuda-emu"
    description = "CUDA C run on the CPU: grid and blocks as loops, built by $CXX or c++"
    form = "kernels"

    def available(self) -> tuple[bool, str]:
        if cxx() is None:
            return False, "no C++ compiler found (set $CXX or install c++)"
        return True, ""

    def render(self, program: object) -> str:
        return render_cuda(require_schedule(program, self.name)).source

    def compile(self, program: object) -> Compiled:
        schedule = require_schedule(program, self.name)
        return compile_emulated(render_cuda(schedule), schedule.source)

    def session(self, program: object, source: UOp, memory: Mapping[int, Memory]) -> Session:
        """The CPU build loaded once and run in this process, as the C backend's session."""
        schedule = require_schedule(program, self.name)
        built = compile_emulated(render_cuda(schedule), schedule.source)
        return CompiledSession(built, self.name, memory)


@hookimpl
def uir_backends() -> Iterable[Backend]:
    return [CudaBackend(), CudaEmuBackend()]
