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
from collections.abc import Mapping, Sequence
from typing import Any

from .crossgrade import REFERENCE, author_of
from .judge import Verdict
from .report import PROGRESS_MARK, write_json

SCHEMA_VERSION = 1
NOT_RUN = "-"  # the mark of a pair with no result (an interrupted run)
MARKS = {verdict.value: mark for verdict, mark in PROGRESS_MARK.items()}
VERDICTS = {mark: verdict for verdict, mark in MARKS.items()}
FILES = ("grades.json", "matrix.csv", "index.html")


def grades(
    compilers: Sequence[Mapping[str, Any]],
    valid: Sequence[str],
    invalid: Sequence[Mapping[str, str]],
    results: Mapping[tuple[str, str], Mapping[str, Any]],
    meta: Mapping[str, Any],
) -> dict[str, Any]:
    """The grades document: `compilers` as Entrant.describe gives them, reference first;
    `invalid` the malformed tests' path and detail; `results` the result entry of each
    (compiler, test) pair that has one."""
    rows = []
    for compiler in compilers:
        name = compiler["name"]
        entries = [results.get((name, path)) for path in valid]
        marks = "".join(NOT_RUN if e is None else MARKS[e["verdict"]] for e in entries)
        passed = marks.count(MARKS[Verdict.PASS.value])
        failures = [
            {"test": e["test"], "verdict": e["verdict"], "detail": e["detail"]}
            for e in entries
            if e is not None and e["verdict"] != Verdict.PASS.value
        ]
        rows.append(
            {
                **compiler,
                "tests": len(valid),
                "passed": passed,
                "not_run": marks.count(NOT_RUN),
                "percent": round(100 * passed / len(valid), 2) if valid else 0.0,
                "marks": marks,
                "failures": failures,
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
            {"path": t["path"], "author": author_of(t["path"]), "detail": t["detail"]}
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
    from .gradepage import render

    write_json(os.path.join(directory, "grades.json"), document)
    for name, text in (("matrix.csv", matrix_csv(document)), ("index.html", render(document))):
        path = os.path.join(directory, name)
        with open(f"{path}.tmp", "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.replace(f"{path}.tmp", path)
