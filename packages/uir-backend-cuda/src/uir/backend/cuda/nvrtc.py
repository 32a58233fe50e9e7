"""CUDA C -> cubin with NVRTC (the `nvidia-cuda-nvrtc-cu12` wheel, through cuda-bindings): no
CUDA toolkit and no GPU needed.

Options keep floating point UIR's: no fused multiply-add (`--fmad=false`: UIR rounds a*b+c
twice), IEEE division and square root, no flush of subnormals. `-default-device` makes the
helpers, plain `static inline` C functions shared with the C backend, device functions.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from uir.core.errors import BackendError

OPTIONS = (
    "--fmad=false",
    "--prec-div=true",
    "--prec-sqrt=true",
    "--ftz=false",
    "-default-device",
    "--std=c++17",
)
# The architectures the course targets: the H200 the project is checked on, the RTX 3080.
ARCHITECTURES = ("sm_90", "sm_86")

_ERROR = re.compile(r"^.*\berror\b.*$", re.MULTILINE)


def _nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:  # the wheels are missing or broken
        raise BackendError(f"NVRTC is not available: {exc}") from exc
    return nvrtc


def _check(nvrtc: Any, result: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    err, *rest = result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(err)
        raise BackendError(f"NVRTC {what} failed: {text.decode(errors='replace')}")
    return tuple(rest)


def _read(nvrtc: Any, prog: Any, size: Callable[..., Any], get: Callable[..., Any]) -> bytes:
    (n,) = _check(nvrtc, size(prog), "output size")
    data = b" " * n
    _check(nvrtc, get(prog, data), "output")
    return data


def compile_cubin(source: str, arch: str = "sm_90", name: str = "program.cu") -> bytes:
    """The cubin of `source` for `arch` (`sm_90`, `sm_86`, ...). A source that does not compile
    is a BackendError whose message starts with NVRTC's first error line."""
    nvrtc = _nvrtc()
    (prog,) = _check(
        nvrtc, nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []), "setup"
    )
    try:
        options = [f"--gpu-architecture={arch}".encode(), *(o.encode() for o in OPTIONS)]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = _read(nvrtc, prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog)
            text = log.rstrip(b"\0 ").decode(errors="replace").strip()
            first = _ERROR.search(text)
            line = first.group(0).strip() if first else text.splitlines()[0] if text else "?"
            raise BackendError(f"NVRTC could not compile the kernel: {line}\n{text}")
        return _read(nvrtc, prog, nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def version() -> str:
    """NVRTC's version, as `major.minor`."""
    nvrtc = _nvrtc()
    major, minor = _check(nvrtc, nvrtc.nvrtcVersion(), "version")
    return f"{major}.{minor}"
