"""The process that stands between dshc and the launcher when a policy lists hosts, run as `python -I -S egress.py
PARENT ALLOW_JSON DENY_JSON -- LAUNCHER_ARGV…` (stdlib only): it starts the launcher with one end of a socket pair,
receives from it the listening socket the launcher made on the loopback of the command's own network namespace
(the only way out of it), and serves the proxy on that socket from outside (`proxy`). In: dshc's pid, the lists;
out: the launcher's exit status, and each refused connection as a `network/denied` line on stderr."""
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


def launcher_argv(command: list[str], channel: int) -> list[str]:
    """The launcher's argv with its network switch pointing at `channel` and this process as the one that
    started it (`launch.py`'s REPORT_FD CONFINE NETWORK LOCAL_SOCKETS PARENT)."""
    at = next(index for index, word in enumerate(command) if word.endswith("launch.py"))
    command = list(command)
    command[at + 3], command[at + 5] = f"p{channel}", str(os.getpid())
    return command


def main(argv: list[str]) -> int:
    split = argv.index("--")
    parent, command = int(argv[1]) or os.getppid(), argv[split + 1:]
    try:
        rules = HostRules(json.loads(argv[2]), json.loads(argv[3]))
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
    threading.Thread(target=_serve, args=(ours, rules), daemon=True).start()
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        if os.getppid() != parent:  # dshc is gone: so must the command be (the launcher kills what is below it)
            os.kill(child, signal.SIGTERM)
        time.sleep(_POLL_S)


def _serve(channel: socket.socket, rules: HostRules) -> None:
    try:
        _, fds, _, _ = socket.recv_fds(channel, 16, 1)
    except OSError:
        return
    finally:
        channel.close()
    if not fds:  # the launcher stopped before it made the listener: it reports why itself
        return
    listener = socket.socket(fileno=fds[0])
    proxy.serve(listener, rules, _report)


def _report(host: str, port, why: str) -> None:
    line = json.dumps({"event": "network/denied", "host": host, "port": port, "reason": why})
    sys.stderr.write(f"dshc: {line}\n")
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
