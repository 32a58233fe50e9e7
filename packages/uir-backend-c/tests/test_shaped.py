"""Shaped programs in C: rendered only through rangeify, as loops whose size never grows with a
shape, and computing what numpy (or the interpreter on rangeify's output) computes.

Programs with week-4 ops are parsed without verifying (week 4's verifier lands on another
branch); the C backend lowers them to week-3 loops, which it renders today.
"""

from __future__ import annotations

import numpy as np
import pytest

from uir.backend.c.abi import layout
from uir.backend.c.harness import run_sanitized
from uir.backend.c.plugin import CBackend, load_source
from uir.backend.c.render import render_c
from uir.backend.c.toolchain import compiler
from uir.cli.main import main
from uir.core.calls import inline_calls
from uir.core.dtypes import VOID, Type, i32
from uir.core.elements import Elements
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.parse import parse
from uir.core.uop import UOp
from uir.rewrite.passes import rangeify
from uir.testing.backends import scheduled
from uir.testing.shaped import A_TIMES_B_PLUS_C

LIMIT = 20_000  # bytes of C for any program, whatever its shapes (uir.md 8; test_suites.py)
MILLION = 1_000_000

pytestmark = pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")


def run_c(sink: UOp, inputs: dict[int, np.ndarray] | None = None) -> list[np.ndarray]:
    return CBackend().compile(scheduled(sink)).run(inputs)


def three_adds(x: UOp) -> UOp:
    """(x + x) + x, then that + (x + x): three intermediates of x's shape."""
    a = UOp(Op.ADD, x.type, (x, x))
    b = UOp(Op.ADD, x.type, (a, x))
    return UOp(Op.SINK, VOID, (UOp(Op.ADD, x.type, (b, a)),))


N = 1 << 20
WORDS = Type(i32, (N,))


def test_three_adds_of_a_million_ints_run_in_c():
    # The week-1 program: the per-element code this replaces kept four arrays of 4 MiB and
    # crashed. Its constant is uniform, so rangeify reads it as a scalar and hoists the sums.
    (result,) = run_c(three_adds(UOp(Op.CONST, WORDS, (), Elements.fill(3, N))))
    assert result.shape == (N,) and set(result.tolist()) == {15}  # (6 + 3) + 6


def test_three_adds_of_a_loaded_million_run_as_one_loop():
    memory = UOp(Op.BUFFER, WORDS, (), 0)
    sink = three_adds(UOp(Op.LOAD, WORDS, (memory,)))
    x = np.arange(N, dtype=np.int32) - N // 2
    (result,) = run_c(sink, {0: x})
    assert np.array_equal(result, 5 * x)  # (2x + x) + 2x
    lowered = rangeify(sink)
    assert sum(u.op is Op.RANGE for u in lowered.toposort()) == 1
    assert not any(u.op is Op.LOCAL for u in lowered.toposort())


WEEK4 = {
    "a_times_b_plus_c": A_TIMES_B_PLUS_C,
    "sum_and_mean_centred": """
        %a = BUFFER f32[{n}] 0
        %la = LOAD f32[{n}] %a
        %s = REDUCE f32 %la (ADD, (0))
        %e = EXPAND f32[{n}] %s
        %d = SUB f32[{n}] %la %e
        %st = STAGE f32[{n}] %d
        %mx = REDUCE f32 %st (MAX, (0))
        %out = SINK void %s %mx %st
    """,
    "store_in_place": """
        %a = BUFFER i32[{n}] 0
        %la = LOAD i32[{n}] %a
        %one = CONST i32 1
        %e = EXPAND i32[{n}] %one
        %p = ADD i32[{n}] %la %e
        %w = STORE void %a %p
        %a1 = AFTER i32[{n}] %a %w
        %m = REDUCE i32 %la (MIN, (0))
        %out = SINK void %a1 %m
    """,
}


def week4(name: str, n: int) -> UOp:
    return parse(WEEK4[name].format(n=n)).sink


def inputs_for(name: str, n: int) -> dict[int, np.ndarray]:
    """Data for each input buffer of the program (slots 0, 1, 2 of a*b + c, slot 0 else)."""
    rng = np.random.default_rng(3)
    if name == "store_in_place":
        return {0: rng.integers(-1000, 1000, n).astype(np.int32)}
    slots = 3 if name == "a_times_b_plus_c" else 1
    return {slot: rng.standard_normal(n).astype(np.float32) for slot in range(slots)}


@pytest.mark.parametrize("name", sorted(WEEK4))
def test_c_and_the_interpreter_agree_on_rangeified_programs(name):
    sink, data = week4(name, 1000), inputs_for(name, 1000)
    from_c = run_c(sink, data)
    interpreted = evaluate(rangeify(sink), data)
    assert [r.tobytes() for r in from_c] == [r.tobytes() for r in interpreted]


