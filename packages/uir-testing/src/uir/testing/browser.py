"""Headless Chromium for tests of the pages `uir` writes: the DOM after the page's scripts ran,
and a screenshot. Tests skip where no browser is installed (`.ci/run` installs Debian's
`chromium`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")
TIMEOUT_S = 120.0


def find_chromium() -> str | None:
    """The Chromium (or Chrome) on PATH, or None."""
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(browser: str, *options: str) -> subprocess.CompletedProcess[str]:
    # A profile of its own per run, so parallel runs never share a lock; --no-sandbox since CI
    # runs as root, where Chromium's own sandbox refuses to start (the pages are ours).
    with tempfile.TemporaryDirectory(prefix="uir-chromium-") as profile:
        command = [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *options,
        ]
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=True,
            env={**os.environ, "HOME": profile},
        )


def dump_dom(browser: str, page: Path, fragment: str = "") -> str:
    """The page's DOM, serialized after its scripts ran; `fragment` is the address's `#...`."""
    address = page.resolve().as_uri() + fragment
    return _run(browser, "--virtual-time-budget=5000", "--dump-dom", address).stdout


def screenshot(browser: str, page: Path, png: Path, size: tuple[int, int] = (1280, 900)) -> None:
    """A PNG of the page as a window of `size` shows it."""
    _run(
        browser,
        f"--screenshot={png}",
        f"--window-size={size[0]},{size[1]}",
        "--hide-scrollbars",
        "--virtual-time-budget=5000",
        page.resolve().as_uri(),
    )
