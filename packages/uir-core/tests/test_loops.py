"""Loops: which ranges each UOp is inside, the loop nest and its schedule (hoisting), the loop
rules with the line they blame, and RANGE bounds in index proofs (uir.md section 7)."""

from __future__ import annotations

import pytest

from uir.core import parse, verify
from uir.core.bounds import bounds
from uir.core.errors import VerifyError
from uir.core.interpret import evaluate
from uir.core.loops import ranges_inside
from uir.core.ops import Op
from uir.core.schedule import Block, loop_schedule, schedule

MATMUL = """
%a = BUFFER i32[4] 0
%b = BUFFER i32[4] 1
%c = BUFFER i32[4] 2
%acc = LOCAL i32[1] 0
%two = CONST i32 2
%z = CONST i32 0
%i = RANGE i32 %two 0
%j = RANGE i32 %two 1
%k = RANGE i32 %two 2
%accIJ = AFTER i32[1] %acc %i %j
%a0 = INDEX i32 %accIJ %z
%init = STORE void %a0 %z
%accK = AFTER i32[1] %acc %init %k
%ak = INDEX i32 %accK %z
%old = LOAD i32 %ak
%i2 = MUL i32 %i %two
%ik = ADD i32 %i2 %k
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
%ad = INDEX i32 %accD %z
%sum = LOAD i32 %ad
%ij = ADD i32 %i2 %j
%pc = INDEX i32 %c %ij
%st = STORE void %pc %sum
%done = END void %st %i %j
%c1 = AFTER i32[4] %c %done
%out = SINK void %c1
"""


def named(text: str):
    """The parsed program and its UOps by name (`%x` -> UOp)."""
    program = parse(text)
    name_of_line = {i: line.split()[0] for i, line in enumerate(text.splitlines(), 1) if line}
    return program, {name_of_line[line]: uop for uop, line in program.lines.items()}


def names(n: dict, uops) -> set[str]:
    return {name for name, u in n.items() if u in uops}


def test_ranges_inside_follow_sources_and_stop_at_ends() -> None:
    p, n = named(MATMUL)
    inside = ranges_inside(p.sink)
    assert names(n, inside[n["%i2"]]) == {"%i"}
    assert names(n, inside[n["%ik"]]) == {"%i", "%k"}
    assert names(n, inside[n["%upd"]]) == {"%i", "%j", "%k"}
    assert names(n, inside[n["%donek"]]) == {"%i", "%j"}  # END %k takes %k out
    assert names(n, inside[n["%accIJ"]]) == {"%i", "%j"}  # an AFTER is inside its RANGE deps
    assert names(n, inside[n["%done"]]) == set()
    assert inside[n["%two"]] == frozenset()


SQUARES = """
%o = BUFFER i32[3] 0
%three = CONST i32 3
%p0 = PARAM i32 0
%sq = MUL i32 %p0 %p0
%k = RANGE i32 %three 0
%v = CALL i32 %sq %k
%ok = INDEX i32 %o %k
%st = STORE void %ok %v
%e = END void %st %k
%o1 = AFTER i32[3] %o %e
%out = SINK void %o1
"""


def test_a_call_is_inside_its_arguments_ranges_and_its_body_inside_none() -> None:
    p, n = named(SQUARES)
    inside = ranges_inside(p.sink)
    assert names(n, inside[n["%v"]]) == {"%k"}
    assert inside[n["%sq"]] == inside[n["%p0"]] == frozenset()
    verify(p)
    assert evaluate(p.sink)[0].tolist() == [0, 1, 4]  # k*k for k = 0, 1, 2


def test_schedule_is_a_loop_nest_with_hoisting() -> None:
    p, n = named(MATMUL)
    top = loop_schedule(p.sink)
    assert top.range is None
    [loop_i] = [b for b in top.body if isinstance(b, Block)]
    assert loop_i.range is n["%i"]
    # %i*2 depends on %i only: it runs in the %i loop, once per %i, not once per (i, j, k).
    assert n["%i2"] in loop_i.body
    [loop_j] = [b for b in loop_i.body if isinstance(b, Block)]
    assert loop_j.range is n["%j"]
    [loop_k] = [b for b in loop_j.body if isinstance(b, Block)]
    assert n["%init"] in loop_j.body and n["%upd"] in loop_k.body
    assert n["%k2"] in loop_k.body  # inside %k only, but %k's loop is inside %i and %j
    # The END follows its loop; the load of the result follows the END.
    body_j = loop_j.body
    assert body_j.index(loop_k) < body_j.index(n["%donek"]) < body_j.index(n["%sum"])
    assert top.body[-1] is p.sink
    # The RANGE is no statement of its own body; the flat schedule names it before its body.
    assert n["%k"] not in loop_k.body
    flat = schedule(p.sink)
    assert flat.index(n["%k"]) < flat.index(n["%upd"])


