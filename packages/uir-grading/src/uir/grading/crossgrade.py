"""Cross-grading (`uir grade`): every compiler of a roster, and the reference, on every valid test.

The work is the list of (compiler, test) pairs, compilers in roster order after the reference,
tests in path order. Each result is appended to a JSON-lines log as it completes, so an
interrupted run keeps what it computed and a rerun into the same directory runs only what is
missing. The log is never held in memory: a rerun reads it line by line into a matrix.Tally,
which every new result also goes to, and the reports (matrix.py) are built from the tally. A run
may take one shard of the pairs (shards.py) and write a partial result instead, merged later
with the others.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from uir.cli.grading.harness import Compiler, TestResult, read_or_bad, run_tests
from uir.cli.grading.judge import Verdict
from uir.cli.grading.limits import Limits
from uir.cli.grading.testfile import file_digest
from uir.cli.grading.validate import Verdicts

from . import shards
from .matrix import Tally
from .resultlog import Log
from .roster import Team
from .submissions import Submission

LOG_FILE = "results.jsonl"
PARTIAL_KIND = "uir-grade-partial"


def test_key(path: str, digest: str) -> str:
    """What a test's results depend on, however its path is spelled: the file's name (the
    compiler sees it) and its contents. The log of a run keys its results by it."""
    return f"{os.path.basename(path)}:{digest}"


@dataclass(frozen=True)
class Tests:
    """The tests of a grading run: the valid ones, run; the rejected ones (malformed, or judged
    wrong or a duplicate by `uir validate-tests`), listed only, each a dict of path, kind and
    detail."""

    valid: tuple[str, ...]
    invalid: tuple[dict[str, str], ...]
    digests: dict[str, str] = field(compare=False)  # path: sha256 of the file's bytes

    def key(self, path: str) -> str:
        return test_key(path, self.digests[path])


def read_tests(paths: Sequence[str], verdicts: Verdicts | None = None) -> Tests:
    """The tests of `paths`; with `verdicts` (validate-tests' reports), a test by a team is
    valid only when a report judged these very bytes valid."""
    valid, invalid, digests = [], [], {}
    for path in paths:
        digests[path] = file_digest(path)  # "" when unreadable: read_or_bad says why
        test = read_or_bad(path)
        if isinstance(test, TestResult):
            invalid.append({"path": path, "kind": "malformed", "detail": test.detail})
            continue
        rejected = verdicts.rejection(path, digests[path]) if verdicts is not None else None
        if rejected is not None:
            invalid.append({"path": path, "kind": rejected[0], "detail": rejected[1]})
        else:
            valid.append(path)
    return Tests(tuple(valid), tuple(invalid), digests)


@dataclass(frozen=True)
class Entrant:
    """A compiler in the matrix: the reference, or a team's prepared submission."""

    name: str
    source: str  # the team's command or repo@ref; the reference's command
    compiler: Compiler | None  # None when the submission could not be prepared
    commit: str | None = None
    problem: str | None = None
    isolation: str | None = None  # report.TRUSTED for the reference, else isolation.Mode

    @classmethod
    def of(cls, submission: Submission) -> Entrant:
        return cls(
            submission.name,
            submission.team.source,
            submission.compiler,
            submission.commit,
            submission.problem,
            submission.isolation,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "commit": self.commit,
            "problem": self.problem,
            "isolation": self.isolation,
        }


def run_fingerprint(teams: Sequence[Team], tests: Tests, limits: Limits, reference: str) -> str:
    """What decides the results of a whole run, for merging its shards: the roster, the tests
    (names and contents, in order; not how their paths are spelled), the limits, and how the
    reference runs."""
    return shards.fingerprint(
        {
            "log": log_fingerprint(limits, reference),
            "teams": [[t.name, t.source] for t in teams],
            "tests": [tests.key(path) for path in tests.valid],
        }
    )


def log_fingerprint(limits: Limits, reference: str) -> str:
    """What decides every logged result beyond its own line (compiler, commit, test key): the
    limits and how the reference runs. A log under another is another run's; a test added to
    or removed from a run keeps the rest of its log."""
    return shards.fingerprint({"reference": reference, "limits": limits.as_dict()})


# ---- the log ---------------------------------------------------------------------------------


def result_line(entrant: Entrant, key: str, result: TestResult) -> dict[str, Any]:
    return {
        "compiler": entrant.name,
        "source": entrant.source,
        "commit": entrant.commit,
        "test": result.path,
        "key": key,
        "verdict": result.verdict.value,
        "detail": result.detail,
        "duration_s": round(result.duration_s, 3),
    }


@dataclass
class Replayed:
    """What a rerun took from the log: how many results, and the teams whose commit moved since
    their results were logged (name: the commit logged), which are graded again."""

    taken: int = 0
    moved: dict[str, str] = field(default_factory=dict)


def replay(log: Log, tally: Tally, entrants: Sequence[Entrant], tests: Tests) -> Replayed:
    """Feed `tally` the logged results of the compilers that are ready and still what they were
    (the same commit; a local command, the same command), on tests of this run with the same
    name and contents, wherever their paths are now. A team whose branch moved is graded
    again, as is a changed test; a removed test's results are left out."""
    ready = {e.name: (e.commit, e.commit is None and e.source) for e in entrants if e.compiler}
    paths: dict[str, list[str]] = {}
    for path in tests.valid:
        paths.setdefault(tests.key(path), []).append(path)
    replayed, current = Replayed(), set()
    for entry in log.entries():
        name, key = entry.get("compiler"), entry.get("key")
        if name not in ready or not isinstance(key, str):
            continue
        commit, source = ready[name]
        if entry.get("commit") != commit:
            if commit is not None and isinstance(entry.get("commit"), str):
                replayed.moved[name] = entry["commit"]
            continue
        current.add(name)
        if source and entry.get("source") != source:
            continue
        for path in paths.get(key, ()):
            replayed.taken += tally.add({**entry, "test": path})
    for name in current:  # graded at its commit of now before: no news
        replayed.moved.pop(name, None)
    return replayed


def problem_results(entrant: Entrant, tests: Sequence[str]) -> list[dict[str, Any]]:
    """A submission that could not be prepared fails every test, saying why."""
    return [
        {
            "compiler": entrant.name,
            "commit": entrant.commit,
            "test": path,
            "verdict": Verdict.CANNOT_START.value,
            "detail": f"submission: {entrant.problem}",
            "duration_s": 0.0,
        }
        for path in tests
    ]


# ---- running ---------------------------------------------------------------------------------


def run_pairs(
    entrants: Sequence[Entrant],
    todo: Mapping[str, Sequence[str]],
    limits: Limits,
    jobs: int,
    log: Log,
    tally: Tally,
    stop: threading.Event,
    keys: Mapping[str, str],
    on_result: Callable[[TestResult], None] | None = None,
) -> None:
    """Run each compiler's `todo` tests, compiler by compiler, `jobs` tests at a time, logging
    each result and adding it to `tally` as it completes; a compiler that is not ready runs
    nothing. Returns early, keeping what finished, once `stop` is set."""
    for entrant in entrants:
        tests = todo.get(entrant.name, [])
        if stop.is_set():
            return
        if entrant.compiler is None or not tests:
            continue

        def record(result: TestResult, entrant: Entrant = entrant) -> None:
            entry = result_line(entrant, keys[result.path], result)
            log.append(entry)
            tally.add(entry)
            if on_result is not None:
                on_result(result)

        run_tests(list(tests), entrant.compiler, limits, jobs, record, stop)
