"""`uir perf`: the scoring rule on given times, worked out by hand, and real sandboxed runs of
small compilers (correct and built from git, slow, wrong, failing to build), whole, sharded and
resumed.
No check depends on how fast this machine is: only on a compiler that sleeps 0.3 s per run
being slower than one that does not."""

from __future__ import annotations

import csv
import io
import json
import math
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from uir.cli.grading.harness import Compiler, TestResult
from uir.cli.grading.judge import Verdict
from uir.cli.grading.limits import Limits
from uir.cli.grading.testfile import TestFile, parse_test
from uir.cli.main import main
from uir.grading.perf import Entrant, Measurement, line_score, measure_rounds, noise, score
from uir.grading.perf_report import report_csv, report_json, report_text

Git = Callable[..., str]
MakeRepo = Callable[[Path, dict[str, str]], Path]  # the fixtures of conftest.py


def _m(team: str, bench: str, times: tuple[float, ...], verdict: str = "pass") -> Measurement:
    return Measurement(team, bench, None, verdict, "", times)


def test_the_median_counts_and_only_for_a_compiler_that_passed() -> None:
    assert _m("a", "x", (3.0, 1.0, 2.0)).median_s == 2.0
    assert _m("a", "x", (3.0, 1.0, 2.0, 10.0)).median_s == 2.5
    assert _m("a", "x", (0.1,), "fail").median_s is None


def test_the_line_from_slowest_to_fastest() -> None:
    assert line_score(1.0, 1.0, 3.0) == 100.0
    assert line_score(2.0, 1.0, 3.0) == 50.0
    assert line_score(3.0, 1.0, 3.0) == 0.0
    assert line_score(None, 1.0, 3.0) == 0.0
    assert line_score(2.0, 2.0, 2.0) == 100.0  # all equal: all 100
    # Off the curve (the reference): clamped.
    assert (line_score(0.5, 1.0, 3.0), line_score(4.0, 1.0, 3.0)) == (100.0, 0.0)
    assert (line_score(1.5, 1.0, 3.0), line_score(2.5, 2.0, 2.0)) == (75.0, 0.0)


def test_scores_over_benchmarks_by_hand() -> None:
    measurements = [
        # x: medians a 1, b 2, c 3, so 100, 50, 0; the reference at 1.5 scores 75.
        _m("a", "x", (1.0, 1.0, 9.0)),
        _m("b", "x", (2.0,)),
        _m("c", "x", (3.0,)),
        _m("ref", "x", (1.5,)),
        # y: a wrong, b and c tie: 100 each; the reference is slower than both: 0.
        _m("a", "y", (0.1,), "fail"),
        _m("b", "y", (1.0,)),
        _m("c", "y", (1.0,)),
        _m("ref", "y", (2.0,)),
        # z: only c passes (b was not measured at all): c 100, a and b 0.
        _m("a", "z", (0.1,), "timeout"),
        _m("c", "z", (4.0,)),
        _m("ref", "z", (8.0,)),
    ]
    rows = {r.team: r for r in score(measurements, ["x", "y", "z"], ["a", "b", "c"])}
    assert list(rows) == ["a", "b", "c", "ref"]
    assert rows["a"].scores == {"x": 100.0, "y": 0.0, "z": 0.0}
    assert rows["b"].scores == {"x": 50.0, "y": 100.0, "z": 0.0}
    assert rows["c"].scores == {"x": 0.0, "y": 100.0, "z": 100.0}
    assert rows["ref"].scores == {"x": 75.0, "y": 0.0, "z": 0.0}
    assert rows["a"].score == pytest.approx(100 / 3)
    assert rows["b"].score == pytest.approx(50.0)
    assert rows["c"].score == pytest.approx(200 / 3)
    assert [rows[t].passed for t in "abc"] == [1, 2, 3]
    # Ratios to the fastest team: a x 1; b x 2, y 1; c x 3, y 1, z 1; ref x 1.5, y 2, z 2.
    assert rows["a"].geomean_ratio == pytest.approx(1.0)
    assert rows["b"].geomean_ratio == pytest.approx(math.sqrt(2))
    assert rows["c"].geomean_ratio == pytest.approx(3 ** (1 / 3))
    assert rows["ref"].geomean_ratio == pytest.approx(6 ** (1 / 3))


