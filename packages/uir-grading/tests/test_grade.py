"""`uir grade` end to end: the example course (examples/course) graded as worked out by hand, its
page read back from a headless browser, shards merged into the same reports, on submitit too, an
interrupted run resumed without recomputing, and bad input."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from uir.grading.crossgrade import LOG_FILE
from uir.grading.resultlog import Log
from uir.testing import browser
from uir.testing.cli import run_uir as _uir

COURSE = Path(__file__).resolve().parents[3] / "examples" / "course"
TEAM_TESTS = ["tests/buggy", "tests/correct", "tests/staff"]
ADD_5 = "# expect: 5\n%a = CONST i32 2\n%b = CONST i32 3\n%c = ADD i32 %a %b\n%out = SINK void %c\n"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def _grades(out: Path) -> dict:
    return json.loads((out / "grades.json").read_text())


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example course copied, its two team repositories made, and graded once."""
    directory = tmp_path_factory.mktemp("course") / "course"
    shutil.copytree(COURSE, directory, ignore=shutil.ignore_patterns("repos", "out"))
    subprocess.run([sys.executable, "make_repos.py"], cwd=directory, check=True)
    _uir(directory, "grade", "roster.toml", "--tests", *TEAM_TESTS, "--out", "out", "-j", "2")
    return directory


def test_the_course_is_graded_as_worked_out_by_hand(course: Path) -> None:
    document = _grades(course / "out")
    rows = {row["name"]: row for row in document["compilers"]}
    # Five valid tests (exit_typo.uir is malformed, NOTES.txt is no test); the buggy team's
    # compiler swaps MAX for MIN, so it fails the two MAX tests and passes the other three.
    assert {name: (r["passed"], r["percent"]) for name, r in rows.items()} == {
        "reference": (5, 100.0),
        "correct": (5, 100.0),
        "buggy": (3, 60.0),
    }
    assert [(f["test"], f["verdict"]) for f in rows["buggy"]["failures"]] == [
        ("tests/buggy/max_negative.uir", "fail"),
        ("tests/correct/max_positive.uir", "fail"),
    ]
    # correct's MAX test is failed by buggy: 1 point; buggy's own MAX test failed by buggy
    # itself: nothing; the staff's test is passed by all.
    bonus = {a["author"]: a["bonus"] for a in document["authors"]}
    assert bonus == {"correct": 1, "buggy": 0, "staff": 0}
    assert rows["correct"]["commit"] == _git(course / "repos" / "correct", "rev-parse", "main")
    assert rows["buggy"]["commit"] == _git(course / "repos" / "buggy", "rev-parse", "week1")
    assert [t["path"] for t in document["invalid_tests"]] == ["tests/staff/exit_typo.uir"]
    assert document["reference_failures"] == [] and document["complete"] is True
    csv_rows = (course / "out" / "matrix.csv").read_text().splitlines()
    assert csv_rows[0] == "test,author,reference,correct,buggy"
    assert csv_rows[-1] == "percent,,100.00,100.00,60.00"


def test_a_rerun_resumes_from_the_log(course: Path) -> None:
    log = course / "out" / "results.jsonl"
    before = log.read_text()
    done = _uir(course, "grade", "roster.toml", "--tests", *TEAM_TESTS, "--out", "out")
    assert "resuming: 15 results kept" in done.stderr
    assert log.read_text() == before  # nothing ran again
    assert _grades(course / "out")["compilers"][2]["percent"] == 60.0


def test_a_torn_last_line_is_dropped_and_its_pair_run_again(course: Path) -> None:
    shutil.copytree(course / "out", course / "torn")
    log = course / "torn" / "results.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    last = json.loads(lines[-1])
    log.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # killed mid-write
    done = _uir(course, "grade", "roster.toml", "--tests", *TEAM_TESTS, "--out", "torn")
    assert "resuming: 14 results kept" in done.stderr
    entries = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert entries[:-1] == [json.loads(line) for line in lines[1:-1]]  # kept as they were
    assert (entries[-1]["compiler"], entries[-1]["test"]) == (last["compiler"], last["test"])
    assert _grades(course / "torn")["compilers"] == _grades(course / "out")["compilers"]


