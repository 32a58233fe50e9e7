"""What the viz page shows, as plain data: a program's graph, every pass and rule application the
pipeline made on it, where each UOp comes from in the text, and the schedule of kernels the
compiling backends run (each kernel's UOps, what it reads and writes, its counts and its C).

Every UOp that appears anywhere (the program, each pass's result, each rule's before and after) is
listed once in one node table and named by its index there, so a trace of thousands of rewrites
costs a few numbers per step, not a graph per step. A program that does not parse or verify still
gives a page: the error, and the graph of what could be built.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from uir.core import UOp
from uir.core.arguments import format_arg
from uir.core.errors import ParseError, UIRError
from uir.core.kernels import Schedule
from uir.core.loops import LoopNest, loop_nest
from uir.core.memory import VERSIONS, Kind, buffer_of, is_memory, kind, version_of
from uir.core.ops import Op
from uir.core.parse import Program, parse, parse_prefix
from uir.core.plugins import Pass, RendersKernels, prepare, run_passes
from uir.core.printer import local_notes
from uir.core.schedule import no_line
from uir.core.stats import describe_kernel, schedule_stats
from uir.core.trace import RuleInfo, Trace, tracing
from uir.core.verify import verify

ARG_CHARS = 40  # a node shows this much of a long argument (a shaped CONST's elements)


@dataclass(frozen=True)
class KernelSetup:
    """How the page gets the program's kernels: the passes that bring it to the form "kernels"
    (`Registry.pipeline(..., "kernels")`), or None and why there are none (`why_not`), and the
    backend that shows each kernel's code (`code`, named `code_name`), if one is installed."""

    passes: Sequence[Pass] | None
    why_not: str = ""
    code: RendersKernels | None = None
    code_name: str = ""


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


def _schedule(sink: UOp, setup: KernelSetup) -> tuple[Schedule | None, str, Trace]:
    """The program's schedule of kernels, as the compiling backends get it (or None and why
    not), and the trace of the passes that lowered it (for the lines of the UOps they built)."""
    trace = Trace()
    if setup.passes is None:
        return None, setup.why_not, trace
    try:
        with tracing() as trace:
            ready = prepare(sink, "kernels", setup.passes)
    except UIRError as exc:
        return None, exc.message, trace
    assert isinstance(ready, Schedule)  # what prepare makes for the form "kernels"
    return ready, "", trace


def _kernel_rows(schedule: Schedule, setup: KernelSetup, nodes: _Nodes) -> dict[str, Any]:
    """The kernels entry: each kernel with its UOps (the lowered program's statements it runs),
    summary, counts and code, and what the schedule's LOCALs are."""
    sink = nodes.add(schedule.sink)
    ids = nodes.ids
    sources: list[str | None] = [None] * len(schedule.kernels)
    code_why = ""
    if setup.code is None:
        code_why = "no installed backend gives each kernel's code (the C backend does)"
    else:
        try:
            sources = list(setup.code.render_kernels(schedule))
        except UIRError as exc:
            code_why = f"the {setup.code_name} backend cannot render this program: {exc.message}"
    kernels = [
        {
            "name": kernel.name,
            "summary": kernel.summary,
            "parallel": kernel.parallel,
            "stats": describe_kernel(kernel),
            "uops": [ids[u] for u in kernel.statements],
            "code": code,
        }
        for kernel, code in zip(schedule.kernels, sources, strict=True)
    ]
    return {
        "sink": sink,
        "why": "",
        "stats": schedule_stats(schedule).describe(),
        "kernels": kernels,
        "locals": local_notes(schedule),
        "code": setup.code_name if setup.code is not None and not code_why else "",
        "codeWhy": code_why,
    }


def page_data(
    text: str, path: str, passes: list[Pass], kernels: KernelSetup | None = None
) -> dict[str, Any]:
    """Everything the page shows for the program `text`, its passes traced; with `kernels`, a
    program that verifies also shows its schedule of kernels (or why it has none)."""
    nodes = _Nodes()
    lines: dict[UOp, int] = {}
    error: dict[str, Any] | None = None
    roots: list[UOp] = []
    trace = Trace()
    schedule: Schedule | None = None
    kernel_why, kernel_trace = "", Trace()
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
        except UIRError as exc:
            error = {"kind": "verify", "line": exc.line, "message": exc.message}
        else:
            try:
                with tracing() as trace:
                    run_passes(program.sink, passes)
            except UIRError as exc:
                error = {"kind": "pass", "line": exc.line, "message": exc.message}
            if kernels is not None:
                schedule, kernel_why, kernel_trace = _schedule(program.sink, kernels)

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

    kernel_rows: dict[str, Any] | None = None
    if schedule is not None and kernels is not None:
        graphs.append(schedule.sink)
        kernel_rows = _kernel_rows(schedule, kernels, nodes)
    elif kernel_why:
        kernel_rows = {"sink": None, "why": kernel_why, "kernels": []}

    source_lines = text.split("\n")
    node_lines = _lines(nodes.ids, lines, [trace, kernel_trace])
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
        "kernels": kernel_rows,
    }


def _lines(ids: Iterable[UOp], lines: dict[UOp, int], traces: list[Trace]) -> list[int | None]:
    """The statement each UOp comes from: its own line; for a UOp a rewrite built, the line of the
    UOp it stands for (the engine's origins), or else of the UOp whose rewrite built it.

    An INDEX of a shaped value (rangeify's, an element of it) comes from the value's statement:
    rangeify records the elements it builds as standing for such INDEXes."""
    known = dict(lines)
    origins = {new: old for trace in traces for new, old in trace.origins.items()}

    def resolve(uop: UOp) -> int | None:
        seen: set[UOp] = set()
        while uop not in known and uop not in seen:
            seen.add(uop)
            if uop.op is Op.INDEX and not is_memory(uop.src[0]):
                uop = uop.src[0]
            elif uop in origins:
                uop = origins[uop]
            else:
                return None
        return known.get(uop)

    for new in origins:
        line = resolve(new)
        if line is not None:
            known.setdefault(new, line)
    for step in (step for trace in traces for step in trace.steps):
        line = resolve(step.before)
        if line is None:
            continue
        stack = list(step.after.src)
        known.setdefault(step.after, line)  # the origins may have placed it already
        while stack:  # only into what this rewrite built: UOps without a line yet
            uop = stack.pop()
            if uop not in known:
                known[uop] = resolve(uop) or line
                stack.extend(uop.src)
    # A UOp whose origin only the rewrites' lines placed (a rangeify element rebuilt).
    return [known.get(u) or resolve(u) for u in ids]
