"""The process that stands between dshc and the launcher when a policy lists hosts, run as `python -I -S egress.py
PARENT EVENTS_FD ALLOW_JSON DENY_JSON -- LAUNCHER_ARGV…` (stdlib only): it starts the launcher with one end of a
socket pair, receives from it the listening socket the launcher made on the loopback of the command's own network
namespace (the only way out of it), and serves the proxy on that socket from outside (`proxy`). In: dshc's pid, the
fd the refusals go to (-1: none, then a `dshc:` line on stderr for whoever reads the output), the lists; out: the
launcher's exit status, and each refused connection as one `network/denied` JSON line on EVENTS_FD."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "common")]

import proxy  # noqa: E402 - siblings, found through the path set just above
from hosts import HostError, HostRules  # noqa: E402

CONFINE_FAILED = 125
_POLL_S = 0.1
MAX_EVENTS = 200  # a command that retries forever fills no memory: the rest are counted in one last line


def launcher_argv(command: list[str], channel: int) -> list[str]:
    """The launcher's argv with its network switch pointing at `channel` and this process as the one that
    started it (`launch.py`'s REPORT_FD CONFINE NETWORK LOCAL_SOCKETS PARENT)."""
    at = next(index for index, word in enumerate(command) if word.endswith("launch.py"))
    command = list(command)
    command[at + 3], command[at + 5] = f"p{channel}", str(os.getpid())
    return command


def main(argv: list[str]) -> int:
    split = argv.index("--")
    parent, events, command = int(argv[1]) or os.getppid(), int(argv[2]), argv[split + 1 :]
    if events >= 0:  # the command must never hold the events fd: only this process writes to it
        os.set_inheritable(events, False)
    try:
        rules = HostRules(json.loads(argv[3]), json.loads(argv[4]))
    except (HostError, ValueError) as exc:
        sys.stderr.write(f"dshc: network: the host lists do not parse: {exc}\n")
        return CONFINE_FAILED
    ours, theirs = socket.socketpair()
    os.set_inheritable(theirs.fileno(), True)
    started = launcher_argv(command, theirs.fileno())  # (naming this process: before the fork)
    child = os.fork()
    if child == 0:
        ours.close()
        try:
            os.execv(started[0], started)
        finally:
            os._exit(CONFINE_FAILED)
    theirs.close()
    # hold no copy of the launcher's report fd: dshc reads it until the launcher's copy closes
    report = command[command.index(next(w for w in command if w.endswith("launch.py"))) + 1]
    if int(report) >= 0:
        try:
            os.close(int(report))
        except OSError:
            pass
    signal.signal(signal.SIGTERM, lambda *_: os.kill(child, signal.SIGTERM))
    signal.signal(signal.SIGHUP, lambda *_: os.kill(child, signal.SIGTERM))
    reporter = Reporter(events)
    threading.Thread(target=_serve, args=(ours, rules, reporter), daemon=True).start()
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            reporter.close()
            return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        if os.getppid() != parent:  # dshc is gone: so must the command be (the launcher kills what is below it)
            os.kill(child, signal.SIGTERM)
        time.sleep(_POLL_S)


def _serve(channel: socket.socket, rules: HostRules, reporter: "Reporter") -> None:
    try:
        _, fds, _, _ = socket.recv_fds(channel, 16, 1)
    except OSError:
        return
    finally:
        channel.close()
    if not fds:  # the launcher stopped before it made the listener: it reports why itself
        return
    listener = socket.socket(fileno=fds[0])
    proxy.serve(listener, rules, reporter)


class Reporter:
    """Each refusal as one JSON line: to the events fd dshc reads after the call (the command cannot write to
    it, so a line there is the proxy's), or without one, on stderr for whoever reads the command's output."""

    def __init__(self, fd: int) -> None:
        self.fd, self.written, self.dropped = fd, 0, 0
        self._lock = threading.Lock()

    def __call__(self, host: str, port, why: str) -> None:
        line = json.dumps({"event": "network/denied", "host": host, "port": port, "reason": why})
        with self._lock:
            if self.fd < 0:
                sys.stderr.write(f"dshc: {line}\n")
                sys.stderr.flush()
            elif self.written < MAX_EVENTS:
                self.written += 1
                _write(self.fd, line)
            else:
                self.dropped += 1

    def close(self) -> None:
        with self._lock:
            if self.fd >= 0 and self.dropped:
                _write(self.fd, json.dumps({"event": "network/denied-dropped", "count": self.dropped}))
            self.dropped = 0


def _write(fd: int, line: str) -> None:
    data = (line + "\n").encode("utf-8", "replace")
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError:  # dshc is gone: nobody is left to read the refusals
        pass


if __name__ == "__main__":
    sys.exit(main(sys.argv))
