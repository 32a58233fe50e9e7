"""The `autodiff` pass: registered through the hooks, required for every form, one backward graph
per loss."""

from uir.autodiff.backward import backward
from uir.autodiff.passes import differentiate
from uir.cli.main import main
from uir.core.ops import Op
from uir.core.parse import parse
from uir.core.plugins import load_registry

PROGRAM = """\
%x = CONST f32[2] (1, 2)
%y = CONST f32[2] (3, 5)
%p = MUL f32[2] %x %y
%s = MUL f32[2] %p %p
%l = REDUCE f32 %s (ADD, (0))
%gx = GRAD f32[2] %l %x
%gy = GRAD f32[2] %l %y
%out = SINK void %gx %gy
"""
# l = sum((x*y)^2): dl/dx = 2 x y^2 = (18, 100), dl/dy = 2 x^2 y = (6, 40)
WANT = "18 100\n6 40\n"


def test_the_pass_is_registered_required_and_first(capsys):
    registry = load_registry()
    (autodiff,) = [p for p in registry.passes if p.name == "autodiff"]
    assert autodiff.required and autodiff.stage == "inline"
    assert registry.pass_owners["autodiff"] == "autodiff"
    assert main(["plugins"]) == 0
    assert "autodiff" in capsys.readouterr().out


def test_every_backend_and_no_opt_get_the_gradients(capsys, tmp_path):
    path = tmp_path / "p.uir"
    path.write_text(PROGRAM)
    for extra in ([], ["--no-opt"], ["--passes", "fold"]):
        for backend in ("interp", "c"):
            assert main(["run", "--backend", backend, *extra, str(path)]) == 0
            assert capsys.readouterr().out == WANT


def test_the_pass_cannot_be_skipped(capsys, tmp_path):
    path = tmp_path / "p.uir"
    path.write_text(PROGRAM)
    assert main(["run", "--skip", "autodiff", str(path)]) == 1
    assert "pass 'autodiff' cannot be skipped" in capsys.readouterr().err


def test_grads_of_one_loss_share_one_backward_graph():
    sink = parse(PROGRAM, "p.uir").sink
    gx, gy = sink.src
    loss, x = gx.src
    y = gy.src[1]
    # the adjoint of the shared product p, asked for x alone, for y alone, or both: one UOp
    p = loss.src[0].src[0]  # l = REDUCE(s), s = p * p
    assert p.op is Op.MUL and p.src == (x, y)
    alone_x, alone_y, both = backward(loss, {x}), backward(loss, {y}), backward(loss, {x, y})
    assert alone_x[p] is alone_y[p] is both[p]
    assert both[x] is alone_x[x] and both[y] is alone_y[y]
    out = differentiate(sink)
    assert not any(u.op is Op.GRAD for u in out.toposort())
    assert out.src == (both[x], both[y])


def test_a_program_without_grad_comes_back_as_the_same_object():
    sink = parse("%a = CONST f32 1\n%b = ADD f32 %a %a\n%o = SINK void %b\n", "p.uir").sink
    assert differentiate(sink) is sink
