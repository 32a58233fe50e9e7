"""The week-1 suite through the reference compiler, with the grading harness: every test passes.

Each suite file is one pytest test, so CI names the file that broke. The runs fork from one
preloaded server (forkserver.py), the way `uir test --fork-server` runs them; test_harness.py
checks that forked and started runs get the same verdicts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from uir.cli.forkserver import ForkServer
from uir.cli.harness import Compiler, run_test
from uir.cli.limits import Limits
from uir.cli.report import failure_details

SUITE = Path(__file__).resolve().parents[3] / "suites" / "week1"
TESTS = sorted(SUITE.glob("*.uir"))


@pytest.fixture(scope="module")
def compiler() -> Iterator[Compiler]:
    with ForkServer(pythonpath=os.environ.get("PYTHONPATH", "")) as server:
        yield Compiler(("uir",), ("run",), None, server)


def test_the_suite_is_there() -> None:
    assert len(TESTS) >= 160


@pytest.mark.parametrize("path", TESTS, ids=[p.stem for p in TESTS])
def test_week1(path: Path, compiler: Compiler) -> None:
    result = run_test(str(path), compiler, Limits())
    assert result.passed, failure_details(result)
