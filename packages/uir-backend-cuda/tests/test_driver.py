"""The `cuda` backend on a GPU through the driver API: suite programs and PARALLEL kernels give the
interpreter's outputs bit for bit. Without a driver or a GPU these tests skip, and the backend
says why it is unavailable instead of failing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from uir.backend.cuda import driver
from uir.backend.cuda.nvrtc import compile_cubin
from uir.backend.cuda.plugin import CudaBackend
from uir.backend.cuda.render import PRELUDE, bundle, render_cuda
from uir.cli.grading.testfile import read_test
from uir.cli.main import main
from uir.core import parse
from uir.core.calls import inline_calls
from uir.core.errors import BackendError
from uir.core.interpret import evaluate
from uir.core.output import format_value
from uir.core.runtime import open_session
from uir.testing.backends import scheduled
from uir.testing.compare import same_outputs
from uir.testing.sessions import ADD_TEN, COUNTER, SGD, numpy_sgd

AVAILABLE, WHY = driver.available()
CHUNK = 150  # programs per NVRTC run
needs_gpu = pytest.mark.skipif(not AVAILABLE, reason=f"no GPU: {WHY}")


@pytest.mark.skipif(AVAILABLE, reason="a GPU is present")
def test_without_a_gpu_the_backend_says_why(tmp_path, capsys) -> None:
    assert WHY  # a reason a student can act on
    program = tmp_path / "p.uir"
    program.write_text("%a = CONST i32 1\n%out = SINK void %a\n")
    assert main(["run", "--backend", "cuda", str(program)]) != 0
    err = capsys.readouterr().err
    assert "not available" in err and "Traceback" not in err


@needs_gpu
def test_every_suite_program_on_the_gpu(suite_programs, interpreted) -> None:
    # One NVRTC run per CHUNK programs (bundled, kernels named apart), each program then loaded
    # from that cubin: a compile per program would cost minutes of the GPU machine's time.
    programs = [(p, f) for p, f in suite_programs if "tolerance" not in p.read_text()]
    mismatches = []
    for start in range(0, len(programs), CHUNK):
        chunk = programs[start : start + CHUNK]
        rendered = [
            render_cuda(scheduled(f), f"uir_p{start + i}") for i, (_, f) in enumerate(chunk)
        ]
        cubin = compile_cubin(bundle([r.source for r in rendered]), driver.architecture())
        for (path, flat), r in zip(chunk, rendered, strict=True):
            program = driver.GpuProgram(r, cubin, flat)
            got = program.run()
            program.close()
            # The file's own expectations, and the interpreter on the program as written (whole
            # arrays: its rangeified loops would take minutes on the big_ programs).
            test = read_test(str(path))
            printed = tuple(format_value(v, s.dtype) for v, s in zip(got, flat.src, strict=True))
            written = inline_calls(parse(test.program, str(path)).sink)
            wrong = printed != test.expected_lines
            if wrong or (interpreted(path) and not same_outputs(got, evaluate(written))):
                mismatches.append(path.name)
    assert mismatches == []


@needs_gpu
def test_after_a_kernel_fault_later_programs_run(program) -> None:
    # The fill program's kernel swapped for one that writes through a null pointer: the fault
    # leaves the context unusable, the run resets it, and the next program runs in a fresh one.
    sink = program("fill")
    good = render_cuda(scheduled(sink))
    params = ", ".join(good.parameters())
    kernel = f'extern "C" __global__ void uir_kernel0({params}) {{ *(volatile int *)0 = 1; }}'
    bad_source = f"{PRELUDE}\n{kernel}\n"
    bad = dataclasses.replace(good, source=bad_source, kernels=good.kernels[:1])
    arch = driver.architecture()
    faulting = driver.GpuProgram(bad, compile_cubin(bad_source, arch), sink)
    with pytest.raises(BackendError, match="the GPU context was reset"):
        faulting.run()
    (out,) = CudaBackend().compile(scheduled(sink)).run()
    assert out.tolist() == [0, 3, 6, 9, 12]


@needs_gpu
def test_thousands_of_runs_give_back_device_memory(program) -> None:
    sink = program("fill", ("i32[5]", "i32[1048576]"), ("CONST i32 5", "CONST i32 1048576"))
    rendered = render_cuda(scheduled(sink))
    cubin = compile_cubin(rendered.source, driver.architecture())
    device = driver.default_device()
    device.make_current()
    before, _ = device.check("memory query", device.driver.cuMemGetInfo())
    for _ in range(2000):
        gpu = driver.GpuProgram(rendered, cubin, sink)
        (out,) = gpu.run()  # 4 MiB a run: 8 GiB in all, were nothing freed
        del gpu
    after, _ = device.check("memory query", device.driver.cuMemGetInfo())
    assert out[-1] == 3 * (1048576 - 1)
    assert before - after < 64 << 20  # what the driver keeps for itself, far below 8 GiB


@needs_gpu
@pytest.mark.parametrize("name", ["fill", "matmul_parallel", "rows", "shared_local", "crossing"])
def test_parallel_kernels_on_the_gpu(name: str, program) -> None:
    sink = program(name)
    assert same_outputs(CudaBackend().compile(scheduled(sink)).run(), evaluate(sink))


@needs_gpu
def test_multiply_add_on_the_gpu_rounds_twice(program) -> None:
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    (out,) = CudaBackend().compile(scheduled(program("multiply_add"))).run({0: a, 1: b, 2: c})
    assert out.tobytes() == ((a * b) + c).tobytes()


# Persistent sessions (uir.core.runtime, spec/runtime.md): buffers that stay on the device.


@pytest.mark.skipif(AVAILABLE, reason="a GPU is present")
def test_without_a_gpu_a_session_says_why() -> None:
    with pytest.raises(BackendError, match="backend 'cuda' is not available here: "):
        open_session(parse(COUNTER).sink, "cuda")


@needs_gpu
def test_a_session_counts_to_a_thousand_on_the_device() -> None:
    with open_session(parse(COUNTER).sink, "cuda") as session:
        for _ in range(1000):
            (out,) = session.run()
        assert out.tolist() == [1000] and session.memory[0].read().tolist() == [1000]


@needs_gpu
def test_a_session_takes_numpys_sgd_steps_and_matches_the_forked_runner() -> None:
    sink = parse(SGD).sink
    with open_session(sink, "cuda") as session:
        for k in range(1, 21):
            loss, w, m = session.run()
            want_w, want_m, want_loss = numpy_sgd(k)
            assert w.tobytes() == want_w.tobytes() and m.tobytes() == want_m.tobytes()
            assert loss == pytest.approx(want_loss, rel=1e-6)
        contents = {slot: memory.read() for slot, memory in session.memory.items()}
        expected = CudaBackend().compile(scheduled(sink, optimize=True)).run(contents)
        assert same_outputs(session.run(), expected)


@needs_gpu
def test_two_sessions_share_device_memory() -> None:
    counting = open_session(parse(COUNTER).sink, "cuda")
    adding = open_session(parse(ADD_TEN).sink, "cuda", {0: counting.memory[0]})
    counting.run()
    assert adding.run()[0].tolist() == [11]
    assert counting.run()[0].tolist() == [12]
    adding.close()
    counting.close()


@needs_gpu
def test_thousands_of_session_runs_allocate_nothing(program) -> None:
    sink = program("fill", ("i32[5]", "i32[1048576]"), ("CONST i32 5", "CONST i32 1048576"))
    device = driver.default_device()
    with open_session(sink, "cuda") as session:
        session.run()
        device.make_current()
        before, _ = device.check("memory query", device.driver.cuMemGetInfo())
        for _ in range(500):  # 2 GiB, were a run to allocate its 4 MiB buffer again
            (out,) = session.run()
        after, _ = device.check("memory query", device.driver.cuMemGetInfo())
    assert out[-1] == 3 * (1048576 - 1)
    assert before - after < 4 << 20  # not one more 4 MiB buffer
