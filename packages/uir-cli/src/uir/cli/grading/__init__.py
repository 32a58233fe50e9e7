"""The grader: `uir test` and `uir mutants` (spec/grading.md).

Everything that runs an untrusted compiler on test files and judges it lives here, apart from the
program commands. `commands.register` adds the grading commands to `uir`'s parser; the rest is
imported only when a grading command runs, so `uir run` does not pay for it.
"""
