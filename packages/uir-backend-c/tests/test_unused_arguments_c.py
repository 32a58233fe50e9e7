"""The C backend runs the inlined program: an effect reached only through a CALL argument that
no body uses is dead (spec/uir-week1.md section 8.3). Expected outputs are worked out by hand in
uir.testing.unused_arguments."""

from __future__ import annotations

import numpy as np

from uir.backend.c.plugin import compile_many
from uir.core import parse, verify
from uir.testing.backends import scheduled
from uir.testing.unused_arguments import CASES


def test_c_follows_the_inlined_program():
    programs = []
    for text, body, _ in CASES.values():
        program = parse(text.format(body=body))
        verify(program)
        programs.append(program.sink)
    for compiled, (_, _, expected) in zip(
        compile_many([scheduled(s) for s in programs]), CASES.values(), strict=True
    ):
        assert [np.ravel(o).tolist() for o in compiled.run()] == [[v] for v in expected]
