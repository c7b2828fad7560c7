"""macOS: a Seatbelt profile for `sandbox-exec` generated from a Confinement. In: the writable
roots, the paths kept read-only under them and the network switch; out: the profile text (pinned
as golden text in the tests)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_BASE = """(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-shm)
(allow pseudo-tty)
(allow file-read*)
(allow file-ioctl (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))"""


def _quote(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def profile(
    write_roots: Sequence[str],
    devices: Sequence[str],
    network: bool,
    read_only: Sequence[str] = (),
    hidden: Sequence[str] = (),
) -> str:
    lines = [_BASE]
    targets = [f"(subpath {_quote(root)})" for root in write_roots] + [f"(literal {_quote(d)})" for d in devices]
    lines.append("(allow file-write*\n    " + "\n    ".join(targets) + ")")
    if read_only:  # the last rule that matches decides: these come after the roots they carve out of
        lines.append("(deny file-write*\n    " + "\n    ".join(f"(subpath {_quote(p)})" for p in read_only) + ")")
    if hidden:  # what a read deny names: a directory's (trailing `/`) whole subtree
        lines.append(
            "(deny file-read*\n    "
            + "\n    ".join(
                f"(subpath {_quote(p.rstrip('/') or '/')})" if p.endswith("/") else f"(literal {_quote(p)})"
                for p in hidden
            )
            + ")"
        )
    if network:
        lines.append("(allow network*)")
    # else no socket at all: a Unix socket's connect is `network-outbound`, and a local daemon (dockerd) acts
    # outside the sandbox for whoever connects
    return "\n".join(lines) + "\n"
