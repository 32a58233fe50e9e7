"""NVRTC compiles every runnable suite program of weeks 1-4 for the H200 (sm_90) and the RTX 3080
(sm_86), here, with no GPU and no CUDA toolkit; a source that does not compile is a BackendError
naming NVRTC's error line."""

from __future__ import annotations

import pytest

from uir.backend.cuda.nvrtc import ARCHITECTURES, compile_cubin
from uir.backend.cuda.render import bundle, render_cuda
from uir.core.errors import BackendError

# Programs per NVRTC run: one run costs far more than one more program in it.
CHUNK = 150


def test_the_suites_are_there(suite_programs) -> None:
    assert len(suite_programs) >= 500


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_every_suite_program_compiles(arch: str, suite_programs) -> None:
    sources = [render_cuda(flat, f"uir_p{i}").source for i, (_, flat) in enumerate(suite_programs)]
    for start in range(0, len(sources), CHUNK):
        cubin = compile_cubin(bundle(sources[start : start + CHUNK]), arch)
        assert cubin[:4] == b"\x7fELF"  # a cubin is an ELF image


def test_a_compile_error_names_the_line() -> None:
    source = 'extern "C" __global__ void k(int *p) {\n    p[0] = undefined_name;\n}\n'
    with pytest.raises(BackendError) as info:
        compile_cubin(source)
    first = str(info.value).splitlines()[0]
    assert first.startswith("NVRTC could not compile the kernel: program.cu(2): error:")
    assert "undefined_name" in first


def test_an_unknown_architecture_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="NVRTC"):
        compile_cubin('extern "C" __global__ void k() {}\n', "sm_1")
