"""The viz page as one self-contained HTML file: its CSS, its script, dagre and the data inline,
so that it opens from disk with no server and no network."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

# Package data, installed beside this module (importlib.resources would cost every `uir` command
# tens of milliseconds of imports at start-up).
STATIC = Path(__file__).resolve().parent / "static"
PLACEHOLDER = re.compile(r"\{\{([A-Z]+)\}\}")


def _asset(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def _inline_script(text: str) -> str:
    # Inside <script>, only "</" can end the element early; JSON and JS both read "<\/" as "</".
    return text.replace("</", "<\\/")


def render_page(data: dict[str, Any]) -> str:
    """The HTML page showing `data` (uir.cli.viz.data.page_data)."""
    parts = {
        "TITLE": html.escape(data["path"]),
        "CSS": _asset("viz.css"),
        "DATA": _inline_script(json.dumps(data, ensure_ascii=False, separators=(",", ":"))),
        # The page carries dagre's license with dagre, since the page is what gets passed on.
        "DAGRE": _inline_script(f"/* @dagrejs/dagre\n{_asset('dagre-LICENSE')}*/\n")
        + _inline_script(_asset("dagre.min.js")),
        "VIZ": _inline_script(_asset("viz.js")),
    }
    # One pass over the template: what is put in is never searched for placeholders again.
    return PLACEHOLDER.sub(lambda m: parts[m.group(1)], _asset("viz.html"))
