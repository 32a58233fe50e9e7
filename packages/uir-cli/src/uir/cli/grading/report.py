"""What `uir test` and `uir mutants` show and write: progress, failure details, summary tables,
and the JSON reports for autograders (their schemas are documented in spec/grading.md; bump
SCHEMA_VERSION on any change that could break a reader)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .harness import TestResult
from .judge import Verdict, signal_name
from .limits import Limits
from .mutants import MutantResult, MutantsRun, MutantStatus

SCHEMA_VERSION = 1
# The isolation of the reference compiler, our own code: limits, no namespaces (spec section 3).
TRUSTED = "trusted"
# Control characters a terminal would act on (ANSI escapes, carriage returns, ...); tabs stay.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# One character per finished test when progress goes to a file or pipe.
PROGRESS_MARK = {
    Verdict.PASS: ".",
    Verdict.FAIL: "F",
    Verdict.WRONG_EXIT: "E",
    Verdict.TIMEOUT: "T",
    Verdict.CRASH: "C",
    Verdict.OUTPUT_LIMIT: "O",
    Verdict.CANNOT_START: "N",
    Verdict.BAD_TEST: "B",
    Verdict.UNDEFINED: "U",
}
MARKS_PER_LINE = 60
# Failure details show at most this many lines of each of expected, actual and stderr.
SHOWN_LINES = 20


class Progress:
    """Progress on a stream: one line rewritten in place on a terminal, marks otherwise."""

    def __init__(self, stream: TextIO, total: int, label: str = "") -> None:
        self.stream = stream
        self.total = total
        self.label = label
        self.done = 0
        self.failed = 0
        self.tty = stream.isatty()
        self.finished = False

    def update(self, result: TestResult) -> None:
        self.done += 1
        self.failed += not result.passed
        if self.tty:
            width = shutil.get_terminal_size().columns
            failed = f", {self.failed} not passed" if self.failed else ""
            name = shown(Path(result.path).name)
            line = f"{self.label}[{self.done}/{self.total}{failed}] {name}"
            self.stream.write("\r" + line[: width - 1].ljust(width - 1))
        else:
            self.stream.write(PROGRESS_MARK[result.verdict])
            if self.done % MARKS_PER_LINE == 0 and self.done < self.total:
                self.stream.write("\n")
        self.stream.flush()

    def finish(self) -> None:
        """End the progress display (once; later calls do nothing)."""
        if self.done and not self.finished:
            self.finished = True
            if self.tty:
                width = shutil.get_terminal_size().columns
                self.stream.write("\r" + " " * (width - 1) + "\r")
            else:
                self.stream.write("\n")
            self.stream.flush()


def shown(text: str) -> str:
    """`text` safe to print: control characters as escapes (`\\x1b`), so that no compiler output
    can move the cursor or rewrite what the report said before; a file name's undecodable bytes
    as escapes too."""
    text = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def _excerpt(lines: Sequence[str], indent: str = "    ") -> list[str]:
    shown_lines = [indent + shown(line) for line in lines[:SHOWN_LINES]]
    if len(lines) > SHOWN_LINES:
        shown_lines.append(f"{indent}... {len(lines) - SHOWN_LINES} more lines")
    if not lines:
        shown_lines.append(indent + "(nothing)")
    return shown_lines


def _exit_text(result: TestResult) -> str:
    if result.signal is not None:
        return f"killed by {signal_name(result.signal)}"
    if result.actual_exit is None:
        return "no exit code"
    return f"exit {result.actual_exit}"


def failure_details(result: TestResult) -> str:
    """What a failed test expected and what it got."""
    lines = [f"--- {shown(result.path)}: {result.verdict.value}: {shown(result.detail)}"]
    if result.verdict is Verdict.BAD_TEST:
        return "\n".join(lines)
    tolerance = f", floats within {result.tolerance}" if result.tolerance else ""
    lines.append(f"  expected (exit {result.expected_exit}{tolerance}):")
    lines += _excerpt(result.expected_lines)
    lines.append(f"  actual ({_exit_text(result)}):")
    lines += _excerpt(result.actual_lines)
    if result.stderr.strip():
        lines.append("  stderr:")
        lines += _excerpt(result.stderr.rstrip("\n").split("\n"))
    return "\n".join(lines)


def verdict_counts(results: Sequence[TestResult]) -> dict[str, int]:
    """Every verdict, in a fixed order, with how many tests got it (zeros included)."""
    counts = {v.value: 0 for v in Verdict}
    for r in results:
        counts[r.verdict.value] += 1
    return counts


def summary_table(results: Sequence[TestResult], command: str, duration_s: float) -> str:
    counts = verdict_counts(results)
    passed = counts[Verdict.PASS.value]
    lines = [
        f"{len(results)} tests through `{shown(command)} FILE` in {duration_s:.1f} s",
        f"  {'verdict':<14}{'tests':>6}",
    ]
    lines += [f"  {name:<14}{n:>6}" for name, n in counts.items() if n or name == "pass"]
    lines.append(f"  {'total':<14}{len(results):>6}")
    verdict = "all passed" if passed == len(results) else f"{len(results) - passed} not passed"
    lines.append(f"{passed} of {len(results)} passed: {verdict}")
    return "\n".join(lines)


def json_text(text: str) -> str:
    """A string JSON can hold: bytes of a file name that are not UTF-8 as `\\xNN` escapes."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def result_entry(result: TestResult) -> dict[str, Any]:
    return {
        "path": json_text(result.path),
        "name": json_text(Path(result.path).stem),
        "verdict": result.verdict.value,
        "detail": result.detail,
        "expected_exit": result.expected_exit,
        "actual_exit": result.actual_exit,
        "signal": None if result.signal is None else signal_name(result.signal),
        "expected_stdout": list(result.expected_lines),
        "actual_stdout": list(result.actual_lines),
        "tolerance_ulp": result.tolerance_ulp,
        "tolerance": result.tolerance.as_dict() if result.tolerance else None,
        "stderr": result.stderr,
        "duration_s": round(result.duration_s, 3),
    }


