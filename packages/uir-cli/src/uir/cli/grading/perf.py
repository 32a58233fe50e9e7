"""Performance grading (`uir perf`, spec/grading.md section 15): each compiler runs each benchmark
several times; a correct one is timed by its median, and scored on a line from the slowest
correct submission (0) to the fastest (100).

A benchmark is a test file (spec/grading.md section 2): its program carries its inputs (CONST
values, BUFFER contents), `# expect:` lines its outputs and `# tolerance: N ulp` how close floats
must be. Measuring (`measure`) and scoring (`score`) are apart, so that shards measured anywhere
merge into one scoring, and the scoring can be checked with given times.
"""

from __future__ import annotations

import math
import statistics
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from .harness import Compiler, run_parsed_test
from .limits import Limits
from .testfile import TestFile

# The verdict of every benchmark of a submission that could not be prepared (clone, build).
NOT_BUILT = "not-built"


@dataclass(frozen=True)
class Measurement:
    """One compiler on one benchmark: its runs' wall-clock times, or why it failed."""

    team: str
    benchmark: str
    commit: str | None
    verdict: str  # "pass", or the first verdict that was not, or NOT_BUILT
    detail: str
    times_s: tuple[float, ...]

    @property
    def median_s(self) -> float | None:
        """The median time of a correct compiler; None for one that failed."""
        return statistics.median(self.times_s) if self.verdict == "pass" else None

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "times_s": list(self.times_s)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Measurement:
        return cls(**{**data, "times_s": tuple(data["times_s"])})  # type: ignore[arg-type]


def measure(
    team: str,
    commit: str | None,
    compiler: Compiler,
    benchmark: TestFile,
    limits: Limits,
    runs: int,
    stop: threading.Event | None = None,
) -> Measurement | None:
    """Run `benchmark` `runs` times, one after another so that no run slows another; None when
    `stop` was set. The first run that does not pass ends it: a wrong answer scores 0 however
    fast it comes."""
    times = []
    for _ in range(runs):
        result = run_parsed_test(benchmark, compiler, limits, stop)
        if result is None:
            return None
        times.append(result.duration_s)
        if not result.passed:
            verdict, detail = result.verdict.value, result.detail
            return Measurement(team, benchmark.name, commit, verdict, detail, tuple(times))
    return Measurement(team, benchmark.name, commit, "pass", "", tuple(times))


def line_score(time_s: float | None, fastest: float, slowest: float) -> float:
    """100 at `fastest` or below, 0 at `slowest` or above (and for a failure), linear between;
    when the two are equal, 100 for that time or less."""
    if time_s is None or time_s > slowest:
        return 0.0
    if time_s <= fastest:
        return 100.0
    return 100.0 * (slowest - time_s) / (slowest - fastest)


@dataclass(frozen=True)
class Row:
    """One compiler's grade: the mean of its benchmark scores, and the geometric mean of its
    times over the fastest's, over the benchmarks it passed (None when it passed none)."""

    team: str
    commit: str | None
    score: float
    geomean_ratio: float | None
    passed: int
    scores: dict[str, float]  # by benchmark
    ratios: dict[str, float | None]
    medians: dict[str, float | None]


def score(
    measurements: Sequence[Measurement], benchmarks: Sequence[str], curve: Sequence[str]
) -> list[Row]:
    """Each team's Row, in the order of `curve` then the others (the calibration rows).

    On each benchmark, the line runs from the slowest to the fastest median of the teams of
    `curve` that passed it (any correct team, when none of `curve` did); a team off the curve
    (the reference) is placed on it, 0 to 100. A benchmark a team has no measurement for
    scores 0.
    """
    medians = {(m.team, m.benchmark): m.median_s for m in measurements}
    teams = list(dict.fromkeys([*curve, *(m.team for m in measurements)]))
    commits = {m.team: m.commit for m in measurements}
    rows = []
    ends: dict[str, tuple[float, float] | None] = {}
    for bench in benchmarks:
        correct = [medians.get((t, bench)) for t in curve]
        times = [t for t in correct if t is not None] or [
            t for (_, b), t in medians.items() if b == bench and t is not None
        ]
        ends[bench] = (min(times), max(times)) if times else None
    for team in teams:
        scores, ratios, mine = {}, {}, {}
        for bench in benchmarks:
            time_s = mine[bench] = medians.get((team, bench))
            line = ends[bench]
            scores[bench] = line_score(time_s, *line) if line else 0.0
            ratios[bench] = (
                time_s / line[0] if line and time_s is not None and line[0] > 0 else None
            )
        logs = [math.log(r) for r in ratios.values() if r is not None]
        rows.append(
            Row(
                team=team,
                commit=commits.get(team),
                score=sum(scores.values()) / len(benchmarks) if benchmarks else 0.0,
                geomean_ratio=math.exp(sum(logs) / len(logs)) if logs else None,
                passed=sum(t is not None for t in mine.values()),
                scores=scores,
                ratios=ratios,
                medians=mine,
            )
        )
    return rows
