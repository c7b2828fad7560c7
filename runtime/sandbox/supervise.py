"""The process that stands between dshc and a command: it starts the command, adopts every
orphan below it (child subreaper) and kills them all when the command ends or dshc dies.
In: an argv and the pid of dshc (or whoever started the launcher); out: the command's exit status, and no
process left behind (stdlib only)."""

from __future__ import annotations

import ctypes
import os
import select
import signal
import time

_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_POLL_S = 0.1
# after the command exits, what it left running gets this long to finish writing its output
STRAGGLER_GRACE_S = 0.25
_RESET = (
    signal.SIGPIPE,
    signal.SIGXFSZ,
    signal.SIGINT,
    signal.SIGQUIT,
    signal.SIGTSTP,
    signal.SIGTTIN,
    signal.SIGTTOU,
    signal.SIGHUP,
    signal.SIGTERM,
)
_stop = False


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # the command name may contain spaces and parentheses; fields resume after the last ')'
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found, queue = [], [root]
    while queue:
        for child in children.get(queue.pop(), ()):
            found.append(child)
            queue.append(child)
    return found


def _reap() -> tuple[list[tuple[int, int]], bool]:
    """Collect exited children; the flag says whether any child is left at all."""
    reaped: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped, False
        if pid == 0:
            return reaped, True
        reaped.append((pid, status))


def kill_everything_below() -> None:
    # orphans re-attach to this subreaper, so looping until no child is left catches forks
    # that raced with a listing
    while _reap()[1]:  # no child left means no descendant left: every orphan comes back to us
        for pid in _descendants(os.getpid()):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def _on_stop(signum, frame) -> None:
    global _stop
    _stop = True


def _status_code(status: int) -> int:
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def run(argv: list[str], report_fd: int | None, parent: int) -> int:
    """`parent` is dshc's pid, read before this process confined itself: dshc killed meanwhile (its pid no
    longer this one's parent) means nothing starts."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if os.getppid() != parent:
        return 137
    supervisor = os.getpid()
    command = os.fork()
    if command == 0:
        for sig in _RESET:
            signal.signal(sig, signal.SIG_DFL)
        # the command dies with this process (killed by anyone, the OOM killer too); it may already be gone
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != supervisor:
            os._exit(137)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            if report_fd is not None:
                os.write(report_fd, f"cannot start `{argv[0]}`: {exc.strerror or exc}".encode())
            os._exit(127)
    try:
        return _watch(command, parent, report_fd)
    except BaseException:
        kill_everything_below()  # never leave the command running unsupervised
        return 125


def _watch(command: int, parent: int, report_fd: int | None) -> int:
    if report_fd is not None:
        os.close(report_fd)
    # a ^C typed on the command's terminal is for the command; dshc stops us with TERM/HUP/KILL
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
        signal.signal(sig, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_stop)
    signal.signal(signal.SIGHUP, _on_stop)
    # hold no copy of the output pipe or terminal, so the reader sees EOF when the command's side closes
    null = os.open(os.devnull, os.O_RDONLY)  # reading needs no write right under Landlock
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    watch = os.pidfd_open(command)
    status = None
    while status is None:
        if _stop or os.getppid() != parent:  # dshc is gone (even by SIGKILL): take everything down
            kill_everything_below()
            return 137
        try:
            select.select([watch], [], [], _POLL_S)
        except InterruptedError:
            pass
        reaped, _ = _reap()
        status = next((st for pid, st in reaped if pid == command), None)
    deadline = time.monotonic() + STRAGGLER_GRACE_S
    while time.monotonic() < deadline and not _stop:
        _, left = _reap()
        if not left:
            break
        time.sleep(0.01)
    kill_everything_below()
    return _status_code(status)
