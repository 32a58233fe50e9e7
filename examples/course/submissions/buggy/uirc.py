"""A team's compiler with a planted bug, for the example course: it runs the reference on a copy
of the program in which every MAX has become MIN, as a compiler that swapped the two would."""

import re
import sys
from pathlib import Path

from uir.cli.main import main

command, path = sys.argv[1], sys.argv[2]
program = Path(path).read_text(encoding="utf-8")
Path("swapped.uir").write_text(re.sub(r"\bMAX\b", "MIN", program), encoding="utf-8")
sys.exit(main([command, "swapped.uir"]))
