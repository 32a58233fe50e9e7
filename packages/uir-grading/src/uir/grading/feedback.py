"""Feedback a team can read (spec/grading.md section 20): for each team of a `uir grade` run,
`OUT/feedback/TEAM/results.json` (Gradescope's results.json fields) and
`OUT/feedback/TEAM/index.html`, built from the grades document alone. A team sees its own
results, never another team's, and each test as its directory's `visibility.toml` allows:

    default = "visible"              # visible | pass-fail | after-deadline
    [tests]
    overflow_edge = "pass-fail"      # by file name without .uir

`visible` shows a test's verdict, the reason and the guide `uir test` prints (topic,
explanation, the planted bugs it catches); `pass-fail` its name and whether it passed;
`after-deadline` nothing until the run grades a collection (`uir grade --manifest`), which
happens after the deadline, and then it is visible.
"""

from __future__ import annotations

import html
import os
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from uir.cli.grading.guide import Guide, guides_for, likely_mistakes
from uir.cli.grading.report import write_json

from .matrix import MARKS, NOT_RUN, REFERENCE

FEEDBACK = "feedback"
VISIBILITY_FILE = "visibility.toml"
VISIBLE, PASS_FAIL, AFTER_DEADLINE = "visible", "pass-fail", "after-deadline"
LEVELS = (VISIBLE, PASS_FAIL, AFTER_DEADLINE)
# Gradescope's visibility of each level, in results.json.
GRADESCOPE = {VISIBLE: "visible", PASS_FAIL: "visible", AFTER_DEADLINE: "after_due_date"}
SHOWN_MISTAKES = 5


def _levels(directory: Path) -> tuple[str, dict[str, str], str | None]:
    """(default, per test, what is wrong) of a test directory's visibility.toml; all visible
    without one. A malformed file makes every test of the directory pass-fail, so that a typo
    shows no secret test, and says why."""
    path = directory / VISIBILITY_FILE
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return VISIBLE, {}, None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        return PASS_FAIL, {}, f"{path}: {e}"
    default, tests = data.get("default", VISIBLE), data.get("tests", {})
    unknown = sorted(set(data) - {"default", "tests"})
    if unknown:
        return PASS_FAIL, {}, f"{path}: unknown key {unknown[0]!r} (default, [tests])"
    levels = [default, *(tests.values() if isinstance(tests, dict) else [None])]
    wrong = [level for level in levels if level not in LEVELS]
    if wrong:
        return PASS_FAIL, {}, f"{path}: {wrong[0]!r} is no level ({', '.join(LEVELS)})"
    return default, tests, None


def visibility(paths: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """Each test's level, from its directory's visibility.toml (read once a directory); and
    what is wrong with the files that are malformed."""
    read: dict[Path, tuple[str, dict[str, str], str | None]] = {}
    levels, problems = {}, []
    for path in paths:
        directory = Path(path).parent
        if directory not in read:
            read[directory] = _levels(directory)
            problem = read[directory][2]
            if problem is not None:
                problems.append(f"{problem}: its tests are shown pass-fail")
        default, tests, _ = read[directory]
        levels[path] = tests.get(Path(path).stem, default)
    return levels, problems


def _shown(level: str, after_deadline: bool) -> str | None:
    """What a level shows in this run: VISIBLE, PASS_FAIL, or None (not at all)."""
    if level == AFTER_DEADLINE:
        return VISIBLE if after_deadline else None
    return level


def team_feedback(
    document: Mapping[str, Any],
    row: Mapping[str, Any],
    levels: Mapping[str, str],
    guides: Mapping[str, Guide],
) -> dict[str, Any]:
    """The results.json of one team (`row` of the grades document)."""
    after_deadline = bool(document.get("manifest"))
    failures = {f["test"]: f for f in row["failures"]}
    tests, hidden, ran, failed = [], 0, [], []
    for i, test in enumerate(document["tests"]):
        path, mark = test["path"], row["marks"][i]
        shown = _shown(levels.get(path, VISIBLE), after_deadline)
        if shown is None:
            hidden += 1
            continue
        passed = mark == MARKS["pass"]
        entry: dict[str, Any] = {
            "name": Path(path).stem,
            "number": str(i + 1),
            "score": 1.0 if passed else 0.0,
            "max_score": 1.0,
            "status": "passed" if passed else "failed",
            "visibility": GRADESCOPE[levels.get(path, VISIBLE)],
            "output": "",
            "extra_data": {"path": path, "author": test["author"], "shown": shown},
        }
        if shown == VISIBLE:
            if mark != NOT_RUN:
                ran.append(path)
            failure = failures.get(path)
            if failure is not None:
                failed.append(path)
                entry["extra_data"]["verdict"] = failure["verdict"]
                entry["output"] = _output(failure, guides.get(path))
            elif mark == NOT_RUN:
                entry["output"] = "not run (the run was interrupted)"
            guide = guides.get(path)
            entry["extra_data"]["topic"] = guide.topic if guide is not None else None
        tests.append(entry)
    own = [a for a in document["authors"] if a["author"] == row["name"]]
    rejected = [t for t in document["invalid_tests"] if t["author"] == row["name"]]
    mistakes = likely_mistakes(ran, failed)[:SHOWN_MISTAKES]
    return {
        "score": float(row["passed"]),
        "output": _summary(row, len(tests), hidden),
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "team": row["name"],
            "commit": row["commit"],
            "problem": row["problem"],
            "percent": row["percent"],
            "passed": row["passed"],
            "tests": row["tests"],
            "shown_after_the_deadline": hidden,
            "likely_mistakes": [
                {"name": m.name, "description": m.description, "tests": len(m.tests)}
                for m in mistakes
            ],
            "your_tests": {
                "bonus": own[0]["bonus"] if own else 0,
                "counted": own[0]["tests"] if own else 0,
                "caught": own[0]["caught"] if own else [],
                "not_counted": [
                    {"path": t["path"], "kind": t["kind"], "detail": t["detail"]} for t in rejected
                ],
            },
        },
    }


