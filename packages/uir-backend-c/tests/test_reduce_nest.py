"""A REDUCE's loops nest in the order of its source's axes (spec/rangeify.md section 2): kept axes
written after a folded one run inside the fold, and every accumulator still takes its terms in
the row-major order of the folded axes, so the bits are the reference fold's whatever the nest."""

from __future__ import annotations

import numpy as np
import pytest

from uir.backend.c.plugin import CBackend
from uir.core.dtypes import f32
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.schedule import Block, loop_schedule
from uir.core.uop import UOp
from uir.rewrite.passes import rangeify
from uir.testing.backends import scheduled
from uir.testing.movement import fold_sum, load, matmul, program, reduce
from uir.testing.shaped import check_lowered

pytestmark = pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")


def nests(block: Block) -> list[tuple[int, ...]]:
    """The trip counts of every innermost loop's enclosing loops, outermost first."""
    found = []

    def walk(b: Block, ends: tuple[int, ...]) -> None:
        inner = [i for i in b.body if isinstance(i, Block)]
        here = ends if b.range is None else (*ends, b.range.src[0].arg)
        if not inner and b.range is not None:
            found.append(here)
        for i in inner:
            walk(i, here)

    walk(block, ())
    return found


def test_matmul_written_m_k_n_runs_i_k_j_after_an_init_loop_per_row():
    lowered = check_lowered(rangeify(program(matmul(load(0, f32, (2, 3)), load(1, f32, (3, 5))))))
    # per row i: the accumulators' init loop over j, then k around j; then the output copy
    assert nests(loop_schedule(lowered)) == [(2, 5), (2, 3, 5), (2, 5)]


# Terms of very different sizes: any other order of the fold rounds differently.
VALUES = np.array([1e8, 1.0, -1e8, 3.0, 0.5, 7.0, -2.5, 1e-3] * 15, dtype=np.float32)


@pytest.mark.parametrize(
    ("shape", "axes"),
    [
        ((4, 30), (0,)),
        ((3, 4, 10), (0, 2)),
        ((2, 3, 4, 5), (1, 3)),
        ((4, 30), (1,)),  # these two are fused into the output loop
        ((3, 4, 10), (1, 2)),
    ],
)
def test_kept_axes_inside_the_fold_give_the_reference_folds_bits(shape, axes):
    data = np.random.default_rng(3).permutation(VALUES).reshape(shape)
    expected = fold_sum(data, axes)
    backwards = fold_sum(np.flip(data, axes), axes)  # the same terms, folded from the last
    assert expected.tobytes() != backwards.tobytes()
    value = reduce(load(0, f32, shape), Op.ADD, axes)
    lowered = check_lowered(rangeify(program(value)))
    (interpreted,) = evaluate(lowered, {0: data.reshape(-1)})
    assert np.asarray(interpreted).tobytes() == expected.tobytes()
    (from_c,) = CBackend().compile(scheduled(program(value))).run({0: data.reshape(-1)})
    assert from_c.tobytes() == expected.tobytes()


def test_a_reduce_with_no_kept_axis_after_the_fold_is_folded_inside_the_output_loop():
    # spec/uir-week6.md section 2: the output is the REDUCE's one reader, so the fold runs in the
    # output's row loop (one scalar accumulator a row) and the row's sum is stored right there:
    # one nest, where materializing it took the fold's nest and then a copy loop (3,)
    value: UOp = reduce(load(0, f32, (3, 4, 5)), Op.ADD, (1, 2))
    lowered = check_lowered(rangeify(program(value)))
    assert nests(loop_schedule(lowered)) == [(3, 4, 5)]
