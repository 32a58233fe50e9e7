"""What driver.py takes from the CUDA driver and gives back, checked against a fake driver where
there is no GPU: modules unloaded and device memory freed across thousands of runs, the context
retained once and released, and a kernel fault followed by a reset after which the same process
runs programs again (those loaded before the reset included).

The fake keeps the driver API's calling convention (a status first, then the values) and its
bookkeeping: what is allocated, loaded and retained, and a fault that, like a real one, makes
every later call of the context fail until the primary context is reset. It runs no kernel: it
copies bytes in and out of its device memory, so a run gives back the buffers' initial contents.
What only a GPU can show (that the real driver's reset mends a real fault, and that the real
driver frees what these calls free) is for tests/test_driver.py on a GPU.
"""

from __future__ import annotations

import ctypes
import enum
import gc
import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from uir.backend.cuda.driver import Device, GpuProgram, GpuSession
from uir.backend.cuda.render import render_cuda
from uir.core.errors import BackendError
from uir.testing.backends import scheduled


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_ILLEGAL_ADDRESS = 700


MESSAGES = {
    CUresult.CUDA_ERROR_INVALID_VALUE: b"invalid argument",
    CUresult.CUDA_ERROR_ILLEGAL_ADDRESS: b"an illegal memory access was encountered",
}
OK = CUresult.CUDA_SUCCESS


class FakeDriver:
    """The calls of cuda.bindings.driver that driver.py makes, with their bookkeeping."""

    CUresult = CUresult
    CUdevice_attribute = SimpleNamespace(
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR="major",
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR="minor",
    )
    CUevent_flags = SimpleNamespace(CU_EVENT_DEFAULT=0)

    def __init__(self, gpus: int = 1) -> None:
        self.gpus = gpus
        self.ids = itertools.count(1)
        self.retained = 0
        self.generation = 0
        self.modules: dict[int, int] = {}  # handle -> the generation it was loaded in
        self.memory: dict[int, ctypes.Array] = {}
        self.events: set[int] = set()
        self.faulted = False
        self.fault_next_launch = False
        self.resets = 0
        self.stale_calls: list[str] = []  # calls on what a reset already destroyed
        self.copies_in = 0  # host-to-device copies
        self.copied_out = 0  # bytes copied device-to-host

    def _sticky(self, *values: object) -> tuple:
        return (CUresult.CUDA_ERROR_ILLEGAL_ADDRESS if self.faulted else OK, *values)

    def cuInit(self, flags: int) -> tuple:
        return (OK,)

    def cuDeviceGetCount(self) -> tuple:
        return OK, self.gpus

    def cuDeviceGet(self, ordinal: int) -> tuple:
        return OK, ordinal

    def cuDeviceGetAttribute(self, attribute: str, device: int) -> tuple:
        return OK, {"major": 9, "minor": 0}[attribute]

    def cuGetErrorName(self, err: CUresult) -> tuple:
        return OK, err.name.encode()

    def cuGetErrorString(self, err: CUresult) -> tuple:
        return OK, MESSAGES[err]

    def cuDevicePrimaryCtxRetain(self, device: int) -> tuple:
        self.retained += 1
        return OK, ("context", self.generation)

    def cuDevicePrimaryCtxRelease(self, device: int) -> tuple:
        self.retained -= 1
        return (OK,)

    def cuDevicePrimaryCtxReset(self, device: int) -> tuple:
        self.resets += 1
        self.generation += 1
        self.modules.clear()
        self.memory.clear()
        self.events.clear()
        self.faulted = False
        return (OK,)

    def cuCtxSetCurrent(self, context: tuple) -> tuple:
        if context[1] != self.generation:
            self.stale_calls.append("cuCtxSetCurrent")
        return self._sticky()

    def cuCtxSynchronize(self) -> tuple:
        return self._sticky()

    def cuModuleLoadData(self, cubin: bytes) -> tuple:
        handle = next(self.ids)
        self.modules[handle] = self.generation
        return self._sticky(handle)

    def cuModuleUnload(self, handle: int) -> tuple:
        if self.modules.pop(handle, None) is None:
            self.stale_calls.append("cuModuleUnload")
        return (OK,)

    def cuModuleGetFunction(self, handle: int, name: bytes) -> tuple:
        return self._sticky((handle, name))

    def cuMemAlloc(self, nbytes: int) -> tuple:
        # Allocations 2^32 apart, so that an address inside one (a window's) finds it.
        pointer = next(self.ids) << 32
        self.memory[pointer] = (ctypes.c_char * nbytes)()
        return self._sticky(pointer)

    def _at(self, address: int, nbytes: int) -> int:
        """The host address of `nbytes` of device memory at `address` (an allocation's start
        or a place inside it)."""
        block = self.memory[address >> 32 << 32]
        offset = address & 0xFFFFFFFF
        assert offset + nbytes <= ctypes.sizeof(block), "a copy past the allocation's end"
        return ctypes.addressof(block) + offset

    def cuMemFree(self, pointer: int) -> tuple:
        if self.memory.pop(pointer, None) is None:
            self.stale_calls.append("cuMemFree")
        return (OK,)

    def cuMemcpyHtoD(self, pointer: int, host: int, nbytes: int) -> tuple:
        self.copies_in += 1
        ctypes.memmove(self._at(pointer, nbytes), host, nbytes)
        return self._sticky()

    def cuMemcpyDtoH(self, host: int, pointer: int, nbytes: int) -> tuple:
        self.copied_out += nbytes
        if not self.faulted:
            ctypes.memmove(host, self._at(pointer, nbytes), nbytes)
        return self._sticky()

    def cuMemsetD8(self, pointer: int, value: int, nbytes: int) -> tuple:
        ctypes.memset(self.memory[pointer], value, nbytes)
        return self._sticky()

    def cuLaunchKernel(self, function: tuple, *args: object) -> tuple:
        handle, _ = function
        if handle not in self.modules:
            self.stale_calls.append("cuLaunchKernel")
            return (CUresult.CUDA_ERROR_INVALID_VALUE,)
        if self.fault_next_launch:
            self.fault_next_launch = False
            self.faulted = True  # reported by this launch or by the next synchronisation
        return (OK,)

    def cuEventCreate(self, flags: int) -> tuple:
        event = next(self.ids)
        self.events.add(event)
        return self._sticky(event)

    def cuEventDestroy(self, event: int) -> tuple:
        self.events.discard(event)
        return (OK,)

    def cuEventRecord(self, event: int, stream: int) -> tuple:
        return self._sticky()

    def cuEventSynchronize(self, event: int) -> tuple:
        return self._sticky()

    def cuEventElapsedTime(self, start: int, stop: int) -> tuple:
        return self._sticky(0.5)


