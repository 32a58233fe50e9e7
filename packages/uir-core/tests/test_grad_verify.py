"""GRAD in core (uir.md 10.4, spec/uir-week9.md): parsed, printed, typed and rejected by core; a
GRAD no pass removed is exit 4 naming uir-autodiff."""

import pytest

from uir.core.errors import BackendError, VerifyError
from uir.core.gradients import grad_sources, on_path
from uir.core.ops import Op, week_of
from uir.core.parse import parse
from uir.core.plugins import prepare
from uir.core.printer import print_program
from uir.core.verify import verify


def program(*lines: str):
    return parse("\n".join(lines) + "\n", "t.uir")


def rejection(*lines: str) -> VerifyError:
    with pytest.raises(VerifyError) as info:
        verify(program(*lines))
    assert info.value.exit_code == 3
    return info.value


X = "%x = CONST f32[2] (3, 4)"
SQ = "%y = MUL f32[2] %x %x"
LOSS = "%l = REDUCE f32 %y (ADD, (0))"


def test_grad_parses_prints_back_and_verifies():
    text = "\n".join([X, SQ, LOSS, "%g = GRAD f32[2] %l %x", "%o = SINK void %g"]) + "\n"
    p = program(text)
    verify(p)
    grad = p.sink.src[0]
    assert grad.op is Op.GRAD and grad.src[1].op is Op.CONST and week_of(Op.GRAD) == 9
    assert parse(print_program(p.sink), "t.uir").sink is p.sink


@pytest.mark.parametrize(
    "lines",
    [
        # with respect to a LOAD, a CAST, a value used only inside a CALL argument
        ["%b = BUFFER f32[2] 0", "%x = LOAD f32[2] %b", SQ, LOSS, "%g = GRAD f32[2] %l %x",
         "%o = SINK void %g"],
        # a loss that does not depend on x (its gradient is zero), a scalar x
        ["%x = CONST f32 2", "%l = CONST f32 1", "%g = GRAD f32 %l %x", "%o = SINK void %g"],
        # a GRAD inside a loss (a second derivative), in f64
        ["%x = CONST f64 2", "%y = MUL f64 %x %x", "%z = MUL f64 %y %x", "%g = GRAD f64 %z %x",
         "%h = GRAD f64 %g %x", "%o = SINK void %h"],
        # a GRAD inside a CALL body, with respect to a PARAM
        ["%p = PARAM f32 0", "%q = MUL f32 %p %p", "%d = GRAD f32 %q %p", "%a = CONST f32 3",
         "%c = CALL f32 %d %a", "%o = SINK void %c"],
        # REDUCE MUL off the path from x to the loss is a constant
        ["%x = CONST f32 2", "%w = CONST f32[2] (3, 4)", "%p = REDUCE f32 %w (MUL, (0))",
         "%l = MUL f32 %p %x", "%g = GRAD f32 %l %x", "%o = SINK void %g"],
        # x itself a REDUCE MUL: the gradient does not go through its product
        ["%w = CONST f32[2] (3, 4)", "%x = REDUCE f32 %w (MUL, (0))", "%l = MUL f32 %x %x",
         "%g = GRAD f32 %l %x", "%o = SINK void %g"],
    ],
)  # fmt: skip
def test_well_formed_grads_are_accepted(lines):
    verify(program(*lines))


INT = "%i = CONST i32 2"
LOOP = ["%n = CONST i32 4", "%k = RANGE i32 %n 0"]


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        ([X, SQ, "%g = GRAD f32[2] %y %x", "%o = SINK void %g"], 3,
         "loss must be a rank-0 float value, not f32[2]: REDUCE it"),
        (["%x = CONST f32 2", INT, "%g = GRAD f32 %i %x", "%o = SINK void %g"], 3,
         "rank-0 float value, not i32"),
        ([INT, "%c = CAST f32 %i", "%g = GRAD i32 %c %i", "%o = SINK void %g"], 3,
         "with respect to a float value, not i32"),
        ([X, SQ, LOSS, "%g = GRAD f32 %l %x", "%o = SINK void %g"], 4,
         "of type f32[2] has that type, not f32"),
        ([X, SQ, LOSS, "%g = GRAD f64[2] %l %x", "%o = SINK void %g"], 4, "not f64[2]"),
        (["%b = BUFFER f32[2] 0", "%x = LOAD f32[2] %b", SQ, LOSS, "%g = GRAD f32[2] %l %b",
          "%o = SINK void %g"], 5, "BUFFER is a memory reference: LOAD it"),
        ([X, SQ, LOSS, "%g = GRAD f32[2] %l", "%o = SINK void %g"], 4, "takes 2 operand"),
        ([X, SQ, LOSS, "%g = GRAD f32[2] %l %x 1", "%o = SINK void %g"], 4, "no argument"),
        ([X, "%p = REDUCE f32 %x (MUL, (0))", "%l = ADD f32 %p %p", "%g = GRAD f32[2] %l %x",
          "%o = SINK void %g"], 4, "through the REDUCE MUL on line 2"),
        # through a CALL, judged as if inlined: the REDUCE MUL is in the body
        ([X, "%p = PARAM f32[2] 0", "%r = REDUCE f32 %p (MUL, (0))", "%l = CALL f32 %r %x",
          "%g = GRAD f32[2] %l %x", "%o = SINK void %g"], 5, "REDUCE MUL on line 3"),
        # a loss computed in a loop
        (["%b = BUFFER f32[4] 0", *LOOP, "%e = INDEX f32 %b %k", "%v = LOAD f32 %e",
          "%w = MUL f32 %v %v", "%g = GRAD f32 %w %v", "%c = BUFFER f32[4] 1",
          "%f = INDEX f32 %c %k", "%s = STORE void %f %g", "%d = END void %s %k",
          "%a = AFTER f32[4] %c %d", "%o = SINK void %a"], 7,
         "GRAD is inside the loop of the RANGE on line 3"),
    ],
)  # fmt: skip
def test_each_malformed_grad_is_rejected_at_its_line(lines, line, words):
    error = rejection(*lines)
    assert error.line == line
    assert words in error.message


def test_what_a_gradient_flows_through():
    p = program(
        "%x = CONST f32 2",
        "%c = CMPLT bool %x %x",
        "%t = TRUNC f32 %x",
        "%i = CAST i32 %x",
        "%f = CAST f32 %i",
        "%w = WHERE f32 %c %t %f",
        "%s = ADD f32 %w %x",
        "%o = SINK void %s",
    )
    s = p.sink.src[0]
    w, x = s.src
    assert grad_sources(s) == (w, x)
    assert grad_sources(w) == w.src[1:]  # not the condition
    t, f = w.src[1:]
    assert grad_sources(t) == () and grad_sources(f) == ()  # TRUNC; a CAST from an int
    assert on_path(s, x) == [x, s]  # TRUNC and the int round trip carry nothing


def test_a_grad_no_pass_removed_is_exit_4_naming_the_package():
    p = program(X, SQ, LOSS, "%g = GRAD f32[2] %l %x", "%o = SINK void %g")
    for form in ("program", "kernels"):
        with pytest.raises(BackendError, match="install uir-autodiff") as info:
            prepare(p.sink, form, [])
        assert info.value.exit_code == 4
