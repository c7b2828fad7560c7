"""tool-bash-persistent: one PTY bash per owner whose state (cwd, variables, functions)
survives between calls. In: a command line; out: its output and exit status."""

from __future__ import annotations

import codecs
import os
import re
import select
import shlex
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from ptyprocess import PtyProcessUnicode

from .base import ToolContext, arg_str, fail
from ..sandbox import Confinement
from ..signals import Signal
from .procs import kill_tree, spawn_confined
from .sandbox import check_mode, confinement, process_env, process_errors, workspace_root
from .shell import seconds, shell_env

DEFAULT_TIMEOUT_S = 300.0
START_TIMEOUT_S = 10.0
INTERRUPT_GRACE_S = 3.0
INTERRUPT_RETRY_S = 0.3
_POLL_S = 0.05
_KEEP_TAIL = 8192
BASH_ARGV = ["/bin/bash", "--noprofile", "--norc", "--noediting"]


class ShellGone(Exception):
    """The shell process ended (the command ran `exit`, or it was killed)."""


class PersistentShell:
    """A bash attached to a PTY with echo off and empty prompts, so its output is just what
    the commands print. One command at a time; `close` kills it and everything it started.

    Each command is written to a private file and sourced, followed by a sentinel `printf`
    carrying `$?` and a per-call token; the output is whatever precedes the sentinel. Sourcing
    keeps the shell state, copes with multi-line text and heredocs, and a syntax error still
    reaches the sentinel instead of leaving the shell waiting for more input."""

    def __init__(
        self,
        cwd: str,
        env: Mapping[str, str] | None = None,
        confinement: Confinement | None = None,
        hidden_env: tuple[str, ...] = (),
    ) -> None:
        env = dict(shell_env() if env is None else env)
        self.confinement = confinement
        self.hidden_env = hidden_env  # the variables `env` lacks (`process_env`)
        env.update(TERM="dumb", PS1="", PS2="", PROMPT_COMMAND="")
        env.pop("HISTFILE", None)
        self._dir = tempfile.mkdtemp(prefix="dshc-pty-")
        self._lock = threading.Lock()
        self._calls = 0
        self._closed = False
        self._close_lock = threading.Lock()

        def spawn(argv: list[str], pass_fds: tuple[int, ...]) -> PtyProcessUnicode:
            return PtyProcessUnicode.spawn(argv, cwd=cwd, env=env, echo=False, dimensions=(50, 250), pass_fds=pass_fds)

        def discard(proc: PtyProcessUnicode) -> None:
            proc.close(force=True)

        try:
            self.proc, self.launch = spawn_confined(confinement, BASH_ARGV, spawn, discard)
        except BaseException:
            shutil.rmtree(self._dir, ignore_errors=True)
            raise
        self.pid = self.proc.pid
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        try:
            self._sync("stty -echo 2>/dev/null; unset HISTFILE; PS1=''; PS2=''; PROMPT_COMMAND=''", START_TIMEOUT_S)
        except (ShellGone, TimeoutError):
            self.close()
            raise

    def cwd(self) -> str | None:
        """Where the shell is now (a `cd` outlives the call that made it), read from /proc: the first bash at
        or below the process started (a launcher may run it as its child), between calls, when the shell's own
        jobs can only come after it. None where it cannot be read (no /proc, the shell gone)."""
        try:
            children: dict[int, list[int]] = {}
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        with open(f"/proc/{entry}/stat", "rb") as handle:
                            fields = handle.read().rsplit(b")", 1)[1].split()
                    except OSError:
                        continue
                    children.setdefault(int(fields[1]), []).append(int(entry))
            queue = [self.pid]
            while queue:
                pid = queue.pop(0)
                try:
                    with open(f"/proc/{pid}/comm", "rb") as handle:
                        if handle.read().strip() == b"bash":
                            return os.readlink(f"/proc/{pid}/cwd")
                except OSError:
                    pass
                queue.extend(sorted(children.get(pid, ())))
        except OSError:
            return None
        return None

    @property
    def alive(self) -> bool:
        return not self._closed and self.proc.isalive()

    def _send(self, line: str) -> None:
        try:
            os.write(self.proc.fd, line.encode("utf-8"))
        except OSError:
            raise ShellGone() from None

    def _read(self, timeout: float) -> str:
        ready, _, _ = select.select([self.proc.fd], [], [], timeout)
        if not ready:
            return ""
        try:
            data = os.read(self.proc.fd, 65536)
        except OSError:  # Linux reports a closed slave side as EIO
            data = b""
        if not data:
            raise ShellGone()
        return self._decoder.decode(data)

    def _discard_pending(self) -> None:
        while self._read(0):
            pass

    @staticmethod
    def _sync_line(token: str) -> str:
        # the typed text has a backslash where the output has none, so only the output can
        # match; it has no quotes either, so a line whose head was lost stays harmless
        return f"  echo __DSHC\\_SYNC_{token}\n"

    def _sync(self, prefix: str, timeout: float) -> None:
        """Run `prefix` and wait for a fresh sentinel, discarding whatever is printed."""
        token = uuid.uuid4().hex
        self._send(f"{prefix}\n{self._sync_line(token)}" if prefix else self._sync_line(token))
        self._await_sync(token, timeout)

    def _await_sync(self, token: str, timeout: float) -> None:
        # the sentinel's whole line, its line end included: one that arrives in a later read would be
        # left pending and lead the next command's output
        line = re.compile(rf"__DSHC_SYNC_{token}\r?\n")
        deadline = time.monotonic() + timeout
        seen = ""
        while not line.search(seen):
            if time.monotonic() >= deadline:
                raise TimeoutError()
            seen = (seen + self._read(_POLL_S))[-_KEEP_TAIL:]

    def run(self, command: str, *, timeout: float, abort: threading.Event | Signal, max_chars: int) -> dict[str, Any]:
        with self._lock:
            if self._closed:
                raise ShellGone()
            self._discard_pending()
            self._calls += 1
            script = os.path.join(self._dir, f"cmd-{self._calls}.sh")
            with open(script, "w", encoding="utf-8") as handle:
                handle.write(command if command.endswith("\n") else command + "\n")
            token = uuid.uuid4().hex
            done = re.compile(r"\r?\n?__DSHC_DONE_" + token + r"_(\d+)\r?\n")
            self._send(f". {shlex.quote(script)}; printf '\\n__DSHC_DONE_{token}_%s\\n' \"$?\"\n")
            deadline = time.monotonic() + timeout
            buffer, dropped = "", False
            while True:
                if abort.is_set():
                    self._after_overrun()
                    raise fail("aborted")
                if time.monotonic() >= deadline:
                    self._after_overrun()
                    raise fail("timeout", seconds=seconds(timeout), partial=_partial(buffer))
                try:
                    chunk = self._read(_POLL_S)
                    # a job left running in the background keeps the PTY open after `exit`
                    if not chunk and not self.proc.isalive():
                        raise ShellGone()
                    buffer += chunk
                except ShellGone:
                    status = self._exit_status()
                    self.close()
                    return _result(buffer, status, max_chars, dropped, exited=True)
                found = done.search(buffer)
                if found is not None:
                    os.unlink(script)
                    return _result(buffer[: found.start()], int(found.group(1)), max_chars, dropped)
                if len(buffer) > max_chars + 4 * _KEEP_TAIL:
                    # keep the head for the result and enough tail to spot the sentinel
                    buffer, dropped = buffer[:max_chars] + buffer[-_KEEP_TAIL:], True

    def _after_overrun(self) -> None:
        """Interrupt the foreground job; keep the shell only if it answers a fresh sentinel.

        An interrupt can land before the command has taken the terminal (bash still reading
        or forking), in which case the command runs on regardless; so interrupt and ask
        again, a few times, before giving up on the shell."""
        token = uuid.uuid4().hex
        deadline = time.monotonic() + INTERRUPT_GRACE_S
        try:
            while True:
                self.proc.sendintr()
                time.sleep(_POLL_S)
                self._send(self._sync_line(token))
                try:
                    self._await_sync(token, min(INTERRUPT_RETRY_S, max(0.0, deadline - time.monotonic())))
                    return
                except TimeoutError:
                    if time.monotonic() >= deadline:
                        raise
        except (ShellGone, TimeoutError, OSError):
            self.close()

    def _exit_status(self) -> int:
        try:
            self.proc.wait()
        except Exception:  # noqa: BLE001 - the status is best effort once the shell is gone
            return -1
        status = self.proc.exitstatus
        if status is None and self.proc.signalstatus is not None:
            return 128 + self.proc.signalstatus
        return status if status is not None else -1

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        # ptyprocess made the shell a session leader, so the sweep also reaches jobs it left behind
        kill_tree(None if self.proc.terminated else self.pid, session=self.pid)
        try:
            self.proc.close(force=True)
        except Exception:  # noqa: BLE001 - closing an already dead PTY may fail in several ways
            pass
        shutil.rmtree(self._dir, ignore_errors=True)


