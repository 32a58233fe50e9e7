"""A team's compiler, for the example course: the reference itself (`uir run FILE`)."""

import sys

from uir.cli.main import main

sys.exit(main(sys.argv[1:]))
