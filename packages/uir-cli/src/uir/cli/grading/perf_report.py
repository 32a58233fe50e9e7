"""What `uir perf` writes (spec/grading.md section 15): the measurements as they are taken (a
shard's partial result, shards.py, merged later), and the scored report as JSON, CSV and
text."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path

from uir.core.errors import UsageError

from .limits import Limits
from .perf import Measurement, Row
from .report import shown, write_json
from .shards import read_partials

MEASUREMENTS_KIND = "uir-perf-measurements"
REPORT_FILES = ("perf.json", "perf.csv", "perf.txt")
RULE = (
    "per benchmark: the median of the runs of a compiler that passed every run; 100 for the "
    "fastest team, 0 for the slowest, linear between (equal times all 100); a failure 0. "
    "score: the mean over benchmarks. geomean_ratio: the geometric mean, over the benchmarks "
    "passed, of the median over the fastest team's."
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
    return {
        "verdict": measured.verdict if measured else "not-run",
        "detail": measured.detail if measured else "",
        "times_s": [round(t, 6) for t in measured.times_s] if measured else [],
        "median_s": _round(row.medians[bench]),
        "ratio": _round(row.ratios[bench]),
        "score": round(row.scores[bench], 3),
    }


def report_json(
    rows: Sequence[Row], measurements: Sequence[Measurement], benchmarks: Sequence[str], runs: int
) -> dict[str, object]:
    by_pair = {(m.team, m.benchmark): m for m in measurements}
    return {
        "schema_version": 1,
        "kind": "uir-perf",
        "rule": RULE,
        "runs": runs,
        "benchmarks": list(benchmarks),
        "teams": [
            {
                "name": row.team,
                "commit": row.commit,
                "score": round(row.score, 3),
                "geomean_ratio": _round(row.geomean_ratio),
                "passed": row.passed,
                "benchmarks": {
                    bench: _benchmark_entry(row, bench, by_pair.get((row.team, bench)))
                    for bench in benchmarks
                },
            }
            for row in rows
        ],
    }


def report_csv(rows: Sequence[Row], benchmarks: Sequence[str]) -> str:
    """One line per team: its grade, then its score and median on each benchmark."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = [f"{b} {what}" for b in benchmarks for what in ("score", "median_s")]
    writer.writerow(["team", "commit", "score", "geomean_ratio", "passed", *columns])
    for row in rows:
        cells = []
        for bench in benchmarks:
            median = row.medians[bench]
            cells += [f"{row.scores[bench]:.3f}", "" if median is None else f"{median:.6f}"]
        ratio = "" if row.geomean_ratio is None else f"{row.geomean_ratio:.4f}"
        writer.writerow([row.team, row.commit or "", f"{row.score:.3f}", ratio, row.passed, *cells])
    return out.getvalue()


def report_text(
    rows: Sequence[Row], measurements: Sequence[Measurement], benchmarks: Sequence[str]
) -> str:
    """The grades, best first, then every benchmark a team did not pass and why."""
    lines = [f"{'team':<20} {'commit':<12} {'score':>7} {'geomean':>8} passed"]
    for row in sorted(rows, key=lambda r: (-r.score, r.team)):
        ratio = "-" if row.geomean_ratio is None else f"{row.geomean_ratio:.2f}x"
        lines.append(
            f"{shown(row.team):<20} {(row.commit or '-')[:12]:<12} {row.score:7.1f} {ratio:>8} "
            f"{row.passed}/{len(benchmarks)}"
        )
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
) -> str:
    """perf.json, perf.csv and perf.txt in `out`; the text."""
    text = report_text(rows, measurements, benchmarks)
    try:
        json_file, csv_file, text_file = (out / name for name in REPORT_FILES)
        write_json(str(json_file), report_json(rows, measurements, benchmarks, runs))
        csv_file.write_text(report_csv(rows, benchmarks), encoding="utf-8")
        text_file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the reports in {out}: {exc.strerror or exc}") from exc
    return text
