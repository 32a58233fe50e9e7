"""Shared fixtures: the suite programs of weeks 1-5 and 7 that run (expect-exit 0), and the
programs of tests/programs/, each parsed and verified (tests bring them to the backends' form
with uir.testing.backends.scheduled, as `uir run` does)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uir.core import parse, verify
from uir.core.uop import UOp

ROOT = Path(__file__).resolve().parents[3]
SUITES = [ROOT / "suites" / week for week in ("week1", "week2", "week3", "week4", "week5", "week7")]


@pytest.fixture(scope="session")
def suite_programs() -> tuple[tuple[Path, UOp], ...]:
    """(path, the program with its CALLs inlined) for every runnable suite program."""
    found = []
    for directory in SUITES:
        for path in sorted(directory.glob("*.uir")):
            text = path.read_text()
            if re.search(r"^# expect-exit: [1-9]", text, re.M) is None:
                found.append((path, _load(text, str(path))))
    return tuple(found)


PROGRAMS = Path(__file__).parent / "programs"


def _load(text: str, name: str = "<program>") -> UOp:
    program = parse(text, name)
    verify(program)
    return program.sink


@pytest.fixture(scope="session")
def program():
    """`program(name)`: tests/programs/NAME.uir parsed and verified, its CALLs inlined;
    `program(name, (old, new), ...)` first replaces text in it."""

    def load(name: str, *replacements: tuple[str, str]) -> UOp:
        text = (PROGRAMS / f"{name}.uir").read_text()
        for old, new in replacements:
            text = text.replace(old, new)
        return _load(text)

    return load