# A buffer with initial contents (the fake gives them back: it runs no kernel), a PARALLEL loop
# (one kernel of many threads) and a LOCAL used as memory (a scratch array to allocate).
PROGRAM = """
%d = CONST i32[3] (5, 6, 7)
%o = BUFFER i32[3] %d 0
%t = LOCAL i32[3] 0
%n = CONST i32 3
%i = RANGE i32 %n (0, PARALLEL)
%p = INDEX i32 %t %i
%s = STORE void %p %i
%e = END void %s %i
%t1 = AFTER i32[3] %t %e
%z = CONST i32 0
%q = INDEX i32 %t1 %z
%v = LOAD i32 %q
%po = INDEX i32 %o %z
%so = STORE void %po %v
%o1 = AFTER i32[3] %o %so
%out = SINK void %o1
"""


@pytest.fixture(scope="module")
def rendered(request):
    from uir.core import parse, verify

    program = parse(PROGRAM)
    verify(program)
    flat = program.sink
    return render_cuda(scheduled(flat)), flat


def test_the_device_is_set_up_once_and_its_context_given_back() -> None:
    fake = FakeDriver()
    device = Device(fake)
    assert (device.arch, fake.retained) == ("sm_90", 1)
    device.close()
    device.close()  # once only
    assert fake.retained == 0


