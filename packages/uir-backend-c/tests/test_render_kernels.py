"""`render_kernels`: each kernel's function of the C translation unit, on its own (what `uir viz`
shows beside each kernel). Rendering needs no C compiler."""

from __future__ import annotations

import pytest

from uir.backend.c.plugin import CBackend
from uir.backend.c.render import render_c, render_kernels
from uir.core import BackendError, parse, verify
from uir.core.plugins import RendersKernels
from uir.testing.backends import scheduled

# The sum of x = (1, 2, 3) folds in order (kernel0, its scratch local0), then x / sum and
# x * sum are a PARALLEL loop each, writing the two outputs (kernel1, kernel2).
THREE_KERNELS = """\
%d = CONST f32[3] (1, 2, 3)
%b = BUFFER f32[3] %d 0
%l = LOAD f32[3] %b
%s = REDUCE f32 %l (ADD, (0))
%se = EXPAND f32[3] %s
%y = FDIV f32[3] %l %se
%m = MUL f32[3] %l %se
%out = SINK void %y %m
"""
SUMMARIES = [
    "kernel0 (in order): reads buf0, local0; writes local0",
    "kernel1 (parallel loop): reads buf0; writes buf1",
    "kernel2 (parallel loop): reads buf0; writes buf2",
]


def schedule_of(text: str):
    program = parse(text, "t.uir")
    verify(program)
    return scheduled(program.sink)


def test_each_kernels_function_is_the_one_of_the_translation_unit_in_order():
    schedule = schedule_of(THREE_KERNELS)
    functions = render_kernels(schedule)
    whole = render_c(schedule)
    assert [f.split("\n", 1)[0] for f in functions] == [f"/* {s} */" for s in SUMMARIES]
    places = []
    for k, function in enumerate(functions):
        assert function.split("\n")[1].startswith(f"static void uir_program_kernel{k}(")
        assert function.count("static void ") == 1 and function.endswith("\n}")
        assert whole.count(function) == 1
        places.append(whole.index(function))
    assert places == sorted(places)
    # the entry point, which calls the kernels, is none of them
    assert not any("void uir_program(" in f for f in functions)
    assert "void uir_program(" in whole


def test_the_backend_offers_kernel_sources_and_takes_only_a_schedule():
    backend = CBackend()
    assert isinstance(backend, RendersKernels)
    schedule = schedule_of(THREE_KERNELS)
    assert backend.render_kernels(schedule) == render_kernels(schedule)
    with pytest.raises(BackendError, match="takes a schedule of kernels"):
        backend.render_kernels(schedule.source)  # type: ignore[arg-type]
