"""Every suite program that runs (expect-exit 0) gives the interpreter's output on `c`.

All programs compile in one compiler run (compile_many); outputs are compared as printed text,
and also against the file's own `# expect:` lines, which were worked out independently. Week 6's
big_ programs are compared with their `# expect:` lines only: `evaluate` holds every shaped
intermediate whole, 256 MiB and more each there (suites/week6/README.md); the interpreter's
backend runs them under the suite's limits in packages/uir-cli/tests/test_suites.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uir.backend.c.plugin import CBackend, compile_many
from uir.cli.grading.judge import first_difference
from uir.cli.grading.testfile import read_test
from uir.cli.main import main
from uir.core import parse, verify
from uir.core.interpret import evaluate
from uir.core.output import format_value
from uir.testing.backends import scheduled

ROOT = Path(__file__).resolve().parents[3]
WEEKS = ("week1", "week2", "week3", "week4", "week5", "week6", "week7", "week8")
SUITES = [ROOT / "suites" / week for week in WEEKS]


def interpreted(path: Path) -> bool:
    """Whether the interpreter runs the program here too (not week 6's big_ programs)."""
    return not (path.parent.name == "week6" and path.name.startswith("big_"))


pytestmark = pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")


def suite_files() -> list[Path]:
    found = []
    for directory in SUITES:
        for path in sorted(directory.glob("*.uir")):
            text = path.read_text()
            if re.search(r"^# expect-exit: [1-9]", text, re.M) is None:
                found.append(path)
    return found


@pytest.fixture(scope="module")
def programs():
    files = suite_files()
    parsed = []
    for path in files:
        program = parse(path.read_text(), str(path))
        verify(program)
        parsed.append(program)
    compiled = compile_many([scheduled(s) for s in [p.sink for p in parsed]])
    return list(zip(files, parsed, compiled, strict=True))


def test_the_suites_are_there(programs):
    assert len(programs) >= 300
    assert sum(path.parent.name == "week6" for path, _, _ in programs) >= 120


def test_every_suite_program_gives_the_interpreters_output_on_c(programs):
    """Printed lines equal, or within the test's own tolerance (read by the grader's parser, its
    ulp, rel and abs forms alike, compared by the grader's line matcher)."""
    mismatches = []
    for path, program, compiled in programs:
        test = read_test(str(path))
        tolerance = test.tolerance or None
        printed = printed_lines(program, compiled.run())
        if interpreted(path):
            reference = printed_lines(program, evaluate(program.sink))
            if first_difference(reference, printed, tolerance) is not None:
                mismatches.append((path.name, printed, reference))
        if first_difference(test.expected_lines, printed, tolerance) is not None:
            mismatches.append((path.name, printed, test.expected_lines))
    assert mismatches == []


def printed_lines(program, values) -> tuple[str, ...]:
    pairs = zip(values, program.sink.src, strict=True)
    return tuple(format_value(v, s.dtype) for v, s in pairs)


@pytest.mark.parametrize("name", ["call_spec_example.uir", "idiv_int_min_by_minus_one.uir"])
def test_uir_run_backend_c_prints_the_expected_lines(name, capsys):
    path = ROOT / "suites" / "week1" / name
    assert main(["run", "--backend", "c", str(path)]) == 0
    assert tuple(capsys.readouterr().out.splitlines()) == read_test(str(path)).expected_lines


# A literal CONST's elements, rendered as a `static const` array's initializer: data the program
# text holds too (week 8's 3,000-element input), not code.
LITERAL = re.compile(r"static const [^=;]+= \{[^}]*\};")


def test_rendered_c_of_every_suite_program_stays_under_20_kb(programs):
    # uir.md 8: loops, never unrolled, so the code does not grow with the shapes (rangeify); a
    # literal's elements grow with the program's own text, and are not counted
    sizes = {
        path.name: len(LITERAL.sub("", CBackend().render(scheduled(program.sink))))
        for path, program, _ in programs
    }
    assert {name: size for name, size in sizes.items() if size >= 20_000} == {}
