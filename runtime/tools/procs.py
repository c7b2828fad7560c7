"""Child processes for the shell tools: start a command confined and supervised in its own
session, pump its output into a capped buffer, and kill the whole process tree when it
overruns or is cancelled."""

from __future__ import annotations

import codecs
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import psutil

from ..sandbox import Confinement, Launch, SandboxFailure, plan, read_report

# After the leader exits, stragglers still holding the output pipe get this long to finish
# writing before the session is swept.
EXIT_GRACE_S = 0.25
_POLL_S = 0.05
_READ_CHUNK = 65536


def _signal_all(procs: Sequence[psutil.Process], sig: int) -> None:
    for proc in procs:
        try:
            proc.send_signal(sig)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass


def session_members(sid: int) -> list[psutil.Process]:
    """Live processes of session `sid`; descendants stay in it even after being reparented."""
    members = []
    for pid in psutil.pids():
        try:
            if pid != os.getpid() and os.getsid(pid) == sid:
                members.append(psutil.Process(pid))
        except (ProcessLookupError, PermissionError, psutil.NoSuchProcess):
            pass
    return members


def kill_tree(pid: int | None, *, session: int | None = None, wait_s: float = 2.0) -> None:
    """SIGKILL every descendant of `pid`, then `pid` itself, then whatever is left in `session`.

    Pass `pid=None` once the leader has been reaped: its number may already belong to an
    unrelated process. A session id stays reserved while any member lives, so the sweep is safe.

    Everything is frozen with SIGSTOP before the final listing, so nothing can fork a new
    process between being listed and being killed. The session sweep catches descendants
    that were reparented away from the tree (their parent died first) or moved to another
    process group (job control), which a walk of the tree cannot see.
    """
    try:
        leader = psutil.Process(pid) if pid is not None else None
    except psutil.NoSuchProcess:
        leader = None
    victims: list[psutil.Process] = []
    if leader is not None:
        try:
            _signal_all([leader], signal.SIGSTOP)
            _signal_all(leader.children(recursive=True), signal.SIGSTOP)
            children = leader.children(recursive=True)
        except psutil.NoSuchProcess:
            children = []
        _signal_all(children, signal.SIGKILL)
        _signal_all([leader], signal.SIGKILL)
        victims = [*children, leader]
    if session is not None:
        stragglers = session_members(session)
        _signal_all(stragglers, signal.SIGSTOP)
        stragglers = session_members(session)
        _signal_all(stragglers, signal.SIGKILL)
        victims += stragglers
    _wait_dead(victims, wait_s)


def _alive(proc: psutil.Process) -> bool:
    # a zombie is dead: whoever its parent is now will reap it (our own child is reaped by Popen)
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _wait_dead(procs: Sequence[psutil.Process], wait_s: float) -> None:
    # not psutil.wait_procs: it would reap our own child and leave Popen without its status
    deadline = time.monotonic() + wait_s
    pending = [proc for proc in procs if _alive(proc)]
    while pending and time.monotonic() < deadline:
        time.sleep(0.01)
        pending = [proc for proc in pending if _alive(proc)]


def exit_status(returncode: int) -> int:
    """Shell convention: death by signal N reads as 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def spawn_confined(
    conf: Confinement | None,
    argv: Sequence[str],
    spawn: Callable[[list[str], tuple[int, ...]], Any],
    discard: Callable[[Any], None],
    events_fd: int = -1,
) -> tuple[Any, Launch]:
    """Start `argv` through the sandbox launcher and wait until it reports being confined.

    `spawn(argv, pass_fds)` starts the process; `discard(child)` reaps one that failed. With
    no confinement (None) the command starts bare, for callers outside any session. `events_fd`:
    where the egress proxy, if the plan has one, writes the connections it refuses (`EgressEvents`)."""
    read_fd, write_fd = os.pipe()
    # ptyprocess keeps pass_fds open but, unlike subprocess, does not clear close-on-exec
    os.set_inheritable(write_fd, True)
    try:
        launch = (
            plan(conf, list(argv), write_fd, parent=os.getpid(), events_fd=events_fd)
            if conf is not None
            else Launch(list(argv), "bare", False)
        )
        passed = (write_fd, events_fd) if events_fd >= 0 and "egress" in launch.mechanism else (write_fd,)
        child = spawn(launch.argv, passed if launch.report else ())
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    try:
        problem = read_report(read_fd)
    finally:
        os.close(read_fd)
    if problem:
        kill_tree(child.pid, session=child.pid)
        discard(child)
        raise SandboxFailure(problem)
    return child, launch


class EgressEvents:
    """The refusals of a command's egress proxy, read from a memory file only dshc and the proxy hold (the
    command never inherits it: `egress.py`), so no line the command prints can pass for one."""

    def __init__(self, conf: Confinement | None) -> None:
        self.fd = (
            os.memfd_create("dshc-egress-events", os.MFD_CLOEXEC)
            if conf is not None and conf.egress() and hasattr(os, "memfd_create")
            else -1
        )

    def read(self) -> list[dict]:
        """Every refusal so far, as `{"host", "port", "reason"}`, and `{"dropped": N}` when the proxy stopped
        writing them down (`egress.MAX_EVENTS`)."""
        if self.fd < 0:
            return []
        import json

        data, at = b"", 0
        while chunk := os.pread(self.fd, _READ_CHUNK, at):
            data, at = data + chunk, at + len(chunk)
        found: list[dict] = []
        for line in data.decode("utf-8", "replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:  # cut short by a kill mid-write
                continue
            if event.get("event") == "network/denied":
                found.append({"host": event["host"], "port": event["port"], "reason": event["reason"]})
            elif event.get("event") == "network/denied-dropped":
                found.append({"dropped": event["count"]})
        return found

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def denial_line(event: Mapping[str, Any]) -> str:
    """One refusal of `EgressEvents.read` as a line of the call's result."""
    if "dropped" in event:
        return f"[network: {event['dropped']} more connections refused]"
    where = event["host"] + (f":{event['port']}" if event.get("port") is not None else "")
    return f"[network: refused `{where}`: {event['reason']}]"


