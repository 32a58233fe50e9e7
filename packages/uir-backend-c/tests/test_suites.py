"""Every suite program that runs (expect-exit 0) gives the interpreter's output on `c`.

All programs compile in one compiler run (compile_many); outputs are compared as printed text,
and also against the file's own `# expect:` lines, which were worked out independently. Week 6's
big_ programs are compared with their `# expect:` lines only: the interpreter holds every shaped
intermediate whole (spec/uir-week6.md 2.5), 256 MiB and more each there (suites/week6/README.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from uir.backend.c.plugin import CBackend, compile_many
from uir.cli.grading.judge import first_difference
from uir.cli.main import main
from uir.core import parse, verify
from uir.core.interpret import evaluate
from uir.core.output import format_value
from uir.testing.backends import scheduled
from uir.testing.compare import within_ulps

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


def directives(text: str) -> tuple[list[str], int]:
    """The `# expect:` lines and the ulp tolerance of a test file."""
    expect, tolerance = [], 0
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("# expect:"):
            expect.append(line[len("# expect:") :].strip())
        found = re.match(r"# tolerance: (\d+) ulp", line)
        if found:
            tolerance = int(found.group(1))
    return expect, tolerance


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
    mismatches = []
    for path, program, compiled in programs:
        expect, tolerance = directives(path.read_text())
        c_values = compiled.run()
        interp_values = evaluate(program.sink) if interpreted(path) else c_values
        for source, c, ref in zip(program.sink.src, c_values, interp_values, strict=True):
            if tolerance and source.dtype.is_float:
                if not within_ulps(c, ref, tolerance):
                    mismatches.append((path.name, c, ref))
            elif format_value(c, source.dtype) != format_value(ref, source.dtype):
                mismatches.append((path.name, c, ref))
        pairs = zip(c_values, program.sink.src, strict=True)
        printed = tuple(format_value(v, s.dtype) for v, s in pairs)
        if first_difference(tuple(expect), printed, tolerance or None) is not None:
            mismatches.append((path.name, printed, expect))
    assert mismatches == []


@pytest.mark.parametrize("name", ["call_spec_example.uir", "idiv_int_min_by_minus_one.uir"])
def test_uir_run_backend_c_prints_the_expected_lines(name, capsys):
    path = ROOT / "suites" / "week1" / name
    expect, _ = directives(path.read_text())
    assert main(["run", "--backend", "c", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == expect


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
