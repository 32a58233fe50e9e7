"""What `uir perf` writes (spec/grading.md section 15): the measurements as they are taken (a
shard's partial result, shards.py, merged later), and the scored report as JSON, CSV and
text."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from uir.cli.grading.limits import Limits
from uir.cli.grading.report import shown, write_json
from uir.core.errors import UsageError

from .perf import Measurement, Noise, Row, noise, within_noise
from .shards import read_partials

MEASUREMENTS_KIND = "uir-perf-measurements"
REPORT_FILES = ("perf.json", "perf.csv", "perf.txt")
RULE = (
    "per benchmark: the teams' runs interleaved in rounds (A B C A B C ...); the median of the "
    "runs of a compiler that passed every run; 100 for the fastest team, 0 for the slowest, "
    "linear between (equal times all 100); a failure 0. score: the mean over benchmarks. "
    "geomean_ratio: the geometric mean, over the benchmarks passed, of the median over the "
    "fastest team's. noise: the median spread (slowest run minus fastest) of the line's teams, "
    "as points of the line; scores closer than it are not told apart. The calibration row is "
    "placed on the teams' line and graded by nothing."
)


def measurements_meta(
    teams: Sequence[str], benchmarks: Sequence[str], runs: int, limits: Limits
) -> dict[str, object]:
    """What a measurement file says of its grading besides the measurements: the teams of the
    curve, the benchmarks, the runs and the limits."""
    return {
        "teams": list(teams),
        "benchmarks": list(benchmarks),
        "runs": runs,
        "limits": limits.as_dict(),
    }


def load_measurements(paths: Sequence[str]) -> tuple[list[str], list[str], int, list[Measurement]]:
    """The teams, benchmarks, runs and measurements of the shards' measurement files, which
    must be the finished shards 1..N of one grading (shards.read_partials refuses the rest)."""
    partials = read_partials(paths, MEASUREMENTS_KIND)
    try:
        meta = partials[0].meta  # one fingerprint: the same in every shard
        teams, benchmarks, runs = list(meta["teams"]), list(meta["benchmarks"]), int(meta["runs"])
        found = [Measurement.from_dict(m) for p in partials for m in p.results()]
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"malformed measurements ({type(e).__name__}: {e})") from None
    return teams, benchmarks, runs, found


def _round(value: float | None, digits: int = 6) -> float | None:
    return None if value is None else round(value, digits)


def _benchmark_entry(row: Row, bench: str, measured: Measurement | None) -> dict[str, object]:
    times = measured.times_s if measured else ()
    return {
        "verdict": measured.verdict if measured else "not-run",
        "detail": measured.detail if measured else "",
        "times_s": [round(t, 6) for t in times],
        "median_s": _round(row.medians[bench]),
        "min_s": _round(min(times)) if times else None,
        "max_s": _round(max(times)) if times else None,
        "spread": _round(measured.relative_spread if measured else None, 4),
        "ratio": _round(row.ratios[bench]),
        "score": round(row.scores[bench], 3),
    }


def _team_spread(row: Row, by_pair: dict[tuple[str, str], Measurement]) -> float | None:
    """A team's largest relative spread over the benchmarks it passed with several runs."""
    spreads = [
        m.relative_spread
        for b in row.scores
        if (m := by_pair.get((row.team, b))) is not None and len(m.times_s) > 1
    ]
    known = [s for s in spreads if s is not None]
    return max(known) if known else None


def _noise_json(found: Noise) -> dict[str, object]:
    return {
        "points": _round(found.points, 3),
        "benchmarks": {
            bench: {
                "spread_s": _round(b.spread_s),
                "line_s": _round(b.line_s),
                "points": _round(b.points, 3),
            }
            for bench, b in found.benchmarks.items()
        },
    }


def report_json(
    rows: Sequence[Row],
    measurements: Sequence[Measurement],
    benchmarks: Sequence[str],
    runs: int,
    curve: Sequence[str],
) -> dict[str, object]:
    by_pair = {(m.team, m.benchmark): m for m in measurements}
    found = noise(measurements, benchmarks, curve)
    close = within_noise(rows, curve, found.points) if found.points is not None else []
    return {
        "schema_version": 1,
        "kind": "uir-perf",
        "rule": RULE,
        "runs": runs,
        "benchmarks": list(benchmarks),
        "noise": _noise_json(found),
        "within_noise": [[a.team, b.team] for a, b in close],
        "teams": [
            {
                "name": row.team,
                "commit": row.commit,
                "calibration": row.team not in curve,
                "score": round(row.score, 3),
                "geomean_ratio": _round(row.geomean_ratio),
                "spread": _round(_team_spread(row, by_pair), 4),
                "passed": row.passed,
                "benchmarks": {
                    bench: _benchmark_entry(row, bench, by_pair.get((row.team, bench)))
                    for bench in benchmarks
                },
            }
            for row in rows
        ],
    }


