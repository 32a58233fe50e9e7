"""The interpreter against an independent model (uir.testing.model), on random programs.

The model follows the spec's words another way: Python ints wrapped by hand, numpy scalars for
floats, CALLs evaluated in an environment rather than substituted, and memory as one immutable
tuple per version rather than buffers updated in schedule order, loops as explicit iteration
over the END structure rather than the loop-nest schedule, and shaped values as flat tuples
whose movement ops follow the spec's rule for each result index and whose REDUCE is a Python
loop folding in row-major order, rather than numpy arrays and views. EXP2, LOG2 and SIN are left
out: they are only specified to 2 ulp.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uir.core.dtypes import DTYPES
from uir.core.interpret import evaluate
from uir.core.printer import print_program
from uir.testing import model
from uir.testing.compare import same_outputs
from uir.testing.programs import programs

# every dtype the model has arithmetic for (bf16 has no numpy type)
DTYPES_MODELLED = tuple(d for d in DTYPES.values() if not d.is_void and d.name != "bf16")
WEEKS = {
    1: "week1_values",
    2: "week2_memory",
    3: "week3_loops",
    4: "week4_shapes",
    5: "week5_movement",
}


def assert_interpreter_matches_the_model(sink) -> None:
    assert same_outputs(evaluate(sink), model.run(sink)), print_program(sink)


@pytest.mark.slow
@pytest.mark.parametrize("week", WEEKS, ids=WEEKS.get)
@settings(max_examples=300)
@given(data=st.data())
def test_interpreter_matches_the_model(week, data):
    assert_interpreter_matches_the_model(data.draw(programs(week=week, approximate=False)))


@pytest.mark.slow
@pytest.mark.parametrize("week", (2, 3, 4, 5), ids=WEEKS.get)
@settings(max_examples=200)
@given(data=st.data())
def test_interpreter_matches_the_model_in_every_dtype(week, data):
    sink = data.draw(programs(week=week, dtypes=DTYPES_MODELLED, approximate=False))
    assert_interpreter_matches_the_model(sink)
