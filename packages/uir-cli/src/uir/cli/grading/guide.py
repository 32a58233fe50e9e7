"""The guide to a failing test (spec/grading.md section 12): what the test is about, in its own
words, which rule or topic it belongs to, and which planted bugs it is known to catch.

A test's leading comment block holds, besides the grader's directives (testfile.py), two of the
guide's own, which the grader otherwise treats as free text:

    # pins: RULE [RULE...]   the rules of spec/pins.md this test pins (on the side its exit says)
    # topic: TEXT            the topic it is grouped under in the summary

The other comments of the block are the test's explanation. A test without a topic is grouped
under the first rule it pins, else under its file name's first word (`idiv_by_zero` -> `idiv`).
What each test catches is recorded per suite, in SUITE/caught.toml, by `uir mutants --record`;
each bug's description comes from the suite's mutants files (SUITE/mutants*.toml).
"""

from __future__ import annotations

import dataclasses
import json
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .report import shown
from .testfile import DIRECTIVE_WORD, TestFileError, comment_body

PINS = re.compile(r"pins:[ \t]*(.*)")
TOPIC = re.compile(r"topic:[ \t]*(.*)")
RULE = re.compile(r"[a-z0-9][a-z0-9.-]*")
CAUGHT_FILE = "caught.toml"


@dataclass(frozen=True)
class Catch:
    """A planted bug a test is known to catch."""

    name: str
    description: str  # empty when no mutants file of the suite describes it


@dataclass(frozen=True)
class Suite:
    """What a suite directory records about its tests: test -> bugs caught, bug -> description."""

    caught: Mapping[str, Sequence[str]]
    descriptions: Mapping[str, str]

    @staticmethod
    def load(directory: Path) -> Suite:
        return Suite(load_caught(directory), load_descriptions(directory))

    def catches(self, test: str) -> tuple[Catch, ...]:
        return tuple(Catch(b, self.descriptions.get(b, "")) for b in self.caught.get(test, ()))


@dataclass(frozen=True)
class Guide:
    """What the guide says about one test."""

    explanation: tuple[str, ...]  # the leading comments that are not directives
    pins: tuple[str, ...]
    topic: str
    catches: tuple[Catch, ...] = ()  # the planted bugs this test is known to catch


def read_guide(text: str, path: str) -> Guide:
    """The guide's part of a test file's leading comment block (catches come from caught.toml).

    Raises TestFileError for a malformed `pins:` or `topic:` line: like the grader's own
    directives, a typo must not silently drop a test from the table of pinned rules.
    """
    explanation: list[str] = []
    pins: list[str] = []
    topic = ""
    for number, line in enumerate(text.split("\n"), start=1):
        body = comment_body(line)
        if body is None:
            break  # the first statement ends the leading block
        if DIRECTIVE_WORD.match(body):
            continue
        if match := PINS.fullmatch(body):
            rules = match.group(1).split()
            if not rules or not all(RULE.fullmatch(r) for r in rules):
                raise TestFileError(f"malformed '# {body}' (expected '# pins: RULE...')", number)
            pins += rules
        elif match := TOPIC.fullmatch(body):
            if topic or not match.group(1).strip():
                raise TestFileError(f"a second or empty '# {body}'", number)
            topic = match.group(1).strip()
        elif body:
            explanation.append(body)
    name = Path(path).stem
    return Guide(tuple(explanation), tuple(pins), topic or (pins[0] if pins else _prefix(name)))


def _prefix(name: str) -> str:
    return name.split("_", 1)[0]


def guide_for(path: str, suite: Suite | None = None) -> Guide | None:
    """The guide to the test at `path`, with what it catches; None when the file cannot be read
    or its guide lines are malformed (the test itself still runs and is judged as usual)."""
    try:
        # Bytes that are not UTF-8 (a test may hold some) become U+FFFD: the guide is shown and
        # written to the JSON report, which must stay valid UTF-8.
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
        guide = read_guide(text, path)
    except (OSError, TestFileError):
        return None
    if suite is None:
        suite = Suite.load(Path(path).parent)
    return dataclasses.replace(guide, catches=suite.catches(Path(path).stem))


def guides_for(paths: Iterable[str]) -> dict[str, Guide]:
    """The guide to every test of `paths` that has one, reading each suite's caught.toml once."""
    suites: dict[Path, Suite] = {}
    guides: dict[str, Guide] = {}
    for path in paths:
        directory = Path(path).parent
        if directory not in suites:
            suites[directory] = Suite.load(directory)
        guide = guide_for(path, suites[directory])
        if guide is not None:
            guides[path] = guide
    return guides


