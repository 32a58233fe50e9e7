"""Random well-typed programs: the interpreter, the interpreter after the installed passes, and
the C backend agree bit for bit (NaN payloads are unspecified: NaNs compare by NaN-ness).

Programs come from the project's one generator (uir.testing.programs): week-1 programs with CALLs,
STACK, INDEX and edge values, and memory programs in every dtype with global buffers, LOCALs,
windows and gates. EXP2, LOG2 and SIN are left out of the memory programs: they are only
specified to 2 ulp.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from uir.backend.c.harness import run_sanitized
from uir.backend.c.plugin import compile_many
from uir.backend.c.toolchain import compiler
from uir.core import print_program
from uir.core.calls import inline_calls
from uir.core.dtypes import DTYPES
from uir.core.interpret import evaluate
from uir.core.plugins import load_registry
from uir.testing.compare import same_outputs
from uir.testing.programs import programs

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

ALL_DTYPES = tuple(d for d in DTYPES.values() if not d.is_void)
MEMORY_PROGRAMS = programs(week=2, dtypes=ALL_DTYPES, approximate=False)


def optimized(sink):
    for p in load_registry().pipeline():
        sink = p.run(sink)
    return sink


def assert_interp_opt_and_c_agree(sinks: list) -> None:
    for sink, program in zip(sinks, compile_many(sinks), strict=True):
        reference = evaluate(sink)
        for name, got in (("opt", evaluate(optimized(sink))), ("c", program.run())):
            assert same_outputs(got, reference), f"{name} differs from interp on:\n" + (
                f"{print_program(sink)}\n{got}\n{reference}"
            )


# Several programs a compiler run, and no shrinking: a failure already shows the whole program
# text, and shrinking through many compiler runs takes minutes.
LISTS = settings(
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(LISTS, max_examples=30)
@given(st.lists(MEMORY_PROGRAMS, min_size=1, max_size=8))
def test_memory_programs_in_every_dtype_agree_on_interp_opt_and_c(sinks):
    assert_interp_opt_and_c_agree(sinks)


@settings(LISTS, max_examples=20)
@given(st.lists(programs(), min_size=1, max_size=10))
def test_week1_programs_agree_on_interp_opt_and_c(sinks):
    """CALLs, STACK, INDEX, edge values, EXP2, LOG2 and SIN."""
    assert_interp_opt_and_c_agree(sinks)


def test_random_programs_are_clean_under_sanitizers(tmp_path):
    # the same 200 programs every run, built and run once under the sanitizers
    sinks = []

    @settings(max_examples=200, derandomize=True, database=None, phases=[Phase.generate])
    @given(MEMORY_PROGRAMS)
    def draw(sink):
        sinks.append(inline_calls(sink))

    draw()
    results = run_sanitized(sinks, tmp_path, compiler())
    for i, (sink, got) in enumerate(zip(sinks, results, strict=True)):
        reference = evaluate(sink)
        assert same_outputs(got, reference), f"program {i}:\n{print_program(sink)}\n{got}"