def test_without_a_gpu_the_device_says_why() -> None:
    with pytest.raises(BackendError, match="sees no GPU"):
        Device(FakeDriver(gpus=0))
    broken = FakeDriver()

    def no_library(flags: int) -> tuple:
        raise RuntimeError("libcuda.so.1 not found")  # as the bindings do without a driver

    broken.cuInit = no_library
    with pytest.raises(BackendError, match=r"no CUDA driver: libcuda\.so\.1 not found"):
        Device(broken)


def test_thousands_of_runs_leave_nothing_behind(rendered) -> None:
    source, flat = rendered
    fake = FakeDriver()
    device = Device(fake)
    for _ in range(2000):
        program = GpuProgram(source, b"cubin", flat, device)
        (out,) = program.run()
        assert out.tolist() == [5, 6, 7]  # copied in and back out, through the fake's memory
        assert fake.memory == {}  # freed when the run ended
        assert len(fake.modules) == 1  # the previous program's module went with it
    del program
    gc.collect()
    assert (fake.modules, fake.memory, fake.stale_calls) == ({}, {}, [])
    assert len(source.kernels) >= 2 and source.scratch  # the run launched and allocated


def test_closing_a_program_unloads_its_module_once(rendered) -> None:
    source, flat = rendered
    fake = FakeDriver()
    program = GpuProgram(source, b"cubin", flat, Device(fake))
    program.time_kernels(repeats=3)
    assert (fake.memory, fake.events) == ({}, set())
    program.close()
    program.close()
    del program
    gc.collect()
    assert (fake.modules, fake.stale_calls) == ({}, [])


def test_after_a_kernel_fault_the_context_is_reset_and_later_programs_run(rendered) -> None:
    source, flat = rendered
    fake = FakeDriver()
    device = Device(fake)
    before = GpuProgram(source, b"cubin", flat, device)
    faulting = GpuProgram(source, b"cubin", flat, device)
    fake.fault_next_launch = True
    with pytest.raises(BackendError) as info:
        faulting.run()
    message = str(info.value)
    assert message.startswith("CUDA kernel run failed: CUDA_ERROR_ILLEGAL_ADDRESS")
    assert "the GPU context was reset" in message
    assert (fake.resets, fake.retained, fake.faulted) == (1, 1, False)
    # A program loaded before the reset loads its module again; one loaded after runs too.
    assert before.run()[0].tolist() == [5, 6, 7]
    after = GpuProgram(source, b"cubin", flat, device)
    assert after.run()[0].tolist() == [5, 6, 7]
    assert faulting.run()[0].tolist() == [5, 6, 7]
    del before, faulting, after, info  # the traceback holds the faulting program too
    gc.collect()
    # The modules of the old context went with it: nothing is unloaded twice.
    assert (fake.modules, fake.memory, fake.stale_calls) == ({}, {}, [])


def test_a_failure_that_leaves_the_context_usable_resets_nothing(rendered) -> None:
    source, flat = rendered
    fake = FakeDriver()
    program = GpuProgram(source, b"cubin", flat, Device(fake))
    fake.cuLaunchKernel = lambda *args: (CUresult.CUDA_ERROR_INVALID_VALUE,)
    with pytest.raises(
        BackendError, match="launch of uir_kernel0 failed: CUDA_ERROR_INVALID_VALUE"
    ):
        program.run()
    assert fake.resets == 0 and fake.memory == {}


# A session's program: a window of a buffer, a value output and a second buffer, beside the
# LOCAL and the PARALLEL loop of PROGRAM (the fake runs no kernel: what a run prints is what
# the buffers hold and, for the value output, the zeros of a fresh allocation).
SESSION = PROGRAM.replace(
    "%out = SINK void %o1",
    """%w = SHRINK i32[2] %o1 ((1, 3))
%f = BUFFER f32[2] 1
%out = SINK void %w %v %f""",
)


@pytest.fixture(scope="module")
def session_program():
    from uir.core import parse, verify

    program = parse(SESSION)
    verify(program)
    return render_cuda(scheduled(program.sink)), program.sink


