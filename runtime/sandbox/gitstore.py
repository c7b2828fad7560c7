"""Where git keeps a hidden file's content besides the file: its object store. In: the real workspace and the
real paths a policy's read deny hides there; out: the objects folder to hide with them, when git holds any of
them (in the index or the commit checked out), or when that cannot be told (no git, no answer: fail closed).

A file hidden by the sandbox but committed is read back with `git show HEAD:secret`, or by inflating its blob
under `.git/objects` by hand, git or no git. Hiding the objects stops git reading any commit, so it is done only
where a hidden file is in git: an untracked one (an ignored `.env`) leaves git working. Not covered: a file
added once and then removed from the index and from HEAD, whose blob is still in the store (a stash, the
reflog, a dangling object) — a policy that must hide it hides `.git/` itself."""

from __future__ import annotations

import os

from .files import git_folder, within


def objects_to_hide(workspace: str, hidden: tuple[str, ...]) -> tuple[str, ...]:
    """The object store (`/`-ended, as a hidden directory is) when git holds a hidden path, else ()."""
    folder = git_folder(workspace)
    if folder is None:
        return ()
    objects = os.path.realpath(os.path.join(folder, "objects"))
    relative = [
        os.path.relpath(path.rstrip("/"), workspace)
        for path in hidden
        if within(path.rstrip("/"), workspace) and not within(path.rstrip("/"), os.path.realpath(folder))
    ]
    if not relative or not os.path.isdir(objects):
        return ()
    return (objects + "/",) if _held(workspace, relative) else ()


def _held(workspace: str, relative: list[str]) -> bool:
    """Whether git's index or HEAD names any of `relative` (or a file below one); True when git cannot say."""
    import subprocess  # only where a hidden file lies in a repository: most commands start without asking git

    env = {**os.environ, "GIT_LITERAL_PATHSPECS": "1", "GIT_OPTIONAL_LOCKS": "0"}
    # git runs unconfined here, on a repository the commands it confines write to: reading the index runs the
    # command `core.fsmonitor` names, so it is turned off
    git = ["git", "-c", "core.fsmonitor=false", "-C", workspace, "ls-files", "-z"]
    # before the first commit there is no HEAD to overlay: the index alone
    for overlay in (["--with-tree=HEAD"], []):
        try:
            done = subprocess.run(
                [*git, *overlay, "--", *relative], stdin=subprocess.DEVNULL, capture_output=True, timeout=10, env=env
            )
        except (OSError, subprocess.SubprocessError):
            return True
        if done.returncode == 0:
            return bool(done.stdout)
    return True
