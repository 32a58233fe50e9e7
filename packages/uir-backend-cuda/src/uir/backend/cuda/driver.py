"""Running kernels on a GPU through the CUDA driver API (cuda.bindings.driver).

One primary context on device 0 (`Device`), made current for each run. A run copies each global
buffer's initial contents to the device, allocates the outputs and the zeroed scratch arrays,
launches the kernels in order on the default stream, waits, and copies buffers and outputs back;
every driver error becomes a BackendError carrying the driver's own message. The run stays in
this process (a CUDA context does not survive fork); a faulting kernel is reported by the driver,
not by a signal.

What a run takes it gives back: device memory when the run ends, the module when its program is
dropped (or closed), the context when the process exits. A kernel that faults (an illegal
address, say) leaves the context unusable for every later call, so the run that saw the fault
resets it (`Device.reset`): later programs in the same process run in a fresh context, and a
program loaded before the reset loads its module again. The driver is a parameter of `Device`,
so this bookkeeping is tested with a fake driver where there is no GPU (tests/test_driver.py).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from uir.backend.c.abi import abi_numpy
from uir.backend.c.runtime import initial_contents, read_back
from uir.core.errors import BackendError
from uir.core.uop import UOp

from .render import Rendered


def bindings() -> Any:
    """The driver API of cuda-bindings; BackendError when the package is missing."""
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        raise BackendError(f"cuda-bindings is not installed: {exc}") from exc
    return driver


class Device:
    """Device 0 and its primary context, through `driver` (cuda.bindings.driver, or a fake that
    has its functions). `generation` counts the resets: a module loaded in an earlier generation
    is gone."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        try:
            self.check("initialisation (cuInit)", driver.cuInit(0))
        except BackendError:
            raise
        except Exception as exc:  # the bindings raise their own error when no driver library loads
            raise BackendError(f"no CUDA driver: {exc}") from exc
        if self.check("device count", driver.cuDeviceGetCount()) == 0:
            raise BackendError("the CUDA driver sees no GPU")
        self.device = self.check("device lookup", driver.cuDeviceGet(0))
        attr = driver.CUdevice_attribute
        major, minor = (
            self.check("attribute query", driver.cuDeviceGetAttribute(a, self.device))
            for a in (
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            )
        )
        self.arch = f"sm_{major}{minor}"
        self.generation = 0
        self.context = self._retain()
        # The retained context goes back when this object does, at the latest at exit.
        self._release = weakref.finalize(self, _release, driver, self.device)

    def _retain(self) -> Any:
        return self.check("context creation", self.driver.cuDevicePrimaryCtxRetain(self.device))

    def check(self, what: str, result: Any) -> Any:
        """The values a driver call returned after its status; a failure is a BackendError."""
        driver = self.driver
        err, *rest = result if isinstance(result, tuple) else (result,)
        if err != driver.CUresult.CUDA_SUCCESS:
            _, name = driver.cuGetErrorName(err)
            _, text = driver.cuGetErrorString(err)
            decoded = [
                t.decode(errors="replace") if isinstance(t, bytes) else str(t) for t in (name, text)
            ]
            raise BackendError(f"CUDA {what} failed: {decoded[0]}: {decoded[1]}")
        return rest[0] if len(rest) == 1 else tuple(rest) if rest else None

    def make_current(self) -> None:
        self.check("context switch", self.driver.cuCtxSetCurrent(self.context))

    def usable(self) -> bool:
        """Whether the context still works: after a fault, every call reports it again."""
        err = self.driver.cuCtxSynchronize()
        err = err[0] if isinstance(err, tuple) else err
        return err == self.driver.CUresult.CUDA_SUCCESS

    def reset(self) -> None:
        """A fresh primary context after a fault: every allocation and module of the old one
        is gone (the CUDA docs: cuDevicePrimaryCtxReset), and a new retain gives the context
        later runs use."""
        driver = self.driver
        self.check("context reset", driver.cuDevicePrimaryCtxReset(self.device))
        driver.cuDevicePrimaryCtxRelease(self.device)  # ours, held since the retain
        self.generation += 1
        self.context = self._retain()
        self.make_current()

    def close(self) -> None:
        """Give the context back now (else at exit)."""
        self._release()


def _release(driver: Any, device: Any) -> None:
    driver.cuDevicePrimaryCtxRelease(device)  # best effort: the process may be ending


@cache
def default_device() -> Device:
    """Device 0 through cuda.bindings, set up once; BackendError where there is none."""
    return Device(bindings())


def architecture() -> str:
    """The GPU's architecture for NVRTC (`sm_90` on an H200); BackendError where there is none."""
    return default_device().arch


def available() -> tuple[bool, str]:
    """(True, "") when a driver and a GPU are present, else (False, why not)."""
    try:
        default_device()
    except BackendError as exc:
        return False, str(exc)
    return True, ""