def test_no_correct_team_puts_the_line_through_whoever_passed() -> None:
    rows = score([_m("a", "x", (1.0,), "fail"), _m("ref", "x", (2.0,))], ["x"], ["a"])
    assert [(r.team, r.score, r.geomean_ratio) for r in rows] == [
        ("a", 0.0, None),
        ("ref", 100.0, 1.0),
    ]


# ---- rounds and noise (issue 28: two identical compilers timed in blocks scored 99.3 and 93.5) --


def _compiler(team: str) -> Compiler:
    return Compiler(argv=(team,))


def test_the_teams_runs_interleave_in_rounds_and_a_failure_leaves_them() -> None:
    # A fake run: it logs who ran and answers with the time and verdict this test chose, so no
    # check here depends on this machine's speed.
    benchmark = parse_test(BENCHMARK, "forty_two.uir")
    ran: list[str] = []
    planned = {"a": [1.0, 1.2, 1.1], "b": [2.0, 2.4], "c": [3.0, 3.1, 3.2]}

    def run(test: TestFile, compiler: Compiler, limits: Limits, stop: object) -> TestResult:
        team = compiler.argv[0]
        ran.append(team)
        verdict = Verdict.FAIL if team == "b" and len(ran) > 3 else Verdict.PASS
        duration = planned[team][sum(t == team for t in ran) - 1]
        detail = "line 1: expected '42', got '41'" if verdict is Verdict.FAIL else ""
        return TestResult(test.path, verdict, detail, 0, 0, None, (), (), None, "", duration)

    entrants = [Entrant(t, f"commit-{t}", _compiler(t)) for t in "abc"]
    found = measure_rounds(entrants, benchmark, Limits(), 3, run=run)
    assert found is not None
    # b fails in round 2: it runs no more, a and c go on.
    assert ran == ["a", "b", "c", "a", "b", "c", "a", "c"]
    assert [(m.team, m.commit, m.verdict, m.times_s) for m in found] == [
        ("a", "commit-a", "pass", (1.0, 1.2, 1.1)),
        ("b", "commit-b", "fail", (2.0, 2.4)),
        ("c", "commit-c", "pass", (3.0, 3.1, 3.2)),
    ]
    assert found[1].detail == "line 1: expected '42', got '41'"
    assert found[0].spread_s == pytest.approx(0.2) and found[1].spread_s is None
    assert found[2].relative_spread == pytest.approx(0.2 / 3.1)


def test_a_stop_during_the_rounds_measures_nothing() -> None:
    benchmark = parse_test(BENCHMARK, "forty_two.uir")
    answers = iter([TestResult("t", Verdict.PASS, "", 0, 0, None, (), (), None, "", 1.0), None])
    entrants = [Entrant(t, None, _compiler(t)) for t in "ab"]
    found = measure_rounds(entrants, benchmark, Limits(), 2, run=lambda *_: next(answers))
    assert found is None


# Medians a 1.1, b 2.1, c 1.2: the line is 1.0 s long; the spreads 0.2, 0.4, 0.1 have the median
# 0.2 s, 20 points. a 100, c 90 (10 apart: within the noise), b 0. The reference (off the
# curve) scatters by 4.6 s and counts in no noise.
SCATTERED = [
    _m("a", "x", (1.0, 1.2, 1.1)),
    _m("b", "x", (2.0, 2.4, 2.1)),
    _m("c", "x", (1.15, 1.2, 1.25)),
    _m("reference (uir)", "x", (0.4, 0.5, 5.0)),
]


