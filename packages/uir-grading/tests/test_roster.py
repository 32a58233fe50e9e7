"""Rosters and submissions from git: parsing with lines, cloning local repositories at a ref,
building with the declared command, and verdicts for what cannot be prepared."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from uir.cli.grading.isolation import find_bwrap
from uir.cli.grading.limits import Limits
from uir.core.errors import UsageError
from uir.grading.roster import load_roster
from uir.grading.submissions import prepare

Git = Callable[..., str]
MakeRepo = Callable[[Path, dict[str, str]], Path]  # the fixtures of conftest.py


def _roster(tmp_path: Path, text: str) -> str:
    path = tmp_path / "roster.toml"
    path.write_text(text)
    return str(path)


def test_local_and_git_teams_in_file_order(tmp_path: Path) -> None:
    path = _roster(
        tmp_path,
        '[[team]]\nname = "a"\ncommand = "python3 c.py"\n\n[[team]]\nname = "b"\n'
        'repo = "repos/b"\nref = "main"\n',
    )
    a, b = load_roster(path)
    assert (a.name, a.command, a.line, a.base) == ("a", "python3 c.py", 1, str(tmp_path))
    assert (b.name, b.repo, b.ref, b.line) == ("b", "repos/b", "main", 5)


def test_members_are_read_in_order(tmp_path: Path) -> None:
    path = _roster(
        tmp_path,
        '[[team]]\nname = "a"\ncommand = "x"\nmembers = [\n  {id = "ada1", name = "Ada L.", '
        'email = "ada1@example.edu"},\n  {id = "bob2"},\n]\n',
    )
    (team,) = load_roster(path)
    assert [(m.id, m.name, m.email) for m in team.members] == [
        ("ada1", "Ada L.", "ada1@example.edu"),
        ("bob2", "", ""),
    ]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ('[[team]]\nname = "a"\n', 1, "exactly one of command and repo"),
        ('[[team]]\nname = "a"\ncommand = "x"\nrepo = "r"\nref = "m"\n', 1, "exactly one"),
        ('[[team]]\nname = "a"\nrepo = "r"\n', 1, "needs a ref"),
        ('[[team]]\ncommand = "x"\n', 1, "needs a name"),
        ('[[team]]\nname = "a b"\ncommand = "x"\n', 1, "must be letters"),
        ('[[team]]\nname = "a"\ncommand = "x"\ncolour = "red"\n', 1, "unknown key 'colour'"),
        ('[[team]]\nname = "a"\ncommand = 3\n', 1, "non-empty string"),
        ('[[team]]\nname = "a"\ncommand = "x"\n[[team]]\nname = "a"\ncommand = "y"\n', 4, "twice"),
        ('[[team]]\nname = "a"\ncommand = "x\n', 3, "not valid TOML"),
        ("teams = 1\n", None, "unknown top-level key 'teams'"),
        ("", None, "lists no team"),
        ('[[team]]\nname = "a"\ncommand = "x"\nmembers = ["ada"]\n', 1, "list of tables"),
        ('[[team]]\nname = "a"\ncommand = "x"\nmembers = [{name = "Ada"}]\n', 1, "needs an id"),
        ('[[team]]\nname = "a"\ncommand = "x"\nmembers = [{id = "a", age = "9"}]\n', 1, "'age'"),
        (
            '[[team]]\nname = "a"\ncommand = "x"\nmembers = [{id = "s1"}]\n'
            '[[team]]\nname = "b"\ncommand = "y"\nmembers = [{id = "s1"}]\n',
            5,
            "student 's1' is a member of 'a' too",
        ),
    ],
)
def test_bad_rosters_name_the_line(
    tmp_path: Path, text: str, line: int | None, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        load_roster(_roster(tmp_path, text))
    assert message in caught.value.message
    assert caught.value.line == line


TEAM_REPO = Path("repos", "team")


def test_a_team_from_git_is_built_and_its_commit_recorded(
    tmp_path: Path, make_repo: MakeRepo, git: Git
) -> None:
    repo = make_repo(
        tmp_path / TEAM_REPO,
        {
            "uir-submission.toml": 'build = "cp template.sh c.sh"\ncommand = "sh c.sh"\n',
            "template.sh": "echo 5\n",
        },
    )
    git(repo, "tag", "week1")
    tagged = git(repo, "rev-parse", "HEAD")
    (repo / "template.sh").write_text("echo 6\n")
    git(repo, "commit", "--quiet", "-am", "later")
    path = _roster(tmp_path, '[[team]]\nname = "t"\nrepo = "repos/team"\nref = "week1"\n')
    (team,) = load_roster(path)
    submission = prepare(team, str(tmp_path / "work"))
    assert submission.problem is None
    assert submission.commit == tagged
    checkout = tmp_path / "work" / "t"
    assert submission.compiler is not None
    assert submission.compiler.argv[1:] == (str(checkout / "c.sh"),)
    assert (checkout / "c.sh").read_text() == "echo 5\n"  # the tag's file, built
    # Preparing again updates the same checkout; the branch now gives the later commit.
    later = prepare(
        load_roster(_roster(tmp_path, path_text(repo_ref="main")))[0], str(tmp_path / "work")
    )
    assert later.commit == git(repo, "rev-parse", "HEAD") != tagged


def path_text(repo_ref: str) -> str:
    return f'[[team]]\nname = "t"\nrepo = "repos/team"\nref = "{repo_ref}"\n'


@pytest.mark.parametrize(
    ("files", "ref", "problem"),
    [
        ({"x": "1"}, "main", "has no uir-submission.toml"),
        ({"uir-submission.toml": 'command = "sh c.sh"\nbuild = "exit 7"\n'}, "main", "exit 7"),
        ({"uir-submission.toml": 'command = "sh c.sh"\n'}, "nosuchtag", "no branch, tag or commit"),
        ({"uir-submission.toml": "build = 'true'\n"}, "main", "command must be"),
    ],
)
def test_problems_become_verdicts(
    tmp_path: Path, make_repo: MakeRepo, files: dict[str, str], ref: str, problem: str
) -> None:
    make_repo(tmp_path / TEAM_REPO, files)
    (team,) = load_roster(_roster(tmp_path, path_text(ref)))
    submission = prepare(team, str(tmp_path / "work"))
    assert submission.compiler is None
    assert submission.problem is not None and problem in submission.problem


def test_a_repository_that_cannot_be_cloned_is_a_verdict(tmp_path: Path) -> None:
    (team,) = load_roster(_roster(tmp_path, path_text("main")))  # repos/team does not exist
    submission = prepare(team, str(tmp_path / "work"))
    assert submission.compiler is None and "git ls-remote failed" in (submission.problem or "")
    # Issue 28 item 6: the line that says what happened (not git's advice at the end), and
    # git's whole standard error in the team's log.
    assert (submission.problem or "").startswith("git ls-remote failed: fatal: ")
    log = (tmp_path / "work" / "t.log").read_text()
    assert log.startswith("fatal: ") and "Could not read from remote repository" in log


def test_a_ref_that_git_would_take_for_an_option_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        load_roster(_roster(tmp_path, path_text("--upload-pack=touch x")))
    assert "cannot start with '-'" in caught.value.message


@pytest.mark.skipif(find_bwrap() is None, reason="no working bwrap here: builds run unisolated")
def test_a_build_sees_its_own_checkout_alone_without_network(
    tmp_path: Path, make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    grader = tmp_path / "grader"
    grader.mkdir()
    (grader / "secret").write_text("the course's answers\n")
    monkeypatch.chdir(grader)
    work = tmp_path / "work"
    (work / "other").mkdir(parents=True)
    (work / "other" / "source.py").write_text("another team's code\n")
    checks = [
        f"test ! -e {grader}/secret",  # the grader's working directory is hidden
        "test ! -e ../other/source.py",  # and so are the other teams' checkouts
        f"{{ touch {tmp_path}/outside || true; }}",  # /tmp is the sandbox's own, / read-only
        "test $(grep -c : /proc/net/dev) = 1",  # one network interface: loopback
        "cp template.sh c.sh",
    ]
    build = " && ".join(checks)
    make_repo(
        tmp_path / TEAM_REPO,
        {
            "uir-submission.toml": f"build = '{build}'\ncommand = 'sh c.sh'\n",
            "template.sh": "echo 5\n",
        },
    )
    (team,) = load_roster(_roster(tmp_path, path_text("main")))
    submission = prepare(team, str(work))
    assert submission.problem is None
    assert (work / "t" / "c.sh").read_text() == "echo 5\n"
    assert not (tmp_path / "outside").exists()


@pytest.mark.parametrize(
    ("build", "limits", "problem"),
    [
        ("sleep 5", Limits(wall_s=0.5, cpu_s=1), "the build took longer than 0.5 s"),
        ("yes", Limits(output_bytes=1000), "the build wrote more than 1000 bytes of output"),
        ("kill -SEGV $$", Limits(), "the build was killed by SIGSEGV"),
    ],
)
def test_a_build_past_its_limits_is_a_verdict(
    tmp_path: Path, make_repo: MakeRepo, git: Git, build: str, limits: Limits, problem: str
) -> None:
    commit = git(
        make_repo(
            tmp_path / TEAM_REPO, {"uir-submission.toml": f"build = '{build}'\ncommand = 'x'\n"}
        ),
        "rev-parse",
        "HEAD",
    )
    (team,) = load_roster(_roster(tmp_path, path_text("main")))
    submission = prepare(team, str(tmp_path / "work"), limits=limits)
    assert submission.compiler is None and submission.commit == commit
    assert submission.problem is not None and submission.problem.startswith(problem)


SUBMISSION = {"uir-submission.toml": 'command = "sh c.sh"\n', "c.sh": "echo 5\n"}


@pytest.mark.parametrize(
    ("files", "limit_mb"),
    [
        # 3 MiB of random hex: its pack alone is over 1 MiB, stopped while it is fetched.
        ({"big.txt": os.urandom(3 << 19).hex()}, 1),
        # 3 MiB of zeros pack into a few KiB: the commit's files are measured before checkout.
        ({"zeros.txt": "0" * (3 << 20)}, 1),
        # Six files of 400 KiB, each under the limit, 2.34 MiB together.
        ({f"z{i}.txt": "0" * (400 << 10) for i in range(6)}, 2),
    ],
)
def test_a_repository_over_the_checkout_limit_is_a_verdict_and_removed(
    tmp_path: Path, make_repo: MakeRepo, files: dict[str, str], limit_mb: int
) -> None:
    make_repo(tmp_path / TEAM_REPO, {**SUBMISSION, **files})
    (team,) = load_roster(_roster(tmp_path, path_text("main")))
    work = tmp_path / "work"
    submission = prepare(team, str(work), checkout_mb=limit_mb)
    problem = submission.problem or ""
    assert submission.compiler is None
    if "big.txt" in files:  # random hex packs to about half its size: over 1 MiB
        assert problem == f"the repository is over the checkout limit of {limit_mb} MiB"
    else:  # measured: the files, and .git
        assert problem.startswith("the checkout would be ")
        assert float(problem.split()[4]) >= sum(map(len, files.values())) / (1 << 20)
        assert problem.endswith(f" MiB, over the checkout limit of {limit_mb} MiB")
    assert not (work / "t").exists()  # nothing of it left on the grader's disk
    assert prepare(team, str(work), checkout_mb=8).problem is None  # under a larger limit
    assert prepare(team, str(work), checkout_mb=0).problem is None  # and with none


def test_a_branch_is_fetched_shallow_and_a_commit_with_its_history(
    tmp_path: Path, make_repo: MakeRepo, git: Git
) -> None:
    repo = make_repo(tmp_path / TEAM_REPO, SUBMISSION)
    first = git(repo, "rev-parse", "HEAD")
    (repo / "c.sh").write_text("echo 6\n")
    git(repo, "commit", "--quiet", "-am", "later")
    work, checkout = tmp_path / "work", tmp_path / "work" / "t"
    (team,) = load_roster(_roster(tmp_path, path_text("main")))
    assert prepare(team, str(work)).commit == git(repo, "rev-parse", "HEAD")
    assert git(checkout, "rev-list", "--count", "HEAD") == "1"  # the branch's commit alone
    (pinned,) = load_roster(_roster(tmp_path, path_text(first)))
    submission = prepare(pinned, str(work))  # the same (shallow) checkout, now at a commit
    assert (submission.problem, submission.commit) == (None, first)
    assert (checkout / "c.sh").read_text() == "echo 5\n"
