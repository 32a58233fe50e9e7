"""Hook specifications and the plugin manager: the only seam between UIR packages.

Plugins register through the entry-point group `uir` (installed packages) or by module name
(`uir -p module`, as pytest does). A plugin module defines `uir_passes` and/or `uir_backends`
decorated with `hookimpl`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pluggy

from .errors import BackendError, UsageError
from .uop import UOp

if TYPE_CHECKING:
    import numpy as np  # for annotations only: loading plugins must not load numpy

hookspec = pluggy.HookspecMarker("uir")
hookimpl = pluggy.HookimplMarker("uir")

# Passes run stage by stage in this order; within a stage, in plugin registration order.
STAGES = ("inline", "simplify", "rangeify", "lower", "schedule")


@dataclass(frozen=True)
class Pass:
    """A graph-to-graph transformation that keeps the program's meaning."""

    name: str
    stage: str
    description: str
    run: Callable[[UOp], UOp]


class Compiled(Protocol):
    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        """Run once. `inputs` replaces the initial contents of global buffers by slot; the result
        holds one array per SINK source, in order."""
        ...


class Backend(Protocol):
    name: str
    description: str

    def available(self) -> tuple[bool, str]:
        """(True, "") when usable here, else (False, the reason)."""
        ...

    def render(self, sink: UOp) -> str:
        """Source code for the program; backends that generate none raise BackendError."""
        ...

    def compile(self, sink: UOp) -> Compiled:
        """A runnable form of a verified program."""
        ...


class HookSpecs:
    @hookspec
    def uir_passes(self) -> Iterable[Pass]:
        """Return the passes this plugin adds. Called once when the registry is built."""

    @hookspec
    def uir_backends(self) -> Iterable[Backend]:
        """Return the backends this plugin adds. Called once when the registry is built."""


@dataclass(frozen=True)
class Registry:
    """What the installed and named plugins provide."""

    plugins: tuple[str, ...]
    passes: tuple[Pass, ...]  # in pipeline order
    backends: dict[str, Backend]
    owners: dict[str, str]  # pass or backend name -> plugin name

    def backend(self, name: str) -> Backend:
        if name not in self.backends:
            known = ", ".join(sorted(self.backends)) or "none"
            raise UsageError(f"unknown backend '{name}' (installed: {known})")
        return self.backends[name]

    def pipeline(self, only: Sequence[str] = (), skip: Sequence[str] = ()) -> list[Pass]:
        """The passes to run: all in stage order, or just `only`, less `skip`."""
        known = {p.name for p in self.passes}
        for name in (*only, *skip):
            if name not in known:
                raise UsageError(f"unknown pass '{name}' (installed: {', '.join(sorted(known))})")
        return [p for p in self.passes if (not only or p.name in only) and p.name not in skip]


def _collect(pm: pluggy.PluginManager, hook: str) -> list[tuple[str, object]]:
    found = []
    for impl in reversed(getattr(pm.hook, hook).get_hookimpls()):  # registration order
        try:
            items = impl.function()
        except Exception as exc:
            raise BackendError(f"plugin '{impl.plugin_name}' failed in {hook}: {exc}") from exc
        found.extend((impl.plugin_name, item) for item in items)
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
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            raise UsageError(f"cannot import plugin module '{name}': {exc}") from exc
        if pm.get_plugin(name) is None and not pm.is_registered(module):
            pm.register(module, name=name)

    owners: dict[str, str] = {}
    passes: list[Pass] = []
    for plugin, p in _collect(pm, "uir_passes"):
        if p.stage not in STAGES:
            raise BackendError(f"pass '{p.name}' of plugin '{plugin}' has unknown stage {p.stage}")
        if p.name in owners:
            raise BackendError(f"pass '{p.name}' is defined by '{owners[p.name]}' and '{plugin}'")
        owners[p.name] = plugin
        passes.append(p)
    passes.sort(key=lambda p: STAGES.index(p.stage))  # stable: keeps registration order
    backends: dict[str, Backend] = {}
    for plugin, b in _collect(pm, "uir_backends"):
        if b.name in backends:
            raise BackendError(
                f"backend '{b.name}' is defined by '{owners[b.name]}' and '{plugin}'"
            )
        owners[b.name] = plugin
        backends[b.name] = b
    names = tuple(name for name, _ in pm.list_name_plugin())
    return Registry(names, tuple(passes), backends, owners)
