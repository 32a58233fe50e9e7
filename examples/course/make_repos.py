"""Make the example course's two team repositories, repos/correct and repos/buggy, from the files
under submissions/ (repositories cannot be committed inside ours). Run it from anywhere:

    python3 examples/course/make_repos.py [DIRECTORY]

DIRECTORY (default: this script's directory) gets repos/; an existing repos/ is replaced. The
correct team submits on its branch `main`; the buggy team tags its submission `week1`.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
IDENTITY = {"GIT_AUTHOR_NAME": "Example Team", "GIT_AUTHOR_EMAIL": "team@example.edu"}
IDENTITY |= {"GIT_COMMITTER_NAME": "Example Team", "GIT_COMMITTER_EMAIL": "team@example.edu"}


def git(directory: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=directory, env={**os.environ, **IDENTITY}, check=True)


def make(directory: Path) -> None:
    repos = directory / "repos"
    shutil.rmtree(repos, ignore_errors=True)
    for team in ("correct", "buggy"):
        repo = repos / team
        shutil.copytree(HERE / "submissions" / team, repo)
        if team == "buggy":  # the correct compiler with one planted bug: MAX computes MIN
            correct = (HERE / "submissions" / "correct" / "uirc.py").read_text(encoding="utf-8")
            buggy = correct.replace('"MAX": max,', '"MAX": min,')
            assert buggy != correct, "the planted bug no longer applies"
            (repo / "uirc.py").write_text(buggy, encoding="utf-8")
        git(repo, "init", "--quiet", "--initial-branch=main")
        git(repo, "add", ".")
        git(repo, "commit", "--quiet", "-m", f"{team}: week 1 submission")
    git(repos / "buggy", "tag", "week1")


if __name__ == "__main__":
    make(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