def test_loop_free_program_is_one_block_in_the_week2_order() -> None:
    p, n = named("%a = CONST i32 2\n%b = ADD i32 %a %a\n%out = SINK void %b\n")
    top = loop_schedule(p.sink)
    assert top.range is None and top.body == [n["%a"], n["%b"], p.sink]


def test_matmul_runs() -> None:
    p = parse(MATMUL)
    verify(p)
    # [[1,2],[3,4]] @ [[5,6],[7,8]] = [[19,22],[43,50]]
    got = evaluate(p.sink, {0: [1, 2, 3, 4], 1: [5, 6, 7, 8]})
    assert got[0].tolist() == [19, 22, 43, 50]


@pytest.mark.parametrize(
    ("end", "expected"),
    [(4, (0, 3)), (1, (0, 0)), (0, (0, 0)), (-5, (0, 0)), (2**31 - 1, (0, 2**31 - 2))],
)
def test_range_bounds(end: int, expected: tuple[int, int]) -> None:
    _, n = named(f"%n = CONST i32 {end}\n%k = RANGE i32 %n 0\n%out = SINK void %n\n")
    assert bounds(n["%k"]) == expected


LOOP = """%o = BUFFER i32[4] 0
%n = CONST i32 4
%z = CONST i32 0
%k = RANGE i32 %n 0
"""


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("%out = SINK void %k", 5, "this SINK source is inside the loop of the RANGE on line 4"),
        (
            "%p = INDEX i32 %o %k\n%s = STORE void %p %k\n%e = END void %s %k %k\n"
            "%o1 = AFTER i32[4] %o %e\n%out = SINK void %o1",
            7,
            "this END lists the RANGE on line 4 twice",
        ),
        (
            "%j = RANGE i32 %n 1\n%p = INDEX i32 %o %k\n%s = STORE void %p %k\n"
            "%e = END void %s %k %j\n%o1 = AFTER i32[4] %o %e\n%out = SINK void %o1",
            8,
            "the effect of this END is not inside the RANGE on line 5",
        ),
        (
            "%p = INDEX i32 %o %k\n%v = LOAD i32 %p\n%s = STORE void %p %v\n"
            "%e = END void %s %k\n%o1 = AFTER i32[4] %o %e\n%out = SINK void %o1",
            6,
            "this LOAD runs in the loop of the RANGE on line 4 and reads a version that the "
            "STORE on line 7 writes in that loop",
        ),
        (
            "%p = INDEX i32 %o %k\n%s = STORE void %p %k\n%e = END void %s %k\n"
            "%o1 = AFTER i32[4] %o %e\n%q = INDEX i32 %o1 %k\n%s2 = STORE void %q %z\n"
            "%e2 = END void %s2 %k\n%o2 = AFTER i32[4] %o %e2\n%out = SINK void %o2",
            9,
            "this statement is inside the loop of the RANGE on line 4 but depends on an END",
        ),
        (
            "%five = CONST i32 5\n%j = RANGE i32 %five 1\n%p = INDEX i32 %o %j\n"
            "%s = STORE void %p %k\n%e = END void %s %k %j\n%o1 = AFTER i32[4] %o %e\n"
            "%out = SINK void %o1",
            7,
            "cannot prove the index in range: it lies in [0, 4], the size is 4",
        ),
    ],
)
def test_loop_rejections_name_their_line(body: str, line: int, message: str) -> None:
    program = parse(LOOP + body + "\n")
    with pytest.raises(VerifyError) as caught:
        verify(program)
    assert caught.value.line == line
    assert caught.value.message.startswith(message), caught.value.message


def test_deep_nest_verifies_without_recursion() -> None:
    # 300 nested loops of one iteration each: every walk is iterative.
    depth = 300
    lines = ["%o = BUFFER i32[1] 0", "%one = CONST i32 1", "%z = CONST i32 0"]
    lines += [f"%r{d} = RANGE i32 %one {d}" for d in range(depth)]
    lines += ["%p = INDEX i32 %o %z"]
    value = "%r0"
    for d in range(1, depth):
        lines.append(f"%v{d} = ADD i32 {value} %r{d}")
        value = f"%v{d}"
    lines += [f"%s = STORE void %p {value}"]
    ranges = " ".join(f"%r{d}" for d in range(depth))
    lines += [f"%e = END void %s {ranges}", "%o1 = AFTER i32[1] %o %e", "%out = SINK void %o1"]
    program = parse("\n".join(lines) + "\n")
    verify(program)
    assert evaluate(program.sink)[0].tolist() == [0]
    flat = schedule(program.sink)
    assert sum(u.op is Op.RANGE for u in flat) == depth
