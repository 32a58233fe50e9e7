"""The C backend: UIR programs rendered as C99 with no undefined behaviour, compiled and run.

render.py turns a program into C, abi.py fixes how buffers and outputs are passed, toolchain.py
compiles (with a cache), runtime.py loads and runs, plugin.py registers the backend `c`.

The names below are the backend's public API for other packages: what a grader needs to build
and run C that someone else rendered for a program (uir-cli's `uir test --render`): the entry
point's name and the program's ABI (`layout`), a `main` that fills the buffers, calls the entry
point and dumps every output (`harness_main`, `read_results`), and the flags and compiler the
backend builds with (plain and under the sanitizers).
"""

from .abi import ENTRY, layout
from .harness import SANITIZE, read_results

# harness.harness under another name, so that the module uir.backend.c.harness stays reachable
# by its name (an attribute of this package named `harness` would hide it).
from .harness import harness as harness_main
from .toolchain import FLAGS, LIBS, compiler

__all__ = [
    "ENTRY",
    "FLAGS",
    "LIBS",
    "SANITIZE",
    "compiler",
    "harness_main",
    "layout",
    "read_results",
]
