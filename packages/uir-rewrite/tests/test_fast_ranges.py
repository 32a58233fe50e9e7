"""FAST ranges (spec/uir-week8.md 1.1): rangeify marks the loops of a FAST REDUCE's reduced axes
`(id, FAST)`, the text form parses, prints and verifies, and the interpreter runs such a loop in
order, so the lowered program prints the week-4 fold."""

from __future__ import annotations

import numpy as np
import pytest

from uir.core import parse, verify
from uir.core.errors import VerifyError
from uir.core.interpret import evaluate
from uir.core.loops import is_fast, is_parallel, range_id
from uir.core.ops import Op
from uir.core.printer import print_program
from uir.rewrite.rangeify import rangeify
from uir.testing.shaped import check_lowered

SUM = """
%x = CONST f32[4] (100000000, 1, -100000000, 1)
%s = REDUCE f32 %x (ADD, (0), FAST)
%o = SINK void %s
"""

# a [2,3,2] product folded over its middle axis: the kept last axis runs inside the reduced one
ROWS = """
%x = CONST i32[12] (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
%m = RESHAPE i32[2,3,2] %x
%s = REDUCE i32[2,2] %m (ADD, (1), FAST)
%o = SINK void %s
"""


def ranges(sink):
    return [u for u in sink.toposort() if u.op is Op.RANGE]


def test_fast_reduce_loop_is_marked_fast_and_keeps_the_week4_order() -> None:
    lowered = check_lowered(rangeify(parse(SUM).sink))
    (loop,) = ranges(lowered)
    assert is_fast(loop) and not is_parallel(loop)
    # in order: (1e8 + 1) rounds to 1e8, minus 1e8 is 0, plus 1 is 1 (spec/uir-week8.md 1)
    assert evaluate(lowered)[0] == np.float32(1.0)


def test_only_reduced_axes_are_fast() -> None:
    lowered = check_lowered(rangeify(parse(ROWS).sink))
    fast = [range_id(r) for r in ranges(lowered) if is_fast(r)]
    plain = [r for r in ranges(lowered) if not is_fast(r) and not is_parallel(r)]
    assert len(fast) == 1 and len(plain) == 1  # k is FAST; j inside it runs in order
    # rows (1,2),(3,4),(5,6) and (7,8),(9,10),(11,12) summed by hand
    assert evaluate(lowered)[0].tolist() == [9, 12, 27, 30]


def test_plain_reduce_loop_is_not_fast() -> None:
    lowered = check_lowered(rangeify(parse(SUM.replace(", FAST)", ")")).sink))
    assert not any(is_fast(r) for r in ranges(lowered))


def test_fast_range_round_trips_through_text() -> None:
    text = print_program(check_lowered(rangeify(parse(SUM).sink)))
    assert "(0, FAST)" in text
    again = parse(text)
    verify(again)
    assert evaluate(again.sink)[0] == np.float32(1.0)


@pytest.mark.parametrize("arg", ["(0, FAST, PARALLEL)", "(0, PARALLEL, FAST)", "(FAST, 0)"])
def test_malformed_fast_range_rejected_at_its_line(arg: str) -> None:
    text = (
        "%b = BUFFER i32[3] 0\n%n = CONST i32 3\n"
        f"%i = RANGE i32 %n {arg}\n"
        "%p = INDEX i32 %b %i\n%s = STORE void %p %i\n%e = END void %s %i\n"
        "%a = AFTER i32[3] %b %e\n%o = SINK void %a\n"
    )
    with pytest.raises(VerifyError, match=r"RANGE takes an id \(an int >= 0\)") as info:
        verify(parse(text))
    assert info.value.line == 3
