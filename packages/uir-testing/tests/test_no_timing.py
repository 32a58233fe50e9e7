"""No test may depend on the machine's speed (issue 8): no hypothesis deadline, in the profile or
in any test's settings, and no assertion on elapsed time."""

import re
from pathlib import Path

from hypothesis import settings

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve()
TESTS = sorted(p for p in ROOT.glob("packages/*/tests/**/*.py") if p.resolve() != HERE)
# a hypothesis `deadline=` keyword (formatted code puts no spaces around a keyword's `=`, and
# does around an assignment, so a local variable named deadline is not one)
DEADLINE = re.compile(r"\bdeadline=(?!None\b)")
TIMED_ASSERT = re.compile(r"assert .*(monotonic|perf_counter|time\.time|duration)")


def test_the_loaded_hypothesis_profile_has_no_deadline():
    assert settings().deadline is None


def test_no_test_sets_a_deadline_or_asserts_on_elapsed_time():
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in TESTS
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if DEADLINE.search(line) or TIMED_ASSERT.search(line)
    ]
    assert found == []
