"""Hook specifications and the plugin manager: the only seam between UIR packages.

Plugins register through the entry-point group `uir` (installed packages) or by module name
(`uir -p module`, as pytest does: a module in the current directory is found too). A plugin module
defines `uir_passes` and/or `uir_backends` decorated with `hookimpl`. A package that adds
subcommands to `uir` (uir-grading adds the staff's) defines `uir_commands` in a module of the
entry-point group `uir.commands` (COMMANDS_GROUP). Installed plugins register
first, then the named modules in the order named; that registration order is the order of passes
within a stage, unless a pass places itself with `before` or `after`.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import pluggy

from .calls import inline_calls
from .dtypes import DType
from .errors import BackendError, UIRError, UsageError, VerifyError
from .kernels import Schedule, schedule_kernels
from .ops import Op
from .parse import Program
from .suggest import did_you_mean
from .trace import current_trace
from .uop import UOp
from .verify import verify

if TYPE_CHECKING:
    import argparse

    import numpy as np  # for annotations only: loading plugins must not load numpy

    from .runtime import Memory, Session

hookspec = pluggy.HookspecMarker("uir")
hookimpl = pluggy.HookimplMarker("uir")

# Passes run stage by stage in this order; within a stage, in plugin registration order.
STAGES = ("inline", "simplify", "rangeify", "lower", "schedule")


@dataclass(frozen=True)
class Pass:
    """A graph-to-graph transformation that keeps the program's meaning.

    `stage` places the pass among the built-in stages (STAGES): a pass of stage `inline` runs
    after CALLs are inlined and before any simplification, say. Within its stage a pass runs in
    registration order, unless it names in `before` or `after` (not both) another pass of the same
    stage to run right before or after: `Pass("mine", "simplify", ..., before="fold")` runs
    first in the simplify stage.

    A pass with `lowering` true brings the program to a form (FORMS) rather than improving
    it: the pipeline runs it for a backend taking that form, whether or not `--passes` names
    it, and `--skip` cannot remove it (the backend could not run the program). Rangeify is one:
    it lowers shaped values to loops for the backends taking kernels (the interpreter is one).
    `uir opt --passes rangeify` runs it too.

    A pass with `required` true removes from the program something no backend runs, for every
    form: the pipeline always runs it, whatever `--passes` names, `--skip` cannot remove it and
    `--no-opt` keeps it. The gradient pass of uir-autodiff is one: it rewrites every GRAD into
    the ops that compute it, for the interpreter as for the compiling backends.

    An optimizing pass whose choices are made for some machines names their backends in
    `backends` (empty: every backend): the default pipeline for another backend leaves it out,
    and `--passes` still runs it anywhere. The `tile` pass is one: its tiles are sized for a
    CPU's caches, and on a GPU they would only take threads away from the grid.
    """

    name: str
    stage: str
    description: str
    run: Callable[[UOp], UOp]
    before: str | None = None
    after: str | None = None
    lowering: bool = False
    required: bool = False
    backends: tuple[str, ...] = ()

    def for_backend(self, backend: str | None) -> bool:
        """Whether the default pipeline for `backend` (None: no backend in view) runs this pass."""
        return backend is None or not self.backends or backend in self.backends

    def needed(self, form: str) -> bool:
        """Whether a backend taking `form` cannot run a program without this pass."""
        return self.required or (self.lowering and form == "kernels")


class Compiled(Protocol):
    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        """Run once. `inputs` replaces the initial contents of global buffers by slot; the result
        holds one array per SINK source, in order."""
        ...


# What a backend takes (`Backend.form`): "program", the program after the optimizing passes, a
# SINK as the language defines it (shaped values whole); "kernels", that program lowered to loops
# by the lowering passes and cut into kernels (uir.core.kernels.Schedule).
FORMS = ("program", "kernels")


class Backend(Protocol):
    """A way to run programs. Besides these methods a backend may have `session`
    (`OpensSessions`): a program compiled once and run many times on global buffers that stay
    in its own memory between runs (uir.core.runtime.open_session, spec/runtime.md). Without
    it, `open_session` is a BackendError naming the backend."""

    name: str
    description: str
    form: str  # one of FORMS: what `render` and `compile` receive (see `prepare`)

    def available(self) -> tuple[bool, str]:
        """(True, "") when usable here, else (False, the reason)."""
        ...

    def render(self, program: UOp | Schedule) -> str:
        """Source code for the program in this backend's form (a SINK for "program", a Schedule
        for "kernels"); backends that generate none raise BackendError."""
        ...

    def compile(self, program: UOp | Schedule) -> Compiled:
        """A runnable form of a verified program, given in this backend's form."""
        ...


