"""The grades document of `uir grade`, worked out by hand for a small matrix: percentages, the
bonus rule (own compiler and unprepared submissions never count, the reference does), the
reference's failures, and the CSV; and the Tally the document is built from, one result at a
time."""

from __future__ import annotations

import csv
import io

from uir.grading.matrix import Tally, grades, matrix_csv
from uir.grading.shards import Shard

T1, T2, T3 = "tests/a/t1.uir", "tests/a/t2.uir", "tests/staff/t3.uir"
VALID = [T1, T2, T3]
COMPILERS = [
    {"name": "reference", "source": "uir run", "commit": None, "problem": None},
    {"name": "a", "source": "./a", "commit": None, "problem": None},
    {"name": "b", "source": "b@main", "commit": "c0ffee", "problem": "the build failed"},
    {"name": "c", "source": "./c", "commit": None, "problem": None},
]
VERDICTS = {
    "reference": {T1: "pass", T2: "fail", T3: "pass"},
    "a": {T1: "fail", T2: "pass", T3: "pass"},  # fails its own t1: no bonus for that
    "b": {T1: "cannot-start", T2: "cannot-start", T3: "cannot-start"},  # counts for nobody
    "c": {T1: "wrong-exit", T2: "timeout"},  # t3 not run (an interrupted run)
}


def _document() -> dict:
    tally = Tally([c["name"] for c in COMPILERS], VALID)
    for name, tests in VERDICTS.items():
        for test, v in tests.items():
            tally.add({"compiler": name, "test": test, "verdict": v, "detail": f"{name} {test}"})
    invalid = [{"path": "tests/staff/bad.uir", "detail": "line 1: malformed"}]
    return grades(COMPILERS, invalid, tally, {"roster": "r.toml"})


def _entry(name: str, test: str, verdict: str, detail: str = "") -> dict[str, str]:
    return {"compiler": name, "test": test, "verdict": verdict, "detail": detail}


def test_a_later_result_of_a_pair_replaces_an_earlier_one() -> None:
    tally = Tally(["x"], VALID)
    assert tally.add(_entry("x", T1, "fail", "first"))
    assert tally.failures("x") == [{"test": T1, "verdict": "fail", "detail": "first"}]
    assert tally.add(_entry("x", T1, "pass"))  # a rerun passed: no failure left
    assert tally.add(_entry("x", T3, "timeout", "slow"))
    assert (tally.marks("x"), tally.failures("x")) == (
        ".-T",
        [{"test": T3, "verdict": "timeout", "detail": "slow"}],
    )
    assert tally.missing("x") == [T2] and tally.counts() == (2, 3)


def test_results_of_no_pair_of_the_run_are_ignored() -> None:
    tally = Tally(["x"], VALID)
    for entry in (
        _entry("y", T1, "pass"),  # not a compiler of the run
        _entry("x", "tests/gone.uir", "pass"),  # not one of its tests
        _entry("x", T1, "no-such-verdict"),
        {"compiler": "x", "test": T1},  # damaged
        {"compiler": ["x"], "test": T1, "verdict": "pass"},
    ):
        assert not tally.add(entry)
    assert (tally.marks("x"), tally.counts()) == ("---", (0, 3))


def test_a_shard_takes_only_its_pairs() -> None:
    # Work list of 2 compilers x 3 tests: (x,t1) (x,t2) (x,t3) (y,t1) (y,t2) (y,t3), positions
    # 0-5; shard 2/4 holds positions 1 and 5: (x,t2) and (y,t3).
    tally = Tally(["x", "y"], VALID, Shard(2, 4))
    assert (tally.missing("x"), tally.missing("y"), tally.counts()) == ([T2], [T3], (0, 2))
    assert not tally.add(_entry("x", T1, "pass"))
    assert tally.add(_entry("y", T3, "fail", "no"))
    assert tally.add(_entry("x", T2, "pass"))
    assert tally.counts() == (2, 2) and tally.missing("x") == tally.missing("y") == []
    assert list(tally.results()) == [_entry("x", T2, "pass"), _entry("y", T3, "fail", "no")]
    assert Tally(["x", "y"], VALID, Shard(4, 4)).counts() == (0, 1)  # position 3 alone


def test_percentages_count_passes_over_all_valid_tests() -> None:
    rows = {row["name"]: row for row in _document()["compilers"]}
    assert {n: (r["passed"], r["percent"], r["not_run"]) for n, r in rows.items()} == {
        "reference": (2, 66.67, 0),
        "a": (2, 66.67, 0),
        "b": (0, 0.0, 0),
        "c": (0, 0.0, 1),
    }
    assert rows["c"]["marks"] == "ET-"
    assert _document()["complete"] is False


def test_bonus_counts_each_other_prepared_compiler_failing_a_test() -> None:
    authors = {a["author"]: a for a in _document()["authors"]}
    # t1: failed by a (its author: nothing), b (not prepared: nothing), c: 1.
    # t2: failed by the reference and c: 2. t3 (staff): c did not run it: 0.
    assert authors["a"]["bonus"] == 3
    assert authors["a"]["caught"] == [
        {"test": T1, "failed_by": ["c"]},
        {"test": T2, "failed_by": ["reference", "c"]},
    ]
    assert (authors["a"]["team"], authors["a"]["tests"]) == (True, 2)
    assert (authors["staff"]["bonus"], authors["staff"]["team"]) == (0, False)
    assert [a["author"] for a in _document()["authors"]] == ["a", "staff"]  # most bonus first


def test_reference_failures_and_invalid_tests_are_listed() -> None:
    document = _document()
    assert [(f["test"], f["author"], f["verdict"]) for f in document["reference_failures"]] == [
        (T2, "a", "fail")
    ]
    assert document["invalid_tests"] == [
        {
            "path": "tests/staff/bad.uir",
            "author": "staff",
            "kind": "malformed",
            "detail": "line 1: malformed",
        }
    ]
    assert document["tests"] == [
        {"path": T1, "author": "a"},
        {"path": T2, "author": "a"},
        {"path": T3, "author": "staff"},
    ]


def test_csv_has_a_verdict_per_cell_and_the_totals() -> None:
    rows = list(csv.reader(io.StringIO(matrix_csv(_document()))))
    assert rows == [
        ["test", "author", "reference", "a", "b", "c"],
        [T1, "a", "pass", "fail", "cannot-start", "wrong-exit"],
        [T2, "a", "fail", "pass", "cannot-start", "timeout"],
        [T3, "staff", "pass", "pass", "cannot-start", ""],
        ["passed", "", "2", "2", "0", "0"],
        ["percent", "", "66.67", "66.67", "0.00", "0.00"],
    ]