def json_report(
    results: Sequence[TestResult],
    command: str,
    limits: Limits,
    jobs: int,
    duration_s: float,
    isolation: str,
    tests: int,
    interrupted: str | None = None,
) -> dict[str, Any]:
    """The report of spec/grading.md, "The JSON report": `tests` were to run, `results` ran."""
    counts = verdict_counts(results)
    passed = counts[Verdict.PASS.value]
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "uir-test",
        "compiler": json_text(command),
        "isolation": isolation,
        "limits": limits.as_dict(),
        "jobs": jobs,
        "duration_s": round(duration_s, 3),
        "interrupted": interrupted,
        "totals": {
            "tests": len(results),
            "passed": passed,
            "not_passed": len(results) - passed,
            "not_run": tests - len(results),
            "verdicts": counts,
        },
        "tests": [result_entry(r) for r in results],
    }


def write_json(path: str, report: dict[str, Any]) -> None:
    """Write the report whole or not at all: a reader never sees half a file."""
    text = json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    if path.startswith(("/dev/", "/proc/")) or (os.path.exists(path) and not os.path.isfile(path)):
        # A device or a pipe (`--json /dev/stdout`): written through, never replaced.
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(text)
        return
    path = os.path.realpath(path)  # replace what a link points to, not the link
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temporary, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# ---- uir mutants ----------------------------------------------------------------------------


def mutant_line(result: MutantResult) -> str:
    """One line of progress for a finished bug."""
    if result.status is MutantStatus.CAUGHT:
        return f"caught          {_label(result)}: by {len(result.catching)} tests"
    if result.status is MutantStatus.NOT_CAUGHT:
        return f"NOT CAUGHT      {_label(result)}"
    return f"DOES NOT APPLY  {_label(result)}: {result.reason}"


def _wrapped(words: Sequence[str], indent: int, width: int = 100) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in words:
        if line and indent + len(line) + 2 + len(word) > width:
            lines.append(line + ",")
            line = word
        else:
            line = f"{line}, {word}" if line else word
    lines.append(line)
    return [(" " * indent if i else "") + text for i, text in enumerate(lines)]


def _label(result: MutantResult) -> str:
    """A bug's name, with the `uir run` options it is run under."""
    options = " ".join(result.mutant.options)
    return f"{result.mutant.name} ({options})" if options else result.mutant.name


def mutants_table(run: MutantsRun, duration_s: float) -> str:
    """Every bug, its result and every test that catches it; then the total."""
    names = [_label(m) for m in run.mutants]
    name_width = max([len(n) for n in names] + [len("bug")]) + 2
    lines = [f"  {'bug':<{name_width}}{'result':<16}{'tests':>5}   catching tests"]
    for m, name in zip(run.mutants, names, strict=True):
        head = f"  {name:<{name_width}}"
        if m.status is MutantStatus.DOES_NOT_APPLY:
            lines.append(f"{head}{'DOES NOT APPLY':<16}{'':>5}   {m.reason}")
            continue
        result = "caught" if m.status is MutantStatus.CAUGHT else "NOT CAUGHT"
        names = [Path(r.path).stem for r in m.catching] or ["-"]
        indent = len(head) + 16 + 5 + 3
        wrapped = _wrapped(names, indent)
        lines.append(f"{head}{result:<16}{len(m.catching):>5}   {wrapped[0]}")
        lines += wrapped[1:]
    lines.append(mutants_total(run, duration_s))
    return "\n".join(lines)


