"""What `uir validate-tests`, `uir perf` and `uir perf-merge` do once their arguments are parsed
(spec/grading.md sections 13-15)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from uir.cli.grading.actions import (
    limits_from,
    stop_on_signals,
    tests_named,
    warn_if_weaker,
)
from uir.cli.grading.harness import Compiler, reference_compiler, reference_run_args
from uir.cli.grading.isolation import Mode, isolate
from uir.cli.grading.limits import Limits
from uir.cli.grading.testfile import TestFile, TestFileError, file_digest, read_test
from uir.cli.output import write_output
from uir.core.errors import UsageError

from . import collection, gradebook, perf_report, resultlog
from . import perf as perf_scoring
from .course import load_course
from .roster import Team, load_roster
from .runs import week_files
from .shards import Shard, fingerprint, select, write_partial
from .submissions import Submission, prepare_isolated

# The reference's calibration row in `uir perf`: not a team name (roster names have no spaces).
REFERENCE = "reference (uir)"


def _benchmarks(directory: str) -> list[TestFile]:
    """The benchmarks of a directory: staff-written, so a malformed one stops the run."""
    benchmarks = []
    for path in tests_named([directory]):
        try:
            benchmarks.append(read_test(path))
        except TestFileError as error:
            raise UsageError(f"{path}: not a benchmark: {error}") from None
    names = [b.name for b in benchmarks]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"two benchmarks named {twice[0]} (names must be unique)")
    return benchmarks


class _Teams:
    """Each team's compiler, prepared (cloned, built, isolated) the first time it is needed."""

    def __init__(
        self,
        args: argparse.Namespace,
        teams: list[Team],
        reports: list[str],
        problems: dict[str, tuple[str | None, str]],
    ) -> None:
        self.args = args
        self.teams = {team.name: team for team in teams}
        self.problems = problems  # teams not collected: (commit, why), not prepared
        self.work = os.path.abspath(args.work or Path(args.out, "checkouts"))
        # What no team's build or run may see: the benchmarks and the reports.
        self.grader = [args.bench, *reports]
        self.prepared: dict[str, Submission | Compiler] = {}

    def get(self, name: str) -> Submission | Compiler:
        if name not in self.prepared:
            self.prepared[name] = self._prepare(name)
        return self.prepared[name]

    def _prepare(self, name: str) -> Submission | Compiler:
        if name == REFERENCE:
            return reference_compiler(self.args.backend, self.args.plugin_modules)
        if name in self.problems:
            commit, problem = self.problems[name]
            return Submission(self.teams[name], None, commit, problem)
        return prepare_isolated(
            self.teams[name],
            list(self.teams.values()),
            self.work,
            self.grader,
            not self.args.no_isolation,
            self.args.env,
            self.args.checkout_limit,
        )


def _measurement_file(out: Path, shard: Shard) -> Path:
    if shard.count == 1:
        return out / "perf-measurements.json"
    return out / f"perf-shard-{shard.index}-of-{shard.count}.json"


def perf_fingerprint(
    teams: Sequence[Team],
    benchmarks: Sequence[TestFile],
    runs: int,
    limits: Limits,
    reference: tuple[str, ...] | None,
) -> str:
    """What decides the measurements: the roster, the benchmarks (names and contents), the
    runs, the limits, and how the reference runs (None: no calibration row)."""
    return fingerprint(
        {
            "teams": [[t.name, t.source] for t in teams],
            "benchmarks": [[b.name, file_digest(b.path)] for b in benchmarks],
            "runs": runs,
            "limits": limits.as_dict(),
            "reference": None if reference is None else list(reference),
        }
    )


def _not_built(prepared: Submission, team: str, benchmark: str) -> perf_scoring.Measurement:
    problem = prepared.problem or "not prepared"
    return perf_scoring.Measurement(
        team, benchmark, prepared.commit, perf_scoring.NOT_BUILT, problem, ()
    )


def _output_directory(path: str) -> Path:
    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make {out}: {exc.strerror or exc}") from exc
    return out


def _commit(prepared: Submission | Compiler) -> str | None:
    return prepared.commit if isinstance(prepared, Submission) else None


def logged_measurements(
    log: resultlog.Log, pairs: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], perf_scoring.Measurement]:
    """The logged measurements of `pairs`, the last of each pair (a pair measured again, its
    team's commit having moved, is logged again); a line that is no measurement is skipped."""
    wanted = set(pairs)
    found = {}
    for entry in log.entries():
        try:
            measured = perf_scoring.Measurement.from_dict(entry)
        except (KeyError, TypeError, ValueError):
            continue
        if (measured.team, measured.benchmark) in wanted:
            found[measured.team, measured.benchmark] = measured
    return found