@runtime_checkable
class RendersKernels(Protocol):
    """A backend of form "kernels" that can also give the source of each kernel on its own
    (the C backend does): `uir viz` shows it beside each kernel of the schedule."""

    def render_kernels(self, program: Schedule) -> list[str]:
        """One piece of source per kernel of `program`, in schedule order, each as `render`'s
        translation unit has it."""
        ...


@runtime_checkable
class OpensSessions(Protocol):
    """A backend that can keep a program's global buffers in its own memory across runs."""

    def session(
        self, program: UOp | Schedule, source: UOp, memory: Mapping[int, Memory]
    ) -> Session:
        """A uir.core.runtime.Session of `program` (in this backend's form, from `prepare`).
        `source` is the program as written, CALLs inlined: the session holds one Memory per
        global BUFFER of it. `memory` gives the slots to share, already checked to be this
        backend's memories of the right types (uir.core.runtime.check_shared); the session
        allocates every other buffer and fills it with its init CONST or zeros."""
        ...


@runtime_checkable
class Threaded(Protocol):
    """A compiled program whose runs use `threads` threads (the C backend's PARALLEL loops):
    `uir run --threads N` sets it. A non-FAST program's outputs never depend on it."""

    threads: int


@runtime_checkable
class FormatsOutputs(Protocol):
    """A backend that writes the text of its outputs itself, faster than uir.core.output does
    one element at a time (the C backend, in C): exactly `format_value`'s text of each."""

    def format_outputs(
        self, values: Sequence[np.ndarray], dtypes: Sequence[DType], threads: int | None
    ) -> list[str]:
        """format_value(v, d) of each value and its dtype; `threads` None: all cores."""
        ...


@runtime_checkable
class Commands(Protocol):
    """Subcommands a package adds to `uir` (the hook uir_commands)."""

    def register(
        self, commands: argparse._SubParsersAction, common: argparse.ArgumentParser
    ) -> None:
        """Add each subcommand with `commands.add_parser(NAME, parents=[common], ...)` (common
        holds the options every command takes, `-p` among them) and set its `handler`: a
        function of the parsed arguments returning the exit code. The handler imports the work
        when it runs: every `uir` process builds every command line."""
        ...


class HookSpecs:
    @hookspec
    def uir_passes(self) -> Iterable[Pass]:
        """Return the passes this plugin adds. Called once when the registry is built.

        Passes run stage by stage in STAGES order; within a stage, in plugin registration order
        (installed plugins, then `-p` modules in the order named), except that a pass naming
        another pass of its stage in `before` or `after` runs right before or after it. Every
        pass must return a valid program that prints what its input prints: the pipeline checks
        this and blames the pass otherwise.
        """

    @hookspec
    def uir_backends(self) -> Iterable[Backend]:
        """Return the backends this plugin adds. Called once when the registry is built."""

    @hookspec
    def uir_commands(self) -> Iterable[Commands]:
        """Return the subcommands this plugin adds to `uir`. Called by `load_commands` once per
        `uir` process, before any argument is read, for the modules of the entry-point group
        COMMANDS_GROUP only (not `uir`, and not `-p` modules: the command line is built before
        `-p` is read); such a module should import little, as each command's handler does its
        work in modules imported when it runs."""