def load_caught(suite: Path) -> dict[str, tuple[str, ...]]:
    """SUITE/caught.toml: test name -> the planted bugs it catches; empty when there is none or
    it cannot be read (the guide is help, never a reason for the grader to fail)."""
    try:
        with open(suite / CAUGHT_FILE, "rb") as stream:
            data = tomllib.load(stream)
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    tests = data.get("tests", {})
    if not isinstance(tests, dict):
        return {}
    return {
        name: tuple(str(b) for b in bugs) for name, bugs in tests.items() if isinstance(bugs, list)
    }


def load_descriptions(suite: Path) -> dict[str, str]:
    """Bug name -> description, from every SUITE/mutants*.toml that can be read."""
    descriptions: dict[str, str] = {}
    for path in sorted(suite.glob("mutants*.toml")):
        try:
            with open(path, "rb") as stream:
                bugs = tomllib.load(stream).get("mutant", [])
        except (OSError, tomllib.TOMLDecodeError):
            continue
        for bug in bugs if isinstance(bugs, list) else []:
            if isinstance(bug, dict) and isinstance(bug.get("name"), str):
                descriptions[bug["name"]] = str(bug.get("description", ""))
    return descriptions


def caught_toml(catching: Mapping[str, Sequence[str]]) -> str:
    """The text of SUITE/caught.toml: for each test, in name order, the bugs it catches."""
    lines = [
        "# Written by `uir mutants SUITE --record`: for each test, the planted bugs of the suite's",
        "# mutants files that it catches (spec/grading.md section 12). Not edited by hand: record",
        "# again after changing the suite or its planted bugs.",
        "",
        "[tests]",
    ]
    for test in sorted(catching):
        bugs = ", ".join(json.dumps(b) for b in catching[test])
        lines.append(f"{_toml_key(test)} = [{bugs}]")
    return "\n".join(lines) + "\n"


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)


def topic_counts(topics: Iterable[str]) -> list[tuple[str, int]]:
    """How many tests each topic has, most first (ties by name), for the grouped summary."""
    counts: dict[str, int] = {}
    for topic in topics:
        counts[topic] = counts.get(topic, 0) + 1
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def merged_catches(
    recorded: Mapping[str, Sequence[str]],
    run: Mapping[str, Sequence[str]],
    run_bugs: Iterable[str],
) -> dict[str, tuple[str, ...]]:
    """A suite's record after a run of `run_bugs`: their old entries replaced by `run` (test ->
    bugs it caught), the entries of every other bug (say, of another mutants file) kept."""
    replaced = set(run_bugs)
    merged: dict[str, list[str]] = {}
    for test, bugs in recorded.items():
        kept = [b for b in bugs if b not in replaced]
        if kept:
            merged[test] = kept
    for test, bugs in run.items():
        merged.setdefault(test, []).extend(b for b in bugs if b not in merged.get(test, []))
    return {test: tuple(bugs) for test, bugs in merged.items()}


# ---- what `uir test` shows ---------------------------------------------------------------------

# How many tests of a topic the grouped summary names before it says "and N more".
NAMED_PER_TOPIC = 3
# How many caught bugs a failed test's details list (the JSON report has them all).
SHOWN_CATCHES = 5


def details(guide: Guide | None) -> list[str]:
    """The lines added under a failed test's details: its explanation and what it catches."""
    if guide is None:
        return []
    lines = [f"  topic: {shown(guide.topic)}"]
    if guide.explanation:
        lines.append("  about this test:")
        lines += [f"    {shown(line)}" for line in guide.explanation]
    if guide.catches:
        lines.append("  known to catch these mistakes (planted bugs of `uir mutants`):")
        lines += [
            f"    {shown(c.name)}: {shown(c.description)}" if c.description else f"    {c.name}"
            for c in guide.catches[:SHOWN_CATCHES]
        ]
        if len(guide.catches) > SHOWN_CATCHES:
            lines.append(f"    ... and {len(guide.catches) - SHOWN_CATCHES} more")
    return lines


def topic_of(path: str, guides: Mapping[str, Guide]) -> str:
    guide = guides.get(path)
    return guide.topic if guide is not None else _prefix(Path(path).stem)