def _output(failure: Mapping[str, str], guide: Guide | None) -> str:
    lines = [f"{failure['verdict']}: {failure['detail']}"]
    if guide is not None:
        lines.append(f"topic: {guide.topic}")
        lines += guide.explanation
        if guide.catches:
            lines.append("known to catch these mistakes (planted bugs of `uir mutants`):")
            lines += [f"  {c.name}: {c.description}" for c in guide.catches]
    return "\n".join(lines)


def _summary(row: Mapping[str, Any], shown: int, hidden: int) -> str:
    text = f"{row['passed']} of {row['tests']} tests passed ({row['percent']:.2f}%)"
    if row["problem"]:
        text += f"; your submission could not be graded: {row['problem']}"
    if hidden:
        text += f"; {hidden} more tests are shown after the deadline"
    return text


def write_feedback(out: str, document: Mapping[str, Any]) -> list[str]:
    """Every team's results.json and index.html under OUT/feedback/TEAM/; what is wrong with
    the visibility files (whose tests are then shown pass-fail)."""
    paths = [t["path"] for t in document["tests"]]
    (levels, problems), guides = visibility(paths), guides_for(paths)
    for row in document["compilers"]:
        if row["name"] == REFERENCE:
            continue
        directory = os.path.join(out, FEEDBACK, row["name"])
        os.makedirs(directory, exist_ok=True)
        results = team_feedback(document, row, levels, guides)
        write_json(os.path.join(directory, "results.json"), results)
        page = os.path.join(directory, "index.html")
        with open(f"{page}.tmp", "w", encoding="utf-8") as f:
            f.write(render(results))
        os.replace(f"{page}.tmp", page)
    return problems


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def render(results: Mapping[str, Any]) -> str:
    """A team's page: static, no script, every value escaped."""
    extra = results["extra_data"]
    failed = [t for t in results["tests"] if t["status"] == "failed"]
    passed = [t for t in results["tests"] if t["status"] == "passed"]
    parts = [
        f"<h1>Feedback for {_e(extra['team'])}</h1>",
        f"<p class=summary>{_e(results['output'])}</p>",
    ]
    if extra["commit"]:
        parts.append(f"<p>commit <code>{_e(extra['commit'])}</code></p>")
    if extra["likely_mistakes"]:
        parts.append("<h2>Mistakes that fit your failures</h2><ul>")
        parts += [
            f"<li><b>{_e(m['name'])}</b> ({m['tests']} tests): {_e(m['description'])}</li>"
            for m in extra["likely_mistakes"]
        ]
        parts.append("</ul>")
    parts.append(f"<h2>Not passed ({len(failed)})</h2>")
    for test in failed:
        parts.append(f"<div class=test><h3>{_e(test['name'])}</h3>")
        if test["output"]:
            parts.append(f"<pre>{_e(test['output'])}</pre>")
        else:
            parts.append("<p><i>failed (a hidden test: its details are not shown)</i></p>")
        parts.append("</div>")
    names = ", ".join(_e(t["name"]) for t in passed)
    parts.append(f"<details><summary>Passed ({len(passed)})</summary><p>{names}</p></details>")
    yours = extra["your_tests"]
    parts.append("<h2>Your tests</h2>")
    parts.append(
        f"<p>{yours['counted']} counted; bonus {yours['bonus']} "
        "(failures of other compilers on them)</p><ul>"
    )
    parts += [
        f"<li>{_e(Path(c['test']).stem)}: failed by {len(c['failed_by'])} other compilers</li>"
        for c in yours["caught"]
    ]
    parts += [
        f"<li>not counted: {_e(Path(t['path']).name)}: {_e(t['kind'])}: {_e(t['detail'])}</li>"
        for t in yours["not_counted"]
    ]
    parts.append("</ul>")
    title = f"<title>UIR feedback: {_e(extra['team'])}</title>"
    return HEAD + title + STYLE + "\n".join(parts) + "\n</body>\n</html>\n"


HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
"""
STYLE = """
<style>
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 60em; color: #111; }
.summary { font-size: 1.2em; }
.test { border-left: 4px solid #e66; padding: 0 1em; margin: 1em 0; }
pre { background: #f6f6f6; padding: 0.6em; overflow: auto; white-space: pre-wrap; }
</style>
</head>
<body>
"""