def perf(args: argparse.Namespace) -> int:
    teams = load_roster(args.roster)
    problems: dict[str, tuple[str | None, str]] = {}
    if args.manifest is not None:  # the commits collected at the deadline, not the refs now
        teams, problems = collection.frozen_teams(teams, args.manifest)
    benchmarks = _benchmarks(args.bench)
    out = _output_directory(args.out)
    curve = [team.name for team in teams]
    rows = [*curve, *([] if args.no_reference else [REFERENCE])]
    by_name = {b.name: b for b in benchmarks}
    names = list(by_name)
    # A shard measures whole benchmarks: every team's runs of one benchmark interleave on one
    # machine, so that no team is timed on a machine (or in a spell) the others were not.
    if args.shard.count > len(names):
        raise UsageError(
            f"--shard {args.shard.index}/{args.shard.count}: {len(names)} benchmarks cannot "
            f"make {args.shard.count} shards (a shard measures whole benchmarks)"
        )
    measured_here = select(names, args.shard)
    pairs = [(r, b) for r in rows for b in measured_here]
    limits = limits_from(args)
    mode = Mode.NONE if args.no_isolation else isolate([os.curdir], []).mode
    warn_if_weaker(mode, "perf", args.no_isolation)
    record = _measurement_file(out, args.shard)
    log_path = record.with_suffix(".jsonl")
    reports = [str(out / name) for name in perf_report.REPORT_FILES]
    hidden = [*reports, str(record), str(log_path)]
    if args.manifest is not None:  # the week's store of every team's repository, its runs
        week = os.path.dirname(os.path.abspath(args.manifest))
        hidden += week_files(week, os.path.abspath(args.work or out / "checkouts"))
    prepared = _Teams(args, teams, hidden, problems)
    reference = None if args.no_reference else reference_run_args(args.backend, args.plugin_modules)
    print_ = perf_fingerprint(teams, benchmarks, args.runs, limits, reference)
    meta = perf_report.measurements_meta(curve, names, args.runs, limits)
    measurements: dict[tuple[str, str], perf_scoring.Measurement] = {}
    resumed = 0
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(resultlog.opened_log(str(log_path), print_, args.shard))
        logged = logged_measurements(log, pairs)
        stop, received = stack.enter_context(stop_on_signals())
        for bench in measured_here:
            if stop.is_set():
                break
            entrants = []
            for team in rows:
                compiler = prepared.get(team)
                if stop.is_set():  # a build cut short is no verdict
                    break
                kept = logged.get((team, bench))
                # A team whose commit moved is measured again; so is one that was not built, as
                # its build is tried again anyway.
                moved = kept is None or kept.commit != _commit(compiler)
                if not moved and kept.verdict != perf_scoring.NOT_BUILT:
                    measurements[team, bench] = kept
                    resumed += 1
                elif isinstance(compiler, Compiler):
                    entrants.append(perf_scoring.Entrant(team, None, compiler))
                elif compiler.compiler is not None:
                    entrants.append(perf_scoring.Entrant(team, compiler.commit, compiler.compiler))
                else:
                    found = measurements[team, bench] = _not_built(compiler, team, bench)
                    log.append(found.as_dict())
            if stop.is_set():
                break
            # The rounds: each run of a team is followed by one of every other team's.
            rounds = perf_scoring.measure_rounds(entrants, by_name[bench], limits, args.runs, stop)
            if rounds is None:  # cut short: no measurement, the benchmark is measured whole again
                break
            for found in rounds:
                log.append(found.as_dict())
                measurements[found.team, bench] = found
            for team in rows:
                found = measurements[team, bench]
                median = found.median_s
                shown = f"median {median:.3f} s" if median is not None else found.detail
                print(f"{team} {bench}: {found.verdict} ({shown})", file=sys.stderr, flush=True)
    if resumed:
        print(f"uir perf: resuming: {resumed} measurements kept", file=sys.stderr)
    results = [measurements[pair].as_dict() for pair in pairs if pair in measurements]
    complete = len(measurements) == len(pairs)
    write_partial(
        str(record), perf_report.MEASUREMENTS_KIND, print_, args.shard, results, complete, meta
    )
    if received:
        print(f"interrupted: {len(pairs) - len(measurements)} pairs not measured", file=sys.stderr)
        return 128 + received[0]
    if args.shard.count == 1:
        found_all = [measurements[pair] for pair in pairs]
        scored = perf_scoring.score(found_all, names, curve)
        text = perf_report.write_reports(out, scored, found_all, names, args.runs, curve)
        write_output(text)
    return 0


def perf_merge(args: argparse.Namespace) -> int:
    curve, names, runs, measurements = perf_report.load_measurements(args.files)
    out = _output_directory(args.out)
    scored = perf_scoring.score(measurements, names, curve)
    write_output(perf_report.write_reports(out, scored, measurements, names, runs, curve))
    return 0


def collect(args: argparse.Namespace) -> int:
    """`uir collect COURSE --week N [--late TEAM]...`: freeze the week's submissions."""
    course = load_course(args.course)
    done, notes = collection.collect(
        course, args.week, args.late, args.early, max_mb=args.checkout_limit
    )
    lines = [f"uir collect: {note}" for note in notes]
    for entry in done:
        what = entry.commit or (f"not collected: {entry.problem}" if entry.problem else "")
        late = " (a late day)" if entry.late else ""
        early = " (before its deadline)" if entry.early else ""
        lines.append(f"{entry.team}: {what or 'a local command'}{late}{early}")
    manifest = os.path.join(course.week_dir(args.week), collection.MANIFEST)
    lines.append(
        f"week {args.week}: {len(done)} collected at {done[0].at if done else '-'}: {manifest}"
    )
    write_output("\n".join(lines) + "\n")
    return 0


def gradebook_files(args: argparse.Namespace) -> int:
    """`uir gradebook COURSE --out DIR`: every student's final grade, and the LMS's CSV."""
    document = gradebook.gradebook(load_course(args.course))
    paths = gradebook.write(args.out, document)
    write_output(gradebook.text(document) + f"gradebook: {', '.join(paths)}\n")
    return 0
