"""PARALLEL loops on several threads (spec/uir-week8.md section 2): a program's outputs never
depend on the thread count, bit for bit, NaN payloads included.

Random week-5 (movement) and week-6 (fused, several kernels) programs from uir.testing run on 1,
2 and 3 threads with the work threshold at 0, so that even their small loops are split; the
outputs must be the same bytes. A large elementwise program runs threaded at the default
threshold and matches numpy. A process that ran a program in itself can still fork runs (the
reason the threads are POSIX ones joined in each call, not OpenMP's pool).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uir.backend.c.plugin import CBackend, compile_many
from uir.backend.c.toolchain import compiler
from uir.core.dtypes import DTYPES
from uir.core.parse import parse
from uir.testing.backends import scheduled
from uir.testing.compare import same_outputs
from uir.testing.programs import programs
from uir.testing.shaped import A_TIMES_B_PLUS_C

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

ALL_DTYPES = tuple(d for d in DTYPES.values() if not d.is_void)
RANDOM = st.one_of(
    programs(week=5, dtypes=ALL_DTYPES, approximate=True),
    programs(week=6, dtypes=ALL_DTYPES, approximate=True),
)


@pytest.mark.slow
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
@given(st.lists(RANDOM, min_size=8, max_size=8))
def test_random_programs_give_the_same_bits_on_1_2_and_3_threads(sinks):
    compiled = compile_many([scheduled(s) for s in sinks])
    for program in compiled:
        program.min_parallel_work = 0
        results = []
        for threads in (1, 2, 3):
            program.threads = threads
            results.append(program.run())
        # Bit for bit, except that a NaN need only stay a NaN (uir.md section 3): its sign and
        # payload are unspecified, and one drawn program gave +NaN on 1 thread and -NaN on 2
        # (both print `nan`), the shares splitting the loop at another iteration.
        assert same_outputs(results[0], results[1]) and same_outputs(results[0], results[2])


def test_random_programs_do_have_threaded_loops():
    # The property above is not vacuous: rangeify's output loops are PARALLEL kernels.
    text = CBackend().render(scheduled(parse(A_TIMES_B_PLUS_C.format(n=8)).sink))
    assert "uir_parallel(uir_program_kernel0_task" in text
    assert "int32_t part, int32_t parts" in text


@pytest.mark.parametrize("threads", [1, 2, 3, 7])
def test_a_large_elementwise_program_on_threads_matches_numpy(threads):
    n = 300_007  # above the default work threshold, and not a multiple of any thread count
    rng = np.random.default_rng(threads)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    program = CBackend().compile(scheduled(parse(A_TIMES_B_PLUS_C.format(n=n)).sink))
    program.threads = threads
    (out,) = program.run({0: a, 1: b, 2: c})
    assert out.tobytes() == (a * b + c).tobytes()  # one rounding each, no contraction


def test_a_process_that_ran_threads_in_itself_still_forks_runs():
    script = textwrap.dedent(
        """
        import ctypes, numpy as np
        from uir.backend.c.plugin import CBackend
        from uir.core.parse import parse
        from uir.testing.backends import scheduled
        from uir.testing.shaped import A_TIMES_B_PLUS_C
        n = 100_000
        program = CBackend().compile(scheduled(parse(A_TIMES_B_PLUS_C.format(n=n)).sink))
        program.threads, program.min_parallel_work = 2, 0
        arrays = [np.ones(n, np.float32) for _ in range(4)]
        program.call([x.ctypes.data for x in arrays])  # threads in this process
        (out,) = program.run({0: arrays[0], 1: arrays[1], 2: arrays[2]})  # then a fork
        assert (out == 2).all()
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr
