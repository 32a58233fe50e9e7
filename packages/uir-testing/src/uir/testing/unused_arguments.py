"""Programs whose effects are reached only through CALL arguments no body uses, shared by the
interpreter's and the C backend's tests (spec/uir-week1.md section 8.3: such effects are dead).
Each case's expected output is worked out by hand in its comment."""

from __future__ import annotations

# The SINK names %b, version 0 of buffer 0. {body} decides whether the STORE %s is live.
FLAT = """\
%b    = BUFFER i32[1] 0
%z    = CONST i32 0
%one  = CONST i32 1
%p    = INDEX i32 %b %z
%s    = STORE void %p %one
%b1   = AFTER i32[1] %b %s
%q    = INDEX i32 %b1 %z
%x    = LOAD i32 %q
%seven = CONST i32 7
%arg  = PARAM i32 0
{body}
%c    = CALL i32 %body %x
%out  = SINK void %c %b
"""

# Two ENDs close one loop over k (2 iterations). Under %e1, l[0] += 1; under %e2, o[0] = l[0] as
# the carried AFTER %lk sees it. %e1 is reached only through %x, the CALL's argument.
LOOP = """\
%l    = LOCAL i32[1] 0
%o    = BUFFER i32[1] 0
%z    = CONST i32 0
%one  = CONST i32 1
%n    = CONST i32 2
%pl   = INDEX i32 %l %z
%init = STORE void %pl %z
%k    = RANGE i32 %n 0
%lk   = AFTER i32[1] %l %init %k
%p    = INDEX i32 %lk %z
%old  = LOAD i32 %p
%inc  = ADD i32 %old %one
%s1   = STORE void %p %inc
%e1   = END void %s1 %k
%po   = INDEX i32 %o %z
%s2   = STORE void %po %old
%e2   = END void %s2 %k
%o1   = AFTER i32[1] %o %e2
%l1   = AFTER i32[1] %l %e1
%q    = INDEX i32 %l1 %z
%x    = LOAD i32 %q
%seven = CONST i32 7
%arg  = PARAM i32 0
{body}
%c    = CALL i32 %body %x
%out  = SINK void %c %o1
"""

UNUSED = "%body = ADD i32 %seven %seven"  # reads no PARAM: the argument is unused
USED = "%body = ADD i32 %arg %seven"  # reads slot 0
# The outer body passes its PARAM 0 to an inner CALL whose body ignores it: inlined, the outer
# argument disappears too.
NESTED_UNUSED = "%inner = CALL i32 %seven %arg\n%body = ADD i32 %inner %seven"

CASES = {
    # %s is dead: %b is buffer 0's last version and prints its initial 0; the CALL gives 7 + 7.
    "flat_unused": (FLAT, UNUSED, [14, 0]),
    "flat_nested_unused": (FLAT, NESTED_UNUSED, [14, 0]),
    # %s1 never runs, so in both iterations %lk holds the init's 0: o = [0]. 7 + 7 = 14.
    "loop_unused": (LOOP, UNUSED, [14, 0]),
    "loop_nested_unused": (LOOP, NESTED_UNUSED, [14, 0]),
    # %s1 runs: iteration 0 stores old = 0 to o and makes l[0] = 1; iteration 1 stores old = 1
    # and makes l[0] = 2. x = 2, so the CALL gives 2 + 7 = 9, and o = [1].
    "loop_used": (LOOP, USED, [9, 1]),
}
