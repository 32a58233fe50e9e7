"""The command lines of the grading commands students run: `uir test` runs test files through a
compiler, `uir mutants` runs a suite against planted bugs, `uir validate-tests` judges students'
tests (spec/grading.md). The work is in actions.py. The option helpers here (`add_run_options`,
`add_limit_options`, `add_sandbox_options`, `integer_in`) serve uir-grading's command lines too."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

from .limits import MIB, Limits
from .status import NOT_PASSED

# The weeks of the course whose tests `validate-tests` takes (the syllabus has ten), and the
# most runs of one test it (and `uir perf`) takes.
WEEKS = 10
MAX_RUNS = 1000


def default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# The handlers import actions.py when they run, not at the top: every `uir run` builds this
# parser, and start-up time is paid once per test run, tens of thousands in a mutants run.


def test_command(args: argparse.Namespace) -> int:
    from . import actions

    return actions.test(args)


def mutants_command(args: argparse.Namespace) -> int:
    from . import actions

    return actions.plant_and_run(args)


def validate_command(args: argparse.Namespace) -> int:
    from . import actions

    return actions.validate_tests(args)


# The largest limits taken: beyond them a number is a typo, and would overflow what the kernel
# takes (setrlimit, timers) or what the grader keeps in memory.
MAX_SECONDS = 86400.0
MAX_MEMORY_MB = 1 << 22  # 4 TiB
MAX_OUTPUT_BYTES = 1 << 30
MAX_JOBS = 1024
MAX_PROCESSES = 1 << 22


def integer_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse `type`: a whole number from `low` to `high`."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}, got {value}")
        return value

    return parse


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, got {text!r}") from None
    if not 0 < value <= MAX_SECONDS:  # false for nan too
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds above 0 and at most {MAX_SECONDS:g}, got {text}"
        )
    return value


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by `test` and `mutants`: parallelism, limits, backend."""
    parser.add_argument(
        "--backend", metavar="NAME", help="run this installation's `uir run --backend NAME FILE`"
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=integer_in(1, MAX_JOBS),
        default=default_jobs(),
        metavar="N",
        help="tests run at once (default: the number of CPUs, %(default)s here)",
    )
    add_limit_options(parser)


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """The sandbox's per-run limits (spec/grading.md section 3.1)."""
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=10.0,
        metavar="S",
        help="wall-clock seconds per test before the compiler is killed (default: %(default)s)",
    )
    parser.add_argument(
        "--cpu-limit",
        type=integer_in(0, int(MAX_SECONDS)),
        metavar="S",
        help="CPU seconds per test, 0 for none (default: the timeout, rounded up)",
    )
    parser.add_argument(
        "--memory-limit",
        type=integer_in(0, MAX_MEMORY_MB),
        default=Limits.memory_mb,
        metavar="MB",
        help="memory per test in MiB, 0 for none: each process's address space, and all its "
        "processes together where the grader can make cgroups (default: %(default)s)",
    )
    parser.add_argument(
        "--process-limit",
        type=integer_in(0, MAX_PROCESSES),
        default=Limits.processes,
        metavar="N",
        help="processes and threads per test of an isolated compiler, 0 for none; needs cgroups "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--output-limit",
        type=integer_in(1, MAX_OUTPUT_BYTES),
        default=MIB,
        metavar="BYTES",
        help="standard output (and error) per test before the compiler is killed "
        "(default: %(default)s)",
    )


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    """Options of the commands that run student compilers as well as this installation."""
    parser.add_argument(
        "--no-fork-server",
        action="store_true",
        help="start every run of this installation as a new `python -m uir.cli.main` instead "
        "of forking a preloaded Python (slower; the same verdicts)",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="also give an isolated compiler this environment variable (repeatable); it gets "
        "only PATH, HOME, LANG, LC_*, TZ, TERM and CC otherwise",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="run student compilers without the bubblewrap sandbox, as this user (for "
        "debugging a compiler that fails only when isolated; the report records it)",
    )


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    test = commands.add_parser(
        "test",
        parents=[common],
        help="run .uir test files through a compiler and judge its output and exit code",
        description="Run each test file through `CMD run FILE` in a fresh scratch directory, "
        "under time, memory and output limits, and compare standard output and the exit code "
        "with the test's directives. Exit status: 0 when every test passed, "
        f"{NOT_PASSED} when some did not, 1 on a usage error. See spec/grading.md.",
    )
    test.add_argument("paths", nargs="+", metavar="PATH", help="test files or directories")
    test.add_argument(
        "--compiler",
        metavar="CMD",
        help="the compiler under test, run as 'CMD run FILE' (default: this installation)",
    )
    test.add_argument(
        "--render",
        action="store_true",
        help="grade rendering instead: run 'CMD render FILE', then compile the C it prints "
        "against the program's ABI, run it, and run it again under the sanitizers "
        "(spec/uir-week2-c.md section 4)",
    )
    add_run_options(test)
    add_sandbox_options(test)
    # The fast path is the default now; the old switch stays accepted so scripts keep working.
    test.add_argument("--fork-server", action="store_true", help=argparse.SUPPRESS)
    test.add_argument("--json", metavar="FILE", help="also write the JSON report to FILE")
    test.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="show each test not passed in full: expected and actual output and exit code, "
        "standard error, and its guide (the default is one line a failure)",
    )
    test.add_argument(
        "-x", "--exitfirst", action="store_true", help="stop at the first test not passed"
    )
    test.add_argument(
        "--maxfail",
        type=integer_in(1, 1 << 30),
        metavar="N",
        help="stop once N tests did not pass (running ones are killed, no new one starts)",
    )
    test.add_argument(
        "-k",
        dest="keyword",
        metavar="EXPR",
        help="run only the tests whose path matches EXPR: words (substrings, any case) with "
        "and, or, not and parentheses, as pytest's -k ('idiv and not negative')",
    )
    test.add_argument(
        "--lf",
        "--last-failed",
        dest="last_failed",
        action="store_true",
        help="run only the tests that did not pass last time (all of them when none did); "
        "remembered in .uir-cache/ of this directory",
    )
    test.set_defaults(handler=test_command)

    planted = commands.add_parser(
        "mutants",
        parents=[common],
        help="run a suite against each planted bug of its mutants.toml; every bug must be caught",
        description="Copy the sources (packages/*/src) of the repository holding SUITE, plant "
        "one bug in each copy, and run the whole suite on every copy, reporting for each bug "
        "the tests that catch it. Exit status: 0 when the suite passes unchanged and catches "
        f"every bug, {NOT_PASSED} otherwise (a bug that no longer applies included), 1 on a "
        "usage error. See spec/grading.md.",
    )
    planted.add_argument("suite", metavar="SUITE", help="a suite directory")
    planted.add_argument(
        "--mutants", metavar="FILE", help="the planted bugs (default: SUITE/mutants.toml)"
    )
    planted.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="run only these bugs (repeatable)",
    )
    planted.add_argument(
        "--root",
        metavar="DIR",
        help="the repository whose packages/*/src are copied (default: the nearest above "
        "SUITE that has them, else the one this uir is installed from)",
    )
    add_run_options(planted)
    planted.add_argument(
        "--no-fork-server",
        action="store_true",
        help="start every run as a new `python -m uir.cli.main` instead of forking a "
        "preloaded one (slower; the same verdicts)",
    )
    planted.add_argument("--json", metavar="FILE", help="also write the JSON report to FILE")
    planted.add_argument(
        "--record",
        action="store_true",
        help="write what each test catches into SUITE/caught.toml, for the guide that "
        "`uir test` shows with each failing test (the run's bugs' entries are replaced)",
    )
    planted.set_defaults(handler=mutants_command)
    register_validate(commands, common)


