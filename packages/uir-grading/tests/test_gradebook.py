"""`uir gradebook`: a course's weeks (students' tests judged by validate-tests, a collected and
graded compiler week, a performance week, components entered by hand) combined into each
student's final grade and the LMS's CSV, every figure worked out by hand below."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from uir.testing.cli import run_uir as _uir

MakeRepo = Callable[[Path, dict[str, str]], Path]

COURSE = """\
roster = "roster.toml"

[weights]
tests = 5
correctness = 25
performance = 10

[tests]
per_week = 4
duplicate_credit = 0.5

[bonus]
max = 3
per_point = 0.5

[letters]
A = 90
B = 80
C = 70
F = 0

[[week]]
week = 1
deadline = "2020-01-29 10:00"
tests = "validity1.json"

[[week]]
week = 2
deadline = "2020-02-05 10:00"
compiler = false
perf = "perf2.json"

[[entered]]
name = "style"
weight = 15
file = "style.csv"

[[entered]]
name = "project"
weight = 25
file = "project.csv"

[[entered]]
name = "quizzes"
weight = 20
file = "quizzes.csv"
"""

ROSTER = """\
[[team]]
name = "ada"
repo = "repos/ada"
ref = "main"
members = [{id = "a1", name = "Ada", email = "a1@example.edu"}, {id = "a2", name = "Al"}]