# The backends and passes of UIR's own packages -> the package that adds each: a name that an
# installation lacks says what to install.
PROVIDERS = {
    "c": "uir-backend-c",
    "cuda": "uir-backend-cuda",
    "cuda-emu": "uir-backend-cuda",
    "inline": "uir-rewrite",
    "fold": "uir-rewrite",
    "simplify": "uir-rewrite",
    "rangeify": "uir-rewrite",
}


def _provider(name: str) -> str:
    package = PROVIDERS.get(name)
    if package is None:
        return ""
    return (
        f": it comes with the package {package}, which is not installed here (`uv pip install "
        f"packages/{package}` in the UIR repository, or `uv sync` there for every package)"
    )


@dataclass(frozen=True)
class Registry:
    """What the installed and named plugins provide."""

    plugins: tuple[str, ...]
    passes: tuple[Pass, ...]  # in pipeline order
    backends: dict[str, Backend]
    pass_owners: dict[str, str]  # pass name -> plugin name
    backend_owners: dict[str, str]  # backend name -> plugin name

    def backend(self, name: str) -> Backend:
        if name not in self.backends:
            known = ", ".join(sorted(self.backends)) or "none"
            near = did_you_mean(name, self.backends)
            raise UsageError(
                f"unknown backend '{name}'{near} (installed: {known}){_provider(name)}"
            )
        return self.backends[name]

    def pipeline(
        self,
        only: Sequence[str] = (),
        skip: Sequence[str] = (),
        form: str = "program",
        backend: str | None = None,
    ) -> list[Pass]:
        """The passes to run, in pipeline order: `only` if given, else every optimizing pass for
        `backend` (`Pass.for_backend`), less `skip`; and every pass the form needs
        (`Pass.needed`: the required passes, and for form "kernels" the lowerings), which `skip`
        cannot remove (the backend could not run the program without it)."""
        known = {p.name for p in self.passes}
        for name in (*only, *skip):
            if name not in known:
                near = did_you_mean(name, sorted(known))
                raise UsageError(
                    f"unknown pass '{name}'{near} (installed: {', '.join(sorted(known)) or 'none'})"
                    f"{_provider(name)}"
                )
        if form not in FORMS:
            raise BackendError(f"unknown program form '{form}' (forms: {', '.join(FORMS)})")
        needed = {p.name: p for p in self.passes if p.needed(form)}
        for name in skip:
            if name in needed:
                why = (
                    "lowers the program for this backend"
                    if not needed[name].required
                    else ("removes from the program what no backend runs")
                )
                raise UsageError(f"pass '{name}' cannot be skipped: it {why}")
        optimizing = [
            p
            for p in self.passes
            if (p.name in only if only else not p.lowering and p.for_backend(backend))
        ]
        wanted = {p.name for p in optimizing if p.name not in skip} | set(needed)
        return [p for p in self.passes if p.name in wanted]

    def optimizations(self) -> list[Pass]:
        """The passes run when none are named, in pipeline order (the required ones too)."""
        return [p for p in self.passes if not p.lowering]

    def lowerings(self) -> list[Pass]:
        """The passes that bring a program to the form "kernels", in pipeline order."""
        return [p for p in self.passes if p.lowering]


def run_passes(sink: UOp, passes: Iterable[Pass]) -> UOp:
    """`sink` after each pass in turn, the result verified.

    A pass must return a verified program (uir.md section 6) that prints what its input prints:
    as many outputs, each of the same dtype and size. Raises BackendError naming the first pass
    that raises, returns something else, or changes what the program prints. While a trace is
    active (uir.core.trace.tracing), each pass is recorded in it with the graph it gave.
    """
    printed = _printed(sink)
    results: list[tuple[Pass, UOp]] = []
    trace = current_trace()
    for p in passes:
        with nullcontext() if trace is None else trace.in_pass(p.name, sink) as record:
            try:
                new = p.run(sink)
            except UIRError as exc:
                raise BackendError(f"pass '{p.name}' failed: {exc.message}") from exc
            except Exception as exc:
                raise BackendError(f"pass '{p.name}' failed: {type(exc).__name__}: {exc}") from exc
            if record is not None:
                record.after = new
        if not isinstance(new, UOp) or new.op is not Op.SINK:
            raise BackendError(f"pass '{p.name}' returned {new!r}, not a SINK")
        if _printed(new) != printed:
            raise BackendError(
                f"pass '{p.name}' changed the program's outputs from {_describe(sink)} "
                f"to {_describe(new)}"
            )
        results.append((p, new))
        sink = new
    if results and _invalid(sink) is not None:
        # Verifying the last result is enough when all is well (and programs shrink along the
        # pipeline); only a failure pays for finding the first pass whose result is invalid.
        for p, result in results:
            why = _invalid(result)
            if why is not None:
                raise BackendError(f"pass '{p.name}' produced an invalid program: {why}")
    return sink


