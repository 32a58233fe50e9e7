"""The C backend: UIR programs rendered as C99 with no undefined behaviour, compiled and run.

render.py turns a program into C, abi.py fixes how buffers and outputs are passed, toolchain.py
compiles (with a cache), runtime.py loads and runs, plugin.py registers the backend `c`.
"""
