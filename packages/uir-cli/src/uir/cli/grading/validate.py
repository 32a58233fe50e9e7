"""Judging students' tests before they grade anyone (`uir validate-tests`, spec/grading.md
section 13): a submitted test is valid when its directives are well formed, the reference agrees
with what it expects, every time and within the limits, its program keeps to what the week
allows (its ops, and what they are applied to: weeks.py), and it is no copy of a suite test or
of an earlier submission.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from uir.core import UIRError, parse, print_program
from uir.core.errors import UsageError

from .harness import Compiler, TestResult, run_tests
from .judge import Verdict
from .limits import Limits
from .report import json_text, shown
from .testfile import TestFile, TestFileError, Tolerance, file_digest, read_test
from .weeks import Feature, features, later_than

VALID, DUPLICATE, WRONG = "valid", "duplicate", "wrong"
VALIDITY_KIND = "uir-validate-tests"

# Two tests are the same when their programs print alike and they expect the same things.
Key = tuple[str, tuple[str, ...], int, Tolerance]


@dataclass
class Validation:
    """What was found about one submitted file; valid when there is no reason to reject it."""

    path: str
    name: str  # the path relative to the directory it was found in
    reasons: list[str] = field(default_factory=list)
    duplicate_of: str | None = None

    @property
    def valid(self) -> bool:
        return not self.reasons

    @property
    def status(self) -> str:
        """`valid`; `duplicate` when being a copy is all that is wrong with it (a correct test,
        but no new one); `wrong` for any other reason (the tests component of a grade and
        `uir grade` tell the two apart)."""
        if self.valid:
            return VALID
        if self.duplicate_of is not None and len(self.reasons) == 1:
            return DUPLICATE
        return WRONG


def canonical_program(text: str) -> tuple[str, frozenset[Feature] | None]:
    """The program's canonical text and what the UOps it runs use (weeks.features; None when it
    does not parse).

    A program that parses prints as the printer prints it: names and spacing no longer matter.
    Its dead statements are printed too, as if the SINK listed them, since a test may be about
    one (week 1 must parse a dead statement of a later week). A program that does not parse is
    compared by its statements, comments and blanks dropped.
    """
    try:
        program = parse(text)
    except UIRError:
        codes = (line.removesuffix("\r").split("#", 1)[0].split() for line in text.split("\n"))
        return "unparsed:\n" + "\n".join(" ".join(words) for words in codes if words), None
    sink = program.sink
    live = sink.toposort()
    alive = set(live)
    dead = tuple(
        u for u, _ in sorted(program.lines.items(), key=lambda kv: kv[1]) if u not in alive
    )
    return print_program(sink.replace(src=(*sink.src, *dead)) if dead else sink), features(live)


def identity_of(test: TestFile) -> tuple[Key, frozenset[Feature] | None]:
    """A test's identity for duplicates, and what the UOps its program runs use."""
    program, used = canonical_program(test.program)
    return (program, test.expected_lines, test.expected_exit, test.tolerance), used


def suite_keys(paths: Iterable[str]) -> dict[Key, str]:
    """The identity of each well-formed test under `paths`, the first path of each kept."""
    keys: dict[Key, str] = {}
    for path in paths:
        try:
            key, _ = identity_of(read_test(path))
        except TestFileError:
            continue  # a suite's own bad test is `uir test`'s business, not a student's
        keys.setdefault(key, path)
    return keys


def submitted_files(directory: str) -> list[tuple[str, str]]:
    """Every file under `directory` (hidden ones left out), as (path, name relative to it),
    sorted by name: the order in which "first by name wins" among duplicates."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for file in files:
            if not file.startswith("."):
                path = os.path.join(root, file)
                found.append((path, os.path.relpath(path, directory)))
    return sorted(found, key=lambda item: item[1])


# The week whose tests may say `# tolerance: R rel` and `A abs` (uir.md sections 10.3 and 12).
RELATIVE_TOLERANCE_WEEK = 8


def _week_reasons(used: frozenset[Feature] | None, week: int, rejected: bool) -> list[str]:
    if used is None:
        return []
    return [f"uses {f.what}, not allowed in week {week}" for f in later_than(used, week, rejected)]


def reference_reasons(runs: Sequence[TestResult], limits: Limits) -> list[str]:
    """Why the reference's runs of a test reject it: a disagreement, a run over the limits, or
    runs that differ from each other."""
    for result in runs:
        if result.verdict is Verdict.TIMEOUT:
            return [f"the reference takes too long (limits: {limits.wall_s:g} s wall clock)"]
        if not result.passed:
            return [f"the reference does not agree: {result.verdict.value}: {result.detail}"]
    outputs = {(r.actual_exit, r.actual_lines) for r in runs}
    if len(outputs) > 1:
        return [f"not deterministic: {len(runs)} runs of the reference gave {len(outputs)} outputs"]
    return []


def validate(
    files: Sequence[tuple[str, str]],
    week: int,
    reference: Compiler,
    limits: Limits,
    jobs: int,
    runs: int,
    known: Mapping[Key, str],
    stop: threading.Event | None = None,
    on_result: Callable[[TestResult], None] | None = None,
) -> list[Validation]:
    """Check every submitted file (path, name); `known` are the suite tests' identities."""
    checked = [Validation(path, name) for path, name in files]
    tests: dict[str, TestFile] = {}
    keys: dict[str, Key] = {}
    for item in checked:
        if not item.path.endswith(".uir"):
            item.reasons.append("not a test: only .uir files are tests")
            continue
        try:
            test = read_test(item.path)
        except TestFileError as error:
            item.reasons.append(f"malformed: {error}")
            continue
        tests[item.path] = test
        keys[item.path], used = identity_of(test)
        item.reasons += _week_reasons(used, week, rejected=test.expected_exit != 0)
        if test.tolerance.ulp is None and test.tolerance and week < RELATIVE_TOLERANCE_WEEK:
            item.reasons.append(
                f"uses a tolerance in rel/abs, of week {RELATIVE_TOLERANCE_WEEK}, not allowed in "
                f"week {week}"
            )
    results: dict[str, list[TestResult]] = {path: [] for path in tests}
    for _ in range(runs):
        if stop is not None and stop.is_set():
            break
        for result in run_tests(list(tests), reference, limits, jobs, on_result, stop):
            results[result.path].append(result)
    first: dict[Key, str] = {}
    for item in checked:
        if item.path not in tests:
            continue
        done = results[item.path]
        item.reasons += (
            reference_reasons(done, limits) if len(done) == runs else ["not run: stopped"]
        )
        key = keys[item.path]
        if key in known:
            item.duplicate_of = known[key]
            item.reasons.append(f"a duplicate of the suite's {known[key]}")
        elif key in first:
            item.duplicate_of = first[key]
            item.reasons.append(f"a duplicate of {first[key]}, submitted first (by name)")
        else:
            first[key] = item.name
    return checked


