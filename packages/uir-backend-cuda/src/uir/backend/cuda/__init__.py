"""The CUDA backend: UIR programs rendered as CUDA C, one translation unit a program.

render.py cuts the loop nest into kernels and renders them through the C backend's renderer,
nvrtc.py compiles them to cubins without a CUDA toolkit, emulation.py runs the same source on the
CPU under an emulation header (backend `cuda-emu`), driver.py runs cubins through the CUDA driver
API (backend `cuda`), plugin.py registers both.
"""
