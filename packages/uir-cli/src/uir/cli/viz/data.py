"""What the viz page shows, as plain data: a program's graph, every pass and rule application the
pipeline made on it, and where each UOp comes from in the text.

Every UOp that appears anywhere (the program, each pass's result, each rule's before and after) is
listed once in one node table and named by its index there, so a trace of thousands of rewrites
costs a few numbers per step, not a graph per step. A program that does not parse or verify still
gives a page: the error, and the graph of what could be built.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from uir.core import UOp
from uir.core.arguments import format_arg
from uir.core.errors import ParseError, UIRError
from uir.core.loops import LoopNest, loop_nest
from uir.core.memory import VERSIONS, Kind, buffer_of, kind, version_of
from uir.core.ops import Op
from uir.core.parse import Program, parse, parse_prefix
from uir.core.plugins import Pass, run_passes
from uir.core.schedule import no_line
from uir.core.trace import RuleInfo, Trace, tracing
from uir.core.verify import verify

ARG_CHARS = 40  # a node shows this much of a long argument (a shaped CONST's elements)


class _Nodes:
    """The node table: each distinct UOp once, sources before users."""

    def __init__(self) -> None:
        self.ids: dict[UOp, int] = {}
        self.rows: list[list[Any]] = []

    def add(self, root: UOp) -> int:
        for uop in root.toposort():
            if uop not in self.ids:
                self.ids[uop] = len(self.rows)
                arg = "" if uop.arg is None else format_arg(uop.arg, uop.dtype)
                if len(arg) > ARG_CHARS:
                    arg = arg[: ARG_CHARS - 1] + "…"
                src = [self.ids[s] for s in uop.src]
                self.rows.append([uop.op.name, str(uop.type), arg, src])
        return self.ids[root]


def _statement_name(source_lines: list[str], line: int) -> str:
    """The %name a statement defines, read off its text."""
    return source_lines[line - 1].split("=", 1)[0].strip()


def _rule_row(info: RuleInfo) -> dict[str, Any]:
    # The path from the package root on (uir/rewrite/fold.py), wherever it is installed.
    parts = info.file.replace(os.sep, "/").split("/")
    short = "/".join(parts[len(parts) - 1 - parts[::-1].index("uir") :]) if "uir" in parts else ""
    return {
        "name": info.name,
        "pattern": info.pattern,
        "file": short or info.file,
        "line": info.line,
    }


def _loops(sinks: Iterable[UOp], ids: dict[UOp, int]) -> tuple[dict[int, int], dict[int, int]]:
    """Each UOp inside a loop -> the innermost RANGE it runs in, and each RANGE -> the RANGE
    around it, read off the loop nest of each graph (a graph whose nest is invalid shows none)."""
    placed: dict[int, int] = {}
    around: dict[int, int] = {}
    for sink in sinks:
        try:
            nest: LoopNest = loop_nest(sink, no_line)
        except Exception:  # a graph that did not verify may trip the analysis: no loop boxes
            continue
        for uop in nest.inside:
            path = nest.path(uop)
            if path:
                placed.setdefault(ids[uop], ids[path[-1]])
        for r, outer in nest.around.items():
            if outer:
                around.setdefault(ids[r], ids[outer[-1]])
    return placed, around


def _memory(ids: dict[UOp, int]) -> dict[int, list[int]]:
    """Each buffer version, place and STORE -> [its BUFFER or LOCAL, its version number], so
    that the page draws a buffer's versions (its AFTER chain) as one group."""
    found: dict[int, list[int]] = {}
    for uop, i in ids.items():
        try:
            if kind(uop) is Kind.VALUE or uop.op is Op.END:
                continue
            buffer, version, n = buffer_of(uop), version_of(uop), 0
            while version.op is Op.AFTER:
                n, version = n + 1, version_of(version.src[0])
        except Exception:  # a graph that did not verify may trip the analysis: no group
            continue
        if buffer in ids and buffer.op in VERSIONS:
            found[i] = [ids[buffer], n]
    return found


def page_data(text: str, path: str, passes: list[Pass]) -> dict[str, Any]:
    """Everything the page shows for the program `text`, its passes traced."""
    nodes = _Nodes()
    lines: dict[UOp, int] = {}
    error: dict[str, Any] | None = None
    roots: list[UOp] = []
    trace = Trace()
    try:
        program: Program | None = parse(text, path)
    except ParseError as exc:
        program = None
        error = {"kind": "parse", "line": exc.line, "message": exc.message}
        built, lines = parse_prefix(text, exc.line or 1)
        used = {s for u in built for s in u.src}
        roots = [u for u in built if u not in used]
    if program is not None:
        lines = program.lines
        roots = [program.sink]
        try:
            verify(program)
            with tracing() as trace:
                run_passes(program.sink, passes)
        except UIRError as exc:
            stage = "verify" if not trace.passes else "pass"
            error = {"kind": stage, "line": exc.line, "message": exc.message}

    root_ids = [nodes.add(r) for r in roots]
    graphs: list[UOp] = list(roots)
    pass_rows: list[dict[str, Any]] = []
    for run in trace.passes:
        after = None if run.after is None else nodes.add(run.after)
        if run.after is not None:
            graphs.append(run.after)
        before = nodes.add(run.before)
        pass_rows.append({"name": run.name, "before": before, "after": after, "steps": []})
    rule_rows: dict[RuleInfo, int] = {}
    step_rows = []
    # Steps outside every pass are the pipeline's own checks (verifying inlines CALLs): not shown.
    for step in (s for s in trace.steps if s.pass_index is not None):
        pass_rows[step.pass_index]["steps"].append(len(step_rows))
        rule = rule_rows.setdefault(step.rule, len(rule_rows))
        step_rows.append([rule, nodes.add(step.before), nodes.add(step.after), step.pass_index])

    source_lines = text.split("\n")
    node_lines = _lines(nodes.ids, lines, trace)
    # A UOp a rewrite built goes by the name of the statement it stands for, primed: %x'.
    names = {
        i: _statement_name(source_lines, line) + ("" if u in lines else "'")
        for (u, i), line in zip(nodes.ids.items(), node_lines, strict=True)
        if line is not None
    }
    placed, around = _loops((g for g in graphs if g.op is Op.SINK), nodes.ids)
    return {
        "path": path,
        "source": text,
        "error": error,
        "nodes": nodes.rows,
        "lines": node_lines,
        "names": names,
        "roots": root_ids,
        "passes": pass_rows,
        "steps": step_rows,
        "rules": [_rule_row(info) for info in rule_rows],
        "loops": placed,
        "around": around,
        "memory": _memory(nodes.ids),
    }


def _lines(ids: Iterable[UOp], lines: dict[UOp, int], trace: Trace) -> list[int | None]:
    """The statement each UOp comes from: its own line; for a UOp a rewrite built, the line of the
    UOp it stands for (the engine's origins), or else of the UOp whose rewrite built it."""
    known = dict(lines)
    for new, old in trace.origins.items():
        if new not in known and old in lines:
            known[new] = lines[old]
    for step in trace.steps:
        line = known.get(step.before)
        if line is None:
            continue
        stack = [step.after]
        while stack:  # only into what this rewrite built: UOps without a line yet
            uop = stack.pop()
            if uop not in known:
                known[uop] = line
                stack.extend(uop.src)
    return [known.get(u) for u in ids]