def _partial(buffer: str) -> str:
    text = buffer.replace("\r\n", "\n").strip("\n")[-2000:]
    return f"; output so far:\n{text}" if text.strip() else ""


def _result(raw: str, exit_code: int, max_chars: int, dropped: bool, exited: bool = False) -> dict[str, Any]:
    output = raw.replace("\r\n", "\n")
    truncated = dropped or len(output) > max_chars
    value: dict[str, Any] = {"output": output[:max_chars], "exit_code": exit_code, "truncated": truncated}
    if exited:
        value["shell_exited"] = True
    return value


def shell_for(ctx: ToolContext) -> PersistentShell:
    """The owner's shell, started on first use and restarted after it died; owners never share."""
    state = ctx.state
    wanted = confinement(ctx)
    with state.lock:
        shell = state.shells.get(ctx.owner)
        # a shell keeps the confinement and environment it started with; a call under others gets a new shell
        if (
            isinstance(shell, PersistentShell)  # (the state knows its shells as `Closable` only)
            and shell.alive
            and shell.confinement == wanted
            and shell.hidden_env == ctx.hidden_env
        ):
            return shell
        if shell is not None:
            shell.close()
        try:
            with process_errors("bash"):
                shell = PersistentShell(workspace_root(ctx), process_env(ctx, shell_env()), wanted, ctx.hidden_env)
        except (ShellGone, TimeoutError) as exc:
            detail = str(exc) or "it did not start"
            raise fail("provider-unavailable", tool="bash", provider=f"working PTY shell ({detail})") from None
        state.shells[ctx.owner] = shell
        return shell


