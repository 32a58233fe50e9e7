"""Performance grading (`uir perf`, spec/grading.md section 15): each compiler runs each benchmark
several times, the teams' runs interleaved in rounds (A B C A B C ...); a correct one is timed by
its median, and scored on a line from the slowest correct submission (0) to the fastest (100).
How far its runs scatter says how many points of score are noise (`noise`).

A benchmark is a test file (spec/grading.md section 2): its program carries its inputs (CONST
values, BUFFER contents), `# expect:` lines its outputs and `# tolerance: N ulp` how close floats
must be. Measuring (`measure`) and scoring (`score`) are apart, so that shards measured anywhere
merge into one scoring, and the scoring can be checked with given times.
"""

from __future__ import annotations

import itertools
import math
import statistics
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

from uir.cli.grading.harness import Compiler, TestResult, run_parsed_test
from uir.cli.grading.limits import Limits
from uir.cli.grading.testfile import TestFile

# The verdict of every benchmark of a submission that could not be prepared (clone, build).
NOT_BUILT = "not-built"

# One run of a benchmark by a compiler, judged: harness.run_parsed_test (a test gives another).
Runner = Callable[[TestFile, Compiler, Limits, "threading.Event | None"], "TestResult | None"]


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

    @property
    def spread_s(self) -> float | None:
        """How far a correct compiler's runs scatter: the slowest minus the fastest."""
        return max(self.times_s) - min(self.times_s) if self.verdict == "pass" else None

    @property
    def relative_spread(self) -> float | None:
        """The spread over the median (0.1: the runs scatter over a tenth of the median)."""
        median, spread = self.median_s, self.spread_s
        return spread / median if median and spread is not None else None

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "times_s": list(self.times_s)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Measurement:
        return cls(**{**data, "times_s": tuple(data["times_s"])})  # type: ignore[arg-type]


@dataclass(frozen=True)
class Entrant:
    """A compiler to time: whose it is, and at which commit (None: not from git)."""

    team: str
    commit: str | None
    compiler: Compiler


def measure_rounds(
    entrants: Sequence[Entrant],
    benchmark: TestFile,
    limits: Limits,
    runs: int,
    stop: threading.Event | None = None,
    run: Runner = run_parsed_test,
) -> list[Measurement] | None:
    """Each entrant's Measurement of `benchmark`, in the entrants' order, over `runs` rounds: in
    each round every entrant still in runs once, in order (A B C A B C ...), one run at a time
    so that no run slows another. On a shared machine whose load comes and goes, a slow spell
    then costs every team alike, where timing each team in one block charged it to whoever ran
    then. An entrant's first run that does not pass takes it out of the rounds: a wrong answer
    scores 0 however fast it comes. None when `stop` was set."""
    times: list[list[float]] = [[] for _ in entrants]
    failed: dict[int, TestResult] = {}
    for _ in range(runs):
        for i, entrant in enumerate(entrants):
            if i in failed:
                continue
            result = run(benchmark, entrant.compiler, limits, stop)
            if result is None:
                return None
            times[i].append(result.duration_s)
            if not result.passed:
                failed[i] = result
    found = []
    for i, entrant in enumerate(entrants):
        verdict, detail = ("pass", "")
        if i in failed:
            verdict, detail = failed[i].verdict.value, failed[i].detail
        found.append(
            Measurement(
                entrant.team, benchmark.name, entrant.commit, verdict, detail, tuple(times[i])
            )
        )
    return found


def measure(
    team: str,
    commit: str | None,
    compiler: Compiler,
    benchmark: TestFile,
    limits: Limits,
    runs: int,
    stop: threading.Event | None = None,
) -> Measurement | None:
    """One compiler's Measurement of `benchmark` over `runs` runs (measure_rounds of one)."""
    found = measure_rounds([Entrant(team, commit, compiler)], benchmark, limits, runs, stop)
    return None if found is None else found[0]


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


def _line(
    measurements: Sequence[Measurement], bench: str, curve: Sequence[str]
) -> list[Measurement]:
    """The measurements that draw `bench`'s line: those of the teams of `curve` that passed it,
    or of whoever passed it when none of them did."""
    passed = [m for m in measurements if m.benchmark == bench and m.median_s is not None]
    return [m for m in passed if m.team in curve] or passed


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
        times = [m.median_s for m in _line(measurements, bench, curve)]
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


@dataclass(frozen=True)
class BenchmarkNoise:
    """The scatter of one benchmark's runs, in seconds and in points of its score (None: not
    known, every run of the line's teams being their only one)."""

    spread_s: float | None  # the median spread of the runs of the teams that draw the line
    line_s: float | None  # the line's length: its slowest median minus its fastest
    points: float | None


@dataclass(frozen=True)
class Noise:
    """How many points of score the runs' own scatter is worth (`noise`); None when unknown."""

    points: float | None  # over the score: the mean of the benchmarks' points
    benchmarks: dict[str, BenchmarkNoise]


def noise(
    measurements: Sequence[Measurement], benchmarks: Sequence[str], curve: Sequence[str]
) -> Noise:
    """The runs' scatter as points of score.

    On a benchmark, the teams that draw the line (as `score` draws it) scatter by their spread,
    the slowest of their runs minus the fastest; the median of those spreads is how far apart
    two medians may be by chance alone. Over the line's length that is a share of its 100
    points (at most 100; 0 when the line has no length, as then no score there depends on
    time). A score is the mean over the benchmarks, so its noise is the mean of theirs: two
    scores closer than that are not told apart by these runs (raise -n, or use a quieter
    machine). With one run each the scatter is not known (None)."""
    found = {}
    for bench in benchmarks:
        line = _line(measurements, bench, curve)
        if not line:  # no team passed: every score is 0, none depends on time
            found[bench] = BenchmarkNoise(None, None, 0.0)
            continue
        medians = [m.median_s for m in line if m.median_s is not None]
        length = max(medians) - min(medians)
        spreads = [m.spread_s for m in line if len(m.times_s) > 1 and m.spread_s is not None]
        if not spreads:
            found[bench] = BenchmarkNoise(None, length, None)
            continue
        spread = statistics.median(spreads)
        points = min(100.0, 100.0 * spread / length) if length > 0 else 0.0
        found[bench] = BenchmarkNoise(spread, length, points)
    each = [b.points for b in found.values()]
    total = None
    if benchmarks and all(p is not None for p in each):
        total = sum(p for p in each if p is not None) / len(benchmarks)
    return Noise(total, found)


def within_noise(rows: Sequence[Row], curve: Sequence[str], points: float) -> list[tuple[Row, Row]]:
    """The neighbours in the ranking of the teams of `curve` that passed a benchmark (best
    first) whose scores are closer than `points`, the noise: pairs whose order these runs do
    not establish."""
    ranked = [r for r in rows if r.team in curve and r.passed]
    ranked.sort(key=lambda r: (-r.score, r.team))
    return [(a, b) for a, b in itertools.pairwise(ranked) if a.score - b.score < points]