def test_rangeified_programs_compute_what_numpy_does():
    n = 1000
    a, b, c = inputs_for("a_times_b_plus_c", n).values()
    (result,) = run_c(week4("a_times_b_plus_c", n), {0: a, 1: b, 2: c})
    assert result.tobytes() == (a * b + c).tobytes()  # numpy rounds each op once too

    total, top, centred = run_c(week4("sum_and_mean_centred", n), {0: a})
    folded = np.float32(-0.0)
    for v in a:  # the fixed order: row-major from the first element
        folded = np.float32(folded + v)
    assert total == folded
    assert centred.tobytes() == (a - folded).tobytes() and top == (a - folded).max()

    data = inputs_for("store_in_place", n)[0]
    updated, low = run_c(week4("store_in_place", n), {0: data})
    assert updated.tolist() == (data + 1).tolist() and int(low) == data.min()


def test_rendered_c_stays_small_for_a_million_elements():
    for name in WEEK4:
        # (both sizes keep their LOCALs on the heap: a small one would be a stack array)
        small, large = (
            len(render_c(scheduled(inline_calls(week4(name, n))))) for n in (MILLION // 10, MILLION)
        )
        assert large < LIMIT
        assert large - small < 20  # one digit more in each loop bound and size in the header
    words = Type(i32, (MILLION,))
    uniform = UOp(Op.CONST, words, (), Elements.fill(3, MILLION))
    loaded = UOp(Op.LOAD, words, (UOp(Op.BUFFER, words, (), 0),))
    for x in (uniform, loaded):
        assert len(render_c(scheduled(three_adds(x)))) < LIMIT


def test_rangeify_cannot_be_skipped_for_a_backend_taking_kernels(tmp_path, capsys):
    path = tmp_path / "vector.uir"
    path.write_text(
        "%a = CONST i32[3] (1, 2, 3)\n%b = CONST i32[3] (10, 20, 30)\n"
        "%c = MUL i32[3] %a %b\n%out = SINK void %c\n"
    )
    for command in ("run", "render"):
        assert main([command, str(path), "--backend", "c", "--skip", "rangeify"]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "pass 'rangeify' cannot be skipped: it lowers the program" in captured.err
    # the interpreter runs the schedule's kernels as well (spec/uir-week6.md 2.5)
    assert main(["run", str(path), "--skip", "rangeify"]) == 1
    assert "pass 'rangeify' cannot be skipped: it lowers the program" in capsys.readouterr().err
    assert main(["run", str(path), "--passes", "fold"]) == 0
    assert capsys.readouterr().out == "10 40 90\n"
    main(["render", str(path), "--no-opt"])  # no optimizing pass, the lowering all the same
    assert "for (" in capsys.readouterr().out


def test_rangeified_programs_are_clean_under_sanitizers(tmp_path):
    # buffers start as zeros here (the harness has no inputs): x + 1 in place, sums of zeros
    words = Type(i32, (50,))
    sinks = [week4(name, 50) for name in sorted(WEEK4)]
    sinks.append(three_adds(UOp(Op.CONST, words, (), Elements(tuple(range(50))))))
    results = run_sanitized([scheduled(s) for s in sinks], tmp_path, compiler())
    for sink, found in zip(sinks, results, strict=True):
        expected = evaluate(rangeify(sink))
        assert [r.tobytes() for r in found] == [e.tobytes() for e in expected]


MIXED_OUTPUTS = """
%a = BUFFER f32[{n}] 0
%b = BUFFER f32[{n}] 3
%la = LOAD f32[{n}] %a
%s = REDUCE f32 %la (ADD, (0))
%d = MUL f32[{n}] %la %la
%w = STORE void %b %d
%b1 = AFTER f32[{n}] %b %w
%k = CONST i32 2
%out = SINK void %s %b1 %d %k
"""


def test_c_rendered_after_the_pipeline_runs_under_the_programs_own_abi():
    # `uir render` prints the C of the program after the passes, rangeify included; the render
    # grader runs it under the ABI derived from the program as written (render_check.py)
    sink = parse(MIXED_OUTPUTS.format(n=100)).sink
    after = rangeify(sink)
    pointers = [[(t.dtype, t.size) for t in layout(s).arg_types] for s in (after, sink)]
    assert pointers[0] == pointers[1]  # a scalar output is a one-element buffer: one pointer
    data = {0: np.linspace(-1, 1, 100, dtype=np.float32)}
    graded = load_source(CBackend().render(scheduled(after)), sink).run(data)
    assert [r.tobytes() for r in graded] == [r.tobytes() for r in run_c(sink, data)]
    squares = data[0] * data[0]
    assert graded[1].tobytes() == squares.tobytes() == graded[2].tobytes()
    assert int(graded[3]) == 2