def form_of(backend: Backend) -> str:
    """The form `backend` takes; a backend declaring none takes the program as written."""
    form = getattr(backend, "form", "program")
    if form not in FORMS:
        raise BackendError(f"backend '{backend.name}' takes unknown form '{form}'")
    return form


def prepare(sink: UOp, form: str, passes: Sequence[Pass], optimize: bool = True) -> UOp | Schedule:
    """`sink` brought to `form` (FORMS; `form_of(backend)`): after `passes` (a
    `Registry.pipeline` for that form), or only those the form needs (`Pass.needed`) when
    `optimize` is false; for form "kernels" the result is cut into kernels once
    (uir.core.kernels). This is the one place a program is lowered and scheduled: backends
    render or run what they get. A GRAD that no pass removed is exit 4 naming the package that
    computes gradients (uir.md 10.4): no backend runs GRAD."""
    if form not in FORMS:
        raise BackendError(f"unknown program form '{form}' (forms: {', '.join(FORMS)})")
    chosen = list(passes) if optimize else [p for p in passes if p.needed(form)]
    result = run_passes(sink, chosen)
    if any(uop.op is Op.GRAD for uop in result.toposort()):
        raise BackendError(
            "this program takes gradients (GRAD), which the package uir-autodiff computes: "
            "install uir-autodiff (`uv add uir-autodiff`, or `pip install uir-autodiff`)"
        )
    if form == "program":
        return result
    return schedule_kernels(inline_calls(sink), inline_calls(result))


def _invalid(sink: UOp) -> str | None:
    """Why `sink` is not a valid program, or None when it is."""
    try:
        verify(Program(sink, {}))
    except VerifyError as exc:
        return exc.message
    except Exception as exc:  # a graph no parser would build may trip the verifier itself
        return f"{type(exc).__name__}: {exc}"
    return None


def _printed(sink: UOp) -> list[tuple[DType, int]]:
    """What the program prints, as far as types say: each output's dtype and element count."""
    return [(s.dtype, s.type.size) for s in sink.src]


def _describe(sink: UOp) -> str:
    return "(" + ", ".join(str(s.type) for s in sink.src) + ")"


def _collect(pm: pluggy.PluginManager, hook: str) -> list[tuple[str, object]]:
    found = []
    # pluggy lists implementations in registration order (and calls them in the reverse).
    for impl in getattr(pm.hook, hook).get_hookimpls():
        try:
            items = impl.function()
        except Exception as exc:
            raise BackendError(f"plugin '{impl.plugin_name}' failed in {hook}: {exc}") from exc
        found.extend((impl.plugin_name, item) for item in items)
    return found


def _import_plugin(name: str) -> object:
    """The module `name`, looked for in the current directory first, as `python -m` and pytest's
    `-p` find it; sys.path is left as it was."""
    cwd = os.getcwd()
    sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except Exception as exc:
        raise UsageError(f"cannot import plugin module '{name}': {exc}") from exc
    finally:
        sys.path.remove(cwd)  # the first occurrence: the one inserted above