def current_directory(state, owner: str) -> str | None:
    """Where the owner's persistent shell is now, when it runs; None when it has none yet (it starts in the
    workspace) or its directory cannot be read."""
    with state.lock:
        shell = state.shells.get(owner)
    return shell.cwd() if shell is not None and shell.alive else None


def _forget(ctx: ToolContext, shell: PersistentShell) -> None:
    with ctx.state.lock:
        if ctx.state.shells.get(ctx.owner) is shell:
            del ctx.state.shells[ctx.owner]


def bash(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    check_mode(ctx)
    command = arg_str(args, "command")
    timeout = ctx.timeout_s if ctx.timeout_s and ctx.timeout_s > 0 else DEFAULT_TIMEOUT_S
    shell = shell_for(ctx)
    try:
        return shell.run(command, timeout=timeout, abort=ctx.abort, max_chars=ctx.max_output_chars)
    except ShellGone:
        raise fail("provider-unavailable", tool="bash", provider="running PTY shell (it exited)") from None
    finally:
        if not shell.alive:
            _forget(ctx, shell)
            shell.close()


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    output = value["output"].rstrip("\n")
    parts = [output] if output.strip() else []
    if value.get("truncated"):
        parts.append(f"[output truncated after {len(value['output'])} characters]")
    if value.get("shell_exited"):
        parts.append("[the shell exited; the next command starts a fresh one]")
    parts.append(f"[exit {value['exit_code']}]")
    return "\n".join(parts)


BODIES = {"tool-bash-persistent/bash": bash}
RENDERERS = {"tool-bash-persistent/bash": render}
