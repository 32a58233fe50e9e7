"""What `uir grade` and `uir grade-merge` do once their arguments are parsed (spec/grading.md,
"Cross-grading"): prepare the roster's submissions, run the (compiler, test) pairs of this run or
shard, and write the reports, or the shard's partial result."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from uir.cli.grading import report
from uir.cli.grading.actions import (
    forked_reference,
    limits_from,
    stop_on_signals,
    tests_named,
    warn_if_weaker,
)
from uir.cli.grading.harness import reference_compiler, reference_run_args
from uir.cli.grading.isolation import Mode
from uir.cli.grading.limits import Limits
from uir.cli.grading.status import NOT_PASSED
from uir.cli.grading.validate import Verdicts
from uir.cli.output import write_output
from uir.core.errors import UsageError

from . import crossgrade, feedback, matrix, resultlog, runs, shards
from .collection import frozen_teams
from .crossgrade import Entrant, Tests
from .executors import run_sharded
from .matrix import REFERENCE, author_of
from .roster import Team, load_roster
from .submissions import prepare_isolated

CHECKOUTS = "checkouts"  # under --out: the teams' repositories, cloned and built


class RosterError(UsageError):
    """An error of the roster file, reported against it (ROSTER:LINE: error: ...)."""

    def __init__(self, error: UsageError, path: str) -> None:
        super().__init__(error.message, error.line)
        self.path = path


def _teams(path: str) -> list[Team]:
    try:
        teams = load_roster(path)
    except UsageError as e:
        raise RosterError(e, path) from None
    for team in teams:
        if team.name == REFERENCE:
            message = f"the team name {REFERENCE!r} is the reference compiler's in every report"
            raise RosterError(UsageError(message, team.line), path)
    return teams


def _entrants(
    args: argparse.Namespace,
    teams: Sequence[Team],
    tests: Tests,
    stack: contextlib.ExitStack,
    stop: threading.Event,
    problems: Mapping[str, tuple[str | None, str]],
) -> list[Entrant]:
    """The reference and every team, prepared (cloned, built) and put in the sandbox. A team
    not reached before `stop` has no compiler and no problem: its tests stay not run. A team
    of `problems` (not collected) is not prepared: (commit, why) is its verdict."""
    reference = reference_compiler(args.backend, args.plugin_modules)
    if not args.no_fork_server:  # our own code: limits, no namespaces (section 3)
        reference = forked_reference(stack, reference)
    source = shlex.join(["uir", *reference.run_args])
    entrants = [Entrant(REFERENCE, source, reference, isolation=report.TRUSTED)]
    workdir = os.path.join(args.out, CHECKOUTS)
    # What no team's build or run may see: the tests and this run's files (its log, reports).
    kept = [os.path.join(args.out, n) for n in os.listdir(args.out) if n != CHECKOUTS]
    hidden = [*args.tests, *(os.path.dirname(t) or "." for t in tests.valid), *kept]
    if args.manifest is not None:  # the week's store (every team's repository), other runs
        hidden += runs.week_files(os.path.dirname(os.path.abspath(args.manifest)), args.out)
    for team in teams:
        entrant = Entrant(team.name, team.source, None)
        if team.name in problems:
            entrant = Entrant(team.name, team.source, None, *problems[team.name])
        elif not stop.is_set():
            isolated = not args.no_isolation
            prepared = Entrant.of(
                prepare_isolated(
                    team, teams, workdir, hidden, isolated, args.env, args.checkout_limit
                )
            )
            # A Ctrl-C reaches a running git or build too: its failure is no verdict.
            entrant = entrant if stop.is_set() else prepared
        if entrant.problem is not None:
            print(f"uir grade: {team.name}: {entrant.problem}", file=sys.stderr)
        entrants.append(entrant)
    for mode in sorted({e.isolation for e in entrants} - {Mode.FULL, report.TRUSTED, None}):
        warn_if_weaker(mode, "grade", args.no_isolation)
    return entrants


def _meta(args: argparse.Namespace, limits: Limits, print_: str) -> dict[str, Any]:
    return {
        "roster": args.roster,
        "test_dirs": list(args.tests),
        "fingerprint": print_,
        "limits": limits.as_dict(),
    }


def grade(args: argparse.Namespace) -> int:
    teams = _teams(args.roster)
    problems: dict[str, tuple[str | None, str]] = {}
    if args.manifest is not None:
        teams, problems = frozen_teams(teams, args.manifest)
    elif args.out is None:
        raise UsageError("--out DIR is needed (or --manifest, which grades into its week's runs)")
    if args.reason is not None and args.manifest is None:
        raise UsageError("--reason is recorded in a week's history: it goes with --manifest")
    verdicts = Verdicts(args.validity, [t.name for t in teams]) if args.validity else None
    tests = crossgrade.read_tests(tests_named(args.tests), verdicts)
    if verdicts is None and any(author_of(p) in {t.name for t in teams} for p in tests.valid):
        print(
            "uir grade: WARNING: the teams' tests count unchecked: give the reports of "
            "`uir validate-tests --json` with --validity so wrong tests and duplicates do not",
            file=sys.stderr,
        )
    limits = limits_from(args)
    shard = args.shard
    if args.executor == "local" and (args.shards is not None or args.executor_option):
        raise UsageError("--shards and --executor-option go with --executor submitit")
    if args.executor != "local":
        if args.out is None:
            raise UsageError("--executor needs --out DIR: the shards' directories go under it")
        if shard is not None:
            raise UsageError("--shard runs one shard here; it takes no --executor")
        sharded = run_sharded(args)
        if sharded.interrupted is not None:
            return 128 + sharded.interrupted
        return publish(args.out, merged_document(sharded.directories), [])
    # How the reference runs, not where this Python lives: shards run on other machines too.
    reference = shlex.join(reference_run_args(args.backend, args.plugin_modules))
    print_ = crossgrade.run_fingerprint(teams, tests, limits, reference)
    logged = crossgrade.log_fingerprint(limits, reference)
    week_dir = None
    if args.out is None:  # a week's next run, or its last one resumed
        if shard is not None:
            raise UsageError("--shard needs --out DIR (each shard its own)")
        week_dir = os.path.dirname(os.path.abspath(args.manifest))
        header = resultlog.Log.header_of(logged, None)
        args.out = runs.run_directory(week_dir, header)
        print(f"uir grade: grading into {args.out}", file=sys.stderr)
    with contextlib.ExitStack() as stack:
        log_path = os.path.join(args.out, crossgrade.LOG_FILE)
        log = stack.enter_context(resultlog.opened_log(log_path, logged, shard))
        stop, received = stack.enter_context(stop_on_signals())
        entrants = _entrants(args, teams, tests, stack, stop, problems)
        tally = matrix.Tally([e.name for e in entrants], tests.valid, shard)
        replayed = crossgrade.replay(log, tally, entrants, tests)
        if replayed.taken:
            print(f"uir grade: resuming: {replayed.taken} results kept", file=sys.stderr)
        for name, before in replayed.moved.items():
            now = next(e.commit for e in entrants if e.name == name)
            if args.manifest is not None:  # a later collection: a late day
                print(f"uir grade: {name}: graded at its last collection {now}", file=sys.stderr)
                continue
            print(
                f"uir grade: WARNING: {name} moved from {before} to {now} since its results "
                "were logged: graded again (to grade what was there at the deadline, "
                "`uir collect` it and grade with --manifest)",
                file=sys.stderr,
            )
        for entrant in entrants:
            if entrant.problem is not None:
                for entry in crossgrade.problem_results(entrant, tests.valid):
                    tally.add(entry)
        todo = {e.name: tally.missing(e.name) for e in entrants if e.compiler is not None}
        progress = report.Progress(sys.stderr, sum(map(len, todo.values())))
        stack.callback(progress.finish)
        keys = {path: tests.key(path) for path in tests.valid}
        crossgrade.run_pairs(
            entrants, todo, limits, args.jobs, log, tally, stop, keys, progress.update
        )
    interrupted = signal.Signals(received[0]).name if received else None
    meta = _meta(args, limits, print_) | {"interrupted": interrupted}
    if args.manifest is not None:
        meta["manifest"] = args.manifest
        meta["graded_at"] = datetime.now().astimezone().isoformat(timespec="seconds")
    invalid = list(tests.invalid)
    if shard is not None:
        meta["compilers"] = [e.describe() for e in entrants]
        meta["tests"], meta["invalid_tests"] = list(tests.valid), invalid
        done, pairs = tally.counts()
        path = os.path.join(args.out, shards.PARTIAL_FILE)
        results = list(tally.results())
        shards.write_partial(
            path, crossgrade.PARTIAL_KIND, print_, shard, results, done == pairs, meta
        )
        write_output(f"shard {shard}: {done} of {pairs} results in {path}\n")
        return 128 + received[0] if received else 0
    document = matrix.grades([e.describe() for e in entrants], invalid, tally, meta)
    status = publish(args.out, document, received)
    if week_dir is not None and document["complete"]:
        runs.record(week_dir, args.out, document, args.reason)
    return status


def publish(out: str, document: dict[str, Any], received: Sequence[int]) -> int:
    """Write the reports and a summary; the exit status of the run."""
    try:
        matrix.write_reports(out, document)
        for problem in feedback.write_feedback(out, document):
            print(f"uir grade: WARNING: {problem}", file=sys.stderr)
    except OSError as e:
        raise UsageError(f"cannot write the reports to {out}: {e.strerror or e}") from e
    lines = ["grades (percent of valid tests passed):"]
    for row in sorted(document["compilers"], key=lambda r: (-r["percent"], r["name"])):
        problem = f"  [{row['problem']}]" if row["problem"] else ""
        lines.append(
            f"  {row['name']:<20} {row['percent']:6.2f}%  {row['passed']}/{row['tests']}{problem}"
        )
    lines.append("bonus (failures of other compilers on each author's valid tests):")
    lines += [f"  {a['author']:<20} {a['bonus']}" for a in document["authors"]]
    if document["invalid_tests"]:
        lines.append(f"{len(document['invalid_tests'])} invalid tests, not run:")
        lines += [f"  {t['path']}: {t['detail']}" for t in document["invalid_tests"]]
    failures = document["reference_failures"]
    if failures:
        lines.append(
            f"WARNING: the reference fails {len(failures)} valid tests: a reference bug or a "
            "wrong test; check them before publishing the bonus:"
        )
        lines += [f"  {f['test']}: {f['verdict']}: {f['detail']}" for f in failures]
    if not document["complete"]:
        lines.append("incomplete: run the same command again to finish the missing pairs")
    lines.append(f"reports: {', '.join(os.path.join(out, f) for f in matrix.FILES)} (staff only)")
    lines.append(f"feedback for each team to read: {os.path.join(out, feedback.FEEDBACK, 'TEAM')}")
    write_output("\n".join(lines) + "\n")
    if received:
        return 128 + received[0]
    return NOT_PASSED if failures else 0


def merge(args: argparse.Namespace) -> int:
    """`uir grade-merge OUT PART...`: the reports of the whole run from its shards."""
    document = merged_document(args.parts)
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot write the reports to {args.out}: {e.strerror or e}") from e
    return publish(args.out, document, [])


def merged_document(parts: Sequence[str]) -> dict[str, Any]:
    partials = shards.read_partials(parts, crossgrade.PARTIAL_KIND)  # its ShardError: exit 1
    try:
        return _merged(partials)
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"malformed partial result ({type(e).__name__}: {e})") from None


def _merged(partials: Sequence[shards.Partial]) -> dict[str, Any]:
    first = partials[0].meta
    graded = ("name", "source", "commit", "problem")
    for partial in partials[1:]:
        if [[c[k] for k in graded] for c in partial.meta["compilers"]] != [
            [c[k] for k in graded] for c in first["compilers"]
        ]:
            raise UsageError(
                f"{partial.path} and {partials[0].path} graded different submissions (a commit "
                "moved, or a build failed in one): run those shards again"
            )
    compilers = [dict(c) for c in first["compilers"]]
    for i, compiler in enumerate(compilers):  # machines may isolate differently: say so
        modes = dict.fromkeys(str(p.meta["compilers"][i]["isolation"]) for p in partials)
        if len(modes) > 1:
            compiler["isolation"] = " / ".join(modes)
    tally = matrix.Tally([c["name"] for c in compilers], first["tests"])
    for partial in partials:
        for result in partial.results():  # one shard's results in memory at a time
            tally.add(result)
    done, pairs = tally.counts()
    if done != pairs:
        raise UsageError(f"the partial results hold {done} of the run's {pairs} results")
    meta = {k: first[k] for k in ("roster", "test_dirs", "fingerprint", "limits")}
    meta |= {k: first[k] for k in ("manifest", "graded_at") if k in first}
    meta["interrupted"] = None  # every shard finished
    return matrix.grades(compilers, first["invalid_tests"], tally, meta)
