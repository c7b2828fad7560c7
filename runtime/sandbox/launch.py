"""Child-side entry, run as `python -I -S launch.py REPORT_FD CONFINE NETWORK LOCAL_SOCKETS PARENT ROOT… [+PIN…]
[!READ_ONLY…] [-HIDDEN…] -- ARGV…` (stdlib only, no package import, nothing slow to import: it runs before
every command): confine this process, then supervise ARGV. In: the report fd (-1: none), how to confine (`none`;
`landlock`; `landlock+mounts`: in a mount namespace of its own too, every mount but the writable roots
read-only; `bwrap`: what bubblewrap, started next, leaves to it), 0/1 switches (NETWORK `pFD`: only through the
egress proxy, reached over FD: `egress.py`), the pid of the process that
started it (0: whichever did), the writable roots, the folders pinned, the paths kept read-only under them and
the paths hidden; out: the command's exit status, or status 125 and a reason on the report fd."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # stdlib only, nothing slow: the types are for type checkers alone
if TYPE_CHECKING:
    from collections.abc import Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import landlock  # noqa: E402 - a sibling file, found through the path set just above
import netns  # noqa: E402
import privilege  # noqa: E402
import readonly  # noqa: E402
import seccomp  # noqa: E402
import supervise  # noqa: E402

CONFINE_FAILED = 125


CONFINE = ("none", "landlock", "landlock+mounts", "bwrap")


def confine(
    how: str,
    network: bool,
    roots: Sequence[str],
    read_only: Sequence[str] = (),
    pins: Sequence[str] = (),
    local_sockets: bool = True,
    hidden: Sequence[str] = (),
    channel: int | None = None,
) -> None:
    """`channel`: the network is the egress proxy's alone (`egress.py` holds the other end)."""
    if how == "bwrap":  # it mounts, then drops every capability itself: the filter leaves it the mount calls
        seccomp.install(close_local_sockets=not local_sockets, mounts=True)
        return
    if how == "none":
        return
    sealed = how == "landlock+mounts"
    flags = (0 if network else netns.CLONE_NEWNET) | (netns.CLONE_NEWNS if sealed or read_only or hidden else 0)
    if flags:
        netns.enter(flags)
    port = None
    if channel is not None:  # the namespace's loopback leads to the proxy, and nothing else leads out
        port = netns.proxy_listener(channel)
        address = f"http://127.0.0.1:{port}"
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            os.environ[name] = os.environ[name.lower()] = address
        # Node's own fetch reads them only when told to (Node 22.21+ and 24+; older ones ignore the switch)
        os.environ["NODE_USE_ENV_PROXY"] = "1"
        for name in ("NO_PROXY", "no_proxy"):
            os.environ.pop(name, None)
    if sealed or read_only or hidden:
        cwd = os.getcwd()
        if sealed:
            readonly.seal(list(roots))  # the devices among them: a bind of itself changes nothing
        if read_only:
            readonly.keep_read_only(list(read_only), list(pins))
        if hidden:
            readonly.hide(list(hidden))
        # the directory this process started in is what a mount covers if it lies within one: looked up again,
        # it is the mount (else `cat token` in a hidden folder, or a write in a protected one, reaches below)
        os.chdir(cwd)
    # after the mounts: it forbids the command to undo them
    landlock.restrict_writes(roots, deny_tcp=not network, connect_port=port)
    privilege.drop_all()
    # last: the steps above may open sockets of their own and mount
    seccomp.install(close_local_sockets=not local_sockets)


def probe() -> int:
    """Exit 0 when a user + network namespace can be entered here."""
    try:
        netns.isolate_network()
    except OSError:
        return 1
    return 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--probe-netns"]:
        return probe()
    report = None
    try:
        report = int(argv[1]) if int(argv[1]) >= 0 else None
        if report is not None:
            os.set_inheritable(report, False)
        split = argv.index("--")
        how, network, command = argv[2], argv[3] == "1", argv[split + 1 :]
        # `pFD`: through the egress proxy, whose way in is FD
        channel = int(argv[3][1:]) if argv[3].startswith("p") else None
        if channel is not None:
            os.set_inheritable(channel, False)
        local_sockets = argv[4] == "1"
        # the process that started this one, asked as early as can be: once it is gone (even by SIGKILL, while
        # this one was still confining itself) the command must not start, or must not outlive it (`supervise`)
        parent = int(argv[5]) or os.getppid()
        if os.getppid() != parent:
            raise ProcessLookupError(f"the process that started it ({parent}) is gone")
        if how not in CONFINE:
            raise ValueError(f"no way to confine named `{how}`")
        # a root given as `!PATH` is kept read-only, `+PATH` pinned in place, `-PATH` hidden (every root is
        # absolute: none starts with any of them)
        given = argv[6:split]
        roots = [root for root in given if root[:1] not in "!+-"]
        read_only = [root[1:] for root in given if root.startswith("!")]
        pins = [root[1:] for root in given if root.startswith("+")]
        hidden = [root[1:] for root in given if root.startswith("-")]
        if not command:
            raise ValueError("no command to run")
        if channel is not None and how != "landlock+mounts":
            raise ValueError("the egress proxy needs a network namespace (`landlock+mounts`)")
        confine(how, network, roots, read_only, pins, local_sockets, hidden, channel)
    except Exception as exc:  # noqa: BLE001 - whatever stops confinement, the command must not run
        if report is not None:
            os.write(report, f"cannot confine the command: {_reason(exc)}".encode())
        return CONFINE_FAILED
    return supervise.run(command, report, parent)


def _reason(exc: Exception) -> str:
    """What stopped confinement, in words: an OSError's own text and file, not Python's `[Errno N] …` form
    (a folder removed while the command was being started, a mount refused)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f": `{os.fsdecode(exc.filename)}`" if exc.filename else "")
    return str(exc)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