def register_validate(
    commands: argparse._SubParsersAction, common: argparse.ArgumentParser
) -> None:
    validate = commands.add_parser(
        "validate-tests",
        parents=[common],
        help="check students' tests: well formed, agreed by the reference, deterministic, "
        "within the week's ops, no duplicates",
        description="Check every file under DIR as a submitted test of week N: its directives "
        "parse, the reference gives exactly what it expects on every one of --runs runs and "
        "within the limits, its program runs only ops of weeks 1 to N, and it is not a "
        "duplicate of a suite test (weeks 1 to N) or of a submission before it by name. "
        f"Exit status: 0 when all are valid, {NOT_PASSED} when some are rejected, 1 on a "
        "usage error. See spec/grading.md section 13.",
    )
    validate.add_argument("directory", metavar="DIR", help="the submitted tests")
    validate.add_argument(
        "--week", type=integer_in(1, WEEKS), required=True, metavar="N", help="the course week"
    )
    validate.add_argument(
        "--suite",
        action="append",
        default=None,
        metavar="DIR",
        help="a suite to check duplicates against (repeatable; default: suites/week1 to weekN "
        "of the repository holding DIR or this installation)",
    )
    validate.add_argument(
        "--runs",
        type=integer_in(1, MAX_RUNS),
        default=3,
        metavar="N",
        help="times the reference runs each test, which must agree (default: %(default)s)",
    )
    add_run_options(validate)
    validate.add_argument("--json", metavar="FILE", help="also write the JSON report to FILE")
    validate.set_defaults(handler=validate_command)