def mutants_total(run: MutantsRun, duration_s: float) -> str:
    planted = len(run.mutants)
    missed = sum(m.status is MutantStatus.NOT_CAUGHT for m in run.mutants)
    stale = sum(m.status is MutantStatus.DOES_NOT_APPLY for m in run.mutants)
    minutes, seconds = divmod(round(duration_s), 60)
    return (
        f"caught {run.caught} of {planted} planted bugs ({missed} not caught, "
        f"{stale} do not apply) in {minutes}m{seconds:02d}s"
    )


def mutants_json(
    run: MutantsRun, suite: str, mutants_file: str, root: str, command: str, duration_s: float
) -> dict[str, Any]:
    """The mutants report of spec/grading.md, "The mutants report"."""
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "uir-mutants",
        "suite": suite,
        "mutants_file": mutants_file,
        "root": root,
        "compiler": command,
        "duration_s": round(duration_s, 3),
        "baseline": {
            "tests": len(run.tests),
            "bad_tests": [result_entry(r) for r in run.bad_tests],
            "runs": [
                {
                    "options": list(options),
                    "passed": sum(r.passed for r in results),
                    "not_passed": [result_entry(r) for r in results if not r.passed],
                }
                for options, results in run.baselines.items()
            ],
        },
        "totals": {
            "planted": len(run.mutants),
            "caught": run.caught,
            "not_caught": sum(m.status is MutantStatus.NOT_CAUGHT for m in run.mutants),
            "does_not_apply": sum(m.status is MutantStatus.DOES_NOT_APPLY for m in run.mutants),
        },
        "mutants": [
            {
                "name": m.mutant.name,
                "description": m.mutant.description,
                "file": m.mutant.file,
                "options": list(m.mutant.options),
                "status": m.status.value,
                "reason": m.reason,
                "caught_by": [
                    {"path": json_text(r.path), "verdict": r.verdict.value, "detail": r.detail}
                    for r in m.catching
                ],
            }
            for m in run.mutants
        ],
    }


# ---- the short report of `uir test` (spec/grading.md section 5) ----------------------------

NAMED_ALIKE = 3  # the tests named on a line of failures that ended alike


def signature(result: TestResult) -> tuple[str, str, str]:
    """How a test failed, as one cause would fail many: the verdict, its detail, and the last
    line the compiler wrote to standard error (where a crash says what it was)."""
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    return result.verdict.value, result.detail, lines[-1][:200] if lines else ""


def alike(failures: Sequence[TestResult]) -> list[list[TestResult]]:
    """The failures grouped by signature, in the order each group first failed."""
    groups: dict[tuple[str, str, str], list[TestResult]] = {}
    for result in failures:
        groups.setdefault(signature(result), []).append(result)
    return list(groups.values())


def evidence_weights(failures: Sequence[TestResult]) -> dict[str, float]:
    """Each failed test's weight as evidence of a mistake: a group of failures that ended
    alike is one piece of evidence, shared among its tests."""
    return {r.path: 1 / len(group) for group in alike(failures) for r in group}


def short_failures(failures: Sequence[TestResult]) -> list[str]:
    """One line a failure (its progress letter, path, verdict and reason); failures that ended
    alike on one line, with how many."""
    lines = []
    for group in alike(failures):
        first = group[0]
        mark = PROGRESS_MARK[first.verdict]
        verdict, detail, last = signature(first)
        if len(group) == 1:
            lines.append(f"{mark} {shown(first.path)}: {verdict}: {shown(detail)}")
            continue
        names = [shown(Path(r.path).name) for r in group[:NAMED_ALIKE]]
        more = f", and {len(group) - NAMED_ALIKE} more" if len(group) > NAMED_ALIKE else ""
        stderr = f"; stderr: {shown(last)}" if last else ""
        lines.append(
            f"{mark} {len(group)} tests: {verdict}: {shown(detail)}{stderr} "
            f"({', '.join(names)}{more})"
        )
    return lines


def legend(results: Sequence[TestResult]) -> str:
    """The progress letters this run printed, with their verdicts."""
    seen = {r.verdict for r in results}
    return "progress letters: " + ", ".join(
        f"{mark} {verdict.value}" for verdict, mark in PROGRESS_MARK.items() if verdict in seen
    )


def one_line_summary(results: Sequence[TestResult], command: str, duration_s: float) -> str:
    """`N tests through `CMD FILE` in S s: P pass, F fail, ...`, every verdict that occurred."""
    counts = [f"{n} {name}" for name, n in verdict_counts(results).items() if n]
    return (
        f"{len(results)} tests through `{shown(command)} FILE` in {duration_s:.1f} s: "
        + ", ".join(counts or ["none ran"])
    )
