"""`uir grade --executor submitit --shards N`: the N shards of a grading run as a job array of an
existing engine, then merged into one set of reports (spec/grading.md, "Beyond one machine").

submitit submits to Slurm where Slurm is installed, and otherwise runs the jobs as local
processes (its local executor, which the tests use). Each job is `uir grade ... --shard K/N
--out OUT/shards/K` run in the directory the command was given in, so relative paths mean the
same to every job (on a cluster: a shared filesystem). A job that fails or is cancelled leaves
its shard's log behind; the same command again resumes it.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from uir.cli.grading.actions import stop_on_signals
from uir.cli.main import main
from uir.core.errors import UsageError

from .shards import Shard

SHARDS = "shards"
LOGS = "submitit"
POLL_S = 1.0
# submitit's own default timeout (2 minutes for local jobs, 5 elsewhere) cuts the shard of a
# real course short; a shard may take this long unless `--executor-option timeout_min=` says.
TIMEOUT_MIN = 24 * 60


def run_shard(cwd: str, argv: Sequence[str]) -> int:
    """One job: `uir ARGV` in `cwd` (module-level, so that submitit can pickle it)."""
    os.chdir(cwd)
    # submitit tells a job that it ran out of time with SIGUSR2 (and then raises in it, which
    # `uir grade` would report as an internal error): stop as SIGTERM stops `uir grade`
    # instead, its results so far logged for the next run to resume from.
    signal.signal(signal.SIGUSR2, lambda *_: os.kill(os.getpid(), signal.SIGTERM))
    return main(list(argv))


def shard_directory(out: str, shard: Shard) -> str:
    return os.path.join(out, SHARDS, str(shard.index))


def shard_argv(args: argparse.Namespace, shard: Shard) -> list[str]:
    """The `uir grade` command line of one shard: this one's, the executor left out."""
    argv = ["grade", args.roster, "--tests", *args.tests]
    argv += ["--out", shard_directory(args.out, shard), "--shard", str(shard)]
    argv += ["--jobs", str(args.jobs), "--timeout", repr(args.timeout)]
    if args.cpu_limit is not None:
        argv += ["--cpu-limit", str(args.cpu_limit)]
    argv += ["--memory-limit", str(args.memory_limit), "--process-limit", str(args.process_limit)]
    argv += ["--output-limit", str(args.output_limit), "--checkout-limit", str(args.checkout_limit)]
    for item in args.env:
        argv.append(f"--env={item}")
    if args.manifest is not None:
        argv += ["--manifest", args.manifest]
    for report in args.validity:
        argv += ["--validity", report]
    argv += ["--no-isolation"] * args.no_isolation + ["--no-fork-server"] * args.no_fork_server
    return argv


def executor_parameters(options: Sequence[str]) -> dict[str, object]:
    """`--executor-option KEY=VALUE` as submitit's parameters, numbers as numbers, with
    `timeout_min` TIMEOUT_MIN unless given."""
    parameters: dict[str, object] = {"timeout_min": TIMEOUT_MIN}
    for option in options:
        key, equals, text = option.partition("=")
        if not equals or not key:
            raise UsageError(f"--executor-option takes KEY=VALUE, got {option!r}")
        value: object = text
        for kind in (int, float):
            try:
                value = kind(text)
                break
            except ValueError:
                continue
        parameters[key] = value
    return parameters


def _explained(status: object) -> str:
    """A shard's failure in words: `uir grade`'s exit status, or submitit's error."""
    if isinstance(status, int):
        meaning = {
            1: "a usage error",
            4: "an internal error",
            128 + signal.SIGTERM: "stopped, by submitit past timeout_min or by a cancel",
        }
        return f"uir grade exited {status} ({meaning.get(status, 'see its log')})"
    return str(status)


@dataclass(frozen=True)
class ShardRuns:
    """The shards of a run on an executor, once they are done or the wait was interrupted."""

    directories: list[str]  # each shard's --out, in shard order, for grade.merged_document
    interrupted: int | None  # the signal that stopped the wait (the shards cancelled), or None


def run_sharded(args: argparse.Namespace) -> ShardRuns:
    """Run the shards on submitit and wait for them; a usage error names each that failed."""
    if args.shards is None:
        raise UsageError(f"--executor {args.executor} needs --shards N")
    try:
        import submitit
    except ImportError:
        raise UsageError(
            "--executor submitit needs the submitit package (install uir-grading[cluster])"
        ) from None
    executor = submitit.AutoExecutor(folder=os.path.join(args.out, LOGS))
    parameters = executor_parameters(args.executor_option)
    try:
        executor.update_parameters(name="uir-grade", cpus_per_task=args.jobs, **parameters)
    except (TypeError, ValueError, NameError, AssertionError) as e:  # submitit asserts types
        raise UsageError(f"--executor-option: {e}") from None
    parts = [Shard(k, args.shards) for k in range(1, args.shards + 1)]
    cwd = os.getcwd()
    jobs = executor.map_array(run_shard, [cwd] * len(parts), [shard_argv(args, s) for s in parts])
    print(
        f"uir grade: {len(jobs)} shards submitted to {executor.cluster} "
        f"(logs in {os.path.join(args.out, LOGS)})",
        file=sys.stderr,
    )
    with stop_on_signals() as (stop, received):
        while not stop.is_set() and not all(job.done() for job in jobs):
            time.sleep(POLL_S)
        if received:
            for job in jobs:
                job.cancel(check=False)
            print("uir grade: interrupted: shards cancelled; run again to resume", file=sys.stderr)
            return ShardRuns([], received[0])
    failed = []
    for shard, job in zip(parts, jobs, strict=True):
        try:
            status = job.result()
        except Exception as e:  # the job's own failure, as submitit reports it
            last = str(e).strip().splitlines()[-1:] or [""]
            status = f"{type(e).__name__}: {last[0]}"
        if status != 0:
            failed.append(f"shard {shard}: {_explained(status)}")
    if failed:
        timeout = parameters["timeout_min"]
        raise UsageError(
            "; ".join(failed) + f" (logs in {os.path.join(args.out, LOGS)}; a shard that runs "
            f"past timeout_min={timeout} minutes is stopped by submitit: give more with "
            "--executor-option timeout_min=MINUTES); the same command again resumes the shards"
        )
    return ShardRuns([shard_directory(args.out, s) for s in parts], None)
