"""Registers the backends `cuda` (NVRTC and the driver API) and `cuda-emu` (the same source on
the CPU) through the `uir_backends` hook."""

from __future__ import annotations

from collections.abc import Iterable

from uir.core.calls import inline_calls
from uir.core.plugins import Backend, Compiled, hookimpl
from uir.core.uop import UOp
from uir.rewrite.passes import lower_shapes

from . import driver
from .emulation import compile_emulated, cxx
from .nvrtc import compile_cubin
from .render import render_cuda


class CudaBackend:
    """CUDA C compiled by NVRTC for this machine's GPU, run through the CUDA driver API."""

    name = "cuda"
    description = "CUDA C via NVRTC, run on the GPU through the CUDA driver API"

    def available(self) -> tuple[bool, str]:
        return driver.available()

    def render(self, sink: UOp) -> str:
        return render_cuda(lowered(sink)).source

    def compile(self, sink: UOp) -> Compiled:
        flat = lowered(sink)
        rendered = render_cuda(flat)
        cubin = compile_cubin(rendered.source, driver.architecture())
        return driver.GpuProgram(rendered, cubin, flat)


class CudaEmuBackend:
    """The `cuda` backend's source compiled for the CPU under an emulation header."""

    name = "cuda-emu"
    description = "CUDA C run on the CPU: grid and blocks as loops, built by $CXX or c++"

    def available(self) -> tuple[bool, str]:
        if cxx() is None:
            return False, "no C++ compiler found (set $CXX or install c++)"
        return True, ""

    def render(self, sink: UOp) -> str:
        return render_cuda(lowered(sink)).source

    def compile(self, sink: UOp) -> Compiled:
        flat = lowered(sink)
        return compile_emulated(render_cuda(flat), flat)


def lowered(sink: UOp) -> UOp:
    """The program as kernels take it: CALLs inlined, shaped values lowered to loops whose
    output ranges rangeify marks PARALLEL (spec/uir-week7.md), as the C backend does."""
    return lower_shapes(inline_calls(sink))


@hookimpl
def uir_backends() -> Iterable[Backend]:
    return [CudaBackend(), CudaEmuBackend()]
