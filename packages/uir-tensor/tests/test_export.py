"""`to_uir`: a training step written out as .uir text runs through `uir run` (a child process,
as a student runs it) and prints the loss and the updated parameters this process computes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from uir.core.dtypes import i32
from uir.core.parse import parse
from uir.tensor import Tensor, nn, optim, realize, to_uir
from uir.testing.cli import run_uir


def _numbers(line: str) -> np.ndarray:
    return np.array([float(tok) for tok in line.split()], dtype=np.float64)


def test_a_gpt_training_step_runs_through_uir_run_with_the_same_loss(tmp_path: Path) -> None:
    model = nn.GPT(vocab=5, d_model=4, layers=1, heads=2, context=3, seed=1)
    opt = optim.AdamW(model.parameters(), lr=0.01, weight_decay=0.1)
    ids, targets = Tensor.input((2, 3), i32), Tensor.input((2, 3), i32)
    rng = np.random.default_rng(2)
    ids.write(rng.integers(0, 5, (2, 3)))
    targets.write(rng.integers(0, 5, (2, 3)))

    def step() -> Tensor:
        loss = model(ids).cross_entropy(targets)
        loss.backward()
        opt.step()
        return loss

    realize(step(), backend="interp")  # one step in, so the moments and counter are not zero
    loss = step()
    text = to_uir(loss)  # the pending updates stay pending: realize below runs them
    path = tmp_path / "step.uir"
    path.write_text(text)
    done = run_uir(tmp_path, "run", str(path))
    lines = done.stdout.splitlines()
    want_loss = realize(loss, backend="interp")[0]
    # The same program through the same interpreter and passes: the same f32 bits, printed
    # with enough digits to read them back.
    assert np.float32(float(lines[0])) == want_loss
    # then each assigned buffer's new contents in the order AdamW.step assigned them: the step
    # counter, then each parameter's m, v and value
    printed = [_numbers(line).astype(np.float32) for line in lines[1:]]
    assert printed[0].tolist() == [2.0]
    for i, p in enumerate(model.parameters()):
        m, v, value = printed[1 + 3 * i : 4 + 3 * i]
        assert np.array_equal(m, opt.m[i].buffer.read())  # type: ignore[union-attr]
        assert np.array_equal(v, opt.v[i].buffer.read())  # type: ignore[union-attr]
        assert np.array_equal(value, p.buffer.read())  # type: ignore[union-attr]
    assert len(printed) == 1 + 3 * len(model.parameters())
    # The C backend runs the same text to the same bits (spec/uir-week6.md: kernels are
    # bit-exact with the interpreter), when a C compiler is here.
    from uir.tensor.realize import registry

    if registry().backend("c").available()[0]:
        assert run_uir(tmp_path, "run", "--backend", "c", str(path)).stdout == done.stdout


def test_exported_program_holds_the_current_values(tmp_path: Path) -> None:
    w = Tensor.parameter(np.array([[1.0, 2.0], [3.0, 4.0]]))
    x = Tensor.input((1, 2))
    x.write([[0.5, -1.0]])
    y = x @ w
    text = to_uir(y)
    assert y.to_uir() == text
    program = parse(text)  # well-formed .uir
    assert program is not None
    assert "(1.0, 2.0, 3.0, 4.0)" in text and "(0.5, -1.0)" in text
    (tmp_path / "y.uir").write_text(text)
    out = run_uir(tmp_path, "run", "y.uir").stdout.split()
    assert [float(v) for v in out] == [0.5 - 3.0, 1.0 - 4.0]
    # the graph the session compiles has no init CONSTs: new values need no new program
    w.write([[0.0, 0.0], [0.0, 1.0]])
    assert "(0.0, 0.0, 0.0, 1.0)" in to_uir(y)