def text_report(checked: Sequence[Validation], week: int) -> str:
    """Each rejected test with its reasons, then how many are valid."""
    lines = []
    for item in checked:
        if not item.valid:
            lines.append(f"rejected {shown(item.name)}:")
            lines += [f"  {shown(reason)}" for reason in item.reasons]
    valid = sum(item.valid for item in checked)
    lines.append(
        f"week {week}: {len(checked)} files, {valid} valid tests, {len(checked) - valid} rejected"
    )
    return "\n".join(lines) + "\n"


def json_report(
    checked: Sequence[Validation],
    week: int,
    reference: str,
    runs: int,
    limits: Limits,
    suites: Sequence[str],
    interrupted: str | None,
) -> dict[str, object]:
    valid = sum(item.valid for item in checked)
    return {
        "schema_version": 1,
        "kind": VALIDITY_KIND,
        "week": week,
        "reference": reference,
        "runs": runs,
        "limits": limits.as_dict(),
        "suites": [json_text(suite) for suite in suites],
        "interrupted": interrupted,
        "totals": {"files": len(checked), "valid": valid, "rejected": len(checked) - valid},
        "tests": [
            {
                "path": json_text(item.path),
                "name": json_text(item.name),
                "valid": item.valid,
                "status": item.status,
                "sha256": file_digest(item.path),
                "reasons": [json_text(reason) for reason in item.reasons],
                "duplicate_of": json_text(item.duplicate_of) if item.duplicate_of else None,
            }
            for item in checked
        ],
    }


def suite_directories(root: Path, week: int) -> list[str]:
    """The suites of weeks 1 to `week` in a repository, those that exist."""
    return [
        str(root / "suites" / f"week{w}")
        for w in range(1, week + 1)
        if (root / "suites" / f"week{w}").is_dir()
    ]


class Verdicts:
    """The verdicts of `uir validate-tests` reports (their JSON), as `uir grade` uses them: a
    test by a team counts only when some report judged a file of the same author (its
    directory's name), name and bytes valid. Tests by authors that are not teams (the staff's)
    are not students' tests and need no verdict."""

    def __init__(self, paths: Sequence[str], teams: Iterable[str]) -> None:
        self.teams = set(teams)
        self.paths = list(paths)
        self.found: dict[tuple[str, str, str], tuple[str, str]] = {}
        for path in paths:
            for entry in _validity_entries(path):
                name = Path(str(entry["name"]))
                status = entry_status(entry)
                reasons = "; ".join(str(r) for r in entry.get("reasons", ()))
                key = (str(entry["sha256"]), name.parent.name, name.name)
                self.found[key] = (status, reasons)

    def rejection(self, path: str, digest: str) -> tuple[str, str] | None:
        """(kind, why) when the test at `path` (its bytes' digest) must not count, else None."""
        author = Path(os.path.abspath(path)).parent.name
        if author not in self.teams:
            return None
        found = self.found.get((digest, author, os.path.basename(path)))
        if found is None:
            return "not-validated", (
                "not judged by validate-tests in " + ", ".join(self.paths) + " (a test added or "
                "changed since: validate it again)"
            )
        status, reasons = found
        return None if status == VALID else (status, f"validate-tests: {reasons}")


def entry_status(entry: Mapping[str, object]) -> str:
    """A test's status in a validate-tests report (`valid`, `duplicate`, `wrong`)."""
    status = entry.get("status")
    if status in (VALID, DUPLICATE, WRONG):
        return str(status)
    return VALID if entry.get("valid") else WRONG


def _validity_entries(path: str) -> list[Mapping[str, object]]:
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the validate-tests report {path}: {e}") from None
    if not isinstance(document, dict) or document.get("kind") != VALIDITY_KIND:
        raise UsageError(f"{path} is not a report of `uir validate-tests --json`")
    tests = document.get("tests")
    if not isinstance(tests, list) or not all(
        isinstance(t, dict) and isinstance(t.get("name"), str) and "sha256" in t for t in tests
    ):
        raise UsageError(f"{path}: its tests carry no sha256 (validate them again)")
    return tests
