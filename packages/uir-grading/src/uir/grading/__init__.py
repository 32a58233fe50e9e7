"""The staff's side of the grader (spec/grading.md sections 13-21): rosters and submissions,
collection at the deadline, cross-grading (`uir grade`), performance (`uir perf`), the gradebook,
shards and executors.

It builds on the student's grader of uir-cli (uir.cli.grading: the sandbox, the harness, the
judge, `uir test`'s reports) through that package's public names only, and adds its commands to
`uir` through the hook uir_commands (commands.py), as backends add theirs through uir_backends.
"""
