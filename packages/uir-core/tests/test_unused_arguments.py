"""Effects reached only through CALL arguments that no body uses (spec/uir-week1.md section 8.3).

A program means its inlined program, and inlining drops an unused argument with everything only
it reaches: such a STORE or END is dead. The verifier, the interpreter and the independent model
must all agree on that; each expected output is worked out by hand in the case's comment, and the
same program with a body that *reads* the argument shows that the effect then runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from uir.core import VerifyError, parse, verify
from uir.core.interpret import evaluate
from uir.testing import model
from uir.testing.unused_arguments import CASES, FLAT, USED


def _printed(outputs: list[np.ndarray]) -> list[list[int]]:
    return [np.ravel(o).tolist() for o in outputs]


def _program(text: str, body: str):
    return parse(text.format(body=body))


@pytest.mark.parametrize("name", CASES)
def test_interpreter_and_model_follow_the_inlined_program(name):
    text, body, expected = CASES[name]
    program = _program(text, body)
    verify(program)
    want = [[v] for v in expected]
    assert _printed(evaluate(program.sink)) == want
    assert _printed(model.run(program.sink)) == want


def test_a_used_argument_keeps_its_store_live():
    # With the body reading %x, the STORE %s (line 5) runs and replaces %b, which the SINK names.
    program = _program(FLAT, USED)
    with pytest.raises(VerifyError, match="the STORE on line 5 replaces") as caught:
        verify(program)
    assert caught.value.line == 13


def test_the_spec_example_prints_the_initial_contents():
    # spec/uir-week1.md section 8.3's worked example: a bare CONST body, expect 7 then 0.
    text = FLAT.replace("%arg  = PARAM i32 0\n{body}\n", "").replace("%body", "%seven")
    program = parse(text)
    verify(program)
    assert _printed(evaluate(program.sink)) == [[7], [0]]
    assert _printed(model.run(program.sink)) == [[7], [0]]
