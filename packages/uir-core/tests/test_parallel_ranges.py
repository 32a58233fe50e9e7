"""PARALLEL ranges (spec/uir-week7.md): the argument `(id, PARALLEL)`, its reading, what the
verifier rejects, and that the interpreter runs such a loop like any other."""

from __future__ import annotations

import numpy as np
import pytest

from uir.core import parse, verify
from uir.core.errors import ParseError, VerifyError
from uir.core.interpret import evaluate
from uir.core.loops import is_parallel, range_arg, range_id
from uir.core.ops import PARALLEL, Op
from uir.core.printer import print_program

FILL = """
%o = BUFFER i32[5] 0
%n = CONST i32 5
%three = CONST i32 3
%i = RANGE i32 %n (2, PARALLEL)
%v = MUL i32 %i %three
%p = INDEX i32 %o %i
%s = STORE void %p %v
%e = END void %s %i
%a = AFTER i32[5] %o %e
%out = SINK void %a
"""

# C[i,j] = sum_k A[i,k] B[k,j] for 2x3 by 3x2, i and j PARALLEL, the accumulator a LOCAL that
# every (i, j) iteration starts again (listed by the AFTER that names its version there).
MATMUL = """
%ad = CONST i32[6] (1, 2, 3, 4, 5, 6)
%bd = CONST i32[6] (7, 8, 9, 10, 11, 12)
%a = BUFFER i32[6] %ad 0
%b = BUFFER i32[6] %bd 1
%c = BUFFER i32[4] 2
%acc = LOCAL i32[1] 0
%two = CONST i32 2
%three = CONST i32 3
%z = CONST i32 0
%i = RANGE i32 %two (0, PARALLEL)
%j = RANGE i32 %two (1, PARALLEL)
%k = RANGE i32 %three 2
%accIJ = AFTER i32[1] %acc %i %j
%a0 = INDEX i32 %accIJ %z
%init = STORE void %a0 %z
%accK = AFTER i32[1] %acc %init %k
%ak = INDEX i32 %accK %z
%old = LOAD i32 %ak
%i3 = MUL i32 %i %three
%ik = ADD i32 %i3 %k
%pa = INDEX i32 %a %ik
%va = LOAD i32 %pa
%k2 = MUL i32 %k %two
%kj = ADD i32 %k2 %j
%pb = INDEX i32 %b %kj
%vb = LOAD i32 %pb
%prod = MUL i32 %va %vb
%new = ADD i32 %old %prod
%upd = STORE void %ak %new
%donek = END void %upd %k
%accD = AFTER i32[1] %acc %donek
%ad2 = INDEX i32 %accD %z
%sum = LOAD i32 %ad2
%i2 = MUL i32 %i %two
%ij = ADD i32 %i2 %j
%pc = INDEX i32 %c %ij
%st = STORE void %pc %sum
%done = END void %st %i %j
%c1 = AFTER i32[4] %c %done
%out = SINK void %c1
"""


def test_argument_forms() -> None:
    assert range_arg(3) == (3, False)
    assert range_arg((3, PARALLEL)) == (3, True)
    for bad in (-1, True, 1.5, (3,), (3, Op.ADD), (3, PARALLEL, 1), PARALLEL, (-1, PARALLEL)):
        assert range_arg(bad) is None, bad


def test_parse_print_round_trip() -> None:
    program = parse(FILL)
    text = print_program(program.sink)
    assert "RANGE i32 %1 (2, PARALLEL)" in text
    assert parse(text).sink is program.sink
    rng = next(u for u in program.sink.toposort() if u.op is Op.RANGE)
    assert is_parallel(rng) and range_id(rng) == 2


def test_parallel_and_sequential_ranges_are_distinct() -> None:
    sequential = parse(FILL.replace("(2, PARALLEL)", "2")).sink
    assert sequential is not parse(FILL).sink


