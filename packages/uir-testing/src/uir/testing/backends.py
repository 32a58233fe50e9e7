"""Programs brought to a backend's form the way `uir run` brings them, for tests of the backends.

A backend taking kernels (C, CUDA, cuda-emu) gets a Schedule that the pipeline made
(uir.core.plugins.prepare); tests go through the same function, with the installed plugins, so
that what they compile is what a user's run compiles.
"""

from __future__ import annotations

from functools import cache

from uir.core.kernels import Schedule
from uir.core.plugins import Registry, load_registry, prepare
from uir.core.uop import UOp


@cache
def _registry() -> Registry:
    return load_registry()


def scheduled(sink: UOp, optimize: bool = False) -> Schedule:
    """`sink`'s schedule of kernels: lowered by the installed lowering passes (rangeify) and,
    when `optimize`, after the optimizing passes too (off by default, so that a backend test
    renders the program it wrote rather than what folding left of it)."""
    registry = _registry()
    schedule = prepare(sink, "kernels", registry.pipeline(form="kernels"), optimize)
    assert isinstance(schedule, Schedule)
    return schedule