def test_the_noise_is_the_median_spread_over_the_line_by_hand() -> None:
    found = noise(SCATTERED, ["x"], ["a", "b", "c"])
    x = found.benchmarks["x"]
    assert (x.spread_s, x.line_s, x.points) == pytest.approx((0.2, 1.0, 20.0))
    assert found.points == pytest.approx(20.0)
    # Two benchmarks: the score's noise is their mean; y, which no one passed, counts 0.
    failed = [_m("a", "y", (1.0,), "fail")]
    two = noise([*SCATTERED, *failed], ["x", "y"], ["a", "b", "c"])
    assert two.benchmarks["y"].points == 0.0 and two.points == pytest.approx(10.0)
    # A line of no length (one correct team) has no score that depends on time: 0 points.
    assert noise(SCATTERED, ["x"], ["a"]).points == 0.0
    # One run each: the scatter is not known.
    assert noise([_m("a", "x", (1.0,)), _m("b", "x", (2.0,))], ["x"], ["a", "b"]).points is None


def test_the_report_says_which_differences_are_within_the_noise() -> None:
    curve = ["a", "b", "c"]
    rows = score(SCATTERED, ["x"], curve)
    assert [(r.team, round(r.score, 6)) for r in rows] == [
        ("a", 100.0),
        ("b", 0.0),
        ("c", 90.0),
        ("reference (uir)", 100.0),
    ]
    text = report_text(rows, SCATTERED, ["x"], curve)
    lines = text.splitlines()
    # The teams ranked; the reference apart, after them, not a row of the ranking.
    assert [line.split()[0] for line in lines[1:4]] == ["a", "c", "b"]
    assert lines[1].split()[-2:] == ["18%", "1/1"]  # a: 0.2 s over its median 1.1 s
    assert lines[4] == (
        "noise: the runs' scatter is worth 20.0 points of score (x 20.0); "
        "a smaller difference in score is not meaningful"
    )
    assert lines[5] == (
        "  a 100.0 and c 90.0: 10.0 apart, within the noise: their order is not established "
        "(raise -n, or measure on a quieter machine)"
    )
    assert lines[6:] == [
        "calibration (not a team, graded by nothing):",
        "  reference (uir): placed at 100.0 on the teams' line, geomean 0.45x the fastest "
        "team's time, 1/1 passed",
    ]
    document = report_json(rows, SCATTERED, ["x"], 3, curve)
    assert document["within_noise"] == [["a", "c"]]
    assert document["noise"]["points"] == 20.0
    teams = {t["name"]: t for t in document["teams"]}
    assert [teams[t]["calibration"] for t in teams] == [False, False, False, True]
    assert teams["b"]["benchmarks"]["x"]["min_s"] == 2.0
    assert teams["b"]["benchmarks"]["x"]["max_s"] == 2.4
    assert teams["b"]["benchmarks"]["x"]["spread"] == pytest.approx(0.4 / 2.1, abs=1e-4)
    # The same medians with tight runs: every difference is meaningful, none is listed.
    tight = [_m(m.team, "x", (m.median_s,) * 3) for m in SCATTERED]
    tight_text = report_text(score(tight, ["x"], curve), tight, ["x"], curve)
    assert "noise: the runs' scatter is worth 0.0 points of score;" in tight_text
    assert "within the noise" not in tight_text
    # One run each: the report says the scatter is not known, and lists nothing.
    once = [_m(m.team, "x", (m.median_s,)) for m in SCATTERED]
    once_text = report_text(score(once, ["x"], curve), once, ["x"], curve)
    assert "noise: not known from one run each (-n 2 or more" in once_text


def test_a_slow_reference_is_no_failing_team_in_the_report() -> None:
    measurements = [_m("a", "x", (1.0, 1.0)), _m("reference (uir)", "x", (9.0, 9.0))]
    rows = score(measurements, ["x"], ["a"])
    lines = report_text(rows, measurements, ["x"], ["a"]).splitlines()
    assert len([line for line in lines if line.startswith("reference")]) == 0
    assert lines[-1].startswith(
        "  reference (uir): placed at 0.0 on the teams' line, geomean 9.00x "
    )
    assert "not passed" not in "\n".join(lines)
    csv_rows = list(csv.DictReader(io.StringIO(report_csv(rows, ["x"], ["a"]))))
    calibration = [(r["team"], r["calibration"]) for r in csv_rows]
    assert calibration == [("a", ""), ("reference (uir)", "yes")]


