"""Every rendered suite program compiles warning-free and runs clean under UBSan and ASan.

Each program becomes its own translation unit; one harness `main` (harness.py) runs them all on
heap buffers of their exact sizes. Results must match the interpreter's bits (NaN payloads are
unspecified, so NaNs compare by NaN-ness) and the sanitizers must stay silent.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from uir.backend.c.abi import layout
from uir.backend.c.harness import harness, read_results
from uir.backend.c.render import render_c
from uir.backend.c.toolchain import compiler
from uir.core import parse, verify
from uir.core.calls import inline_calls
from uir.core.interpret import evaluate

ROOT = Path(__file__).resolve().parents[3]
SUITES = [ROOT / "suites" / "week1", ROOT / "suites" / "week2"]
STRICT = [
    "-std=c99",
    "-O1",
    "-g",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-ffp-contract=off",
    "-fsanitize=undefined,address",
    "-fno-sanitize-recover=all",
]

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")


def runnable(path: Path) -> bool:
    return re.search(r"^# expect-exit: [1-9]", path.read_text(), re.M) is None


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.ravel(a), np.ravel(b)
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b))) and a[~nan].tobytes() == b[~nan].tobytes()
    return a.tobytes() == b.tobytes()


def test_rendered_suite_programs_are_clean_under_sanitizers(tmp_path):
    files = [p for d in SUITES for p in sorted(d.glob("*.uir")) if runnable(p)]
    sinks = []
    for path in files:
        program = parse(path.read_text(), str(path))
        verify(program)
        sinks.append(inline_calls(program.sink))
    units = []
    for i, sink in enumerate(sinks):
        unit = tmp_path / f"p{i}.c"
        unit.write_text(render_c(sink, f"uir_program_{i}"))
        units.append(str(unit))
    main = tmp_path / "main.c"
    main.write_text(harness([(f"uir_program_{i}", layout(s)) for i, s in enumerate(sinks)]))
    exe = tmp_path / "suite"
    built = subprocess.run(
        [*compiler(), *STRICT, *units, str(main), "-o", str(exe), "-lm"],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0 and ran.stderr == "", ran.stderr[-4000:]
    results = read_results(ran.stdout, sinks)
    tolerant = {i for i, p in enumerate(files) if "# tolerance:" in p.read_text()}
    wrong = [
        files[i].name
        for i, sink in enumerate(sinks)
        if i not in tolerant
        and not all(same_bits(c, r) for c, r in zip(results[i], evaluate(sink), strict=True))
    ]
    assert wrong == []
