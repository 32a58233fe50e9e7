"""The reports of `uir grade` (spec/grading.md, "Cross-grading"): grades.json, matrix.csv and
index.html, all built from one document computed from the results of the (compiler, test) pairs.

The grade of a compiler is the percentage of the valid tests it passes. The bonus of a test's
author is, over the author's valid tests, the number of other compilers that fail them: each
(test, compiler) pair counts once, the author's own compiler never counts, the reference counts
like any other compiler, and a team whose submission could not be prepared counts for nobody.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from uir.cli.grading.judge import Verdict
from uir.cli.grading.report import PROGRESS_MARK, write_json

from .gradepage import render
from .shards import Shard

SCHEMA_VERSION = 1
NOT_RUN = "-"  # the mark of a pair with no result (an interrupted run)
MARKS = {verdict.value: mark for verdict, mark in PROGRESS_MARK.items()}
VERDICTS = {mark: verdict for verdict, mark in MARKS.items()}
LEGEND = VERDICTS | {NOT_RUN: "not run"}  # each mark's verdict, as the page shows it
REFERENCE = "reference"  # the reference compiler's name in every report; no team may take it
FILES = ("grades.json", "matrix.csv", "index.html")


def author_of(path: str) -> str:
    """Who wrote a test: the name of the directory that holds it (`tests/alice/t.uir`: alice)."""
    return Path(os.path.abspath(path)).parent.name


class Tally:
    """The results of a run as the reports need them, taken one result at a time: per compiler
    a mark per valid test (NOT_RUN until it has a result; a later result of a pair replaces an
    earlier one), and the verdict and detail of each result that is not a pass. It holds no
    more than the report shows, however many results (a long log, resumed) go through it.

    The pairs are those of `shard` (all, for None) of the work list: `compilers` in order, each
    with every test of `tests` (spec/grading.md section 18); a result of another pair is ignored."""

    def __init__(
        self, compilers: Sequence[str], tests: Sequence[str], shard: Shard | None = None
    ) -> None:
        self.tests = tuple(tests)
        self.shard = shard
        self._rows = {name: i for i, name in enumerate(compilers)}
        self._columns = {path: j for j, path in enumerate(self.tests)}
        self._marks = {name: bytearray(NOT_RUN.encode() * len(self.tests)) for name in compilers}
        self._failures: dict[str, dict[int, tuple[str, str]]] = {name: {} for name in compilers}

    def _column(self, name: str, test: str) -> int | None:
        row, column = self._rows.get(name), self._columns.get(test)
        if row is None or column is None:
            return None
        if self.shard is not None and not self.shard.holds(row * len(self.tests) + column):
            return None
        return column

    def add(self, entry: Mapping[str, Any]) -> bool:
        """Take one result entry (crossgrade.result_line); whether it is one of the pairs."""
        name, test, verdict = entry.get("compiler"), entry.get("test"), entry.get("verdict")
        mark = MARKS.get(verdict) if isinstance(verdict, str) else None
        if not isinstance(name, str) or not isinstance(test, str) or mark is None:
            return False
        column = self._column(name, test)
        if column is None:
            return False
        self._marks[name][column] = ord(mark)
        if verdict == Verdict.PASS.value:
            self._failures[name].pop(column, None)
        else:
            self._failures[name][column] = (verdict, str(entry.get("detail", "")))
        return True

    def marks(self, name: str) -> str:
        return self._marks[name].decode("ascii")

    def failures(self, name: str) -> list[dict[str, str]]:
        """The compiler's results that are not passes, in test order."""
        return [
            {"test": self.tests[j], "verdict": verdict, "detail": detail}
            for j, (verdict, detail) in sorted(self._failures[name].items())
        ]

    def missing(self, name: str) -> list[str]:
        """The compiler's tests of this shard that have no result yet, in order."""
        marks = self._marks[name]
        not_run = ord(NOT_RUN)
        return [
            path
            for j, path in enumerate(self.tests)
            if marks[j] == not_run and self._column(name, path) is not None
        ]

    def counts(self) -> tuple[int, int]:
        """(pairs with a result, pairs) of this shard."""
        done = sum(len(m) - m.count(NOT_RUN.encode()) for m in self._marks.values())
        pairs = len(self._rows) * len(self.tests)
        if self.shard is not None:
            first = self.shard.index - 1  # the positions first, first + N, ... below `pairs`
            pairs = max(0, (pairs - first + self.shard.count - 1) // self.shard.count)
        return done, pairs

    def results(self) -> Iterator[dict[str, str]]:
        """One entry per pair with a result (compiler, test, verdict, detail), in work order."""
        for name in self._rows:
            failures = self._failures[name]
            for j, mark in enumerate(self._marks[name]):
                if mark != ord(NOT_RUN):
                    verdict, detail = failures.get(j, (Verdict.PASS.value, ""))
                    yield {
                        "compiler": name,
                        "test": self.tests[j],
                        "verdict": verdict,
                        "detail": detail,
                    }


def grades(
    compilers: Sequence[Mapping[str, Any]],
    invalid: Sequence[Mapping[str, str]],
    tally: Tally,
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """The grades document: `compilers` as Entrant.describe gives them, reference first;
    `invalid` the malformed tests' path and detail; `tally` the results of the run."""
    valid = tally.tests
    rows = []
    for compiler in compilers:
        name = compiler["name"]
        marks = tally.marks(name)
        passed = marks.count(MARKS[Verdict.PASS.value])
        rows.append(
            {
                **compiler,
                "tests": len(valid),
                "passed": passed,
                "not_run": marks.count(NOT_RUN),
                "percent": round(100 * passed / len(valid), 2) if valid else 0.0,
                "marks": marks,
                "failures": tally.failures(name),
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "uir-grade",
        **meta,
        "complete": all(row["not_run"] == 0 for row in rows),
        "compilers": rows,
        "tests": [{"path": path, "author": author_of(path)} for path in valid],
        "invalid_tests": [
            {
                "path": t["path"],
                "author": author_of(t["path"]),
                "kind": t.get("kind", "malformed"),
                "detail": t["detail"],
            }
            for t in invalid
        ],
        "authors": _authors(rows, valid),
        "reference_failures": [
            {"test": f["test"], "author": author_of(f["test"]), **f}
            for row in rows
            if row["name"] == REFERENCE
            for f in row["failures"]
        ],
    }


def _authors(rows: Sequence[Mapping[str, Any]], valid: Sequence[str]) -> list[dict[str, Any]]:
    """Each author's valid tests and bonus (the module's rule), most bonus first."""
    teams = {row["name"] for row in rows if row["name"] != REFERENCE}
    counted = [row for row in rows if row.get("problem") is None]
    authors: dict[str, dict[str, Any]] = {}
    for i, path in enumerate(valid):
        author = author_of(path)
        entry = authors.setdefault(
            author,
            {"author": author, "team": author in teams, "tests": 0, "bonus": 0, "caught": []},
        )
        entry["tests"] += 1
        failing = [
            row["name"]
            for row in counted
            if row["name"] != author and row["marks"][i] not in (NOT_RUN, MARKS["pass"])
        ]
        if failing:
            entry["bonus"] += len(failing)
            entry["caught"].append({"test": path, "failed_by": failing})
    return sorted(authors.values(), key=lambda a: (-a["bonus"], a["author"]))


def matrix_csv(document: Mapping[str, Any]) -> str:
    """One row per valid test, one column per compiler, each cell a verdict (empty: not run);
    then the rows `passed` and `percent`."""
    rows = document["compilers"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["test", "author", *(row["name"] for row in rows)])
    for i, test in enumerate(document["tests"]):
        cells = [VERDICTS.get(row["marks"][i], "") for row in rows]
        writer.writerow([test["path"], test["author"], *cells])
    writer.writerow(["passed", "", *(row["passed"] for row in rows)])
    writer.writerow(["percent", "", *(f"{row['percent']:.2f}" for row in rows)])
    return out.getvalue()


def write_reports(directory: str, document: dict[str, Any]) -> None:
    """grades.json, matrix.csv and index.html in `directory`, each replaced whole."""
    write_json(os.path.join(directory, "grades.json"), document)
    for name, text in (
        ("matrix.csv", matrix_csv(document)),
        ("index.html", render(document, LEGEND)),
    ):
        path = os.path.join(directory, name)
        with open(f"{path}.tmp", "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(f"{path}.tmp", path)