class OutputBuffer:
    """Decoded output capped at `max_chars`: keeps the head (one-shot results) or the tail
    (long-running jobs, where the newest lines matter most). Thread-safe."""

    def __init__(self, max_chars: int, keep: str = "head") -> None:
        if keep not in ("head", "tail"):
            raise ValueError(f"keep must be head or tail, not {keep!r}")
        self.max_chars = max(0, int(max_chars))
        self.keep = keep
        self.total_chars = 0
        self._text = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._lock = threading.Lock()

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self._decoder.decode(data, final)
        if not text:
            return
        with self._lock:
            self.total_chars += len(text)
            if self.keep == "head":
                room = self.max_chars - len(self._text)
                if room > 0:
                    self._text += text[:room]
            else:
                self._text += text
                # trim in amortised steps rather than on every chunk
                if len(self._text) > 2 * self.max_chars:
                    self._text = self._text[-self.max_chars :]

    @property
    def text(self) -> str:
        with self._lock:
            return self._text if self.keep == "head" else self._text[-self.max_chars :] if self.max_chars else ""

    @property
    def truncated(self) -> bool:
        with self._lock:
            return self.total_chars > self.max_chars


class ProcessRun:
    """One command in a new session (pgid == pid), stdin closed, stdout+stderr into one pipe.

    `pump` returns once the leader has exited and the pipe is drained, or as soon as `stop()`
    names a reason, in which case the tree is killed first. Nothing the command started
    outlives the run: leftovers in its session are swept when the leader exits (background
    work that should survive the call belongs in a job).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str,
        max_chars: int,
        keep: str = "head",
        env: Mapping[str, str] | None = None,
        confinement: Confinement | None = None,
    ) -> None:
        self.argv = list(argv)
        self.output = OutputBuffer(max_chars, keep)
        self.exit_code: int | None = None

        def spawn(command: list[str], pass_fds: tuple[int, ...]) -> subprocess.Popen:
            return subprocess.Popen(
                command,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                bufsize=0,
                close_fds=True,
                pass_fds=pass_fds,
            )

        def discard(proc: subprocess.Popen) -> None:
            if proc.stdout is not None:  # (a pipe: it is)
                proc.stdout.close()
            proc.wait()

        self.egress = EgressEvents(confinement)
        self.network_denied: list[dict] = []  # filled when the run is over
        try:
            self.proc, self.launch = spawn_confined(confinement, self.argv, spawn, discard, self.egress.fd)
        except BaseException:
            self.egress.close()
            raise
        self.pid = self.proc.pid
        self._fd = self.proc.stdout.fileno()
        self._eof = False

    def _read_available(self, timeout: float) -> None:
        if self._eof:
            return
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if not ready:
            return
        try:
            chunk = os.read(self._fd, _READ_CHUNK)
        except OSError:
            chunk = b""
        if chunk:
            self.output.feed(chunk)
        else:
            self._eof = True

    def pump(self, stop: Callable[[], str | None]) -> str | None:
        """Run to completion; returns None on a normal exit, else the reason `stop` gave."""
        exited_at: float | None = None
        reason: str | None = None
        while True:
            reason = stop()
            if reason is not None:
                break
            if self._eof:
                try:
                    self.proc.wait(timeout=_POLL_S)
                except subprocess.TimeoutExpired:
                    pass
            else:
                self._read_available(_POLL_S)
            if self.proc.poll() is not None:
                if exited_at is None:
                    exited_at = time.monotonic()
                if self._eof or time.monotonic() - exited_at >= EXIT_GRACE_S:
                    break
        # poll() may already have reaped the leader; then only its session is swept
        kill_tree(self.pid if self.proc.returncode is None else None, session=self.pid)
        self._finish()
        return reason

    def _finish(self) -> None:
        # the holders are gone, so the pipe reaches EOF promptly; the bound only guards
        # against a descendant that escaped into its own session
        deadline = time.monotonic() + 1.0
        while not self._eof and time.monotonic() < deadline:
            self._read_available(_POLL_S)
        self.output.feed(b"", final=True)
        try:
            self.proc.stdout.close()
        except OSError:
            pass
        self.exit_code = exit_status(self.proc.wait())
        # the proxy's process is the leader (or gone with the tree): it has written its last refusal
        self.network_denied = self.egress.read()
        self.egress.close()
