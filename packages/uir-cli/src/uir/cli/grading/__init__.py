"""The grader students run: `uir test`, `uir mutants` and `uir validate-tests` (spec/grading.md).

Everything that runs an untrusted compiler on test files and judges it lives here, apart from the
program commands: the sandbox and the fork server, the harness, the judge, the reports and the
guide. `commands.register` adds the grading commands to `uir`'s parser; the rest is imported only
when a grading command runs, so `uir run` does not pay for it. The staff's commands (rosters,
cross-grading, performance, the gradebook) are the package uir-grading, which builds on this one
through its public names (spec/architecture.md section 10).
"""