def test_interpreter_runs_a_parallel_loop_like_any_loop() -> None:
    program = parse(FILL)
    verify(program)
    (out,) = evaluate(program.sink)
    assert out.tolist() == [0, 3, 6, 9, 12]


def test_matmul_with_parallel_output_ranges() -> None:
    program = parse(MATMUL)
    verify(program)
    (out,) = evaluate(program.sink)
    a = np.arange(1, 7).reshape(2, 3)
    b = np.arange(7, 13).reshape(3, 2)
    assert out.tolist() == (a @ b).reshape(-1).tolist()


def test_global_buffer_carried_across_a_parallel_range_is_rejected() -> None:
    text = """
%o = BUFFER i32[1] 0
%n = CONST i32 4
%z = CONST i32 0
%i = RANGE i32 %n (0, PARALLEL)
%a = AFTER i32[1] %o %i
%p = INDEX i32 %a %z
%v = LOAD i32 %p
%w = ADD i32 %v %i
%s = STORE void %p %w
%e = END void %s %i
%a2 = AFTER i32[1] %o %e
%out = SINK void %a2
"""
    with pytest.raises(VerifyError, match="PARALLEL RANGE on line 5") as info:
        verify(parse(text))
    assert info.value.line == 6
    verify(parse(text.replace("(0, PARALLEL)", "0")))  # the sequential loop is fine


def test_local_carried_across_a_parallel_loop_is_not_read_after_it() -> None:
    # The matmul's accumulator, read once more after the output loops: each (i, j) iteration
    # has its own, so which one would that be?
    text = MATMUL.replace(
        "%c1 = AFTER i32[4] %c %done\n%out = SINK void %c1",
        "%c1 = AFTER i32[4] %c %done\n%acc2 = AFTER i32[1] %acc %done\n"
        "%q = INDEX i32 %acc2 %z\n%last = LOAD i32 %q\n%out = SINK void %c1 %last",
    )
    with pytest.raises(VerifyError, match="across which it is carried") as info:
        verify(parse(text))
    assert info.value.line == text.splitlines().index("%acc2 = AFTER i32[1] %acc %done") + 1
    sequential = text.replace("(0, PARALLEL)", "0").replace("(1, PARALLEL)", "1")
    verify(parse(sequential))


def test_local_written_by_a_parallel_loop_is_memory_read_after_it() -> None:
    # Not carried across the loop: an intermediate buffer, each element written by one iteration.
    text = """
%o = BUFFER i32[4] 0
%t = LOCAL i32[4] 0
%n = CONST i32 4
%three = CONST i32 3
%i = RANGE i32 %n (0, PARALLEL)
%ii = MUL i32 %i %i
%p = INDEX i32 %t %i
%s = STORE void %p %ii
%e = END void %s %i
%t1 = AFTER i32[4] %t %e
%j = RANGE i32 %n (1, PARALLEL)
%r = SUB i32 %three %j
%q = INDEX i32 %t1 %r
%v = LOAD i32 %q
%po = INDEX i32 %o %j
%so = STORE void %po %v
%eo = END void %so %j
%o1 = AFTER i32[4] %o %eo
%out = SINK void %o1
"""
    program = parse(text)
    verify(program)
    (out,) = evaluate(program.sink)
    assert out.tolist() == [9, 4, 1, 0]


@pytest.mark.parametrize("arg", ["(0, ADD)", "(-1, PARALLEL)", "(0, PARALLEL, 1)", "(0)"])
def test_malformed_range_arguments_are_rejected(arg: str) -> None:
    with pytest.raises(VerifyError, match=r"RANGE takes an id \(an int >= 0\) or"):
        verify(parse(FILL.replace("(2, PARALLEL)", arg)))


def test_parallel_is_a_word_only_where_it_means_something() -> None:
    with pytest.raises(VerifyError):
        verify(parse("%a = CONST i32 PARALLEL\n%out = SINK void %a\n"))
    with pytest.raises(ParseError, match="unknown word 'SERIAL'"):
        parse(FILL.replace("PARALLEL", "SERIAL"))
