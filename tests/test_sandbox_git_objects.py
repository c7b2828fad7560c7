"""A file a policy's read deny hides is not read back from git's object store: committed, it was `git show
HEAD:secret.txt` away, or a blob under `.git/objects` any program can inflate. Where git holds a hidden file
(its index or HEAD) the object store is hidden with it; an untracked hidden file (an ignored `.env`) leaves git
working. Real processes and a real repository."""

from __future__ import annotations

import pytest

from dshc.runtime import sandbox
from dshc.runtime.sandbox import confinement_in
from dshc.runtime.sandbox.gitstore import objects_to_hide

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace or not PROBE.seccomp,
    reason="needs Landlock, user namespaces and libseccomp",
)

SECRET = "hunter2-do-not-show"
# every blob of the store inflated by hand: no git needed to read it
INFLATE = (
    "python3 -c \"import os, zlib\nfor top, _, names in os.walk('.git/objects'):\n for n in names:\n"
    "  p = os.path.join(top, n)\n  try: print(zlib.decompress(open(p, 'rb').read()))\n"
    '  except Exception: pass"'
)


@pytest.fixture
def committed(repo, git):
    (repo / "secret.txt").write_text(SECRET + "\n")
    git(repo, "add", "secret.txt")
    git(repo, "commit", "-qm", "secret")
    return repo


@needs_namespaces
@pytest.mark.parametrize("context", [{}, {"network": True}], ids=["network-off", "network-allow"])
def test_a_hidden_committed_file_is_not_read_from_git(run_bash, committed, context):
    output = run_bash(
        f"cat secret.txt; git show HEAD:secret.txt; git log -p; {INFLATE}; "
        "git cat-file --batch-all-objects --batch 2>&1 | head -50",
        hidden_roots=("secret.txt",),
        **context,
    )
    assert SECRET not in output, output


@needs_namespaces
def test_an_untracked_hidden_file_leaves_git_working(run_bash, repo, git):
    (repo / ".gitignore").write_text(".env\n")
    (repo / ".env").write_text(SECRET + "\n")
    output = run_bash(
        "cat .env; git status --short; echo status=$?; git log --format=%s; echo log=$?", hidden_roots=(".env",)
    )
    assert SECRET not in output and "status=0" in output and "log=0" in output and "one" in output, output


def test_what_is_hidden_follows_what_git_holds(committed, git, tmp_path):
    store = f"{committed}/.git/objects/"
    assert objects_to_hide(str(committed), (f"{committed}/secret.txt",)) == (store,)
    assert objects_to_hide(str(committed), (f"{committed}/",)) == (store,)  # a folder holding it
    (committed / "loose.txt").write_text("x")
    assert objects_to_hide(str(committed), (f"{committed}/loose.txt",)) == ()
    # removed from the index but still in HEAD: still held
    git(committed, "rm", "-q", "--cached", "secret.txt")
    assert objects_to_hide(str(committed), (f"{committed}/secret.txt",)) == (store,)
    # a pathspec's magic is not read: the name is the file's
    (committed / "*").write_text("x")
    assert objects_to_hide(str(committed), (f"{committed}/*",)) == ()
    # no repository, nothing to hide; the plan carries the store with the file
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "secret.txt").write_text("x")
    assert objects_to_hide(str(plain), (f"{plain}/secret.txt",)) == ()
    conf = confinement_in("workspace-write", str(committed), str(tmp_path / "t"), hidden=("secret.txt",))
    assert conf.hidden == (f"{committed}/secret.txt", store)


def test_where_git_cannot_answer_the_store_is_hidden(committed, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no git to ask
    assert objects_to_hide(str(committed), (f"{committed}/secret.txt",)) == (f"{committed}/.git/objects/",)


def test_asking_git_runs_nothing_the_repository_configures(committed, git, tmp_path):
    # a command that could write `.git/config` (a host without mount namespaces) sets a command git runs when it
    # reads the index; dshc asks git unconfined
    marker = tmp_path / "ran"
    git(committed, "config", "core.fsmonitor", f"touch {marker}; echo")
    assert objects_to_hide(str(committed), (f"{committed}/secret.txt",)) == (f"{committed}/.git/objects/",)
    assert not marker.exists()
