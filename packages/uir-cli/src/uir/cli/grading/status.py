"""The exit status of the grading commands beyond uir.md section 11's (spec/grading.md).

`uir test`, `uir mutants` and `uir validate-tests` (and the staff's commands of uir-grading) exit 0
when everything passed, and NOT_PASSED when the run completed but something did not pass; 1 stays
the usage and I/O error.
"""

NOT_PASSED = 5
