"""Process trees a run leaves behind: mark this run's children, sweep a dead run's, kill our own on a stop.

Children inherit DSHC_RUN_LOG / DSHC_RUN_OWNER from the environment, so a restart over the
same log finds the processes of a killed run (its owner is gone) and kills their trees.
"""
from __future__ import annotations

import os

import psutil

from .tools.procs import kill_tree

LOG_VAR, OWNER_VAR = "DSHC_RUN_LOG", "DSHC_RUN_OWNER"


def _owner_tag(pid: int) -> str:
    # pid plus start time: a recycled pid is not the same owner
    return f"{pid}:{psutil.Process(pid).create_time():.3f}"


def mark_children(log_path: str) -> None:
    """Every process started from now on carries this run's log path and owner."""
    os.environ[LOG_VAR] = os.path.abspath(log_path)
    os.environ[OWNER_VAR] = _owner_tag(os.getpid())


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
    """Kill every process tree this process started (and the sessions they lead)."""
    try:
        children = psutil.Process().children(recursive=False)
    except psutil.Error:
        return
    for child in children:
        kill_tree(child.pid, session=child.pid if _session_leader(child.pid) else None, wait_s=1.0)


def _session_leader(pid: int) -> bool:
    try:
        return os.getsid(pid) == pid
    except OSError:
        return False
