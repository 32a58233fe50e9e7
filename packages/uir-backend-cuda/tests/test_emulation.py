"""cuda-emu runs every runnable suite program of weeks 1-7 to the file's `# expect:` lines and the
interpreter's outputs, bit for bit (all in one C++ compiler run); week 6's big_ programs to their
`# expect:` lines only (conftest.interpreted)."""

from __future__ import annotations

import pytest

from uir.backend.c.plugin import compile_many as compile_many_c
from uir.backend.cuda.emulation import compile_many, cxx
from uir.cli.grading.judge import first_difference
from uir.cli.grading.testfile import read_test
from uir.cli.main import main
from uir.core import parse
from uir.core.calls import inline_calls
from uir.core.interpret import evaluate
from uir.core.output import format_value
from uir.testing.backends import scheduled
from uir.testing.compare import same_outputs

pytestmark = pytest.mark.skipif(cxx() is None, reason="no C++ compiler")


@pytest.mark.slow
def test_every_suite_program_matches_the_interpreter(suite_programs, interpreted) -> None:
    tests = [read_test(str(path)) for path, _ in suite_programs]
    flats = [flat for _, flat in suite_programs]
    emulated = compile_many([scheduled(s) for s in flats])
    approximate = [i for i, test in enumerate(tests) if test.tolerance.ulp is not None]
    native = dict(
        zip(approximate, compile_many_c([scheduled(flats[i]) for i in approximate]), strict=True)
    )
    mismatches = []
    for i, ((path, flat), program) in enumerate(zip(suite_programs, emulated, strict=True)):
        got, test = program.run(), tests[i]
        printed = tuple(format_value(v, s.dtype) for v, s in zip(got, flat.src, strict=True))
        off = first_difference(test.expected_lines, printed, test.tolerance or None) is not None
        if i in native:
            # exp2, log2 and sin are within 2 ulp of exact (uir.md 4), not the interpreter's bits:
            # the emulation calls the same C library as the C backend, so it gives C's bits.
            if not same_outputs(got, native[i].run()) or (off and not interpreted(path)):
                mismatches.append(path.name)
            continue
        # the interpreter runs the program as written: shaped values whole, not rangeify's loops;
        # a FAST fold's answer (a rel or abs tolerance) is any within the test's tolerance of it
        written = inline_calls(parse(path.read_text(), str(path)).sink)
        if off:
            mismatches.append(path.name)
        elif interpreted(path):
            values = evaluate(written)
            reference = tuple(
                format_value(v, s.dtype) for v, s in zip(values, flat.src, strict=True)
            )
            if test.tolerance:
                if first_difference(reference, printed, test.tolerance) is not None:
                    mismatches.append(path.name)
            elif not same_outputs(got, values):
                mismatches.append(path.name)
    assert mismatches == []


def test_uir_run_backend_cuda_emu(capsys) -> None:
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "suites" / "week3" / "matmul_2x2x2.uir"
    assert main(["run", "--backend", "cuda-emu", str(path)]) == 0
    assert capsys.readouterr().out.split() == ["19", "22", "43", "50"]
