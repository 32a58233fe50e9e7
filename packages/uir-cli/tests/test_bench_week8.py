"""bench/week8, the week-8 performance benchmarks (bench/week8/README.md): the files are what
scripts/week8_bench.py writes (expectations worked out in numpy), each a well-formed benchmark,
and `uir perf` runs them with the reference (`uir run --backend c`) passing every one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from uir.cli.grading.testfile import parse_test
from uir.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
BENCH = ROOT / "bench" / "week8"
NAMES = {"matmul_512", "sum_2e24", "softmax_4096x1024", "layernorm_4096x1024"}
NAMES |= {"attention_scores_512x2048x64"}


def test_the_files_are_the_generators_output(tmp_path):
    script = ROOT / "scripts" / "week8_bench.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True)
    written = {p.name: p.read_text() for p in tmp_path.glob("*.uir")}
    assert written == {p.name: p.read_text() for p in BENCH.glob("*.uir")}
    assert {name.removesuffix(".uir") for name in written} == NAMES


def test_each_is_a_benchmark_with_expected_lines():
    for path in BENCH.glob("*.uir"):
        test = parse_test(path.read_text(), str(path))
        assert test.expected_lines and test.expected_exit == 0, path.name
    # the FAST reductions over exact integers print exact values: only EXP2's programs are loose
    loose = {p.stem for p in BENCH.glob("*.uir") if "# tolerance:" in p.read_text()}
    assert loose == {"softmax_4096x1024", "attention_scores_512x2048x64"}


@pytest.mark.slow
def test_uir_perf_runs_the_suite_with_the_reference_passing_every_benchmark(tmp_path):
    (tmp_path / "roster.toml").write_text('[[team]]\nname = "wrong"\ncommand = "echo 41"\n')
    argv = ["perf", str(tmp_path / "roster.toml"), "--bench", str(BENCH), "-n", "1"]
    assert main([*argv, "--out", str(tmp_path / "out"), "--timeout", "120"]) == 0
    teams = {
        t["name"]: t for t in json.loads((tmp_path / "out" / "perf.json").read_text())["teams"]
    }
    reference = teams["reference (uir)"]
    assert reference["calibration"] and reference["passed"] == len(NAMES)
    assert {b: r["verdict"] for b, r in reference["benchmarks"].items()} == dict.fromkeys(
        NAMES, "pass"
    )
    assert teams["wrong"]["passed"] == 0
