"""Shared fixtures: the suite programs of weeks 1-7 that run (expect-exit 0), and the
programs of tests/programs/, each parsed and verified (tests bring them to the backends' form
with uir.testing.backends.scheduled, as `uir run` does)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from uir.core import parse, verify
from uir.core.uop import UOp

ROOT = Path(__file__).resolve().parents[3]
WEEKS = ("week1", "week2", "week3", "week4", "week5", "week6", "week7", "week8")
SUITES = [ROOT / "suites" / week for week in WEEKS]


def _interpreted(path: Path) -> bool:
    return not (path.parent.name == "week6" and path.name.startswith("big_"))


@pytest.fixture(scope="session")
def interpreted() -> Callable[[Path], bool]:
    """`interpreted(path)`: whether a suite program is checked against the interpreter too. Not
    week 6's big_ programs, whose every shaped intermediate the interpreter would hold whole
    (256 MiB and more each, suites/week6/README.md); their `# expect:` lines still are."""
    return _interpreted


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
