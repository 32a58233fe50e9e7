"""suites/week9: every test's expectations, worked out in numpy by scripts/week9_suite.py, are what
that script writes today, and the reference meets them in the interpreter and in C."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from uir.backend.c.plugin import compile_many
from uir.cli.grading.judge import first_difference
from uir.cli.grading.testfile import read_test
from uir.cli.main import main
from uir.core import parse
from uir.core.output import format_value
from uir.testing.backends import scheduled

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "suites" / "week9"
TESTS = [read_test(str(p)) for p in sorted(SUITE.glob("*.uir"))]
RUNS = [t for t in TESTS if t.expected_exit == 0]


def test_the_suite_is_what_its_numpy_script_writes(tmp_path):
    subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "week9_suite.py"), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    written = {p.name: p.read_text() for p in tmp_path.glob("*.uir")}
    assert written == {p.name: p.read_text() for p in SUITE.glob("*.uir")}
    assert len(RUNS) >= 110 and len(TESTS) - len(RUNS) >= 15


@pytest.mark.parametrize("test", TESTS, ids=[t.name for t in TESTS])
def test_the_interpreter_meets_every_test(test, capsys):
    code = main(["run", test.path])
    out = capsys.readouterr().out
    assert code == test.expected_exit
    lines = tuple(out.splitlines())
    assert first_difference(test.expected_lines, lines, test.tolerance) is None, lines


def test_c_meets_every_test():
    sinks = [parse(t.program, t.path).sink for t in RUNS]
    compiled = compile_many([scheduled(s) for s in sinks])
    failed = []
    for test, sink, program in zip(RUNS, sinks, compiled, strict=True):
        lines = tuple(
            format_value(v, s.dtype) for v, s in zip(program.run(), sink.src, strict=True)
        )
        if first_difference(test.expected_lines, lines, test.tolerance) is not None:
            failed.append(test.name)
    assert failed == []
