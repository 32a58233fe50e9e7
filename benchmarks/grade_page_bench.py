"""What the reports of `uir grade` cost at a course's full size: building the grades document,
writing grades.json, matrix.csv and index.html, and Chromium rendering the page.

Run: uv run python benchmarks/grade_page_bench.py [COMPILERS] [TESTS] [FAIL_PERCENT]
(default 300 compilers, 3000 tests in 100 directories, 10% of the pairs failing, at random but
the same every run). Prints seconds and file sizes; the browser figure needs chromium installed.
Nothing here asserts a time.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from uir.grading.matrix import grades, write_reports
from uir.testing import browser


def main(compilers: int, tests: int, fail_percent: float) -> None:
    rng = random.Random(13)
    names = ["reference", *(f"team{i:03}" for i in range(compilers - 1))]
    paths = [f"tests/team{i % 100:03}/t{i:04}.uir" for i in range(tests)]
    rows = [{"name": n, "source": n, "commit": None, "problem": None} for n in names]
    results = {
        (name, path): {
            "compiler": name,
            "test": path,
            "verdict": "fail" if rng.random() * 100 < fail_percent else "pass",
            "detail": "line 1: expected '5', got '6'",
        }
        for name in names
        for path in paths
    }
    began = time.perf_counter()
    document = grades(rows, paths, [], results, {"roster": "roster.toml"})
    built = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as out:
        began = time.perf_counter()
        write_reports(out, document)
        written = time.perf_counter() - began
        sizes = {p.name: p.stat().st_size for p in Path(out).iterdir()}
        print(f"{compilers} compilers x {tests} tests, {fail_percent:g}% failing")
        print(f"  grades document: {built:.2f} s; the three reports written: {written:.2f} s")
        for name, size in sorted(sizes.items()):
            print(f"  {name}: {size / 1e6:.1f} MB")
        chromium = browser.find_chromium()
        if chromium is None:
            print("  no chromium: page rendering not measured")
            return
        began = time.perf_counter()
        dom = browser.dump_dom(chromium, Path(out) / "index.html")
        print(
            f"  chromium loads and renders index.html: {time.perf_counter() - began:.2f} s "
            f"({dom.count('<tr')} table rows in the DOM)"
        )


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main(
        int(arguments[0]) if arguments else 300,
        int(arguments[1]) if len(arguments) > 1 else 3000,
        float(arguments[2]) if len(arguments) > 2 else 10.0,
    )
