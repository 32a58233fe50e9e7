"""Which tests `uir test` runs, as pytest users expect (spec/grading.md section 1): `-k EXPR`
keeps the tests whose directory and file name match an expression of words (`idiv and not
negative`), `--lf` the tests that did not pass last time, remembered in
`.uir-cache/lastfailed.json` of the directory `uir test` runs in."""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence

from uir.core.errors import UsageError

CACHE_DIR = ".uir-cache"
LAST_FAILED = "lastfailed.json"
_TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
_OPERATORS = {"and", "or", "not"}


def _tokens(expression: str) -> list[str]:
    tokens, at = [], 0
    while at < len(expression.rstrip()):
        match = _TOKEN.match(expression, at)
        if match is None:
            break
        tokens.append(match.group(1))
        at = match.end()
    return tokens


def matcher(expression: str) -> list[str]:
    """Check `-k EXPR` once: words (case-insensitive substrings of a test's directory and file
    name), `and`, `or`, `not` and parentheses; a UsageError for anything else."""
    tokens = _tokens(expression)
    if not tokens:
        raise UsageError("-k needs an expression: words, and, or, not, parentheses")
    try:
        _evaluate(tokens, "")
    except SyntaxError:
        raise UsageError(f"-k {expression!r}: not an expression of words, and, or, not") from None
    return tokens


def _evaluate(tokens: Sequence[str], path: str) -> bool:
    """The expression's value for `path`, by recursive descent (no eval)."""
    text = path.lower()
    at = 0

    def atom() -> bool:
        nonlocal at
        if at >= len(tokens):
            raise SyntaxError
        token = tokens[at]
        at += 1
        if token == "not":
            return not atom()
        if token == "(":
            value = either()
            if at >= len(tokens) or tokens[at] != ")":
                raise SyntaxError
            at += 1
            return value
        if token in _OPERATORS or token == ")":
            raise SyntaxError
        return token.lower() in text

    def both() -> bool:
        nonlocal at
        value = atom()
        while at < len(tokens) and tokens[at] == "and":
            at += 1
            value = atom() and value
        return value

    def either() -> bool:
        nonlocal at
        value = both()
        while at < len(tokens) and tokens[at] == "or":
            at += 1
            value = both() or value
        return value

    value = either()
    if at != len(tokens):
        raise SyntaxError
    return value


def keyword_selected(paths: Sequence[str], expression: str) -> list[str]:
    """The tests of `paths` that `-k expression` keeps, in order."""
    tokens = matcher(expression)
    return [path for path in paths if _evaluate(tokens, _shown_name(path))]


def _shown_name(path: str) -> str:
    """What `-k` matches: the test's directory and file name (`week3/idiv_negative.uir`), not
    the directories above them, so that a selection does not depend on where the checkout is."""
    return os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))


def _cache_path(directory: str) -> str:
    return os.path.join(directory, CACHE_DIR, LAST_FAILED)


def last_failed(directory: str = os.curdir) -> set[str]:
    """The tests (absolute paths) that did not pass when they last ran; none when unknown."""
    try:
        with open(_cache_path(directory), encoding="utf-8") as f:
            failed = json.load(f).get("failed", [])
    except (OSError, ValueError, AttributeError):
        return set()
    return {p for p in failed if isinstance(p, str)}


def remember(ran: Iterable[str], failed: Iterable[str], directory: str = os.curdir) -> str | None:
    """Record this run's failures for `--lf`: the tests that ran leave the record or join it as
    they passed or not; others keep their place. Why it could not be written, or None."""
    failed_now = {os.path.abspath(p) for p in failed}
    ran_now = {os.path.abspath(p) for p in ran}
    kept = (last_failed(directory) - ran_now) | failed_now
    path = _cache_path(directory)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # A temporary file of this run's own: two runs in one directory (pytest's workers, two
        # terminals) must not write into one file, and the last to finish is what stays.
        handle, temporary = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as f:
                json.dump({"failed": sorted(kept)}, f, indent=1)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as e:
        return f"cannot remember the failures for --lf in {path}: {e.strerror or e}"
    return None