class _DeviceArrays:
    """Device allocations freed together."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.pointers: list[Any] = []

    def alloc(self, nbytes: int) -> Any:
        driver = self.device.driver
        pointer = self.device.check("allocation (cuMemAlloc)", driver.cuMemAlloc(max(nbytes, 1)))
        self.pointers.append(pointer)
        return pointer

    def free(self) -> None:
        for pointer in self.pointers:
            self.device.driver.cuMemFree(pointer)  # best effort: a failed run may leave errors
        self.pointers = []


class _Module:
    """A cubin loaded in one generation of a device's context, unloaded when dropped (unless a
    reset took it already) and its kernels looked up by name."""

    def __init__(self, device: Device, cubin: bytes, names: list[str]) -> None:
        driver = device.driver
        device.make_current()
        self.generation = device.generation
        handle = device.check("module load (cuModuleLoadData)", driver.cuModuleLoadData(cubin))
        self._unload = weakref.finalize(self, _unload, device, handle, self.generation)
        self.functions = [
            device.check(f"kernel lookup of {n}", driver.cuModuleGetFunction(handle, n.encode()))
            for n in names
        ]

    def close(self) -> None:
        self._unload()


def _unload(device: Device, handle: Any, generation: int) -> None:
    if device.generation == generation:  # a reset unloaded it with its context
        device.driver.cuModuleUnload(handle)


class GpuProgram:
    """A program's cubin loaded on the GPU, run like uir.backend.c.runtime.CompiledProgram. Its
    module is unloaded when the program is dropped or closed."""

    def __init__(
        self, rendered: Rendered, cubin: bytes, sink: UOp, device: Device | None = None
    ) -> None:
        self.device = device if device is not None else default_device()
        self.rendered = rendered
        self.sink = sink
        self._cubin = cubin
        self._module = self._load()

    def _load(self) -> _Module:
        return _Module(self.device, self._cubin, [k.name for k in self.rendered.kernels])

    def _functions(self) -> list[Any]:
        """The kernels, in this generation of the context (loaded again after a reset)."""
        if self._module.generation != self.device.generation:
            self._module = self._load()
        return self._module.functions

    def close(self) -> None:
        self._module.close()

    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        """Run once on fresh buffers; one array per SINK source, as the interpreter gives it."""
        with _Faults(self.device):
            hosts, arrays, params = self._upload(inputs)
            try:
                self._launch(params)
                self.device.check("kernel run", self.device.driver.cuCtxSynchronize())
                for host, pointer in zip(hosts, arrays.pointers, strict=False):
                    if host.nbytes:
                        copied = self.device.driver.cuMemcpyDtoH(
                            host.ctypes.data, pointer, host.nbytes
                        )
                        self.device.check("copy from the GPU", copied)
            finally:
                arrays.free()
        return read_back(self.sink, self.rendered.abi, hosts)

    def time_kernels(
        self, inputs: Mapping[int, np.ndarray] | None = None, repeats: int = 5
    ) -> list[float]:
        """Seconds each of `repeats` launches of all the kernels took on the GPU (CUDA events),
        after one launch that warms up; the buffers are uploaded once (a benchmark's figures)."""
        device = self.device
        driver = device.driver
        with _Faults(device):
            _, arrays, params = self._upload(inputs)
            flags = driver.CUevent_flags.CU_EVENT_DEFAULT
            events = []
            try:
                start = device.check("event creation", driver.cuEventCreate(flags))
                events.append(start)
                stop = device.check("event creation", driver.cuEventCreate(flags))
                events.append(stop)
                self._launch(params)
                times = []
                for _ in range(repeats):
                    device.check("event record", driver.cuEventRecord(start, 0))
                    self._launch(params)
                    device.check("event record", driver.cuEventRecord(stop, 0))
                    device.check("kernel run", driver.cuEventSynchronize(stop))
                    elapsed = device.check("event timing", driver.cuEventElapsedTime(start, stop))
                    times.append(elapsed / 1e3)
                return times
            finally:
                for event in events:
                    driver.cuEventDestroy(event)
                arrays.free()

    def _upload(
        self, inputs: Mapping[int, np.ndarray] | None
    ) -> tuple[list[np.ndarray], _DeviceArrays, np.ndarray]:
        """The host arrays of the ABI's parameters, their device copies (then the zeroed scratch
        arrays), and the kernel parameter block pointing at them."""
        device = self.device
        driver = device.driver
        abi = self.rendered.abi
        device.make_current()
        start = initial_contents(abi, inputs)
        hosts = [start[b.slot] for b in abi.buffers]
        hosts += [np.zeros(t.size, dtype=abi_numpy(t.dtype)) for t in abi.outputs]
        arrays = _DeviceArrays(device)
        try:
            for host in hosts:
                pointer = arrays.alloc(host.nbytes)
                if host.nbytes:
                    copied = driver.cuMemcpyHtoD(pointer, host.ctypes.data, host.nbytes)
                    device.check("copy to the GPU", copied)
            for s in self.rendered.scratch:
                nbytes = s.count * s.itemsize
                pointer = arrays.alloc(nbytes)
                device.check("zeroing scratch", driver.cuMemsetD8(pointer, 0, max(nbytes, 1)))
        except BaseException:
            arrays.free()
            raise
        # cuLaunchKernel takes the address of an array of addresses, one per parameter: the
        # arrays it points into stay alive with the program, until the next upload.
        self._values = [np.array([int(p)], dtype=np.uint64) for p in arrays.pointers]
        params = np.array([v.ctypes.data for v in self._values], dtype=np.uint64)
        return hosts, arrays, params

    def _launch(self, params: np.ndarray) -> None:
        device = self.device
        for kernel, function in zip(self.rendered.kernels, self._functions(), strict=True):
            launched = device.driver.cuLaunchKernel(
                function, kernel.blocks, 1, 1, kernel.threads, 1, 1, 0, 0, params.ctypes.data, 0
            )
            device.check(f"launch of {kernel.name}", launched)


class _Faults:
    """Around a run: when a driver call failed and left the context unusable (a kernel fault),
    reset it, so that the next run works, and say so in the error."""

    def __init__(self, device: Device) -> None:
        self.device = device

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, error: BaseException | None, tb: Any) -> None:
        if not isinstance(error, BackendError) or self.device.usable():
            return
        try:
            self.device.reset()
        except BackendError as failed:
            raise BackendError(
                f"{error}; resetting the GPU context failed too: {failed}"
            ) from error
        raise BackendError(f"{error} (the GPU context was reset for later runs)") from error
