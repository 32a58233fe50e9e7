"""The staff's commands, added to `uir` through the hook uir_commands (uir.core.plugins):
`uir grade` and `uir grade-merge` cross-grade a roster (spec/grading.md sections 16-18), `uir
collect` freezes a week's submissions (section 19), `uir perf` and `uir perf-merge` time the
teams (section 15), `uir gradebook` combines the weeks (section 21).

Every `uir` process builds these command lines, so this module imports only uir-cli's option
helpers; each handler imports the work (actions.py, grade.py) when its command runs.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from uir.cli.grading.commands import (
    MAX_MEMORY_MB,
    MAX_RUNS,
    add_limit_options,
    add_run_options,
    add_sandbox_options,
    integer_in,
)
from uir.cli.grading.limits import CHECKOUT_MB
from uir.cli.grading.status import NOT_PASSED
from uir.core.plugins import Commands, hookimpl

if TYPE_CHECKING:
    from .shards import Shard


def grade_command(args: argparse.Namespace) -> int:
    from . import grade

    return grade.grade(args)


def grade_merge_command(args: argparse.Namespace) -> int:
    from . import grade

    return grade.merge(args)


def perf_command(args: argparse.Namespace) -> int:
    from . import actions

    return actions.perf(args)


def perf_merge_command(args: argparse.Namespace) -> int:
    from . import actions

    return actions.perf_merge(args)


def collect_command(args: argparse.Namespace) -> int:
    from . import actions

    return actions.collect(args)


def gradebook_command(args: argparse.Namespace) -> int:
    from . import actions

    return actions.gradebook_files(args)


def _team_list(text: str) -> list[str]:
    return [name for name in text.split(",") if name]


def register_course(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
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
        type=integer_in(1, MAX_RUNS),
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
        "--week", type=integer_in(1, 100), required=True, metavar="N", help="the course week"
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


def shard_argument(text: str) -> Shard:
    """`--shard K/N` of `uir grade` and `uir perf`, parsed by the one Shard.parse."""
    from .shards import Shard, ShardError  # imported when a --shard is given, not at start-up

    try:
        return Shard.parse(text)
    except ShardError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_checkout_option(parser: argparse.ArgumentParser) -> None:
    """The size limit of a team's checkout (spec/grading.md section 14)."""
    parser.add_argument(
        "--checkout-limit",
        type=integer_in(0, MAX_MEMORY_MB),
        default=CHECKOUT_MB,
        metavar="MB",
        help="the largest checkout of a team's repository in MiB, .git included, 0 for none; a "
        "larger one is the team's verdict (default: %(default)s)",
    )


def register_grade(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    grade = commands.add_parser(
        "grade",
        parents=[common],
        help="cross-grade a roster's compilers and the reference on every valid test",
        description="Run every compiler of ROSTER, and this installation (the reference), on "
        "every valid test under the --tests directories, in the sandbox of `uir test`, and write "
        "OUT/grades.json, OUT/matrix.csv and OUT/index.html: each compiler's percentage passed "
        "and each test author's bonus. Results are logged as they complete (OUT/results.jsonl): "
        "the same command again resumes an interrupted run. Exit status: 0, or "
        f"{NOT_PASSED} when the reference fails a valid test; 1 on a usage error; 130/143 when "
        "interrupted. See spec/grading.md.",
    )
    grade.add_argument("roster", metavar="ROSTER", help="the roster (TOML, [[team]] tables)")
    grade.add_argument(
        "--tests",
        nargs="+",
        required=True,
        metavar="DIR",
        help="test directories or files; a test's author is its directory's name",
    )
    grade.add_argument(
        "--out",
        metavar="DIR",
        help="where the log and reports go (default with --manifest: the week's next run, "
        "WEEK/runs/K, or its last one while unfinished)",
    )
    grade.add_argument(
        "--manifest",
        metavar="FILE",
        help="grade the commits `uir collect` froze in this manifest (WEEK/manifest.json), "
        "not what the roster's refs name now",
    )
    grade.add_argument(
        "--reason",
        metavar="TEXT",
        help="why the week is graded again (a regrade), recorded in WEEK/history.jsonl",
    )
    grade.add_argument(
        "--validity",
        action="append",
        default=[],
        metavar="FILE",
        help="a JSON report of `uir validate-tests` (repeatable): a team's test counts only "
        "if judged valid there, unchanged since; wrong tests and duplicates are listed, not run",
    )
    grade.add_argument(
        "--shard",
        type=shard_argument,
        metavar="K/N",
        help="run only the K-th of N slices of the (compiler, test) pairs and write the partial "
        "result OUT/partial.json, for `uir grade-merge`",
    )
    grade.add_argument(
        "--executor",
        choices=("local", "submitit"),
        default="local",
        help="where the runs happen: here (default), or as a job array of --shards N jobs "
        "through submitit (Slurm where installed, else local processes), merged at the end",
    )
    grade.add_argument(
        "--shards", type=integer_in(1, 100_000), metavar="N", help="the shards of --executor"
    )
    grade.add_argument(
        "--executor-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a submitit parameter (repeatable): timeout_min=120, slurm_partition=NAME, ...",
    )
    add_run_options(grade)
    add_sandbox_options(grade)
    add_checkout_option(grade)
    grade.set_defaults(handler=grade_command)

    merge = commands.add_parser(
        "grade-merge",
        parents=[common],
        help="merge the partial results of `uir grade --shard K/N` into the reports",
        description="Check that the partial results PART... are the shards 1..N of one grading "
        "run (same roster, tests and limits; each shard once, each complete) and write "
        "OUT/grades.json, OUT/matrix.csv and OUT/index.html as `uir grade` would.",
    )
    merge.add_argument("out", metavar="OUT", help="where the reports go")
    merge.add_argument(
        "parts", nargs="+", metavar="PART", help="partial.json files, or the --out of each shard"
    )
    merge.set_defaults(handler=grade_merge_command)


class StaffCommands:
    """The commands of this package, as the hook uir_commands gives them to `uir`."""

    def register(
        self, commands: argparse._SubParsersAction, common: argparse.ArgumentParser
    ) -> None:
        register_grade(commands, common)
        register_course(commands, common)


@hookimpl
def uir_commands() -> list[Commands]:
    return [StaffCommands()]