def test_the_log_cuts_a_torn_line_longer_than_its_read_back_chunk(tmp_path: Path) -> None:
    header = {"fingerprint": "f", "shard": None}
    result = {"compiler": "reference", "test": "t.uir", "verdict": "pass"}
    whole = (json.dumps(header) + "\n" + json.dumps(result) + "\n").encode()
    (tmp_path / LOG_FILE).write_bytes(whole + b'{"compiler": "' + b"x" * 200_000)
    log = Log(str(tmp_path / LOG_FILE), "f", None)
    try:
        assert (tmp_path / LOG_FILE).read_bytes() == whole
        assert list(log.entries()) == [result]
    finally:
        log.close()


class _Tables(HTMLParser):
    """The text of each cell of each table with an id, by table id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.table: str | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.table = dict(attrs).get("id")
            if self.table:
                self.tables[self.table] = []
        elif tag == "tr" and self.table:
            self.tables[self.table].append([])
        elif tag in ("td", "th") and self.table:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.table and self.cell is not None:
            self.tables[self.table][-1].append("".join(self.cell))
            self.cell = None
        elif tag == "table":
            self.table = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def test_the_page_shows_the_grades_in_a_browser(course: Path, tmp_path: Path) -> None:
    chromium = browser.find_chromium()
    if chromium is None:
        pytest.skip("no Chromium installed (.ci/run installs Debian's chromium)")
    page = course / "out" / "index.html"
    parser = _Tables()
    parser.feed(browser.dump_dom(chromium, page))
    tables = parser.tables
    grades = {row[0]: row[1:4] for row in tables["grades"][1:]}
    assert grades == {
        "correct": ["100.00", "5", "5"],
        "reference": ["100.00", "5", "5"],
        "buggy": ["60.00", "3", "5"],
    }
    assert [row[0] for row in tables["grades"][1:]][-1] == "buggy"  # best first
    assert {row[0]: row[3] for row in tables["bonus"][1:]} == {
        "correct": "1",
        "buggy": "0",
        "staff": "0",
    }
    matrix = {row[0]: row[1:] for row in tables["matrix"]}
    assert matrix["compiler"] == ["tests/buggy (2)", "tests/correct (2)", "tests/staff (1)"]
    assert matrix["buggy"] == ["1/2", "1/2", "1/1"]
    assert matrix["correct"] == ["2/2", "2/2", "1/1"]
    # A directory opened (as a click on its header does): one column per test, a mark each.
    parser = _Tables()
    parser.feed(browser.dump_dom(chromium, page, "#dir=tests/correct"))
    detail = {row[0]: row[1:] for row in parser.tables["detail"]}
    assert detail["tests/correct"] == ["add_small.uir", "max_positive.uir"]
    assert detail["buggy"] == [".", "F"] and detail["reference"] == [".", "."]
    png = tmp_path / "grades.png"
    browser.screenshot(chromium, page, png)
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 5000


def _same_grades(a: dict, b: dict) -> None:
    keys = ("name", "commit", "problem", "passed", "percent", "marks", "failures")
    assert [{k: r[k] for k in keys} for r in a["compilers"]] == [
        {k: r[k] for k in keys} for r in b["compilers"]
    ]
    for key in ("tests", "invalid_tests", "authors", "reference_failures", "fingerprint"):
        assert a[key] == b[key], key


def test_shards_merge_into_the_reports_of_one_run(course: Path) -> None:
    grade = ["grade", "roster.toml", "--tests", *TEAM_TESTS, "-j", "2"]
    _uir(course, *grade, "--shard", "1/2", "--out", "s1")
    alone = _uir(course, "grade-merge", "merged", "s1", check=1)
    assert "missing shards (of 2): 2" in alone.stderr
    _uir(course, *grade, "--shard", "2/2", "--out", "s2")
    twice = _uir(course, "grade-merge", "merged", "s1", "s2", "s2/partial.json", check=1)
    assert "shard 2/2 is given twice" in twice.stderr
    moved = json.loads((course / "s2" / "partial.json").read_text())
    moved["meta"]["compilers"][1]["commit"] = "0" * 40  # the branch moved between the shards
    (course / "moved").mkdir()
    (course / "moved" / "partial.json").write_text(json.dumps(moved))
    mixed = _uir(course, "grade-merge", "merged", "s1", "moved", check=1)
    assert "graded different submissions" in mixed.stderr
    moved = json.loads((course / "s2" / "partial.json").read_text())
    del moved["meta"]["compilers"]
    (course / "moved" / "partial.json").write_text(json.dumps(moved))
    broken = _uir(course, "grade-merge", "merged", "s1", "moved", check=1)
    assert "malformed partial result" in broken.stderr and "Traceback" not in broken.stderr
    _uir(course, "grade-merge", "merged", "s2", "s1")
    _same_grades(_grades(course / "merged"), _grades(course / "out"))
    assert (course / "merged" / "index.html").stat().st_size > 0


def test_submitit_runs_the_shards_as_a_job_array(course: Path) -> None:
    pytest.importorskip("submitit")
    _uir(
        course,
        *["grade", "roster.toml", "--tests", *TEAM_TESTS, "--out", "cluster", "-j", "1"],
        *["--executor", "submitit", "--shards", "2", "--executor-option", "timeout_min=20"],
    )
    assert sorted(p.name for p in (course / "cluster" / "shards").iterdir()) == ["1", "2"]
    _same_grades(_grades(course / "cluster"), _grades(course / "out"))


def _local_course(tmp_path: Path, teams: str, tests: dict[str, str]) -> Path:
    (tmp_path / "tests" / "staff").mkdir(parents=True)
    for name, text in tests.items():
        (tmp_path / "tests" / "staff" / name).write_text(text)
    (tmp_path / "roster.toml").write_text(teams)
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(0.4)\nprint(5)\n")
    return tmp_path


def test_an_interrupted_run_keeps_its_results_and_resumes(tmp_path: Path) -> None:
    tests = {f"add_{i}.uir": ADD_5 for i in range(6)}
    course = _local_course(
        tmp_path, '[[team]]\nname = "slow"\ncommand = "python3 slow.py"\n', tests
    )
    argv = ["grade", "roster.toml", "--tests", "tests/staff", "--out", "out", "-j", "1"]
    process = subprocess.Popen(
        [sys.executable, "-m", "uir.cli.main", *argv],
        cwd=course,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = course / "out" / "results.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:  # until the slow team has a result of its own
        if log.exists() and '"compiler": "slow"' in log.read_text():
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    kept = log.read_text().splitlines()[1:]
    assert 7 <= len(kept) < 12  # the reference's six, and some of the slow team's
    assert _grades(course / "out")["complete"] is False
    done = _uir(course, *argv)
    assert f"resuming: {len(kept)} results kept" in done.stderr
    lines = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert len(lines) == 12 == len({(e["compiler"], e["test"]) for e in lines})  # none twice
    document = _grades(course / "out")
    assert document["complete"] is True
    assert [r["percent"] for r in document["compilers"]] == [100.0, 100.0]


def test_teams_that_cannot_run_get_verdicts_and_junk_is_not_run(
    tmp_path: Path, make_repo: Callable[[Path, dict[str, str]], Path]
) -> None:
    roster = (
        '[[team]]\nname = "gone"\nrepo = "repos/nothing"\nref = "main"\n\n'
        '[[team]]\nname = "huge"\nrepo = "repos/huge"\nref = "main"\n\n'
        '[[team]]\nname = "missing"\ncommand = "./no-such-compiler"\n\n'
        '[[team]]\nname = "ok"\ncommand = "python3 slow.py"\n'
    )
    tests = {"add.uir": ADD_5, "exit_nine.uir": "# expect-exit: 9\n%a = CONST i32 1\n"}
    course = _local_course(tmp_path, roster, tests)
    # 2 MiB of files (they pack to a few KiB) against a checkout limit of 1 MiB.
    files = {"uir-submission.toml": 'command = "python3 slow.py"\n', "zeros.txt": "0" * (2 << 20)}
    make_repo(course / "repos" / "huge", files)
    (course / "tests" / "staff" / "README.md").write_text("not a test\n")
    (course / "tests" / "staff" / "data.bin").write_bytes(b"\xff\x00junk")
    argv = ["grade", "roster.toml", "--tests", "tests/staff", "--out", "out"]
    done = _uir(course, *argv, "--checkout-limit", "1")
    assert "gone: git ls-remote failed" in done.stderr
    document = _grades(course / "out")
    rows = {row["name"]: row for row in document["compilers"]}
    assert rows["gone"]["problem"].startswith("git ls-remote failed")
    assert rows["huge"]["problem"].startswith("the checkout would be 2.")
    assert rows["huge"]["problem"].endswith("MiB, over the checkout limit of 1 MiB")
    assert not (course / "out" / "checkouts" / "huge").exists()
    assert [(f["verdict"], f["detail"][:11]) for f in rows["gone"]["failures"]] == [
        ("cannot-start", "submission:")
    ]
    # A command that cannot start is the team's one verdict, found before any test runs.
    assert rows["missing"]["problem"].startswith("the command cannot start: ")
    assert rows["missing"]["problem"].endswith("no-such-compiler: no such file")
    assert [f["verdict"] for f in rows["missing"]["failures"]] == ["cannot-start"]
    assert {n: r["percent"] for n, r in rows.items()} == {
        "reference": 100.0,
        "gone": 0.0,
        "huge": 0.0,
        "missing": 0.0,
        "ok": 100.0,
    }
    assert [t["path"] for t in document["invalid_tests"]] == ["tests/staff/exit_nine.uir"]
    assert [t["path"] for t in document["tests"]] == ["tests/staff/add.uir"]


@pytest.mark.parametrize(
    ("roster", "message"),
    [
        ('[[team]]\nname = "x"\n', "roster.toml:1: error: team 'x' needs exactly one of"),
        ('[[team]]\nname = "reference"\ncommand = "x"\n', "roster.toml:1: error: the team name"),
        ("[[team]\n", "roster.toml:1: error: not valid TOML"),
    ],
)
def test_a_malformed_roster_is_a_usage_error_at_its_line(
    tmp_path: Path, roster: str, message: str
) -> None:
    course = _local_course(tmp_path, roster, {"add.uir": ADD_5})
    done = _uir(course, "grade", "roster.toml", "--tests", "tests", "--out", "o", check=1)
    assert message in done.stderr and "Traceback" not in done.stderr


def test_an_out_directory_of_another_run_is_refused(tmp_path: Path) -> None:
    course = _local_course(tmp_path, '[[team]]\nname = "ok"\ncommand = "python3 slow.py"\n', {})
    (course / "tests" / "staff" / "add.uir").write_text(ADD_5)
    # Another timeout than the default makes another run; a long one, so that no run on a
    # loaded machine reaches it (--timeout 5 did: the reference timed out, issue 24).
    _uir(course, "grade", "roster.toml", "--tests", "tests", "--out", "out", "--timeout", "600")
    before = (course / "out" / "results.jsonl").read_text()
    done = _uir(course, "grade", "roster.toml", "--tests", "tests", "--out", "out", check=1)
    assert "holds the results of another grading run" in done.stderr
    assert (course / "out" / "results.jsonl").read_text() == before


def test_the_log_does_not_depend_on_how_test_paths_are_spelled(course: Path) -> None:
    log = course / "out" / "results.jsonl"
    before = log.read_text()
    spelled = ["./tests/buggy", str(course / "tests" / "correct"), "tests/../tests/staff"]
    done = _uir(course, "grade", "roster.toml", "--tests", *spelled, "--out", "out")
    assert "resuming: 15 results kept" in done.stderr
    assert log.read_text() == before
    assert [r["percent"] for r in _grades(course / "out")["compilers"]] == [100.0, 100.0, 60.0]
    _uir(course, "grade", "roster.toml", "--tests", *TEAM_TESTS, "--out", "out")


def test_removing_a_disputed_test_keeps_the_rest_of_the_log(course: Path) -> None:
    shutil.copytree(course / "out", course / "disputed")
    log = course / "disputed" / "results.jsonl"
    before = log.read_text()
    (course / "kept").mkdir()
    shutil.copytree(course / "tests" / "staff", course / "kept" / "staff")
    (course / "kept" / "staff" / "sub_small.uir").unlink()  # the disputed test
    argv = ["--tests", "tests/buggy", "tests/correct", "kept/staff", "--out", "disputed"]
    done = _uir(course, "grade", "roster.toml", *argv)
    assert "resuming: 12 results kept" in done.stderr  # 3 compilers x the 4 tests left
    assert log.read_text() == before  # nothing ran again
    rows = {r["name"]: (r["passed"], r["tests"]) for r in _grades(course / "disputed")["compilers"]}
    assert rows == {"reference": (4, 4), "correct": (4, 4), "buggy": (2, 4)}


def test_grade_counts_only_the_tests_validate_tests_judged_valid(course: Path) -> None:
    students = course / "students"
    shutil.copytree(course / "tests" / "buggy", students / "buggy")
    shutil.copytree(course / "tests" / "correct", students / "correct")
    wrong = ADD_5.replace("expect: 5", "expect: 6")
    (students / "buggy" / "add_wrong.uir").write_text(wrong)
    mul = (students / "buggy" / "mul_small.uir").read_text()
    (students / "correct" / "mul_copy.uir").write_text(mul)  # buggy's came first by name
    validate = ["validate-tests", "students", "--week", "1", "--suite", "tests/staff"]
    # A long --timeout: the reference taking over the default 10 s on a loaded machine made a
    # right test "wrong" (issue 24).
    _uir(course, *validate, "--runs", "1", "--timeout", "600", "--json", "validity.json", check=5)
    (students / "correct" / "add_small.uir").write_text(ADD_5)  # changed since it was judged
    argv = ["grade", "roster.toml", "--tests", "students", "tests/staff", "--out", "valid"]
    done = _uir(course, *argv, "--validity", "validity.json")
    document = _grades(course / "valid")
    invalid = {Path(t["path"]).name: t["kind"] for t in document["invalid_tests"]}
    assert invalid == {
        "add_wrong.uir": "wrong",
        "mul_copy.uir": "duplicate",
        "add_small.uir": "not-validated",
        "exit_typo.uir": "malformed",
    }
    assert [Path(t["path"]).name for t in document["tests"]] == [
        "max_negative.uir",
        "mul_small.uir",
        "max_positive.uir",
        "sub_small.uir",
    ]
    assert "WARNING: the teams' tests count unchecked" not in done.stderr
    # Without the verdicts every team's test counts (the wrong one fails the reference), and
    # the grader says so.
    argv = ["grade", "roster.toml", "--tests", "students", "--out", "unchecked"]
    unchecked = _uir(course, *argv, check=5)
    assert "WARNING: the teams' tests count unchecked" in unchecked.stderr
    failures = _grades(course / "unchecked")["reference_failures"]
    assert [f["test"] for f in failures] == ["students/buggy/add_wrong.uir"]


def _feedback(out: Path, team: str) -> dict:
    return json.loads((out / "feedback" / team / "results.json").read_text())


def test_each_team_gets_feedback_of_its_own(course: Path) -> None:
    out = course / "out"
    assert sorted(p.name for p in (out / "feedback").iterdir()) == ["buggy", "correct"]
    buggy = _feedback(out, "buggy")
    assert buggy["score"] == 3.0 and buggy["extra_data"]["percent"] == 60.0
    assert buggy["output"] == "3 of 5 tests passed (60.00%)"
    status = {t["name"]: t["status"] for t in buggy["tests"]}
    assert status == {
        "max_negative": "failed",
        "mul_small": "passed",
        "add_small": "passed",
        "max_positive": "failed",
        "sub_small": "passed",
    }
    failed = next(t for t in buggy["tests"] if t["name"] == "max_positive")
    assert failed["output"].startswith("fail: line 1: expected '7', got '4'\ntopic: max\n")
    assert "MAX(7, 4) = 7" in failed["output"]  # the test's own explanation, as uir test shows
    assert (failed["score"], failed["max_score"], failed["visibility"]) == (0.0, 1.0, "visible")
    # Its own tests: the MAX test failed by buggy itself counts for nothing.
    assert buggy["extra_data"]["your_tests"]["bonus"] == 0
    correct = _feedback(out, "correct")["extra_data"]["your_tests"]
    assert correct["bonus"] == 1
    assert correct["caught"] == [{"test": "tests/correct/max_positive.uir", "failed_by": ["buggy"]}]
    page = (out / "feedback" / "buggy" / "index.html").read_text()
    assert "max_positive" in page and "correct" not in page.replace("tests/correct", "")
    assert "Staff only" in (out / "index.html").read_text()


def test_hidden_tests_show_as_their_visibility_says(course: Path) -> None:
    shutil.copytree(course / "tests", course / "hiding")
    (course / "hiding" / "correct" / "visibility.toml").write_text('default = "pass-fail"\n')
    (course / "hiding" / "buggy" / "visibility.toml").write_text(
        '[tests]\nmax_negative = "after-deadline"\n'
    )
    (course / "hiding" / "staff" / "visibility.toml").write_text('default = "secret"\n')
    tests = ["hiding/buggy", "hiding/correct", "hiding/staff"]
    done = _uir(course, "grade", "roster.toml", "--tests", *tests, "--out", "hidden")
    # A typo in a visibility file hides its tests' details rather than show a secret.
    assert "visibility.toml: 'secret' is no level" in done.stderr
    buggy = _feedback(course / "hidden", "buggy")
    assert buggy["tests"][-1]["extra_data"] == {
        "path": "hiding/staff/sub_small.uir",
        "author": "staff",
        "shown": "pass-fail",
    }
    assert [t["name"] for t in buggy["tests"]] == [
        "mul_small",
        "add_small",
        "max_positive",
        "sub_small",
    ]
    assert buggy["extra_data"]["shown_after_the_deadline"] == 1
    assert buggy["output"].endswith("; 1 more tests are shown after the deadline")
    secret = next(t for t in buggy["tests"] if t["name"] == "max_positive")
    assert (secret["status"], secret["output"], secret["extra_data"]["shown"]) == (
        "failed",
        "",
        "pass-fail",
    )
    assert "verdict" not in secret["extra_data"] and "topic" not in secret["extra_data"]
    page = (course / "hidden" / "feedback" / "buggy" / "index.html").read_text()
    assert "expected '7'" not in page and "max_negative" not in page
    assert "a hidden test: its details are not shown" in page


def test_the_example_course_runs_as_a_semester(course: Path) -> None:
    """The README's semester on the example: students' tests validated, the week collected,
    graded from its manifest, and the gradebook worked out by hand."""
    validate = ["validate-tests", "tests", "--week", "1", "--suite", "tests/staff", "--runs", "1"]
    _uir(course, *validate, "--json", "validity1.json", check=5)  # the staff's junk is rejected
    _uir(course, "collect", "course.toml", "--week", "1", "--early")
    grade = ["grade", "roster.toml", "--manifest", "weeks/week1/manifest.json", "--tests"]
    _uir(course, *grade, *TEAM_TESTS, "--validity", "validity1.json")
    _uir(course, "gradebook", "course.toml", "--out", "gradebook")
    # Tests: both teams' two tests are valid, 100. Correctness: 100 and 60 (as above). Bonus:
    # correct's 1 point is 0.5%. c1: 5 + 25 + 15 * 0.8 + 0.5 + 25 * 0.9 + 20 * 0.95 = 84, B;
    # b1: 5 + 15 + 13.5 + 25 * 0.85 + 20 * 0.8 = 70.75, C; b2: the same but 14 for quizzes.
    rows = [line.split(",") for line in (course / "gradebook" / "gradebook.csv").open()]
    assert [(r[0], r[4], r[5], r[-3], r[-2], r[-1].strip()) for r in rows[1:]] == [
        ("c1", "100.00", "100.00", "0.50", "84.00", "B"),
        ("b1", "100.00", "60.00", "0.00", "70.75", "C"),
        ("b2", "100.00", "60.00", "0.00", "68.75", "F"),
    ]
