"""The week suites through the reference compiler, with the grading harness: every test passes.

Each suite file is one pytest test, so CI names the file that broke. The runs fork from one
preloaded server (forkserver.py), the way `uir test --fork-server` runs them; test_harness.py
checks that forked and started runs get the same verdicts.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from uir.cli.grading.forkserver import ForkServer
from uir.cli.grading.harness import Compiler, run_test
from uir.cli.grading.limits import Limits
from uir.cli.grading.report import failure_details

SUITES = Path(__file__).resolve().parents[3] / "suites"
WEEK1 = sorted((SUITES / "week1").glob("*.uir"))
WEEK2 = sorted((SUITES / "week2").glob("*.uir"))
WEEK7 = sorted((SUITES / "week7").glob("*.uir"))


@pytest.fixture(scope="module")
def compiler() -> Iterator[Compiler]:
    with ForkServer(pythonpath=os.environ.get("PYTHONPATH", "")) as server:
        yield Compiler(("uir",), ("run",), None, server)


def test_the_suites_are_there() -> None:
    assert len(WEEK1) >= 160 and len(WEEK2) >= 100 and len(WEEK7) >= 100


# The C backend runs these suites in packages/uir-backend-c/tests (one compile for all of them),
# cuda-emu in packages/uir-backend-cuda/tests.
HARNESSED = WEEK1 + WEEK2 + WEEK7


@pytest.mark.parametrize("path", HARNESSED, ids=[f"{p.parent.name}/{p.stem}" for p in HARNESSED])
def test_suite_file(path: Path, compiler: Compiler) -> None:
    result = run_test(str(path), compiler, Limits())
    assert result.passed, failure_details(result)
