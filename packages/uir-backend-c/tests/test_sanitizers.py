"""Every rendered suite program compiles warning-free and runs clean under UBSan and ASan.

Each program becomes its own translation unit; one harness `main` (harness.py) runs them all on
heap buffers of their exact sizes. Results must match the interpreter's bits (NaN payloads are
unspecified, so NaNs compare by NaN-ness) and the sanitizers must stay silent.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from uir.backend.c.harness import run_sanitized
from uir.backend.c.toolchain import compiler
from uir.core import parse, verify
from uir.core.calls import inline_calls
from uir.core.interpret import evaluate
from uir.testing.backends import scheduled

ROOT = Path(__file__).resolve().parents[3]
SUITES = [ROOT / "suites" / week for week in ("week1", "week2", "week3", "week4", "week5")]

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")


def runnable(path: Path) -> bool:
    return re.search(r"^# expect-exit: [1-9]", path.read_text(), re.M) is None


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.ravel(a), np.ravel(b)
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        return bool(np.array_equal(nan, np.isnan(b))) and a[~nan].tobytes() == b[~nan].tobytes()
    return a.tobytes() == b.tobytes()


# One build a week, not one for all: the sanitized build of every suite is one gcc process
# (about 17 minutes here), which kept one worker busy while the rest of `-m slow` had finished.
@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITES, ids=[d.name for d in SUITES])
def test_rendered_suite_programs_are_clean_under_sanitizers(tmp_path, suite):
    files = [p for p in sorted(suite.glob("*.uir")) if runnable(p)]
    sinks = []
    for path in files:
        program = parse(path.read_text(), str(path))
        verify(program)
        sinks.append(inline_calls(program.sink))
    results = run_sanitized([scheduled(s) for s in sinks], tmp_path, compiler())
    tolerant = {i for i, p in enumerate(files) if "# tolerance:" in p.read_text()}
    wrong = [
        files[i].name
        for i, sink in enumerate(sinks)
        if i not in tolerant
        and not all(same_bits(c, r) for c, r in zip(results[i], evaluate(sink), strict=True))
    ]
    assert wrong == []
