"""The command lines of a course's grading beyond one suite (spec/grading.md sections 13-15):
`uir validate-tests` judges students' tests, `uir perf` times the teams of a roster on
benchmarks, `uir perf-merge` scores the measurements of `uir perf` shards. The work is in
course_actions.py."""

from __future__ import annotations

import argparse

from .commands import (
    NOT_PASSED,
    _integer,
    add_checkout_option,
    add_limit_options,
    add_run_options,
    shard_argument,
)

# The weeks of the course whose tests `validate-tests` takes (the syllabus has ten).
WEEKS = 10
MAX_RUNS = 1000


def validate_command(args: argparse.Namespace) -> int:
    from . import course_actions

    return course_actions.validate_tests(args)


def perf_command(args: argparse.Namespace) -> int:
    from . import course_actions

    return course_actions.perf(args)


def perf_merge_command(args: argparse.Namespace) -> int:
    from . import course_actions

    return course_actions.perf_merge(args)


def collect_command(args: argparse.Namespace) -> int:
    from . import course_actions

    return course_actions.collect(args)


def gradebook_command(args: argparse.Namespace) -> int:
    from . import course_actions

    return course_actions.gradebook_files(args)


def _team_list(text: str) -> list[str]:
    return [name for name in text.split(",") if name]


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    register_collect(commands, common)
    book = commands.add_parser(
        "gradebook",
        parents=[common],
        help="combine every week of a course into each student's final grade, and an LMS CSV",
        description="Read COURSE (weights, weeks, bonus rule, letter cutoffs), each week's "
        "validate-tests reports, last finished grading run and perf.json, and the components "
        "entered by hand, and write OUT/gradebook.json and OUT/gradebook.csv (one row per "
        "student, one column per assignment), printing each student's total and letter. Exit "
        "status: 0, or 1 on a usage error. See spec/grading.md section 21.",
    )
    book.add_argument("course", metavar="COURSE", help="the course file (TOML)")
    book.add_argument("--out", required=True, metavar="DIR", help="where the gradebook goes")
    book.set_defaults(handler=gradebook_command)
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
        "--week", type=_integer(1, WEEKS), required=True, metavar="N", help="the course week"
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
        type=_integer(1, MAX_RUNS),
        default=3,
        metavar="N",
        help="times the reference runs each test, which must agree (default: %(default)s)",
    )
    add_run_options(validate)
    validate.add_argument("--json", metavar="FILE", help="also write the JSON report to FILE")
    validate.set_defaults(handler=validate_command)

    perf = commands.add_parser(
        "perf",
        parents=[common],
        help="time every team of a roster on benchmarks and score them from slowest to fastest",
        description="Prepare each team of ROSTER (a local command, or a repository cloned, "
        "checked out and built), run each benchmark of --bench -n times in the sandbox, the "
        "teams' runs interleaved in rounds (A B C A B C ...), and score each team per "
        "benchmark linearly from the slowest correct median (0) to the fastest (100); a wrong "
        "answer scores 0. The reports say how many points the runs' scatter is worth, and "
        "which neighbours in the ranking are closer than that. Writes perf.json, perf.csv and "
        "perf.txt in "
        "--out (with --shard, only that shard's measurements, for `uir perf-merge`). Rerun with "
        "the same --out to resume an interrupted run: measured pairs are kept. Exit "
        "status: 0 when the run completed, 1 on a usage error. See spec/grading.md section 15.",
    )
    perf.add_argument("roster", metavar="ROSTER", help="the roster (TOML)")
    perf.add_argument("--bench", required=True, metavar="DIR", help="the benchmark directory")
    perf.add_argument(
        "--manifest",
        metavar="FILE",
        help="measure the commits `uir collect` froze in this manifest (WEEK/manifest.json), "
        "not what the roster's refs name now",
    )
    perf.add_argument("--out", required=True, metavar="DIR", help="where the reports go")
    perf.add_argument(
        "-n",
        "--runs",
        type=_integer(1, MAX_RUNS),
        default=5,
        metavar="N",
        help="runs of each compiler on each benchmark; the median counts (default: %(default)s)",
    )
    perf.add_argument(
        "--shard",
        type=shard_argument,
        default="1/1",  # argparse passes a string default through shard_argument
        metavar="K/N",
        help="measure only the K-th of N shares of the benchmarks, every team on each",
    )
    perf.add_argument(
        "--work",
        metavar="DIR",
        help="where teams' repositories are cloned and built (default: OUT/checkouts)",
    )
    perf.add_argument(
        "--backend",
        default="c",
        metavar="NAME",
        help="the backend of the reference's calibration row (default: %(default)s)",
    )
    perf.add_argument(
        "--no-reference", action="store_true", help="leave out the reference's calibration row"
    )
    perf.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="also give isolated compilers this environment variable (repeatable)",
    )
    perf.add_argument(
        "--no-isolation",
        action="store_true",
        help="build and run the teams' compilers without the bubblewrap sandbox (debugging)",
    )
    add_limit_options(perf)
    add_checkout_option(perf)
    perf.set_defaults(handler=perf_command)

    merge = commands.add_parser(
        "perf-merge",
        parents=[common],
        help="score the measurements of `uir perf --shard` runs as one report",
        description="Read the measurement files that `uir perf --shard K/N` wrote (all from one "
        "grading) and write perf.json, perf.csv and perf.txt in --out, as one unsharded run "
        "would. Exit status: 0, or 1 on a usage error. See spec/grading.md section 15.",
    )
    merge.add_argument("files", nargs="+", metavar="FILE", help="measurement files")
    merge.add_argument("--out", required=True, metavar="DIR", help="where the reports go")
    merge.set_defaults(handler=perf_merge_command)


def register_collect(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    collect = commands.add_parser(
        "collect",
        parents=[common],
        help="freeze the teams' submissions of a week: the commit each ref names now",
        description="For each team of the course's roster not yet collected for week N, record "
        "the commit its ref names now, and when, in WEEK/manifest.json, and keep the commit in "
        "WEEK/collected/TEAM; `uir grade --manifest WEEK/manifest.json` grades those commits "
        "however late it runs. With --late TEAM, a second collection of a team that spends a "
        "late day (each member has COURSE's late_days, at most one per week). Refused before "
        "the deadline (before its 24 hours for --late) unless --early. Exit status: 0, or 1 "
        "on a usage error. See spec/grading.md section 19.",
    )
    collect.add_argument("course", metavar="COURSE", help="the course file (TOML)")
    collect.add_argument(
        "--week", type=_integer(1, 100), required=True, metavar="N", help="the course week"
    )
    collect.add_argument(
        "--late",
        type=_team_list,
        action="extend",
        default=[],
        metavar="TEAM[,TEAM]",
        help="collect these teams again, each spending a late day (repeatable)",
    )
    collect.add_argument(
        "--early",
        action="store_true",
        help="collect before the deadline (or a late day before its 24 hours); recorded",
    )
    add_checkout_option(collect)
    collect.set_defaults(handler=collect_command)