[[team]]
name = "bob"
repo = "repos/bob"
ref = "main"
members = [{id = "b1", name = "Bob"}]
"""


def _program(a: int, b: int, op: str, expect: int) -> str:
    lines = [f"# expect: {expect}", f"%a = CONST i32 {a}", f"%b = CONST i32 {b}"]
    return "\n".join([*lines, f"%c = {op} i32 %a %b", "%o = SINK void %c", ""])


@pytest.fixture
def course(tmp_path: Path, make_repo: MakeRepo) -> Path:
    (tmp_path / "course.toml").write_text(COURSE)
    (tmp_path / "roster.toml").write_text(ROSTER)
    submission = {"uir-submission.toml": 'command = "python3 c.py"\n'}
    # ada's compiler prints 5 whatever the program; bob's knows the answer of every test.
    make_repo(tmp_path / "repos" / "ada", {**submission, "c.py": "print(5)\n"})
    answers = 'import sys\nprint({"t2.uir": 7, "min.uir": 4}.get(sys.argv[2], 5))\n'
    make_repo(tmp_path / "repos" / "bob", {**submission, "c.py": answers})
    students = tmp_path / "students"
    for team in ("ada", "bob"):
        (students / team).mkdir(parents=True)
    (students / "ada" / "t1.uir").write_text(_program(2, 3, "ADD", 5))
    (students / "ada" / "t2.uir").write_text(_program(7, 4, "MAX", 7))
    (students / "ada" / "wrong.uir").write_text(_program(1, 1, "ADD", 3))
    (students / "bob" / "copy.uir").write_text(_program(2, 3, "ADD", 5))  # ada's t1 again
    (students / "bob" / "min.uir").write_text(_program(7, 4, "MIN", 4))
    (tmp_path / "staff").mkdir()
    (tmp_path / "staff" / "add.uir").write_text(_program(1, 4, "ADD", 5))
    perf = {"teams": [{"name": "ada", "score": 80.0}, {"name": "bob", "score": 40.0}]}
    (tmp_path / "perf2.json").write_text(json.dumps(perf))
    (tmp_path / "style.csv").write_text("student,team,score\n,ada,90\na2,,70\n")
    (tmp_path / "project.csv").write_text("team,score\nada,100\nbob,80\n")
    (tmp_path / "quizzes.csv").write_text("student,score\na1,95\na2,85\nb1,75\n")
    return tmp_path


def test_the_gradebook_combines_the_weeks_as_worked_out_by_hand(course: Path) -> None:
    validate = ["validate-tests", "students", "--week", "1", "--suite", "staff", "--runs", "1"]
    _uir(course, *validate, "--json", "validity1.json", check=5)
    _uir(course, "collect", "course.toml", "--week", "1")
    grade = ["grade", "roster.toml", "--manifest", "weeks/week1/manifest.json"]
    _uir(course, *grade, "--tests", "students", "staff", "--validity", "validity1.json")
    done = _uir(course, "gradebook", "course.toml", "--out", "book")
    # Tests (4 a week; a duplicate is worth half): ada 2 valid, 1 wrong: 50; bob 1 valid and 1
    # copy of ada's t1: 37.5. Correctness, on the 4 valid tests (t1, t2, min, add): ada's
    # compiler prints 5, so it passes t1 and add: 50; bob passes all: 100. Bonus: bob's min is
    # failed by ada: 1 point, 0.5%; ada's t2 is failed by ada only, which counts for no one.
    # a1: 2.5 + 12.5 + 8 (perf 80) + 13.5 (style 90) + 25 + 19 = 80.5, B
    # a2: 2.5 + 12.5 + 8 + 10.5 (style 70, a2's own row) + 25 + 17 = 75.5, C
    # b1: 1.875 + 25 + 4 + 0 (no style row) + 20 + 15 + 0.5 = 66.375, F
    rows = list(csv.reader((course / "book" / "gradebook.csv").open()))
    header = ["id", "name", "email", "team", "tests week 1", "compiler week 1", "perf week 2"]
    a1 = ["a1", "Ada", "a1@example.edu", "ada", "50.00", "50.00", "80.00", "90.00", "100.00"]
    a2 = ["a2", "Al", "", "ada", "50.00", "50.00", "80.00", "70.00", "100.00", "85.00", "0.00"]
    b1 = ["b1", "Bob", "", "bob", "37.50", "100.00", "40.00", "", "80.00", "75.00", "0.50"]
    assert rows == [
        [*header, "style", "project", "quizzes", "bonus", "total", "letter"],
        [*a1, "95.00", "0.00", "80.50", "B"],
        [*a2, "75.50", "C"],
        [*b1, "66.38", "F"],
    ]
    document = json.loads((course / "book" / "gradebook.json").read_text())
    b1 = document["students"][2]
    assert b1["components"]["tests"]["counts"] == {"1": {"valid": 1, "duplicate": 1, "wrong": 0}}
    assert b1["missing"] == ["style"] and b1["bonus"] == {"points": 1, "percent": 0.5}
    assert "b1               bob                66.38  F       0  (missing: style)" in done.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("F = 0", "F = 10"), "needs a letter at 0"),
        (("per_week = 4", "per_week = 0"), "per_week must be a number of at least 1"),
        (("compiler = false", "compiler = 1"), "week 2: compiler must be true or false"),
        (('name = "style"', 'name = "tests"'), "[[entered]] name 'tests'"),
        (("[weights]", "[weights]\nstyle = 15"), "[weights]: unknown 'style'"),
        (('"2020-01-29 10:00"', '"Jan 29"'), "week 1: deadline 'Jan 29' is not an ISO 8601"),
    ],
)
def test_a_bad_course_file_is_a_usage_error_naming_it(
    course: Path, change: tuple[str, str], message: str
) -> None:
    text = (course / "course.toml").read_text()
    assert change[0] in text
    (course / "course.toml").write_text(text.replace(*change, 1))
    done = _uir(course, "gradebook", "course.toml", "--out", "book", check=1)
    assert done.stderr.startswith("course.toml: error: ") and message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_roster_error_names_the_roster_and_its_line(course: Path) -> None:
    (course / "roster.toml").write_text(ROSTER.replace('{id = "b1", name = "Bob"}', '{id = "a1"}'))
    done = _uir(course, "gradebook", "course.toml", "--out", "book", check=1)
    assert "roster.toml:7: error: student 'a1' is a member of 'ada' too" in done.stderr