def _pipeline_order(passes: list[Pass], owners: dict[str, str]) -> list[Pass]:
    """Passes by stage, in registration order, each placed one right next to its anchor.

    `passes` is in registration order. Passes placed next to the same anchor keep registration
    order among themselves, and a placed pass may itself be an anchor.
    """
    by_name = {p.name: p for p in passes}
    next_to: dict[str, tuple[list[Pass], list[Pass]]] = {p.name: ([], []) for p in passes}
    for p in passes:
        where = f"pass '{p.name}' of plugin '{owners[p.name]}'"
        if p.before is not None and p.after is not None:
            raise BackendError(f"{where} names both a pass to run before and one to run after")
        anchor = p.before if p.before is not None else p.after
        if anchor is None:
            continue
        if anchor not in by_name:
            raise BackendError(
                f"{where} is placed next to '{anchor}': no such pass is installed"
                f"{_provider(anchor)}"
            )
        if by_name[anchor].stage != p.stage:
            raise BackendError(
                f"{where} is placed next to '{anchor}', which is in another stage "
                f"({by_name[anchor].stage}, not {p.stage})"
            )
        next_to[anchor][0 if p.before is not None else 1].append(p)

    order: list[Pass] = []

    def emit(p: Pass) -> None:
        before, after = next_to[p.name]
        for q in before:
            emit(q)
        order.append(p)
        for q in after:
            emit(q)

    unplaced = [p for p in passes if p.before is None and p.after is None]
    for p in sorted(unplaced, key=lambda p: STAGES.index(p.stage)):  # stable: registration order
        emit(p)
    if len(order) < len(passes):
        stuck = ", ".join(p.name for p in passes if p not in order)
        raise BackendError(f"passes placed next to each other in a circle: {stuck}")
    return order


# The entry-point group of the packages adding subcommands: apart from `uir`, so that building
# the command line, which every `uir` process does, imports the command lines but no backend.
COMMANDS_GROUP = "uir.commands"


def load_commands() -> list[tuple[str, Commands]]:
    """The subcommands of the installed packages (the `uir_commands` hook of the entry-point
    group COMMANDS_GROUP), each with the name of the plugin that adds it, in registration
    order."""
    pm = pluggy.PluginManager("uir")
    pm.add_hookspecs(HookSpecs)
    try:
        pm.load_setuptools_entrypoints(COMMANDS_GROUP)
    except Exception as exc:
        raise BackendError(f"an installed plugin failed to load: {exc}") from exc
    found: list[tuple[str, Commands]] = []
    for plugin, item in _collect(pm, "uir_commands"):
        if not isinstance(item, Commands):
            raise BackendError(f"plugin '{plugin}' gave uir_commands {item!r}, with no register")
        found.append((plugin, item))
    return found


def load_registry(modules: Sequence[str] = ()) -> Registry:
    """Load the `uir` entry points and the named modules, and gather their passes and backends."""
    pm = pluggy.PluginManager("uir")
    pm.add_hookspecs(HookSpecs)
    try:
        pm.load_setuptools_entrypoints("uir")
    except Exception as exc:
        raise BackendError(f"an installed plugin failed to load: {exc}") from exc
    for name in modules:
        module = _import_plugin(name)
        if pm.get_plugin(name) is None and not pm.is_registered(module):
            pm.register(module, name=name)

    pass_owners: dict[str, str] = {}
    passes: list[Pass] = []
    for plugin, p in _collect(pm, "uir_passes"):
        if p.stage not in STAGES:
            raise BackendError(f"pass '{p.name}' of plugin '{plugin}' has unknown stage {p.stage}")
        if p.name in pass_owners:
            raise BackendError(
                f"pass '{p.name}' is defined by '{pass_owners[p.name]}' and '{plugin}'"
            )
        pass_owners[p.name] = plugin
        passes.append(p)
    backend_owners: dict[str, str] = {}
    backends: dict[str, Backend] = {}
    for plugin, b in _collect(pm, "uir_backends"):
        if b.name in backends:
            raise BackendError(
                f"backend '{b.name}' is defined by '{backend_owners[b.name]}' and '{plugin}'"
            )
        backend_owners[b.name] = plugin
        backends[b.name] = b
    names = tuple(name for name, _ in pm.list_name_plugin())
    ordered = _pipeline_order(passes, pass_owners)
    return Registry(names, tuple(ordered), backends, pass_owners, backend_owners)