def report_csv(rows: Sequence[Row], benchmarks: Sequence[str], curve: Sequence[str]) -> str:
    """One line per team: its grade, then its score and median on each benchmark; the
    calibration rows last, marked in the last column."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = [f"{b} {what}" for b in benchmarks for what in ("score", "median_s")]
    writer.writerow(["team", "commit", "score", "geomean_ratio", "passed", *columns, "calibration"])
    for row in sorted(rows, key=lambda r: r.team not in curve):
        cells = []
        for bench in benchmarks:
            median = row.medians[bench]
            cells += [f"{row.scores[bench]:.3f}", "" if median is None else f"{median:.6f}"]
        ratio = "" if row.geomean_ratio is None else f"{row.geomean_ratio:.4f}"
        calibration = "yes" if row.team not in curve else ""
        writer.writerow(
            [row.team, row.commit or "", f"{row.score:.3f}", ratio, row.passed, *cells, calibration]
        )
    return out.getvalue()


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _noise_lines(rows: Sequence[Row], found: Noise, curve: Sequence[str]) -> list[str]:
    """What the scatter of the runs makes of the differences in score."""
    if found.points is None:
        return ["noise: not known from one run each (-n 2 or more measures the runs' scatter)"]
    each = ", ".join(
        f"{shown(bench)} {b.points:.1f}" for bench, b in found.benchmarks.items() if b.points
    )
    lines = [
        f"noise: the runs' scatter is worth {found.points:.1f} points of score"
        + (f" ({each})" if each else "")
        + "; a smaller difference in score is not meaningful"
    ]
    for a, b in within_noise(rows, curve, found.points):
        lines.append(
            f"  {shown(a.team)} {a.score:.1f} and {shown(b.team)} {b.score:.1f}: "
            f"{a.score - b.score:.1f} apart, within the noise: their order is not established "
            "(raise -n, or measure on a quieter machine)"
        )
    return lines


def _calibration_line(row: Row, benchmarks: Sequence[str]) -> str:
    ratio = "-" if row.geomean_ratio is None else f"{row.geomean_ratio:.2f}x"
    return (
        f"  {shown(row.team)}: placed at {row.score:.1f} on the teams' line, geomean {ratio} "
        f"the fastest team's time, {row.passed}/{len(benchmarks)} passed"
    )


def report_text(
    rows: Sequence[Row],
    measurements: Sequence[Measurement],
    benchmarks: Sequence[str],
    curve: Sequence[str],
) -> str:
    """The teams' grades, best first; what the runs' scatter makes of their differences; the
    calibration rows apart (they are graded by nothing); every benchmark not passed and why."""
    by_pair = {(m.team, m.benchmark): m for m in measurements}
    header = f"{'team':<20} {'commit':<12} {'score':>7} {'geomean':>8} {'spread':>7} passed"
    lines = [header]
    teams = [r for r in rows if r.team in curve]
    for row in sorted(teams, key=lambda r: (-r.score, r.team)):
        ratio = "-" if row.geomean_ratio is None else f"{row.geomean_ratio:.2f}x"
        lines.append(
            f"{shown(row.team):<20} {(row.commit or '-')[:12]:<12} {row.score:7.1f} {ratio:>8} "
            f"{_percent(_team_spread(row, by_pair)):>7} {row.passed}/{len(benchmarks)}"
        )
    lines += _noise_lines(rows, noise(measurements, benchmarks, curve), curve)
    calibration = [r for r in rows if r.team not in curve]
    if calibration:
        lines.append("calibration (not a team, graded by nothing):")
        lines += [_calibration_line(row, benchmarks) for row in calibration]
    failed = [m for m in measurements if m.verdict != "pass"]
    if failed:
        lines.append("not passed:")
        for m in failed:
            lines.append(f"  {shown(m.team)} {shown(m.benchmark)}: {m.verdict}: {shown(m.detail)}")
    return "\n".join(lines) + "\n"


def write_reports(
    out: Path,
    rows: Sequence[Row],
    measurements: Sequence[Measurement],
    benchmarks: Sequence[str],
    runs: int,
    curve: Sequence[str],
) -> str:
    """perf.json, perf.csv and perf.txt in `out`; the text. `curve`: the roster's teams, the
    other rows being calibration."""
    text = report_text(rows, measurements, benchmarks, curve)
    try:
        json_file, csv_file, text_file = (out / name for name in REPORT_FILES)
        write_json(str(json_file), report_json(rows, measurements, benchmarks, runs, curve))
        csv_file.write_text(report_csv(rows, benchmarks, curve), encoding="utf-8")
        text_file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the reports in {out}: {exc.strerror or exc}") from exc
    return text
