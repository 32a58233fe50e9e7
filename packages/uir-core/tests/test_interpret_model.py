"""The interpreter against an independent model (uir.testing.model), on random programs.

The model follows the spec's words another way: Python ints wrapped by hand, numpy scalars for
floats, CALLs evaluated in an environment rather than substituted, and memory as one immutable
tuple per version rather than buffers updated in schedule order, and loops as explicit iteration
over the END structure rather than the loop-nest schedule. EXP2, LOG2 and SIN are left out: they
are only specified to 2 ulp.
"""

from __future__ import annotations

from hypothesis import given, settings

from uir.core.dtypes import DTYPES
from uir.core.interpret import evaluate
from uir.core.printer import print_program
from uir.testing import model
from uir.testing.compare import same_outputs
from uir.testing.programs import programs

# every dtype the model has arithmetic for (bf16 has no numpy type)
DTYPES_MODELLED = tuple(d for d in DTYPES.values() if not d.is_void and d.name != "bf16")


@settings(max_examples=300)
@given(programs(week=1, approximate=False))
def test_interpreter_matches_the_model_on_week1_programs(sink):
    assert same_outputs(evaluate(sink), model.run(sink)), print_program(sink)


@settings(max_examples=300)
@given(programs(week=2, approximate=False))
def test_interpreter_matches_the_model_on_memory_programs(sink):
    assert same_outputs(evaluate(sink), model.run(sink)), print_program(sink)


@settings(max_examples=200)
@given(programs(week=2, dtypes=DTYPES_MODELLED, approximate=False))
def test_interpreter_matches_the_model_in_every_dtype(sink):
    assert same_outputs(evaluate(sink), model.run(sink)), print_program(sink)


@settings(max_examples=300)
@given(programs(week=3, approximate=False))
def test_interpreter_matches_the_model_on_loop_programs(sink):
    assert same_outputs(evaluate(sink), model.run(sink)), print_program(sink)


@settings(max_examples=200)
@given(programs(week=3, dtypes=DTYPES_MODELLED, approximate=False))
def test_interpreter_matches_the_model_on_loop_programs_in_every_dtype(sink):
    assert same_outputs(evaluate(sink), model.run(sink)), print_program(sink)