def test_perf_interleaves_the_teams_runs(tmp_path: Path) -> None:
    # Each team's compiler appends its name to one file as it runs (unisolated, to reach the
    # file): the file is the order of the runs.
    order = tmp_path / "order.txt"
    roster = ""
    for team, answer in (("ada", 42), ("bob", 41), ("cy", 42)):
        (tmp_path / f"{team}.sh").write_text(f"echo {team} >> '{order}'\necho {answer}\n")
        roster += f'[[team]]\nname = "{team}"\ncommand = "sh {team}.sh"\n'
    (tmp_path / "roster.toml").write_text(roster)
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "forty_two.uir").write_text(BENCHMARK)
    (tmp_path / "bench" / "swapped.uir").write_text(BENCHMARK.replace("%x %y", "%y %x"))
    argv = ["perf", str(tmp_path / "roster.toml"), "--bench", str(tmp_path / "bench")]
    argv += ["--out", str(tmp_path / "out"), "-n", "3", "--no-reference", "--no-isolation"]
    assert main(argv) == 0
    # bob answers wrong: out after its first run; per benchmark, three rounds of the others.
    one_benchmark = ["ada", "bob", "cy", "ada", "cy", "ada", "cy"]
    assert order.read_text().split() == one_benchmark * 2
    report = json.loads((tmp_path / "out" / "perf.json").read_text())
    runs = {t["name"]: len(t["benchmarks"]["swapped"]["times_s"]) for t in report["teams"]}
    assert runs == {"ada": 3, "bob": 1, "cy": 3}


# ---- real runs ----------------------------------------------------------------------------------

BENCHMARK = (
    "# expect: 42\n%x = CONST i32 40\n%y = CONST i32 2\n%s = ADD i32 %x %y\n%out = SINK void %s\n"
)


@pytest.fixture
def course(tmp_path: Path, make_repo: MakeRepo, git: Git) -> tuple[Path, dict[str, str]]:
    """A roster: `gitfast` built from its repository (its build writes the script it runs),
    `slow` answers right after 0.3 s, `wrong` answers 41, `broken`'s build fails; and a
    benchmark directory of two programs (40 + 2 and 2 + 40)."""
    make_repo(
        tmp_path / "repos" / "gitfast",
        {"uir-submission.toml": 'build = "echo \'echo 42\' > c.sh"\ncommand = "sh c.sh"\n'},
    )
    make_repo(
        tmp_path / "repos" / "broken",
        {"uir-submission.toml": 'build = "echo no compiler >&2; exit 3"\ncommand = "x"\n'},
    )
    commits = {
        team: git(tmp_path / "repos" / team, "rev-parse", "HEAD") for team in ("gitfast", "broken")
    }
    (tmp_path / "slow.sh").write_text("sleep 0.3\necho 42\n")
    (tmp_path / "wrong.sh").write_text("echo 41\n")
    (tmp_path / "roster.toml").write_text(
        '[[team]]\nname = "gitfast"\nrepo = "repos/gitfast"\nref = "main"\n'
        '[[team]]\nname = "slow"\ncommand = "sh slow.sh"\n'
        '[[team]]\nname = "wrong"\ncommand = "sh wrong.sh"\n'
        '[[team]]\nname = "broken"\nrepo = "repos/broken"\nref = "main"\n'
    )
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "forty_two.uir").write_text(BENCHMARK)
    (bench / "swapped.uir").write_text(BENCHMARK.replace("%x %y", "%y %x"))
    return tmp_path, commits


