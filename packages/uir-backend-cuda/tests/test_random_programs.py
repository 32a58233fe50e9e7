"""Random programs of weeks 1-5 in every dtype (the project's one generator, uir.testing.programs):
cuda-emu gives the interpreter's outputs bit for bit (NaNs by NaN-ness; outputs through EXP2, LOG2
or SIN within 2 ulp: the C backend's f32 polynomials, spec/uir-week8.md 5), and NVRTC compiles them.
The suites hold mostly i32 and f32; these reach every helper (f16, bf16, 64-bit ints, f64 ...).
Programs go to the backend as the backends take them (uir.testing.backends.scheduled: CALLs
inlined, shaped values of weeks 4-5 lowered to loops whose output ranges are PARALLEL, cut into
kernels), while the interpreter runs them as drawn, CALLs and shapes included."""

from __future__ import annotations

import pytest
from hypothesis import Phase, given, settings

from uir.backend.cuda.emulation import compile_many, cxx
from uir.backend.cuda.nvrtc import compile_cubin
from uir.backend.cuda.render import bundle, render_cuda
from uir.core import print_program
from uir.core.dtypes import DTYPES
from uir.core.interpret import evaluate
from uir.core.uop import UOp
from uir.testing.backends import scheduled
from uir.testing.compare import outputs_within_ulps, same_outputs
from uir.testing.programs import programs, through_approximate_ops

ALL_DTYPES = tuple(d for d in DTYPES.values() if not d.is_void)
STRATEGIES = {
    "week1": programs(approximate=False),
    # one EXP2, LOG2 or SIN on each float output: within 2 ulp of the interpreter, not bit for bit
    "week1_approximate": programs(approximate=False).map(through_approximate_ops),
    "week2_memory": programs(week=2, dtypes=ALL_DTYPES, approximate=False),
    "week3_loops": programs(week=3, dtypes=ALL_DTYPES, approximate=False),
    "week4_shapes": programs(week=4, dtypes=ALL_DTYPES, approximate=False),
    "week5_movement": programs(week=5, dtypes=ALL_DTYPES, approximate=False),
    "week6_fusion": programs(week=6, dtypes=ALL_DTYPES, approximate=False),
}
COUNT = 100


def drawn(name: str) -> list[UOp]:
    """The same COUNT programs every run (one compiler run checks them all), as drawn."""
    sinks: list[UOp] = []

    @settings(max_examples=COUNT, derandomize=True, database=None, phases=[Phase.generate])
    @given(STRATEGIES[name])
    def draw(sink: UOp) -> None:
        sinks.append(sink)

    draw()
    return sinks


@pytest.mark.slow
@pytest.mark.skipif(cxx() is None, reason="no C++ compiler")
@pytest.mark.parametrize("name", list(STRATEGIES))
def test_random_programs_agree_on_interp_and_cuda_emu(name: str) -> None:
    sinks = drawn(name)
    compiled = compile_many([scheduled(s) for s in sinks])
    for i, (sink, program) in enumerate(zip(sinks, compiled, strict=True)):
        got, reference = program.run(), evaluate(sink)
        if name == "week1_approximate":
            same = outputs_within_ulps(got, reference, 2)
        else:
            same = same_outputs(got, reference)
        assert same, f"program {i}:\n{print_program(sink)}\n{got}"


@pytest.mark.slow
@pytest.mark.parametrize("name", list(STRATEGIES))
def test_random_programs_compile_with_nvrtc(name: str) -> None:
    sources = [render_cuda(scheduled(s), f"uir_p{i}").source for i, s in enumerate(drawn(name))]
    assert compile_cubin(bundle(sources), "sm_90")[:4] == b"\x7fELF"
