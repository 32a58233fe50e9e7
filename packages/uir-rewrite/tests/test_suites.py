"""Every suite program that runs gives the same output after the passes as before them, and the
optimized program still verifies (week 2's memory programs included: the passes rebuild LOADs,
STOREs and AFTERs over simplified indices and values, and must not change what they do)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uir.core import parse, verify
from uir.core.interpret import evaluate
from uir.core.output import format_value
from uir.core.parse import Program
from uir.rewrite.passes import fold, inline, simplify

ROOT = Path(__file__).resolve().parents[3]
FILES = [
    path
    for week in ("week1", "week2")
    for path in sorted((ROOT / "suites" / week).glob("*.uir"))
    if re.search(r"^# expect-exit: [1-9]", path.read_text(), re.M) is None
]


def printed(sink) -> list[str]:
    return [format_value(v, s.dtype) for v, s in zip(evaluate(sink), sink.src, strict=True)]


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_passes_keep_the_output_of_every_suite_program(path):
    program = parse(path.read_text(), str(path))
    verify(program)
    optimized = simplify(fold(inline(program.sink)))
    verify(Program(optimized, {}))
    assert printed(optimized) == printed(program.sink)


def test_the_suites_are_there():
    assert len(FILES) > 100