def _check(report: dict, commits: dict[str, str], runs: int) -> None:
    teams = {t["name"]: t for t in report["teams"]}
    assert list(teams) == ["gitfast", "slow", "wrong", "broken"]
    assert report["benchmarks"] == ["forty_two", "swapped"] and report["runs"] == runs
    # Two correct teams on each benchmark: the faster 100, the slower 0.
    assert (teams["gitfast"]["score"], teams["slow"]["score"]) == (100.0, 0.0)
    assert teams["gitfast"]["geomean_ratio"] == 1.0 and teams["slow"]["geomean_ratio"] > 1.0
    assert teams["gitfast"]["commit"] == commits["gitfast"]
    assert teams["broken"]["commit"] == commits["broken"]
    for bench in report["benchmarks"]:
        assert len(teams["gitfast"]["benchmarks"][bench]["times_s"]) == runs
        assert teams["slow"]["benchmarks"][bench]["median_s"] >= 0.3
        wrong = teams["wrong"]["benchmarks"][bench]
        assert (wrong["verdict"], wrong["score"], len(wrong["times_s"])) == ("fail", 0.0, 1)
        assert wrong["detail"] == "line 1: expected '42', got '41'"
        broken = teams["broken"]["benchmarks"][bench]
        assert (broken["verdict"], broken["score"]) == ("not-built", 0.0)
        assert broken["detail"] == "the build failed (exit 3): no compiler"
    assert (teams["wrong"]["score"], teams["broken"]["score"]) == (0.0, 0.0)


def test_perf_grades_a_roster(
    course: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, commits = course
    out = root / "out"
    argv = ["perf", str(root / "roster.toml"), "--bench", str(root / "bench"), "--out", str(out)]
    assert main([*argv, "-n", "3", "--no-reference"]) == 0
    _check(json.loads((out / "perf.json").read_text()), commits, 3)
    with open(out / "perf.csv", newline="") as f:
        rows = {row["team"]: row for row in csv.DictReader(f)}
    assert rows["gitfast"]["commit"] == commits["gitfast"]
    assert (rows["gitfast"]["score"], rows["slow"]["score"]) == ("100.000", "0.000")
    text = capsys.readouterr().out
    assert text == (out / "perf.txt").read_text()
    lines = [line.split() for line in text.splitlines()]
    gitfast = next(line for line in lines if line[0] == "gitfast")
    assert gitfast[:4] + gitfast[-1:] == [
        "gitfast",
        commits["gitfast"][:12],
        "100.0",
        "1.00x",
        "2/2",
    ]
    assert "  wrong forty_two: fail: line 1: expected '42', got '41'" in text


def test_shards_measured_apart_merge_into_one_report(
    course: tuple[Path, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, commits = course
    argv = ["perf", str(root / "roster.toml"), "--bench", str(root / "bench"), "-n", "2"]
    files = []
    for k in (1, 2):
        out = tmp_path / f"shard{k}"
        assert main([*argv, "--no-reference", "--out", str(out), "--shard", f"{k}/2"]) == 0
        assert not (out / "perf.json").exists()  # a shard only measures
        files.append(str(out / f"perf-shard-{k}-of-2.json"))
        # A shard measures whole benchmarks: every team's runs of one, interleaved.
        measured = json.loads(Path(files[-1]).read_text())["results"]
        benchmark = ["forty_two", "swapped"][k - 1]
        assert {(m["team"], m["benchmark"]) for m in measured} == {
            (team, benchmark) for team in ("gitfast", "slow", "wrong", "broken")
        }
    assert main(["perf-merge", *files, "--out", str(tmp_path / "merged")]) == 0
    _check(json.loads((tmp_path / "merged" / "perf.json").read_text()), commits, 2)
    # More shards than benchmarks would leave a machine idle, or split a benchmark's teams.
    capsys.readouterr()
    assert main([*argv, "--out", str(tmp_path / "three"), "--shard", "3/3"]) == 1
    assert "2 benchmarks cannot make 3 shards" in capsys.readouterr().err


def test_the_reference_is_a_calibration_row_off_the_curve(tmp_path: Path) -> None:
    (tmp_path / "roster.toml").write_text(
        '[[team]]\nname = "wrong"\ncommand = "echo 41"\n'
        '[[team]]\nname = "missing"\ncommand = "./no/such/uirc"\n'
    )
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "forty_two.uir").write_text(BENCHMARK)
    argv = ["perf", str(tmp_path / "roster.toml"), "--bench", str(tmp_path / "bench")]
    assert main([*argv, "--out", str(tmp_path / "out"), "-n", "1"]) == 0
    teams = json.loads((tmp_path / "out" / "perf.json").read_text())["teams"]
    # No team passed: the line goes through the reference alone.
    assert [(t["name"], t["score"], t["passed"]) for t in teams] == [
        ("wrong", 0.0, 0),
        ("missing", 0.0, 0),
        ("reference (uir)", 100.0, 1),
    ]
    assert [t["calibration"] for t in teams] == [False, False, True]
    # A command that cannot start is found once, before any run: the team is not built.
    missing = teams[1]["benchmarks"]["forty_two"]
    assert missing["verdict"] == "not-built"
    assert missing["detail"].startswith("the command cannot start: ")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"bad.uir": "# expect-exit: x\n%o = SINK void\n"}, "not a benchmark"),
        ({"a/t.uir": BENCHMARK, "b/t.uir": BENCHMARK}, "two benchmarks named t"),
        ({}, "no .uir tests"),
    ],
)
def test_bad_benchmark_directories_are_usage_errors(
    tmp_path: Path, files: dict[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "roster.toml").write_text('[[team]]\nname = "a"\ncommand = "echo 42"\n')
    (tmp_path / "bench").mkdir()
    for name, text in files.items():
        (tmp_path / "bench" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "bench" / name).write_text(text)
    argv = ["perf", str(tmp_path / "roster.toml"), "--bench", str(tmp_path / "bench")]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 1
    assert message in capsys.readouterr().err


def test_perf_merge_refuses_files_of_other_gradings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "junk.json").write_text('{"kind": "uir-test"}')
    assert main(["perf-merge", str(tmp_path / "junk.json"), "--out", str(tmp_path)]) == 1
    assert "not a partial result of kind uir-perf-measurements" in capsys.readouterr().err