def test_a_session_allocates_once_and_copies_back_only_what_the_sink_prints(
    session_program,
) -> None:
    source, flat = session_program
    fake = FakeDriver()
    device = Device(fake)
    session = GpuSession(GpuProgram(source, b"cubin", flat, device), "cuda", {})
    allocated, copies_in = dict(fake.memory), fake.copies_in
    assert copies_in == 2  # each buffer filled once, at open: i32[3] (5, 6, 7) and f32[2] zeros
    for _ in range(1000):
        window, value, floats = session.run()
    assert fake.memory.keys() == allocated.keys()  # nothing allocated or freed by a run
    assert fake.copies_in == copies_in  # nothing copied in by a run
    # Each run copied the window (2 x i32), the value (i32) and the f32[2]: 20 bytes.
    assert fake.copied_out == 1000 * 20
    assert window.tolist() == [6, 7] and value.dtype == np.int32 and floats.tolist() == [0, 0]
    session.memory[0].write(np.array([1, 2, 3]))
    assert session.run()[0].tolist() == [2, 3]
    assert session.memory[0].read().tolist() == [1, 2, 3]
    session.close()
    session.close()
    del session
    gc.collect()
    assert (fake.memory, fake.modules, fake.stale_calls) == ({}, {}, [])


def test_sessions_share_device_memory_and_free_only_their_own(session_program) -> None:
    source, flat = session_program
    fake = FakeDriver()
    device = Device(fake)
    owner = GpuSession(GpuProgram(source, b"cubin", flat, device), "cuda", {})
    sharing = GpuSession(GpuProgram(source, b"cubin", flat, device), "cuda", owner.memory)
    assert sharing.memory[0] is owner.memory[0]
    sharing.memory[0].write(np.array([7, 8, 9]))
    assert owner.run()[0].tolist() == [8, 9]
    sharing.close()
    assert owner.run()[0].tolist() == [8, 9]  # the sharer freed none of it
    other = GpuSession(GpuProgram(source, b"cubin", flat, device), "cuda", owner.memory)
    owner.close()
    with pytest.raises(BackendError, match="slot 0 was freed"):
        other.run()
    other.close()
    del owner, sharing, other
    gc.collect()
    assert (fake.memory, fake.modules, fake.stale_calls) == ({}, {}, [])


def test_after_a_fault_a_sessions_memory_is_lost_and_nothing_is_freed_twice(
    session_program,
) -> None:
    source, flat = session_program
    fake = FakeDriver()
    device = Device(fake)
    session = GpuSession(GpuProgram(source, b"cubin", flat, device), "cuda", {})
    fake.fault_next_launch = True
    with pytest.raises(BackendError, match="the GPU context was reset"):
        session.run()
    with pytest.raises(BackendError, match="device memory was lost"):
        session.run()
    with pytest.raises(BackendError, match="slot 0 was lost"):
        session.memory[0].read()
    # A new session in the fresh context works.
    fresh = GpuSession(GpuProgram(source, b"cubin", flat, device), "cuda", {})
    assert fresh.run()[0].tolist() == [6, 7]
    session.close()
    fresh.close()
    del session, fresh
    gc.collect()
    assert (fake.memory, fake.modules, fake.stale_calls) == ({}, {}, [])


def test_a_session_dropped_unclosed_gives_everything_back(session_program) -> None:
    source, flat = session_program
    fake = FakeDriver()
    session = GpuSession(GpuProgram(source, b"cubin", flat, Device(fake)), "cuda", {})
    session.run()
    del session
    gc.collect()
    assert (fake.memory, fake.modules, fake.stale_calls) == ({}, {}, [])


def test_a_failed_allocation_at_open_frees_what_it_had(session_program) -> None:
    source, flat = session_program
    fake = FakeDriver()
    device = Device(fake)
    real, calls = fake.cuMemAlloc, itertools.count()

    def third_fails(nbytes: int) -> tuple:
        if next(calls) == 2:
            return (CUresult.CUDA_ERROR_INVALID_VALUE,)
        return real(nbytes)

    fake.cuMemAlloc = third_fails
    with pytest.raises(BackendError, match="allocation"):
        GpuSession(GpuProgram(source, b"cubin", flat, device), "cuda", {})
    gc.collect()
    assert (fake.memory, fake.modules, fake.stale_calls) == ({}, {}, [])
