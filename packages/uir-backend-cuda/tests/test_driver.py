"""The `cuda` backend on a GPU through the driver API: suite programs and PARALLEL kernels give the
interpreter's outputs bit for bit. Without a driver or a GPU these tests skip, and the backend
says why it is unavailable instead of failing."""

from __future__ import annotations

import numpy as np
import pytest

from uir.backend.cuda import driver
from uir.backend.cuda.plugin import CudaBackend
from uir.cli.main import main
from uir.core.interpret import evaluate
from uir.testing.compare import same_outputs

AVAILABLE, WHY = driver.available()
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
def test_every_suite_program_on_the_gpu(suite_programs) -> None:
    backend = CudaBackend()
    mismatches = []
    for path, flat in suite_programs:
        if "tolerance" in path.read_text():
            continue  # exp2, log2, sin: CUDA's own functions, within the stated ulps only
        if not same_outputs(backend.compile(flat).run(), evaluate(flat)):
            mismatches.append(path.name)
    assert mismatches == []


@needs_gpu
@pytest.mark.parametrize("name", ["fill", "matmul_parallel", "rows", "shared_local", "crossing"])
def test_parallel_kernels_on_the_gpu(name: str, program) -> None:
    sink = program(name)
    assert same_outputs(CudaBackend().compile(sink).run(), evaluate(sink))


@needs_gpu
def test_multiply_add_on_the_gpu_rounds_twice(program) -> None:
    rng = np.random.default_rng(11)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    (out,) = CudaBackend().compile(program("multiply_add")).run({0: a, 1: b, 2: c})
    assert out.tobytes() == ((a * b) + c).tobytes()
