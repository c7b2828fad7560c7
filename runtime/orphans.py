"""Process trees a run leaves behind: mark the run's children, sweep a dead run's, kill its own on a stop.

Children inherit DSHC_RUN_LOG / DSHC_RUN_OWNER from the environment, so a restart over the
same log finds the processes of a killed run (its owner is gone) and kills their trees.
"""

from __future__ import annotations

import contextlib
import os

import psutil

from .tools.procs import kill_tree

LOG_VAR, OWNER_VAR = "DSHC_RUN_LOG", "DSHC_RUN_OWNER"


def _owner_tag(pid: int) -> str:
    # pid plus start time: a recycled pid is not the same owner
    return f"{pid}:{psutil.Process(pid).create_time():.3f}"


@contextlib.contextmanager
def marked_children(log_path: str | None):
    """While inside, every process started carries this run's owner (and log path, if any)."""
    saved = {name: os.environ.get(name) for name in (LOG_VAR, OWNER_VAR)}
    os.environ[OWNER_VAR] = _owner_tag(os.getpid())
    if log_path:
        os.environ[LOG_VAR] = os.path.abspath(log_path)
    else:
        os.environ.pop(LOG_VAR, None)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _owner_alive(tag: str) -> bool:
    pid, _, _ = tag.partition(":")
    try:
        return pid.isdigit() and _owner_tag(int(pid)) == tag
    except psutil.Error:
        return False


def sweep_dead_runs(log_path: str) -> int:
    """Kill the trees of processes marked with this log whose run is gone; returns how many were found."""
    target, me, found = os.path.abspath(log_path), os.getpid(), []
    for proc in psutil.process_iter(["pid", "uids"]):
        try:
            if proc.pid == me or proc.info["uids"] is None or proc.info["uids"].real != os.getuid():
                continue
            env = proc.environ()
        except (psutil.Error, OSError):
            continue
        if env.get(LOG_VAR) == target and not _owner_alive(env.get(OWNER_VAR, "")):
            found.append(proc.pid)
    for pid in found:
        kill_tree(pid, session=pid if _session_leader(pid) else None, wait_s=1.0)
    return len(found)


def kill_own_children() -> None:
    """Kill every process tree this run started (marked with its owner), and the sessions they lead."""
    tag = _owner_tag(os.getpid())
    try:
        children = psutil.Process().children(recursive=False)
    except psutil.Error:
        return
    for child in children:
        try:
            if child.environ().get(OWNER_VAR) != tag:
                continue  # started by whoever embeds the run, not by it
        except (psutil.Error, OSError):
            continue
        kill_tree(child.pid, session=child.pid if _session_leader(child.pid) else None, wait_s=1.0)


def _session_leader(pid: int) -> bool:
    try:
        return os.getsid(pid) == pid
    except OSError:
        return False
