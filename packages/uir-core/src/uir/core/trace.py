"""Tracing: a record of every rule application and every pass, for `uir viz` and for tests.

    with tracing() as trace:
        run_passes(sink, passes)
    for step in trace.steps: ...

While a trace is active, `graph_rewrite` records each rule that fires (which rule, where it is
defined, the UOp before and after) and `run_passes` records each pass with the graph it got and
the graph it gave. When no trace is active the engine runs exactly as it does untraced: it looks
for a trace once per `graph_rewrite` call, never per UOp, so tracing costs nothing when off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from .uop import UOp


@dataclass(frozen=True)
class RuleInfo:
    """Which rule fired: its name (the table's name for it, or its rewrite function's), the
    pattern it matched, and the file and line where its rewrite function is defined (for a
    lambda in a rule table, the table's line)."""

    name: str
    pattern: str
    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Step:
    """One rule application: `before` was replaced by `after`, within pass `pass_index` (an
    index into Trace.passes, or None outside every pass)."""

    rule: RuleInfo
    before: UOp
    after: UOp
    pass_index: int | None


@dataclass
class PassRun:
    """One pass of the pipeline: the graph it got, and the graph it gave (None when it failed)."""

    name: str
    before: UOp
    after: UOp | None = None


@dataclass
class Trace:
    """What happened while tracing was on, in order."""

    steps: list[Step] = field(default_factory=list)
    passes: list[PassRun] = field(default_factory=list)
    # A UOp a rewrite built -> the UOp it stands for (as the engine's `origins` records it), so
    # that a viewer can find the statement a rewritten UOp comes from.
    origins: dict[UOp, UOp] = field(default_factory=dict)
    _open: int | None = None

    def record(self, rule: RuleInfo, before: UOp, after: UOp) -> None:
        self.steps.append(Step(rule, before, after, self._open))

    @contextmanager
    def in_pass(self, name: str, before: UOp) -> Iterator[PassRun]:
        """Record a pass; the rule applications made inside belong to it."""
        run = PassRun(name, before)
        self.passes.append(run)
        self._open = len(self.passes) - 1
        try:
            yield run
        finally:
            self._open = None


_current: ContextVar[Trace | None] = ContextVar("uir_trace", default=None)


def current_trace() -> Trace | None:
    """The active trace, or None when tracing is off."""
    return _current.get()


@contextmanager
def tracing() -> Iterator[Trace]:
    """Record rule applications and passes into a new Trace until the block ends."""
    trace = Trace()
    token = _current.set(trace)
    try:
        yield trace
    finally:
        _current.reset(token)


def rule_info(name: str | None, pattern: object, rewrite: Callable[..., object]) -> RuleInfo:
    """Describe a rule for a trace: computed only when the rule fires under tracing."""
    code = getattr(rewrite, "__code__", None)  # a builtin or a partial has none
    file, line = (code.co_filename, code.co_firstlineno) if code is not None else ("?", 0)
    label = name or getattr(rewrite, "__qualname__", None) or repr(rewrite)
    return RuleInfo(label, repr(pattern), file, line)
