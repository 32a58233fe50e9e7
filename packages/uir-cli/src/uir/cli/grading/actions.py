"""What `uir test`, `uir mutants` and `uir validate-tests` do once their arguments are parsed
(spec/grading.md)."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from uir.core.errors import UsageError

from ..output import write_output
from . import guide, mutants, report, selection, validate
from .forkserver import ForkServer
from .harness import (
    Compiler,
    RenderCheck,
    TestResult,
    reference_compiler,
    reference_run_args,
    run_tests,
    student_compiler,
)
from .isolation import (
    NO_ISOLATION,
    Isolation,
    Mode,
    find_identity,
    isolate,
    no_bwrap_reason,
)
from .limits import Limits
from .mutants import repository_root
from .sandbox import cannot_start
from .status import NOT_PASSED
from .testfile import collect_tests


def limits_from(args: argparse.Namespace) -> Limits:
    cpu = args.cpu_limit if args.cpu_limit is not None else math.ceil(args.timeout)
    return Limits(
        wall_s=args.timeout,
        cpu_s=cpu,
        memory_mb=args.memory_limit,
        output_bytes=args.output_limit,
        processes=args.process_limit,
    )


def tests_named(paths: list[str]) -> list[str]:
    """The test files under `paths` (testfile.collect_tests), or a usage error naming what is
    missing."""
    try:
        tests = collect_tests(paths)
    except FileNotFoundError as exc:
        raise UsageError(f"no such file or directory: {exc.args[0]}") from exc
    if not tests:
        raise UsageError(f"no .uir tests in {' '.join(paths)}")
    return tests


def _render_check(args: argparse.Namespace) -> RenderCheck | None:
    """The render grader's check with --render; it derives each program's `main` with the C
    backend, imported only then (a course without --render needs no C backend)."""
    if not args.render:
        return None
    try:
        from .render_check import RenderChecker
    except ImportError:
        raise UsageError(
            "--render needs the C backend (the package uir-backend-c: uir-cli[render])"
        ) from None
    return RenderChecker()


def compiler_from(args: argparse.Namespace) -> Compiler:
    command = "render" if args.render else "run"
    check = _render_check(args)
    if args.compiler is None:
        compiler = reference_compiler(args.backend, args.plugin_modules, command)
        return dataclasses.replace(compiler, render_check=check)
    if args.backend is not None or args.plugin_modules:
        raise UsageError(
            "--backend and -p apply to this installation; "
            "a --compiler is always run as 'CMD run FILE'"
        )
    if args.fork_server:
        raise UsageError("--fork-server runs this installation; it takes no --compiler")
    try:
        compiler = student_compiler(args.compiler)
    except ValueError as exc:
        raise UsageError(f"--compiler: {exc}") from exc
    if args.render:
        compiler = dataclasses.replace(compiler, run_args=("render",), render_check=check)
    return compiler


def isolation_for(args: argparse.Namespace, compiler: Compiler, tests: list[str]) -> Isolation:
    """The sandbox of a student compiler: as strong as this machine allows, said loudly when
    it is weaker than namespaces and cgroups."""
    if args.no_isolation:
        isolation = NO_ISOLATION
    else:
        suites = [*args.paths, *(os.path.dirname(t) or "." for t in tests)]
        grader = [*suites, *report_paths(args), "."]
        isolation = isolate(grader, compiler.argv)
    warn_if_weaker(isolation.mode, "test", args.no_isolation)
    return isolation


def warn_if_weaker(mode: str, command: str, no_isolation: bool = False) -> None:
    """Say on standard error when untrusted code runs with less than namespaces and cgroups,
    and why: `--no-isolation`, or what keeps bwrap from working here."""
    if mode == Mode.FULL:
        return
    warning = WEAKER[mode]
    if mode == Mode.NONE:
        reason = "--no-isolation" if no_isolation else no_bwrap_reason(find_identity())
        warning += f" (why: {reason or 'no working bwrap'})"
    print(f"uir {command}: WARNING: {warning}", file=sys.stderr)


WEAKER = {
    Mode.NAMESPACES: "this machine does not let the grader make cgroups: the compiler's total "
    "memory and number of processes are not limited (only each process's address space)",
    Mode.NONE: "the compiler is NOT isolated: it runs as this user and can see and change this "
    "user's files, including the tests",
}


def report_paths(args: argparse.Namespace) -> list[str]:
    return [args.json] if args.json else []


@contextlib.contextmanager
def stop_on_signals() -> Iterator[tuple[threading.Event, list[int]]]:
    """An event set by SIGINT or SIGTERM while the block runs, and the signals received, so
    that the grader ends the run cleanly (reports of what finished, scratch directories
    removed) instead of dying."""
    stop = threading.Event()
    received: list[int] = []

    def handler(number: int, _: object) -> None:
        received.append(number)
        stop.set()

    if threading.current_thread() is not threading.main_thread():
        yield stop, received  # only the main thread may handle signals (a test calling main)
        return
    previous = {n: signal.signal(n, handler) for n in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop, received
    finally:
        for number, action in previous.items():
            signal.signal(number, action)


def forked_reference(stack: contextlib.ExitStack, reference: Compiler) -> Compiler:
    """The `reference` installation, run as `uir RUN_ARGS FILE` in its environment from a fork
    server that lives as long as `stack`: our own code, trusted, so limited but not isolated
    (spec/grading.md section 3). The server preloads along that environment's PYTHONPATH."""
    pythonpath = (os.environ if reference.env is None else reference.env).get("PYTHONPATH", "")
    server = stack.enter_context(ForkServer(pythonpath=pythonpath))
    return Compiler(("uir",), reference.run_args, reference.env, server)


