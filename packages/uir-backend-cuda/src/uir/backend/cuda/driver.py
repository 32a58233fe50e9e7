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

A `GpuSession` (uir.core.runtime) keeps a program's global buffers on the device between runs:
each is a `DeviceMemory` allocated once (cuMemAlloc) and filled at open, the module is loaded
once, and a run zeroes the scratch arrays, launches the kernels and copies back only what the
SINK prints. A reset after a fault destroys every allocation of the context, so a session's
memory is then lost: its runs and reads say so, and it frees nothing twice.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from uir.backend.c.abi import abi_numpy, from_abi, to_abi
from uir.backend.c.runtime import initial_contents, read_back
from uir.core.arrays import buffer_contents
from uir.core.dtypes import Type
from uir.core.errors import BackendError
from uir.core.runtime import Memory, flat_values
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


class DeviceMemory:
    """One global buffer in device memory, in the C ABI's element form (uir.core.runtime.Memory):
    allocated once, freed by the session that allocated it (or when dropped), lost with its
    context when a fault resets it."""

    def __init__(self, device: Device, backend: str, slot: int, type: Type) -> None:
        self.device = device
        self.backend = backend
        self.slot = slot
        self.type = type
        self.itemsize = abi_numpy(type.dtype).itemsize
        self.nbytes = type.size * self.itemsize
        self.owner: object | None = None  # the session that allocated it and frees it
        device.make_current()
        allocated = device.driver.cuMemAlloc(max(self.nbytes, 1))
        self.pointer: Any = device.check("allocation (cuMemAlloc)", allocated)
        self.generation = device.generation
        self._free = weakref.finalize(self, _free, device, self.pointer, self.generation)

    @property
    def closed(self) -> bool:
        return self.pointer is None

    def address(self) -> int:
        """The device address; BackendError once freed, or lost to a reset of the context."""
        if self.pointer is None:
            raise BackendError(
                f"the memory of slot {self.slot} was freed: the session that allocated it closed"
            )
        if self.generation != self.device.generation:
            raise BackendError(
                f"the memory of slot {self.slot} was lost: a kernel fault reset the GPU context "
                f"(open a new session and write the buffers again)"
            )
        return int(self.pointer)

    def write(self, values: np.ndarray) -> None:
        host = to_abi(flat_values(self.slot, self.type, values), self.type.dtype)
        address = self.address()
        self.device.make_current()
        if self.nbytes:
            copied = self.device.driver.cuMemcpyHtoD(address, host.ctypes.data, self.nbytes)
            self.device.check("copy to the GPU", copied)

    def read(self) -> np.ndarray:
        host = np.empty(self.type.size, dtype=abi_numpy(self.type.dtype))
        address = self.address()
        self.device.make_current()
        if self.nbytes:
            copied = self.device.driver.cuMemcpyDtoH(host.ctypes.data, address, self.nbytes)
            self.device.check("copy from the GPU", copied)
        return from_abi(host, self.type.dtype)

    def free(self) -> None:
        self._free()
        self.pointer = None

    def __repr__(self) -> str:
        state = " (freed)" if self.closed else ""
        return f"<{self.backend} memory of slot {self.slot}: {self.type}{state}>"


def _free(device: Device, pointer: Any, generation: int) -> None:
    if device.generation == generation:  # a reset freed it with its context
        device.driver.cuMemFree(pointer)  # best effort: the process may be ending


def _free_arrays(arrays: _DeviceArrays, generation: int) -> None:
    if arrays.device.generation == generation:  # a reset freed them with its context
        arrays.free()


class GpuSession:
    """A GpuProgram run again and again on global buffers that stay on the device."""

    def __init__(self, program: GpuProgram, backend: str, shared: Mapping[int, Memory]) -> None:
        self.program = program
        self.closed = False
        device = program.device
        self._generation = device.generation
        abi = program.rendered.abi
        self.memory: dict[int, DeviceMemory] = {}
        self._arrays = _DeviceArrays(device)  # the value outputs, then the scratch arrays
        # Dropped unclosed, the session still gives back its outputs and scratch arrays.
        self._give_back = weakref.finalize(self, _free_arrays, self._arrays, self._generation)
        try:
            for b in abi.buffers:
                given = shared.get(b.slot)
                if given is None:
                    own = DeviceMemory(device, backend, b.slot, b.type)
                    own.owner = self
                    self.memory[b.slot] = own  # before the copy: a failure frees it too
                    own.write(buffer_contents(b.buffer))
                else:
                    assert isinstance(given, DeviceMemory)  # open_session checked its backend
                    self.memory[b.slot] = given
            outputs = [
                self._arrays.alloc(t.size * abi_numpy(t.dtype).itemsize) for t in abi.outputs
            ]
            self._scratch = [
                (self._arrays.alloc(s.count * s.itemsize), max(s.count * s.itemsize, 1))
                for s in program.rendered.scratch
            ]
        except BaseException:
            self.close()
            raise
        self._outputs = [int(p) for p in outputs]
        addresses = [self.memory[b.slot].address() for b in abi.buffers]
        addresses += [*self._outputs, *(int(p) for p, _ in self._scratch)]
        # cuLaunchKernel takes the address of an array of addresses, one per parameter: both
        # live as long as the session.
        self._values = [np.array([a], dtype=np.uint64) for a in addresses]
        self._params = np.array([v.ctypes.data for v in self._values], dtype=np.uint64)

    def _check(self) -> None:
        if self.closed:
            raise BackendError("the session is closed")
        if self.program.device.generation != self._generation:
            raise BackendError(
                "this session's device memory was lost: a kernel fault reset the GPU context "
                "(open a new session and write the buffers again)"
            )
        for m in self.memory.values():
            m.address()  # a shared buffer freed by its own session

    def run(self) -> list[np.ndarray]:
        self._check()
        device = self.program.device
        driver = device.driver
        with _Faults(device):
            device.make_current()
            for pointer, nbytes in self._scratch:  # a LOCAL starts zeroed in every run
                device.check("zeroing scratch", driver.cuMemsetD8(pointer, 0, nbytes))
            self.program._launch(self._params)
            device.check("kernel run", driver.cuCtxSynchronize())
            return self._read_back()

    def _read_back(self) -> list[np.ndarray]:
        """One array per SINK source, copied from the device: a value output's array, or the
        window of a buffer that the SINK names."""
        abi, sink, device = self.program.rendered.abi, self.program.sink, self.program.device
        results = []
        for source, back in zip(sink.src, abi.readbacks, strict=True):
            storage = abi_numpy(source.dtype)
            if back.output is not None:
                address, count = self._outputs[back.output], abi.outputs[back.output].size
            else:
                assert back.slot is not None
                memory = self.memory[back.slot]
                address, count = memory.address() + back.begin * memory.itemsize, back.length
            host = np.empty(count, dtype=storage)
            if host.nbytes:
                copied = device.driver.cuMemcpyDtoH(host.ctypes.data, address, host.nbytes)
                device.check("copy from the GPU", copied)
            results.append(from_abi(host, source.dtype).reshape(source.type.shape))
        return results

    def close(self) -> None:
        """Free the outputs, the scratch arrays and the memory this session allocated (none of
        it after a reset took it), and unload the module."""
        if self.closed:
            return
        self.closed = True
        self._give_back()
        for m in self.memory.values():
            if m.owner is self:
                m.free()
        self.program.close()

    def __enter__(self) -> GpuSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