@pytest.fixture
def shard_files(tmp_path: Path) -> Callable[..., str]:
    """Measures shard K/N of a one-team roster on two benchmarks (forty_two, swapped) and gives
    its measurement file; `extra` options change the grading (and so its fingerprint)."""
    (tmp_path / "a.sh").write_text("echo 42\n")
    (tmp_path / "roster.toml").write_text('[[team]]\nname = "a"\ncommand = "sh a.sh"\n')
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "forty_two.uir").write_text(BENCHMARK)
    (tmp_path / "bench" / "swapped.uir").write_text(BENCHMARK.replace("%x %y", "%y %x"))

    def measured(shard: str, *extra: str) -> str:
        k, n = shard.split("/")
        out = tmp_path / f"shard-{k}-{n}-{len(extra)}"
        argv = ["perf", str(tmp_path / "roster.toml"), "--bench", str(tmp_path / "bench")]
        argv += ["--out", str(out), "--shard", shard, "--no-reference", "-n", "1", *extra]
        assert main(argv) == 0
        name = "perf-measurements.json" if n == "1" else f"perf-shard-{k}-of-{n}.json"
        return str(out / name)

    return measured


def test_perf_merge_refuses_shards_that_are_not_one_grading(
    tmp_path: Path, shard_files: Callable[..., str], capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = shard_files("1/2"), shard_files("2/2")
    again = str(tmp_path / "again.json")
    Path(again).write_bytes(Path(first).read_bytes())
    unfinished = str(tmp_path / "unfinished.json")
    document = json.loads(Path(second).read_text())
    Path(unfinished).write_text(json.dumps({**document, "complete": False}))
    refused = {
        "missing shards (of 2): 2": [first],
        f"shard 1/2 is given twice: {first} and {again}": [first, again, second],
        "split the work differently: N = [1, 2]": [first, second, shard_files("1/1")],
        "come from different runs": [first, shard_files("2/2", "--timeout", "600")],
        "shard 2/2 did not finish": [first, unfinished],
    }
    capsys.readouterr()
    for message, files in refused.items():
        assert main(["perf-merge", *files, "--out", str(tmp_path / "merged")]) == 1
        err = capsys.readouterr().err
        assert message in err and "error:" in err and "Traceback" not in err
    assert not (tmp_path / "merged" / "perf.json").exists()
    # The two shards of one grading do merge: the one team passed both benchmarks.
    assert main(["perf-merge", first, second, "--out", str(tmp_path / "merged")]) == 0
    report = json.loads((tmp_path / "merged" / "perf.json").read_text())
    assert [(t["name"], t["passed"], t["score"]) for t in report["teams"]] == [("a", 2, 100.0)]


# ---- appending and resuming ---------------------------------------------------------------------


@pytest.fixture
def counted(tmp_path: Path) -> tuple[list[str], Path, Path]:
    """`uir perf` of one team on four benchmarks, one run each, whose compiler appends a line to
    runs.txt on every run; its third run ever waits (until killed) while the file `hold` exists.
    The argv, runs.txt and `hold`."""
    runs, hold = tmp_path / "runs.txt", tmp_path / "hold"
    (tmp_path / "a.sh").write_text(
        f"echo run >> '{runs}'\n"
        f"if [ -e '{hold}' ] && [ \"$(wc -l < '{runs}')\" -eq 3 ]; then sleep 300; fi\n"
        "echo 42\n"
    )
    (tmp_path / "roster.toml").write_text('[[team]]\nname = "a"\ncommand = "sh a.sh"\n')
    (tmp_path / "bench").mkdir()
    for i in range(4):
        (tmp_path / "bench" / f"b{i}.uir").write_text(BENCHMARK)
    argv = ["perf", str(tmp_path / "roster.toml"), "--bench", str(tmp_path / "bench")]
    argv += ["--out", str(tmp_path / "out"), "-n", "1", "--no-reference", "--no-isolation"]
    return argv, runs, hold


def _runs(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _passed(out: Path) -> dict[str, str]:
    teams = json.loads((out / "perf.json").read_text())["teams"]
    return {bench: m["verdict"] for bench, m in teams[0]["benchmarks"].items()}


def test_an_interrupted_perf_run_resumes_measuring_only_the_missing_pairs(
    counted: tuple[list[str], Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, runs, hold = counted
    hold.touch()
    process = subprocess.Popen(
        [sys.executable, "-m", "uir.cli.main", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 300
    while _runs(runs) < 3 and time.monotonic() < deadline:  # b0 and b1 measured, b2 waiting
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGTERM, stderr
    assert "interrupted: 2 pairs not measured" in stderr
    out = tmp_path / "out"
    partial = json.loads((out / "perf-measurements.json").read_text())
    assert partial["complete"] is False
    assert [m["benchmark"] for m in partial["results"]] == ["b0", "b1"]
    hold.unlink()
    assert main(argv) == 0
    assert _runs(runs) == 3 + 2  # b2 (cut short before) and b3 only
    assert "resuming: 2 measurements kept" in capsys.readouterr().err
    assert _passed(out) == {f"b{i}": "pass" for i in range(4)}
    assert json.loads((out / "perf-measurements.json").read_text())["complete"] is True
    assert main(argv) == 0  # all measured: nothing runs again
    assert _runs(runs) == 5


def test_a_torn_last_measurement_is_cut_and_its_pair_measured_again(
    counted: tuple[list[str], Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, runs, _ = counted
    assert main(argv) == 0
    assert _runs(runs) == 4
    log = tmp_path / "out" / "perf-measurements.jsonl"
    header, *lines = log.read_bytes().splitlines(keepends=True)
    assert [json.loads(line)["benchmark"] for line in lines] == ["b0", "b1", "b2", "b3"]
    log.write_bytes(header + lines[0] + lines[1][: len(lines[1]) // 2])  # killed mid-write
    assert main(argv) == 0
    assert _runs(runs) == 4 + 3  # b1, b2, b3
    assert "resuming: 1 measurements kept" in capsys.readouterr().err
    header_again, *kept = log.read_bytes().splitlines(keepends=True)
    assert header_again == header and kept[0] == lines[0]
    assert [json.loads(line)["benchmark"] for line in kept] == ["b0", "b1", "b2", "b3"]
    assert _passed(tmp_path / "out") == {f"b{i}": "pass" for i in range(4)}


def test_a_log_of_another_perf_run_is_refused(
    counted: tuple[list[str], Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv, runs, _ = counted
    assert main(argv) == 0
    capsys.readouterr()
    assert main([*argv, "--timeout", "7"]) == 1  # other limits: another fingerprint
    err = capsys.readouterr().err
    assert "holds the results of another grading run" in err and "Traceback" not in err
    assert _runs(runs) == 4
