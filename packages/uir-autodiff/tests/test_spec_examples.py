"""Every program of spec/uir-week9.md that states its `# expect:` lines prints them."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from uir.cli.main import main

SPEC = Path(__file__).resolve().parents[3] / "spec" / "uir-week9.md"
BLOCKS = [
    textwrap.dedent(block)
    for block in re.findall(r"```\n(.*?)```", SPEC.read_text(), re.S)
    if textwrap.dedent(block).startswith("# expect:")
]


def test_the_spec_has_its_worked_programs():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("block", BLOCKS)
def test_each_worked_program_prints_what_it_says(block, tmp_path, capsys):
    path = tmp_path / "example.uir"
    path.write_text(block)
    assert main(["run", str(path)]) == 0
    want = [line[len("# expect:") :].strip() for line in block.splitlines() if "# expect:" in line]
    assert capsys.readouterr().out.splitlines() == want
