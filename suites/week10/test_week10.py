"""suites/week10 through the reference: every test passes the grading harness on the interpreter
(forked from one preloaded server, as `uir test` runs it), and on C and cuda-emu (one compile
each); NVRTC compiles them all for sm_90; the attention tests are what
scripts/week10_attention_suite.py writes today.

`uv run pytest suites/week10` runs this file. Every `.uir` file of the directory is a test,
whichever script wrote it (suites/week10/README.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from uir.backend.c.plugin import CBackend
from uir.backend.c.plugin import compile_many as compile_c
from uir.backend.cuda.emulation import compile_many as compile_emulated
from uir.backend.cuda.emulation import cxx
from uir.backend.cuda.nvrtc import compile_cubin
from uir.backend.cuda.render import bundle, render_cuda
from uir.cli.grading.forkserver import ForkServer
from uir.cli.grading.harness import Compiler, run_test
from uir.cli.grading.judge import first_difference
from uir.cli.grading.limits import Limits
from uir.cli.grading.report import failure_details
from uir.cli.grading.testfile import read_test
from uir.core import parse
from uir.core.output import format_value
from uir.testing.backends import scheduled

SUITE = Path(__file__).resolve().parent
ROOT = SUITE.parents[1]
PATHS = sorted(SUITE.glob("*.uir"))
TESTS = [read_test(str(p)) for p in PATHS]
RUNS = [t for t in TESTS if t.expected_exit == 0]


def test_the_attention_tests_are_what_their_numpy_script_writes(tmp_path):
    script = ROOT / "scripts" / "week10_attention_suite.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, capture_output=True)
    written = {p.name: p.read_text() for p in tmp_path.glob("attention_*.uir")}
    assert written == {p.name: p.read_text() for p in SUITE.glob("attention_*.uir")}
    assert len(written) >= 12


def test_the_model_tests_are_what_their_numpy_script_writes(tmp_path):
    script = ROOT / "scripts" / "week10_model_suite.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, capture_output=True)
    written = {p.name: p.read_text() for p in tmp_path.glob("model_*.uir")}
    assert written == {p.name: p.read_text() for p in SUITE.glob("model_*.uir")}
    assert len(written) == 4


@pytest.fixture(scope="module")
def compiler() -> Iterator[Compiler]:
    with ForkServer(pythonpath=os.environ.get("PYTHONPATH", "")) as server:
        yield Compiler(("uir",), ("run",), None, server)


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_the_reference_passes_every_test(path: Path, compiler: Compiler) -> None:
    result = run_test(str(path), compiler, Limits())
    assert result.passed, failure_details(result)


def _failures(compile_many) -> list[str]:
    sinks = [parse(t.program, t.path).sink for t in RUNS]
    failed = []
    programs = compile_many([scheduled(s) for s in sinks])
    for test, sink, program in zip(RUNS, sinks, programs, strict=True):
        lines = tuple(
            format_value(v, s.dtype) for v, s in zip(program.run(), sink.src, strict=True)
        )
        if first_difference(test.expected_lines, lines, test.tolerance) is not None:
            failed.append(test.name)
    return failed


@pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")
def test_c_passes_every_test() -> None:
    assert _failures(compile_c) == []


@pytest.mark.skipif(cxx() is None, reason="no C++ compiler")
def test_cuda_emu_passes_every_test() -> None:
    assert _failures(compile_emulated) == []


@pytest.mark.slow
def test_nvrtc_compiles_every_test_for_the_h200() -> None:
    # no GPU needed to compile: what `--backend cuda` would load (spec/uir-week7.md 2.4)
    sinks = [parse(t.program, t.path).sink for t in RUNS]
    sources = [render_cuda(scheduled(s), f"uir_p{i}").source for i, s in enumerate(sinks)]
    assert compile_cubin(bundle(sources), "sm_90")[:4] == b"\x7fELF"
