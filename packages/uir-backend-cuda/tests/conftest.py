"""Shared fixtures: the suite programs of weeks 1-3 that run (expect-exit 0), parsed and
verified, their CALLs inlined."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uir.core import parse, verify
from uir.core.calls import inline_calls
from uir.core.uop import UOp

ROOT = Path(__file__).resolve().parents[3]
SUITES = [ROOT / "suites" / week for week in ("week1", "week2", "week3")]


@pytest.fixture(scope="session")
def suite_programs() -> tuple[tuple[Path, UOp], ...]:
    """(path, the program with its CALLs inlined) for every runnable suite program."""
    found = []
    for directory in SUITES:
        for path in sorted(directory.glob("*.uir")):
            text = path.read_text()
            if re.search(r"^# expect-exit: [1-9]", text, re.M) is None:
                program = parse(text, str(path))
                verify(program)
                found.append((path, inline_calls(program.sink)))
    return tuple(found)
