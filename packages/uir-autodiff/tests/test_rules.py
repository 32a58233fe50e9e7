"""The derivative of every op, on values worked out by hand (spec/uir-week9.md section 3).

Each program prints its gradients through `uir run` (the installed `autodiff` pass, the
interpreter); values are chosen so that every order of float operations gives the result exactly,
except where a transcendental rounds (compared within 2 ulp of f32 there)."""

import math

import numpy as np
import pytest

from uir.cli.main import main


def run(capsys, tmp_path, lines, *args):
    path = tmp_path / "g.uir"
    path.write_text("\n".join(lines) + "\n")
    code = main(["run", *args, str(path)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return [[float(v) for v in line.split()] for line in captured.out.splitlines()]


def grads_of(capsys, tmp_path, body, targets, *args):
    """The gradients of the loss `%l`, defined by `body`, with respect to each of `targets`
    (name, type)."""
    lines = [*body]
    for i, (name, type_) in enumerate(targets):
        lines.append(f"%g{i} = GRAD {type_} %l %{name}")
    lines.append("%out = SINK void " + " ".join(f"%g{i}" for i in range(len(targets))))
    return run(capsys, tmp_path, lines, *args)


X3 = "%x = CONST f32 3"
Y5 = "%y = CONST f32 5"
XY = [("x", "f32"), ("y", "f32")]
THIRD = float(f"{np.float32(1 / 3):.9g}")  # 1 shared by 3, rounded once to f32, printed
TWO = ["%x = CONST f32 2", "%one = CONST f32 1", "%y = ADD f32 %one %one"]

CASES = [
    # l = x*y + x - y: (y + 1, x - 1)
    ([X3, Y5, "%m = MUL f32 %x %y", "%a = ADD f32 %m %x", "%l = SUB f32 %a %y"], XY, [[6], [2]]),
    # l = -(x) * y: (-y, -x)
    ([X3, Y5, "%n = NEG f32 %x", "%l = MUL f32 %n %y"], XY, [[-5], [-3]]),
    # l = x / y at (3, 2): (1/2, -3/4)
    ([X3, "%y = CONST f32 2", "%l = FDIV f32 %x %y"], XY, [[0.5], [-0.75]]),
    # RECIP at 2: -1/4; SQRT at 4: 1/4
    (["%x = CONST f32 2", "%l = RECIP f32 %x"], [("x", "f32")], [[-0.25]]),
    (["%x = CONST f32 4", "%l = SQRT f32 %x"], [("x", "f32")], [[0.25]]),
    # MAX and MIN: g to the larger (smaller) source, halves at a tie
    ([X3, "%y = CONST f32 2", "%l = MAX f32 %x %y"], XY, [[1], [0]]),
    ([X3, "%y = CONST f32 2", "%l = MIN f32 %x %y"], XY, [[0], [1]]),
    # (two CONSTs of one value are one UOp: y is 2 computed otherwise)
    ([*TWO, "%l = MAX f32 %x %y"], XY, [[0.5], [0.5]]),
    ([*TWO, "%l = MIN f32 %x %y"], XY, [[0.5], [0.5]]),
    # one value both sources of a MAX: each half and the sum, 1
    (["%x = CONST f32 2", "%l = MAX f32 %x %x"], [("x", "f32")], [[1]]),
    # WHERE: to the chosen branch only, nothing through the condition
    (["%x = CONST f32 1", "%y = CONST f32 2", "%c = CMPLT bool %x %y", "%s = MUL f32 %x %x",
      "%l = WHERE f32 %c %s %y"], XY, [[2], [0]]),
    # CAST between floats: back through f64
    (["%x = CONST f32 1.5", "%d = CAST f64 %x", "%s = MUL f64 %d %d", "%l = CAST f32 %s"],
     [("x", "f32")], [[3]]),
    # TRUNC, a comparison and a cast through an int carry nothing
    (["%x = CONST f32 1.5", "%t = TRUNC f32 %x", "%i = CAST i32 %x", "%f = CAST f32 %i",
      "%l = ADD f32 %t %f"], [("x", "f32")], [[0]]),
    # used twice: l = x*x + x at 3
    ([X3, "%s = MUL f32 %x %x", "%l = ADD f32 %s %x"], [("x", "f32")], [[7]]),
    # a loss that does not depend on x: zeros of x's type
    (["%x = CONST f32[3] (1, 2, 3)", "%l = CONST f32 4"], [("x", "f32[3]")], [[0, 0, 0]]),
    # STAGE passes g through
    ([X3, "%s = STAGE f32 %x", "%l = MUL f32 %s %s"], [("x", "f32")], [[6]]),
    # REDUCE ADD: the weights
    (["%x = CONST f32[2,3] (1, 2, 3, 4, 5, 6)", "%w = CONST f32[2,3] (7, 8, 9, 10, 11, 12)",
      "%m = MUL f32[2,3] %x %w", "%l = REDUCE f32 %m (ADD, (0, 1))"],
     [("x", "f32[2,3]")], [[7, 8, 9, 10, 11, 12]]),
    # REDUCE ADD over one of two axes, then weighted: row weights broadcast along the row
    (["%x = CONST f32[2,3] (1, 2, 3, 4, 5, 6)", "%r = REDUCE f32[2] %x (ADD, (1))",
      "%w = CONST f32[2] (10, 20)", "%m = MUL f32[2] %r %w", "%l = REDUCE f32 %m (ADD, (0))"],
     [("x", "f32[2,3]")], [[10, 10, 10, 20, 20, 20]]),
    # REDUCE MAX: shared by the ties
    (["%x = CONST f32[4] (1, 3, 3, 2)", "%l = REDUCE f32 %x (MAX, (0))"],
     [("x", "f32[4]")], [[0, 0.5, 0.5, 0]]),
    (["%x = CONST f32[4] (1, -3, -3, -3)", "%l = REDUCE f32 %x (MIN, (0))"],
     [("x", "f32[4]")], [[0, THIRD, THIRD, THIRD]]),
    (["%x = CONST f32[2,2] (1, 4, 4, 4)", "%r = REDUCE f32[2] %x (MAX, (1))",
      "%w = CONST f32[2] (2, 6)", "%m = MUL f32[2] %r %w", "%l = REDUCE f32 %m (ADD, (0))"],
     [("x", "f32[2,2]")], [[0, 2, 3, 3]]),
    # EXPAND: summed over the broadcast axes (leading, and a dim of 1)
    (["%x = CONST f32[3] (1, 2, 3)", "%e = EXPAND f32[2,3] %x",
      "%w = CONST f32[2,3] (1, 2, 3, 4, 5, 6)", "%m = MUL f32[2,3] %e %w",
      "%l = REDUCE f32 %m (ADD, (0, 1))"], [("x", "f32[3]")], [[5, 7, 9]]),
    (["%x = CONST f32[2,1] (1, 2)", "%e = EXPAND f32[2,3] %x",
      "%w = CONST f32[2,3] (1, 2, 3, 4, 5, 6)", "%m = MUL f32[2,3] %e %w",
      "%l = REDUCE f32 %m (ADD, (0, 1))"], [("x", "f32[2,1]")], [[6, 15]]),
    (["%x = CONST f32 2", "%e = EXPAND f32[4] %x", "%m = MUL f32[4] %e %e",
      "%l = REDUCE f32 %m (ADD, (0))"], [("x", "f32")], [[16]]),
    (["%x = CONST f32[1] (2)", "%e = EXPAND f32[2,2] %x", "%l = REDUCE f32 %e (ADD, (0, 1))"],
     [("x", "f32[1]")], [[4]]),
    # the movement ops: g through the inverse index map
    (["%x = CONST f32[2,3] (1, 2, 3, 4, 5, 6)", "%p = PERMUTE f32[3,2] %x (1, 0)",
      "%w = CONST f32[3,2] (1, 2, 3, 4, 5, 6)", "%m = MUL f32[3,2] %p %w",
      "%l = REDUCE f32 %m (ADD, (0, 1))"], [("x", "f32[2,3]")], [[1, 3, 5, 2, 4, 6]]),
    (["%x = CONST f32[3] (1, 2, 3)", "%f = FLIP f32[3] %x (0)", "%w = CONST f32[3] (4, 5, 6)",
      "%m = MUL f32[3] %f %w", "%l = REDUCE f32 %m (ADD, (0))"], [("x", "f32[3]")], [[6, 5, 4]]),
    (["%x = CONST f32[2] (1, 2)", "%p = PAD f32[5] %x ((1, 2))",
      "%w = CONST f32[5] (1, 2, 3, 4, 5)", "%m = MUL f32[5] %p %w",
      "%l = REDUCE f32 %m (ADD, (0))"], [("x", "f32[2]")], [[2, 3]]),
    (["%x = CONST f32[4] (1, 2, 3, 4)", "%s = SHRINK f32[2] %x ((1, 3))",
      "%w = CONST f32[2] (10, 20)", "%m = MUL f32[2] %s %w", "%l = REDUCE f32 %m (ADD, (0))"],
     [("x", "f32[4]")], [[0, 10, 20, 0]]),
    (["%x = CONST f32[2,2] (1, 2, 3, 4)", "%r = RESHAPE f32[4] %x",
      "%w = CONST f32[4] (5, 6, 7, 8)", "%m = MUL f32[4] %r %w", "%l = REDUCE f32 %m (ADD, (0))"],
     [("x", "f32[2,2]")], [[5, 6, 7, 8]]),
    (["%x = CONST f32[2] (1, 2)", "%y = CONST f32[2] (3, 4)", "%s = STACK f32[2,2] %x %y",
      "%w = CONST f32[2,2] (1, 2, 3, 4)", "%m = MUL f32[2,2] %s %w",
      "%l = REDUCE f32 %m (ADD, (0, 1))"], [("x", "f32[2]"), ("y", "f32[2]")], [[1, 2], [3, 4]]),
    ([X3, Y5, "%s = STACK f32[2] %x %y", "%w = CONST f32[2] (5, 7)", "%m = MUL f32[2] %s %w",
      "%l = REDUCE f32 %m (ADD, (0))"], XY, [[5], [7]]),
    (["%v = CONST f32[3] (1, 2, 3)", "%i = CONST i32 1", "%e = INDEX f32 %v %i",
      "%l = MUL f32 %e %e"], [("v", "f32[3]")], [[0, 4, 0]]),
    # a CALL, differentiated as if inlined
    (["%p = PARAM f32 0", "%q = MUL f32 %p %p", X3, "%l = CALL f32 %q %x"], [("x", "f32")], [[6]]),
    # a LOAD that is not x is a constant: no gradient flows through memory
    (["%b = BUFFER f32[1] %bi 0", X3, "%z = CONST i32 0", "%e = INDEX f32 %b %z",
      "%v = LOAD f32 %e", "%l = MUL f32 %v %x"], [("x", "f32"), ("v", "f32")], [[2], [3]]),
]  # fmt: skip
CASES[-1][0].insert(0, "%bi = CONST f32[1] (2)")


@pytest.mark.parametrize(("body", "targets", "want"), CASES)
def test_each_rule_gives_the_gradient_worked_by_hand(capsys, tmp_path, body, targets, want):
    assert grads_of(capsys, tmp_path, body, targets) == want


@pytest.mark.parametrize(
    ("op", "at", "want"),
    [
        ("EXP2", 1.0, 2 * math.log(2)),
        ("LOG2", 2.0, 1 / (2 * math.log(2))),
        ("SIN", 0.0, 1.0),
        ("SIN", 1.0, math.cos(1.0)),
    ],
)
def test_transcendentals_within_two_ulp_of_f32(capsys, tmp_path, op, at, want):
    body = [f"%x = CONST f32 {at}", f"%l = {op} f32 %x"]
    ((got,),) = grads_of(capsys, tmp_path, body, [("x", "f32")])
    assert abs(got - want) <= 4 * math.ulp(abs(want)) * 2**29  # 4 ulp of f32


def test_a_grad_inside_a_loss_gives_higher_derivatives(capsys, tmp_path):
    # x^3 at 2: 12, then 6x = 12, then 6
    lines = [
        "%x = CONST f64 2",
        "%s = MUL f64 %x %x",
        "%c = MUL f64 %s %x",
        "%d1 = GRAD f64 %c %x",
        "%d2 = GRAD f64 %d1 %x",
        "%d3 = GRAD f64 %d2 %x",
        "%out = SINK void %d1 %d2 %d3",
    ]
    assert run(capsys, tmp_path, lines) == [[12], [12], [6]]


def test_a_grad_in_a_call_body_with_respect_to_its_param(capsys, tmp_path):
    lines = [
        "%p = PARAM f32 0",
        "%q = MUL f32 %p %p",
        "%d = GRAD f32 %q %p",  # 2p
        "%a = CONST f32 3",
        "%b = CONST f32 -4",
        "%ca = CALL f32 %d %a",
        "%cb = CALL f32 %d %b",
        "%out = SINK void %ca %cb",
    ]
    assert run(capsys, tmp_path, lines) == [[6], [-8]]


def test_one_sgd_step_loads_parameters_and_stores_them_back(capsys, tmp_path):
    # w <- w - 0.5 * d/dw sum((w - t)^2) = w - (w - t) = t
    lines = [
        "%wi = CONST f32[3] (1, 2, 3)",
        "%w = BUFFER f32[3] %wi 0",
        "%v = LOAD f32[3] %w",
        "%t = CONST f32[3] (4, 4, 4)",
        "%d = SUB f32[3] %v %t",
        "%s = MUL f32[3] %d %d",
        "%l = REDUCE f32 %s (ADD, (0))",
        "%g = GRAD f32[3] %l %v",
        "%h = CONST f32[3] (0.5, 0.5, 0.5)",
        "%u = MUL f32[3] %g %h",
        "%n = SUB f32[3] %v %u",
        "%st = STORE void %w %n",
        "%w1 = AFTER f32[3] %w %st",
        "%out = SINK void %l %w1",
    ]
    for backend in ("interp", "c"):
        assert run(capsys, tmp_path, lines, "--backend", backend) == [[14], [4, 4, 4]]


def test_a_higher_derivative_at_a_const_equal_to_the_seed(capsys, tmp_path):
    # x = 1 is the very UOp of the seed 1.0 of the inner backward graph; the outer GRAD must
    # differentiate x only: d2/dx2 (x^3) = 6x = 6, not 6x + 3x^2 (the seed taken for x)
    lines = [
        "%x = CONST f32 1",
        "%s = MUL f32 %x %x",
        "%c = MUL f32 %s %x",
        "%d1 = GRAD f32 %c %x",
        "%d2 = GRAD f32 %d1 %x",
        "%out = SINK void %d1 %d2",
    ]
    assert run(capsys, tmp_path, lines) == [[3], [6]]


def test_a_gradient_with_respect_to_a_gradient(capsys, tmp_path):
    # g = d(x^2 y)/dx = 2xy; l = g * g; dl/dg = 2g = 4xy = 24 at (2, 3)
    lines = [
        "%x = CONST f32 2",
        "%y = CONST f32 3",
        "%s = MUL f32 %x %x",
        "%f = MUL f32 %s %y",
        "%g = GRAD f32 %f %x",
        "%l = MUL f32 %g %g",
        "%h = GRAD f32 %l %g",
        "%out = SINK void %g %h",
    ]
    assert run(capsys, tmp_path, lines) == [[12], [24]]
