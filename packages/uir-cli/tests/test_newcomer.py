"""Small things a newcomer hit in the first hour (issue 24 item 6), each through the CLI:
`--skip fold` and simplify's folding, what `uir viz --html` says, `uir plugins`' punctuation,
and help pages that list backends, passes, examples and exit codes."""

from __future__ import annotations

import pytest

from uir.backend.cuda.plugin import CudaBackend
from uir.cli.main import main
from uir.core.plugins import load_registry

ADD = "%a = CONST i32 2\n%b = CONST i32 3\n%c = ADD i32 %a %b\n%out = SINK void %c\n"
FOLDED = "%0 = CONST i32 5\n%1 = SINK void %0\n"
UNFOLDED = "%0 = CONST i32 2\n%1 = CONST i32 3\n%2 = ADD i32 %0 %1\n%3 = SINK void %2\n"


def write(tmp_path, text: str, name: str = "p.uir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def uir(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("skip", "expected"),
    [
        ("fold", FOLDED),  # simplify folds 2 + 3 too: its rules build constant expressions
        ("simplify", FOLDED),
        ("fold,simplify", UNFOLDED),  # the only way to keep every constant expression
    ],
)
def test_skip_fold_leaves_folding_to_simplify(tmp_path, capsys, skip, expected) -> None:
    assert uir(["opt", write(tmp_path, ADD), "--skip", skip], capsys) == (0, expected, "")


def test_skip_says_that_simplify_folds(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["opt", "--help"])
    assert done.value.code == 0
    page = " ".join(capsys.readouterr().out.split())  # argparse wraps the option help
    assert "--skip fold,simplify leaves every constant unfolded" in page
    assert "simplify algebraic identities" in page and "folds constants too" in page


def test_viz_html_says_what_it_wrote(tmp_path, capsys) -> None:
    page = tmp_path / "add.html"
    code, out, err = uir(["viz", write(tmp_path, ADD), "--html", str(page)], capsys)
    size = len(page.read_bytes())
    # inline, fold and simplify run; fold rewrites ADD 2 3 once.
    assert (code, err) == (0, "")
    assert out == (
        f"uir viz: wrote {page} ({size} bytes): 3 pass(es), 1 rewrite step(s); "
        "open it in a browser\n"
    )


def test_viz_html_of_a_bad_program_says_its_error_is_on_the_page(tmp_path, capsys) -> None:
    page = tmp_path / "bad.html"
    path = write(tmp_path, "%a = CONST i32 2\n%o = FROB i32 %a\n")
    code, out, err = uir(["viz", path, "--html", str(page)], capsys)
    assert (code, err) == (0, "")
    assert out == (
        f"uir viz: wrote {page} ({len(page.read_bytes())} bytes): the parse error on line 2, "
        "0 pass(es), 0 rewrite step(s); open it in a browser\n"
    )


def test_plugins_puts_an_unavailable_backends_reason_last(monkeypatch, capsys) -> None:
    reason = "no CUDA driver. Ensure the NVIDIA display driver is installed."
    monkeypatch.setattr(CudaBackend, "available", lambda self: (False, reason))
    code, out, err = uir(["plugins"], capsys)
    assert (code, err) == (0, "")
    assert ".;" not in out
    (cuda,) = [line for line in out.splitlines() if line.startswith("  cuda ")]
    assert cuda == (
        "  cuda     CUDA C via NVRTC, run on the GPU through the CUDA driver API; takes kernels "
        f"[cuda]; unavailable: {reason}"
    )


@pytest.mark.parametrize("command", ["run", "render", "opt", "viz"])
def test_help_lists_passes_backends_examples_and_exit_codes(command, capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main([command, "--help"])
    assert done.value.code == 0
    page = capsys.readouterr().out
    registry = load_registry([])
    assert f"examples:\n  uir {command} " in page
    for p in registry.passes:
        assert f"\n  {p.name:<9} {p.description}" in page
    for name in registry.backends:
        assert (f"\n  {name:<9} " in page) == (command in ("run", "render"))
    assert page.endswith(
        "exit codes:\n"
        "  0  success\n"
        "  1  usage or I/O error (a bad option, an unreadable file, an unknown backend or pass)\n"
        "  2  parse error: FILE:LINE: error: message, then the line and a caret\n"
        "  3  verification error (types, shapes, arguments, bounds, memory order)\n"
        "  4  internal or backend failure (an unavailable backend, out of memory, --timeout)\n"
    )


def test_the_top_help_has_examples_and_exit_codes(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    page = capsys.readouterr().out
    assert "examples:\n  uir run examples/add.uir" in page
    assert "\nexit codes:\n  0  success\n" in page
    assert "perf-merge" in page