def grouped_summary(failed: Sequence[str], guides: Mapping[str, Guide]) -> list[str]:
    """The tests that did not pass, grouped by topic, largest group first."""
    if not failed:
        return []
    members: dict[str, list[str]] = {}
    for path in failed:
        members.setdefault(topic_of(path, guides), []).append(Path(path).stem)
    lines = [f"not passed, by topic ({len(members)} topic{'s' if len(members) > 1 else ''}):"]
    width = max(len(t) for t in members) + 2
    for topic, count in topic_counts(topic_of(p, guides) for p in failed):
        names = members[topic]
        more = f", and {len(names) - NAMED_PER_TOPIC} more" if len(names) > NAMED_PER_TOPIC else ""
        plural = "test" if count == 1 else "tests"
        listed = shown(", ".join(names[:NAMED_PER_TOPIC]))
        lines.append(f"  {shown(topic):<{width}}{count:>5} {plural:<6}{listed}{more}")
    return lines


def guide_entry(guide: Guide | None) -> dict[str, object] | None:
    """A test's `guide` in the JSON report."""
    if guide is None:
        return None
    return {
        "topic": guide.topic,
        "pins": list(guide.pins),
        "explanation": list(guide.explanation),
        "catches": [{"name": c.name, "description": c.description} for c in guide.catches],
    }


@dataclass(frozen=True)
class Mistake:
    """A planted bug that fits the failures: every test that ran and catches it failed."""

    name: str
    description: str
    tests: tuple[str, ...]  # the tests that catch it, all of which failed


# How many fitting mistakes the summary lists (the JSON report has them all).
SHOWN_MISTAKES = 10


def likely_mistakes(ran: Sequence[str], failed: Sequence[str]) -> list[Mistake]:
    """The planted bugs every one of whose catching tests (among those that ran) failed, most
    tests first: the classic mistakes that would explain these failures."""
    failed_set = set(failed)
    catching: dict[tuple[Path, str], list[str]] = {}
    suites: dict[Path, Suite] = {}
    for path in ran:
        directory = Path(path).parent
        if directory not in suites:
            suites[directory] = Suite.load(directory)
        for bug in suites[directory].caught.get(Path(path).stem, ()):
            catching.setdefault((directory, bug), []).append(path)
    mistakes = [
        Mistake(bug, suites[directory].descriptions.get(bug, ""), tuple(tests))
        for (directory, bug), tests in catching.items()
        if failed_set.issuperset(tests)
    ]
    return sorted(mistakes, key=lambda m: (-len(m.tests), m.name))


def by_evidence(mistakes: Sequence[Mistake], weight: Mapping[str, float]) -> list[Mistake]:
    """The mistakes, strongest evidence first: the summed `weight` of the tests that catch
    each (a failure alike to many others, a compiler crashing the same way everywhere, is one
    piece of evidence shared among them; a failure of its own weighs 1), then most tests."""
    return sorted(
        mistakes, key=lambda m: (-sum(weight.get(t, 0.0) for t in m.tests), -len(m.tests), m.name)
    )


def mistakes_summary(mistakes: Sequence[Mistake], shown_at_most: int = SHOWN_MISTAKES) -> list[str]:
    if not mistakes:
        return []
    lines = ["mistakes that fit (every test that catches these planted bugs did not pass):"]
    for m in mistakes[:shown_at_most]:
        plural = "test" if len(m.tests) == 1 else "tests"
        about = f": {shown(m.description)}" if m.description else ""
        lines.append(f"  {shown(m.name)} ({len(m.tests)} {plural}){about}")
    if len(mistakes) > shown_at_most:
        lines.append(f"  ... and {len(mistakes) - shown_at_most} more")
    return lines


def annotate(
    document: dict[str, object], guides: Mapping[str, Guide], mistakes: Sequence[Mistake]
) -> None:
    """Add the guide to a `uir test` JSON report: each test's `guide`; `topics`, the tests that
    did not pass grouped by topic (largest group first); and `likely_mistakes`."""
    tests = document["tests"]
    assert isinstance(tests, list)
    failed: dict[str, list[str]] = {}
    for entry in tests:
        path = entry["path"]
        entry["guide"] = guide_entry(guides.get(path))
        if entry["verdict"] != "pass":
            failed.setdefault(topic_of(path, guides), []).append(entry["name"])
    document["topics"] = [
        {"topic": topic, "not_passed": count, "tests": failed[topic]}
        for topic, count in topic_counts(t for t, names in failed.items() for _ in names)
    ]
    document["likely_mistakes"] = [
        {"name": m.name, "description": m.description, "tests": [Path(t).stem for t in m.tests]}
        for m in mistakes
    ]
