"""Running kernels on a GPU through the CUDA driver API (cuda.bindings.driver).

One primary context on device 0, made current for each run. A run copies each global buffer's
initial contents to the device, allocates the outputs and the zeroed scratch arrays, launches the
kernels in order on the default stream, waits, and copies buffers and outputs back; every driver
error becomes a BackendError carrying the driver's own message. The run stays in this process (a
CUDA context does not survive fork); a faulting kernel is reported by the driver, not by a signal.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from uir.backend.c.abi import abi_numpy
from uir.backend.c.runtime import initial_contents, read_back
from uir.core.errors import BackendError
from uir.core.uop import UOp

from .render import Rendered


def _driver() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        raise BackendError(f"cuda-bindings is not installed: {exc}") from exc
    return driver


def _call(what: str, result: Any) -> Any:
    """The values a driver call returned after its status; a failure is a BackendError."""
    driver = _driver()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != driver.CUresult.CUDA_SUCCESS:
        _, name = driver.cuGetErrorName(err)
        _, text = driver.cuGetErrorString(err)
        decoded = [
            t.decode(errors="replace") if isinstance(t, bytes) else str(t) for t in (name, text)
        ]
        raise BackendError(f"CUDA {what} failed: {decoded[0]}: {decoded[1]}")
    return rest[0] if len(rest) == 1 else tuple(rest)


@cache
def _device() -> tuple[Any, Any, str]:
    """(device 0, its primary context, its architecture `sm_XY`), set up once."""
    driver = _driver()
    try:
        _call("initialisation (cuInit)", driver.cuInit(0))
    except BackendError:
        raise
    except Exception as exc:  # the bindings raise their own error when no driver library loads
        raise BackendError(f"no CUDA driver: {exc}") from exc
    if _call("device count", driver.cuDeviceGetCount()) == 0:
        raise BackendError("the CUDA driver sees no GPU")
    device = _call("device lookup", driver.cuDeviceGet(0))
    attr = driver.CUdevice_attribute
    major = _call(
        "attribute query",
        driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
    )
    minor = _call(
        "attribute query",
        driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
    )
    context = _call("context creation", driver.cuDevicePrimaryCtxRetain(device))
    return device, context, f"sm_{major}{minor}"


def architecture() -> str:
    """The GPU's architecture for NVRTC (`sm_90` on an H200); BackendError where there is none."""
    return _device()[2]


def available() -> tuple[bool, str]:
    """(True, "") when a driver and a GPU are present, else (False, why not)."""
    try:
        _device()
    except BackendError as exc:
        return False, str(exc)
    return True, ""


class _DeviceArrays:
    """Device allocations freed together."""

    def __init__(self) -> None:
        self.pointers: list[Any] = []

    def alloc(self, nbytes: int) -> Any:
        pointer = _call("allocation (cuMemAlloc)", _driver().cuMemAlloc(max(nbytes, 1)))
        self.pointers.append(pointer)
        return pointer

    def free(self) -> None:
        for pointer in self.pointers:
            _driver().cuMemFree(pointer)  # freeing is best effort: a failed run may leave errors


class GpuProgram:
    """A program's cubin loaded on the GPU, run like uir.backend.c.runtime.CompiledProgram."""

    def __init__(self, rendered: Rendered, cubin: bytes, sink: UOp) -> None:
        driver = _driver()
        _, self._context, _ = _device()
        _call("context switch", driver.cuCtxSetCurrent(self._context))
        self.rendered = rendered
        self.sink = sink
        self._module = _call("module load (cuModuleLoadData)", driver.cuModuleLoadData(cubin))
        self._functions = [
            _call(
                f"kernel lookup of {k.name}",
                driver.cuModuleGetFunction(self._module, k.name.encode()),
            )
            for k in rendered.kernels
        ]

    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        """Run once on fresh buffers; one array per SINK source, as the interpreter gives it."""
        hosts, device, params = self._upload(inputs)
        try:
            self._launch(params)
            _call("kernel run", _driver().cuCtxSynchronize())
            for host, pointer in zip(hosts, device.pointers, strict=False):
                if host.nbytes:
                    _call(
                        "copy from the GPU",
                        _driver().cuMemcpyDtoH(host.ctypes.data, pointer, host.nbytes),
                    )
        finally:
            device.free()
        return read_back(self.sink, self.rendered.abi, hosts)

    def time_kernels(
        self, inputs: Mapping[int, np.ndarray] | None = None, repeats: int = 5
    ) -> list[float]:
        """Seconds each of `repeats` launches of all the kernels took on the GPU (CUDA events),
        after one launch that warms up; the buffers are uploaded once (a benchmark's figures)."""
        driver = _driver()
        _, device, params = self._upload(inputs)
        flags = driver.CUevent_flags.CU_EVENT_DEFAULT
        start = _call("event creation", driver.cuEventCreate(flags))
        stop = _call("event creation", driver.cuEventCreate(flags))
        try:
            self._launch(params)
            times = []
            for _ in range(repeats):
                _call("event record", driver.cuEventRecord(start, 0))
                self._launch(params)
                _call("event record", driver.cuEventRecord(stop, 0))
                _call("kernel run", driver.cuEventSynchronize(stop))
                times.append(_call("event timing", driver.cuEventElapsedTime(start, stop)) / 1e3)
            return times
        finally:
            driver.cuEventDestroy(start)
            driver.cuEventDestroy(stop)
            device.free()

    def _upload(
        self, inputs: Mapping[int, np.ndarray] | None
    ) -> tuple[list[np.ndarray], _DeviceArrays, np.ndarray]:
        """The host arrays of the ABI's parameters, their device copies (then the zeroed scratch
        arrays), and the kernel parameter block pointing at them."""
        driver = _driver()
        abi = self.rendered.abi
        _call("context switch", driver.cuCtxSetCurrent(self._context))
        start = initial_contents(abi, inputs)
        hosts = [start[b.slot] for b in abi.buffers]
        hosts += [np.zeros(t.size, dtype=abi_numpy(t.dtype)) for t in abi.outputs]
        device = _DeviceArrays()
        try:
            for host in hosts:
                pointer = device.alloc(host.nbytes)
                if host.nbytes:
                    copied = driver.cuMemcpyHtoD(pointer, host.ctypes.data, host.nbytes)
                    _call("copy to the GPU", copied)
            for s in self.rendered.scratch:
                nbytes = s.count * s.itemsize
                pointer = device.alloc(nbytes)
                _call("zeroing scratch", driver.cuMemsetD8(pointer, 0, max(nbytes, 1)))
        except BaseException:
            device.free()
            raise
        # cuLaunchKernel takes the address of an array of addresses, one per parameter: the
        # arrays it points into stay alive with the program, until the next upload.
        self._values = [np.array([int(p)], dtype=np.uint64) for p in device.pointers]
        params = np.array([v.ctypes.data for v in self._values], dtype=np.uint64)
        return hosts, device, params

    def _launch(self, params: np.ndarray) -> None:
        driver = _driver()
        for kernel, function in zip(self.rendered.kernels, self._functions, strict=True):
            launched = driver.cuLaunchKernel(
                function, kernel.blocks, 1, 1, kernel.threads, 1, 1, 0, 0, params.ctypes.data, 0
            )
            _call(f"launch of {kernel.name}", launched)
