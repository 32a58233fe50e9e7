"""benchmarks/cpu_bench.py: its quick mode runs end to end with every C result right, and its
checks catch a wrong result (a FAIL line and exit status 1). Nothing here looks at a time."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from uir.backend.c.plugin import CBackend

pytestmark = pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"


@pytest.mark.slow
def test_quick_run_checks_every_program_and_all_are_right():
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "cpu_bench.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    checks = done.stdout.split("checks:\n", 1)[1].split("\na*b+c, printing", 1)[0]
    verdicts = [line.split()[0] for line in checks.splitlines()]
    assert verdicts == ["ok"] * 7, done.stdout


@pytest.fixture
def bench(monkeypatch):
    """cpu_bench loaded by path, with shaped_bench (which it imports) beside it."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location("cpu_bench", BENCHMARKS / "cpu_bench.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "cpu_bench", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_each_check_rejects_a_result_with_two_elements_swapped_or_one_ulp_off(bench):
    for make in bench.cases(quick=True):
        case = make()
        bench.measure(case)  # runs C into case.out
        assert case.check(case.out)[0], case.name
        wrong = case.out.copy().reshape(-1)
        if wrong.size > 1:  # an indexing bug: two elements in each other's place
            far = int(np.argmax(np.abs(wrong - wrong[0])))
            wrong[[0, far]] = wrong[[far, 0]]
        else:  # the FAST sum: 2 off, beyond the bound of any order (n U sum|x| = 0.81 here)
            wrong[0] += np.float32(2.0)
        assert not case.check(wrong.reshape(case.out.shape))[0], case.name


def test_a_wrong_result_prints_fail_and_exits_one(bench, monkeypatch, capsys):
    first = bench.cases(quick=True)[0]

    def cases(quick: bool):
        case = first()
        case.check = bench.exact(np.zeros_like(case.out), "zeros")  # what C does not compute
        return [lambda: case]

    monkeypatch.setattr(bench, "cases", cases)
    monkeypatch.setattr(sys, "argv", ["cpu_bench.py", "--quick"])
    assert bench.main() == 1
    assert "  FAIL a*b+c" in capsys.readouterr().out
