"""UIR test support, not shipped: no package of the compiler depends on it.

`programs.py` is the one random program generator (hypothesis strategies, a drawing function per
kind of step and the week that brings it); `model.py` is an independent model of what a program
means, for differential tests; `compare.py` compares two runs' outputs bit for bit;
`passes.py` says which programs a differential test of the passes leaves out while the passes are
not yet safe on loops; `shaped.py` holds week-4 programs that tests and benchmarks share.
"""