def _selected(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """The tests to run after -k and --lf; and what to say about the choice."""
    tests = tests_named(args.paths)
    notes = []
    if args.keyword is not None:
        tests = selection.keyword_selected(tests, args.keyword)
        if not tests:
            raise UsageError(f"no test matches -k {args.keyword!r}")
    if args.last_failed:
        failed = selection.last_failed()
        chosen = [t for t in tests if os.path.abspath(t) in failed]
        if chosen:
            notes.append(f"--lf: rerunning the {len(chosen)} tests that did not pass last time")
            tests = chosen
        else:
            notes.append("--lf: no test here failed last time: running them all")
    return tests, notes


def rerun_command(args: argparse.Namespace, path: str) -> str:
    """The command that runs one test again as this run ran it."""
    argv = ["uir", "test", path]
    if args.compiler is not None:
        argv += ["--compiler", args.compiler]
    if args.backend is not None:
        argv += ["--backend", args.backend]
    for module in args.plugin_modules:
        argv += ["-p", module]
    argv += ["--render"] * args.render + ["--no-isolation"] * args.no_isolation
    return shlex.join(argv)


def test(args: argparse.Namespace) -> int:
    tests, notes = _selected(args)
    compiler = compiler_from(args)
    limits = limits_from(args)
    maxfail = 1 if args.exitfirst else args.maxfail
    isolation = None
    with contextlib.ExitStack() as stack:
        if args.compiler is None and not args.no_fork_server and not args.render:
            # The reference is our own code, trusted: it runs under the limits but outside the
            # namespaces, forked from a preloaded Python (spec/grading.md section 3).
            compiler = forked_reference(stack, compiler)
        elif args.compiler is not None:
            isolation = isolation_for(args, compiler, tests)
            compiler = compiler.confined(isolation, args.env)
            # One usage error, not a cannot-start verdict for every test.
            env = os.environ if compiler.env is None else compiler.env
            problem = cannot_start(compiler.argv, env, isolation)
            if problem is not None:
                raise UsageError(f"--compiler cannot start: {problem}")
        progress = report.Progress(sys.stderr, len(tests))
        began = time.monotonic()
        stop, received = stack.enter_context(stop_on_signals())
        stack.callback(progress.finish)
        not_passed = [0]

        def on_result(result: TestResult) -> None:
            progress.update(result)
            not_passed[0] += not result.passed
            if maxfail is not None and not_passed[0] >= maxfail:
                stop.set()  # -x / --maxfail: no new test starts, running ones are killed

        results = run_tests(tests, compiler, limits, args.jobs, on_result, stop)
    duration = time.monotonic() - began
    interrupted = signal.Signals(received[0]).name if received else None
    mode = isolation.mode if isolation is not None else report.TRUSTED
    failures = [r for r in results if not r.passed]
    guides = guide.guides_for(tests)
    failed = [r.path for r in failures]
    weights = report.evidence_weights(failures)
    mistakes = guide.by_evidence(guide.likely_mistakes([r.path for r in results], failed), weights)
    if args.verbose:
        text = [
            "\n".join([report.failure_details(r), *guide.details(guides.get(r.path))])
            for r in failures
        ]
        text.append(report.summary_table(results, compiler.command, duration))
    else:
        text = report.short_failures(failures)
    text += guide.grouped_summary(failed, guides)
    text += guide.mistakes_summary(mistakes, guide.SHOWN_MISTAKES if args.verbose else 5)
    text += _closing(args, results, failures, duration, compiler.command, bool(mistakes))
    # Why tests did not run goes just above the summary, which stays last.
    if interrupted:
        text[-2:-2] = [f"interrupted by {interrupted}: {len(tests) - len(results)} tests not run"]
    elif len(results) < len(tests):
        text[-2:-2] = [
            f"stopped after {not_passed[0]} not passed (--maxfail {maxfail}): "
            f"{len(tests) - len(results)} tests not run"
        ]
    if args.json:  # first: a standard output that fails must not cost the report
        document = report.json_report(
            results, compiler.command, limits, args.jobs, duration, mode, len(tests), interrupted
        )
        guide.annotate(document, guides, mistakes)
        write_report(args.json, document)
    problem = selection.remember([r.path for r in results], failed)
    for note in [*notes, *([problem] if problem else [])]:
        print(f"uir test: {note}", file=sys.stderr)
    write_output("\n".join(text) + "\n")
    if received:
        return 128 + received[0]
    return NOT_PASSED if failures else 0


def _closing(
    args: argparse.Namespace,
    results: Sequence[TestResult],
    failures: Sequence[TestResult],
    duration: float,
    command: str,
    ranked: bool,
) -> list[str]:
    """The end of the report: what ended alike, the progress letters, how to rerun, and the
    summary, last, where a terminal leaves it in view."""
    lines = []
    groups = report.alike(failures)
    widest = max(groups, key=len) if groups else []
    if len(widest) > 1 and 2 * len(widest) >= len(results):
        verdict, detail, last = report.signature(widest[0])
        stderr = f" ({report.shown(last)})" if last else ""
        lines.append(
            f"{len(widest)} of {len(results)} tests ended alike, {verdict}: "
            f"{report.shown(detail)}{stderr}: fix that first"
            + ("; the mistakes above are ranked by the other failures" if ranked else "")
        )
    if failures:
        lines.append(report.legend(results))
        lines.append(f"rerun one: {rerun_command(args, failures[0].path)}")
        more = "" if args.verbose else "; -v for what each expected and got, with its guide"
        lines.append(f"rerun the {len(failures)} not passed: the same command with --lf{more}")
    lines.append(report.one_line_summary(results, command, duration))
    passed = len(results) - len(failures)
    verdict = "all passed" if not failures else f"{len(failures)} not passed"
    lines.append(f"{passed} of {len(results)} passed: {verdict}")
    return lines


def write_report(path: str, document: dict[str, object]) -> None:
    """A JSON report written whole to `path`, or a usage error saying why it cannot be."""
    try:
        report.write_json(path, document)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _only(mutant_list: list[mutants.Mutant], names: list[str]) -> list[mutants.Mutant]:
    wanted = [n for group in names for n in group.split(",") if n]
    known = {m.name for m in mutant_list}
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise UsageError(f"--only: no planted bug named {', '.join(unknown)}")
    return [m for m in mutant_list if m.name in wanted] if wanted else mutant_list


def plant_and_run(args: argparse.Namespace) -> int:
    suite = Path(args.suite)
    if not suite.is_dir():
        raise UsageError(f"{args.suite} is not a suite directory")
    mutants_file = Path(args.mutants) if args.mutants else suite / "mutants.toml"
    try:
        planted = _only(mutants.load_mutants(mutants_file), args.only)
    except mutants.MutantsFileError as exc:
        raise UsageError(str(exc)) from exc
    root = Path(args.root).resolve() if args.root else mutants.repository_root(suite)
    if root is None or not mutants.is_repository(root):
        raise UsageError(
            "cannot find the sources to plant bugs in (a directory holding packages/*/src/uir "
            "above the suite or this installation); name it with --root"
        )
    tests = tests_named([str(suite)])
    run_args = reference_run_args(args.backend, args.plugin_modules)
    command = shlex.join(["uir", *run_args])
    limits = limits_from(args)
    print(
        f"planting {len(planted)} bugs from {mutants_file} in copies of {root}/packages/*/src; "
        f"suite {suite}: {len(tests)} tests, each run as `{command} FILE`",
        file=sys.stderr,
    )
    progress = report.Progress(
        sys.stderr, len(tests) * len(mutants.option_sets(planted)), "baseline "
    )

    def on_mutant(result: mutants.MutantResult) -> None:
        progress.finish()  # the baseline's, the first time
        print(report.mutant_line(result), file=sys.stderr, flush=True)
        if args.record:  # bug by bug, so that a long run cut short keeps what it found
            _record(suite, result)

    began = time.monotonic()
    run = mutants.run_mutants(
        root,
        tests,
        planted,
        run_args,
        limits,
        args.jobs,
        not args.no_fork_server,
        progress.update,
        on_mutant,
        args.plugin_modules,
    )
    progress.finish()
    duration = time.monotonic() - began
    out = [report.failure_details(r) for r in [*run.bad_tests, *run.baseline_failures]]
    if run.bad_tests or run.baseline_failures:
        out.append(
            f"the suite does not pass on the unchanged sources ({len(run.baseline_failures)} "
            f"failed, {len(run.bad_tests)} malformed): no bug was run"
        )
    else:
        out.append(report.mutants_table(run, duration))
    if args.json:  # first: a standard output that fails must not cost the report
        write_report(
            args.json,
            report.mutants_json(run, str(suite), str(mutants_file), str(root), command, duration),
        )
    write_output("\n".join(out) + "\n")
    return 0 if run.ok else NOT_PASSED


def _record(suite: Path, result: mutants.MutantResult) -> None:
    """`--record`: SUITE/caught.toml updated with the tests that caught one bug (the baseline
    passed, or no bug would have run)."""
    if result.status is mutants.MutantStatus.DOES_NOT_APPLY:
        return
    caught = {Path(test.path).stem: [result.mutant.name] for test in result.catching}
    record = guide.merged_catches(guide.load_caught(suite), caught, [result.mutant.name])
    path = suite / guide.CAUGHT_FILE
    try:
        path.write_text(guide.caught_toml(record), encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from exc
    print(f"recorded what each test catches in {path}", file=sys.stderr)


def validate_tests(args: argparse.Namespace) -> int:
    directory = args.directory
    if not os.path.isdir(directory):
        raise UsageError(f"{directory} is not a directory")
    if args.suite is not None:
        suites = args.suite
    else:
        root = repository_root(Path(directory))
        suites = validate.suite_directories(root, args.week) if root is not None else []
        if not suites:
            print(
                "uir validate-tests: WARNING: no suites found: duplicates are checked among "
                "the submissions only (name suites with --suite)",
                file=sys.stderr,
            )
    known = validate.suite_keys(tests_named(suites)) if suites else {}
    files = validate.submitted_files(directory)
    if not files:
        raise UsageError(f"no files in {directory}")
    limits = limits_from(args)
    with contextlib.ExitStack() as stack:
        reference = forked_reference(stack, reference_compiler(args.backend, args.plugin_modules))
        stop, received = stack.enter_context(stop_on_signals())
        checked = validate.validate(
            files, args.week, reference, limits, args.jobs, args.runs, known, stop
        )
    interrupted = signal.Signals(received[0]).name if received else None
    if args.json:
        document = validate.json_report(
            checked, args.week, reference.command, args.runs, limits, suites, interrupted
        )
        write_report(args.json, document)
    write_output(validate.text_report(checked, args.week))
    if received:
        return 128 + received[0]
    return 0 if all(item.valid for item in checked) else NOT_PASSED
