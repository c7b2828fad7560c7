"""Choose the confinement for one process start. In: a Confinement, the host Probe and an
argv; out: a Launch (the argv to execute and the mechanism's name) or SandboxUnavailable.
(Rows, not dataclasses, and no import a plan does not need: a Claude Code hook plans one per
shell call.)"""

from __future__ import annotations

import os
import sys

from . import seatbelt
from .files import RUN_LATER, hooks_path, within  # kept read-only where they exist and the mechanism can
from .probe import EGRESS, LAUNCHER, Probe, probe
from .rows import REQUIRED, Row

MODES = ("read-only", "workspace-write", "danger-full-access")
# written to even under read-only: the null-like devices and the terminal
# dshc's own packages (one folder each in an editable install, one `dshc` folder otherwise)
PACKAGES = ("dshc.cli", "dshc.compiler", "dshc.runtime", "dshc.presets", "dshc.policies", "dshc.catalogs")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom")
REPORT_TIMEOUT_S = 10.0
# what a policy's host lists need and no mechanism here gives: never the whole network in their place
EGRESS_MISSING = (
    "a proxy that admits only the hosts the policy lists (it needs Landlock and unprivileged user + "
    "network namespaces, and not bubblewrap): the command is refused rather than given every host"
)


class SandboxUnavailable(Exception):
    """No mechanism can give the asked-for confinement here; `missing` says what is lacking."""

    def __init__(self, mode: str, missing: str) -> None:
        super().__init__(f"no OS sandbox for `{mode}` here: {missing}")
        self.mode = mode
        self.missing = missing


class SandboxFailure(Exception):
    """The launcher could not confine (or start) the command; nothing of it ran."""


class Confinement(Row):
    mode: str
    workspace: str
    tmpdir: str
    writable: tuple[str, ...]
    protected: tuple[str, ...]
    run_later: tuple[str, ...]
    hidden: tuple[str, ...]
    network: bool
    network_allow: tuple[tuple[str, ...], ...]
    network_deny: tuple[str, ...]
    fallback_unsandboxed: bool
    backend: str
    FIELDS = {
        "mode": REQUIRED,  # read-only | workspace-write | danger-full-access
        "workspace": REQUIRED,
        "tmpdir": REQUIRED,  # the private temp dir, writable in every mode
        "writable": (),  # extra roots the policy names (workspace-write only)
        # paths under the write roots that stay read-only (a policy's deny of writes there: `.claude/`, a
        # directory's with a trailing `/`; dshc's own installation)
        "protected": (),
        # what runs code later, found under the write roots (`RUN_LATER`): kept read-only where the host can
        # mount, never a reason to refuse (the policy did not ask for it)
        "run_later": (),
        # what a policy's read deny names, where it exists: a process finds a directory empty, a file empty
        "hidden": (),
        "network": False,
        # with the network on: the hosts processes may reach (one tuple of patterns per policy level, each must
        # admit a host) and may not (`common.hosts`); both empty: every host
        "network_allow": (),
        "network_deny": (),
        "fallback_unsandboxed": False,  # the policy's explicit opt-out of failing closed
        "backend": "auto",  # auto | bwrap
    }

    def egress(self) -> bool:
        """Whether the network is on for some hosts only: then only a proxy that checks them may be reached."""
        return bool(self.network and (self.network_allow or self.network_deny))

    def write_roots(self) -> tuple[str, ...]:
        if self.mode == "workspace-write":
            return (self.workspace, self.tmpdir, *self.writable)
        return (self.tmpdir,)

    def read_only(self, run_later: bool = False) -> tuple[str, ...]:
        """The protected paths some write root holds (elsewhere nothing may be written anyway); with
        `run_later`, what runs code later too."""
        roots = self.write_roots()
        paths = (*self.protected, *self.run_later) if run_later else self.protected
        held = [
            path
            for path in dict.fromkeys(paths)
            if any(path.rstrip("/") == root or path.startswith(root.rstrip("/") + "/") for root in roots)
        ]
        # one inside another is read-only with it; listed too, the folders pinned to hold it would stay writable
        # inside the outer one (`pinned`)
        return tuple(
            path for path in held if not any(path.rstrip("/").startswith(other.rstrip("/") + "/") for other in held)
        )


def pinned(roots, kept) -> tuple[str, ...]:
    """The folders between a write root and a path kept read-only under it (`.git` for `.git/hooks`),
    shallowest first. A mount only stops its own path being renamed: a command could otherwise move the
    folder that holds it aside and make a new one in its place (`mv .git x; git init`)."""
    found: dict[str, None] = {}
    for path in kept:
        path = path.rstrip("/")
        root = next((root.rstrip("/") for root in roots if path.startswith(root.rstrip("/") + "/")), None)
        if root is None:
            continue
        parts = path[len(root) + 1 :].split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            found[root + "/" + "/".join(parts[:depth])] = None
    return tuple(sorted(found, key=lambda folder: folder.count("/")))


def confinement_in(
    mode: str,
    workspace: str,
    tmpdir: str,
    *,
    writable=(),
    protected=(),
    hidden=(),
    network: bool = False,
    network_allow=(),
    network_deny=(),
    fallback_unsandboxed: bool = False,
    backend: str = "auto",
) -> Confinement:
    """A policy's sandbox lines, as written, for the real directory `workspace`: writable roots with `~`
    expanded, protected and hidden paths relative to the workspace (`.claude/`, as a policy glob's is; a
    directory keeps its `/`), every path real. A hidden path that does not exist holds nothing to hide."""
    roots = tuple(os.path.realpath(os.path.expanduser(root)) for root in writable)
    kept = tuple(_real_in(workspace, path) for path in protected)
    unread = tuple(
        dict.fromkeys(
            path
            for path in (_real_in(workspace, given) for given in hidden)
            if os.path.lexists(path.rstrip("/") or "/")
        )
    )
    if unread:  # what git holds of them, it holds in its object store too
        from .gitstore import objects_to_hide

        unread += objects_to_hide(workspace, unread)
    # dshc itself, where a write root holds it (installed in the project's own `.venv`): a command that rewrote
    # the launcher would run every later one bare
    kept += tuple(
        path for path in installation() if any(within(path.rstrip("/"), root) for root in (workspace, tmpdir, *roots))
    )
    later = tuple(
        os.path.realpath(path)
        for root in (workspace, *roots)
        for name in RUN_LATER
        if os.path.lexists(path := os.path.join(root, name))
    )
    # the hooks folder a repository configures; one named but missing is made, empty, and kept (else a command
    # makes it, and its hook runs at the next commit)
    later += tuple(
        os.path.realpath(hooks) + ("" if os.path.isfile(hooks) else "/")
        for root in (workspace, *roots)
        if (hooks := hooks_path(root)) is not None
    )
    return Confinement(
        mode=mode,
        workspace=workspace,
        tmpdir=tmpdir,
        writable=roots,
        network=network,
        network_allow=tuple(map(tuple, network_allow)),
        network_deny=tuple(network_deny),
        fallback_unsandboxed=fallback_unsandboxed,
        backend=backend,
        protected=kept,
        run_later=later,
        hidden=unread,
    )


def installation() -> tuple[str, ...]:
    """What dshc runs from, as real folders (`/`-ended): its packages (the launcher among them, the shipped
    presets and policies) and the environment of the interpreter running it (`sys.prefix`: its scripts, its
    site-packages, the `.pth` files every start of it runs)."""
    from importlib.util import find_spec

    folders = [
        folder
        for name in PACKAGES
        if (spec := find_spec(name)) is not None
        for folder in spec.submodule_search_locations or ()
    ]
    return tuple(dict.fromkeys(os.path.realpath(folder) + "/" for folder in (*folders, sys.prefix)))


def _real_in(workspace: str, path: str) -> str:
    """`path` (relative to `workspace`, `~` expanded) made real; a directory's ends in `/`, as written or as
    found (`matches "/home/me/.ssh"` names a folder: the null device cannot be mounted over it)."""
    real = os.path.realpath(os.path.join(workspace, os.path.expanduser(path)))
    return real + ("/" if path.endswith("/") or real != "/" and os.path.isdir(real) else "")


class Launch(Row):
    argv: list[str]
    mechanism: str
    report: bool
    FIELDS = {
        "argv": REQUIRED,
        "mechanism": REQUIRED,  # landlock+netns | landlock | bwrap | seatbelt | none | unsandboxed
        "report": REQUIRED,  # the launcher writes failures to the report fd
    }


def _launcher(
    argv: list[str],
    report_fd: int,
    *,
    how: str = "none",
    network: bool = True,
    local_sockets: bool = True,
    parent: int = 0,
    roots: tuple[str, ...] = (),
    read_only: tuple[str, ...] = (),
    pins: tuple[str, ...] = (),
    hidden: tuple[str, ...] = (),
) -> list[str]:
    return [
        sys.executable,
        "-I",
        "-S",
        LAUNCHER,
        str(report_fd),
        how,
        "1" if network else "0",
        "1" if local_sockets else "0",
        str(parent),
        *roots,
        *("+" + path for path in pins),
        *("!" + path for path in read_only),
        *("-" + path for path in hidden),
        "--",
        *argv,
    ]


def bwrap_argv(conf: Confinement, bwrap: str, argv: list[str]) -> list[str]:
    command = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for root in dict.fromkeys(conf.write_roots()):
        if os.path.exists(root):
            command += ["--bind", root, root]
    from .readonly import make_missing_directory

    kept = conf.read_only(run_later=True)
    for path in kept:
        make_missing_directory(path)  # as the mount-namespace launcher does: a directory is always there
    for folder in pinned(conf.write_roots(), kept):  # a mount point cannot be renamed away (`pinned`)
        command += ["--bind-try", folder, folder]
    for path in kept:
        # a directory must be mounted (bubblewrap refuses to start if it cannot be); a missing file is skipped
        option = "--ro-bind" if path.endswith("/") else "--ro-bind-try"
        command += [option, path.rstrip("/") or "/", path.rstrip("/") or "/"]
    for path in conf.hidden:  # an empty read-only directory, or the null device, over what a read deny names
        target = path.rstrip("/") or "/"
        command += (
            ["--tmpfs", target, "--remount-ro", target] if path.endswith("/") else ["--ro-bind", "/dev/null", target]
        )
    if not conf.network:
        command.append("--unshare-net")
    # its own processes: none outside can be signalled or traced (Landlock's scopes do that on the default
    # mechanism); its own session: no input can be pushed into the terminal it came from (CVE-2017-5226)
    command += ["--unshare-pid", "--new-session"]
    # run as root, bubblewrap keeps every capability: the command could then unmount or remount what
    # keeps it in (measured: `umount` succeeded under uid 0)
    return [*command, "--cap-drop", "ALL", "--die-with-parent", "--", *argv]


def missing(conf: Confinement, found: Probe | None = None) -> str | None:
    """What this host lacks to confine `conf` as asked; None when a mechanism is there."""
    found = found or probe()
    if found.platform.startswith("linux") and not found.seccomp:
        # a network namespace leaves pathname sockets open (dockerd, the session bus), and a terminal the command
        # controls takes input without any capability (`seccomp.py`)
        return (
            "libseccomp (needed to refuse local sockets with the network off, device nodes, mounts, VSOCK "
            "sockets and input pushed into a terminal)"
        )
    linked = next((path for path in conf.hidden if not path.endswith("/") and _links(path) > 1), None)
    if linked is not None:  # its other names, wherever they are, would still read it
        return f"a way to hide `{linked}`: it has other hard links, which no mechanism can find and hide"
    if conf.egress() and (
        conf.backend == "bwrap"
        or not found.platform.startswith("linux")
        or not found.network_namespace
        or found.landlock_abi < 1
    ):
        return EGRESS_MISSING
    if conf.backend == "bwrap":
        return None if found.bwrap else "bubblewrap (`bwrap`) was asked for and is not installed"
    if found.platform.startswith("linux"):
        if found.landlock_abi < 1:
            return "Landlock (the kernel reports no Landlock ABI)"
        if not conf.network and not found.network_namespace:
            return "unprivileged user namespaces (needed to turn the network off)"
        if conf.read_only() and not found.network_namespace:
            return f"unprivileged user namespaces (needed to keep `{conf.read_only()[0]}` read-only)"
        if conf.hidden and not found.network_namespace:
            return f"unprivileged user namespaces (needed to keep `{conf.hidden[0]}` unreadable)"
        return None
    if found.platform == "darwin":
        return None if found.sandbox_exec else "sandbox-exec (Seatbelt)"
    return f"a supported sandbox for platform `{found.platform}`"


def _links(path: str) -> int:
    try:
        return os.lstat(path).st_nlink
    except OSError:  # gone since the plan was made: nothing is left there to read
        return 1


def plan(
    conf: Confinement, argv: list[str], report_fd: int, found: Probe | None = None, parent: int = 0, events_fd: int = -1
) -> Launch:
    """Fail closed: an unknown mode or a missing mechanism raises unless the policy opted out. `parent`: the pid
    of the process that starts the launcher (0: whichever does), which must still be there when the command
    starts; `events_fd`: where the egress proxy writes the connections it refused (-1: its stderr)."""
    if conf.mode not in MODES:
        raise SandboxUnavailable(conf.mode, "the mode is not one of " + ", ".join(MODES))
    found = found or probe()
    linux = found.platform.startswith("linux")
    if conf.mode == "danger-full-access":
        return Launch(_launcher(argv, report_fd, parent=parent), "none", True) if linux else Launch(argv, "none", False)
    lacking = missing(conf, found)
    if lacking is not None:
        # a host list is never traded for the whole network, whatever the fallback
        if not conf.fallback_unsandboxed or conf.egress():
            raise SandboxUnavailable(conf.mode, lacking)
        return Launch(_launcher(argv, report_fd, parent=parent) if linux else argv, "unsandboxed", linux)
    if conf.backend == "bwrap":
        assert found.bwrap is not None  # `missing` made sure it is installed
        # the launcher installs the filter before bubblewrap starts: it holds for what it runs
        return Launch(
            _launcher(
                bwrap_argv(conf, found.bwrap, argv), report_fd, how="bwrap", local_sockets=conf.network, parent=parent
            ),
            "bwrap",
            True,
        )
    if not linux:
        text = seatbelt.profile(
            conf.write_roots(),
            DEVICES,
            conf.network,
            [path.rstrip("/") or "/" for path in conf.read_only(run_later=True)],
            conf.hidden,
        )
        return Launch([found.sandbox_exec, "-p", text, *argv], "seatbelt", False)
    # without a mount namespace only the policy's own paths stop the plan (`missing`); what runs later, and the
    # mode, times and attributes of files outside the write roots (the seal), are then left unguarded
    read_only = conf.read_only(run_later=found.network_namespace)
    egress = conf.egress()  # (`missing` made sure there is a network namespace for it)
    launcher = _launcher(
        argv,
        report_fd,
        how="landlock+mounts" if found.network_namespace else "landlock",
        network=conf.network and not egress,
        local_sockets=conf.network and not egress,
        parent=0 if egress else parent,
        roots=(*conf.write_roots(), *DEVICES),
        read_only=read_only,
        pins=pinned(conf.write_roots(), read_only),
        hidden=conf.hidden,
    )
    if egress:  # the proxy's process starts the launcher, and hands it the way in (`egress.py`)
        from ...common.json_io import dumps

        launcher = [
            sys.executable,
            "-I",
            "-S",
            EGRESS,
            str(parent),
            str(events_fd),
            dumps([list(level) for level in conf.network_allow]),
            dumps(list(conf.network_deny)),
            "--",
            *launcher,
        ]
    mechanism = "landlock+egress-proxy" if egress else "landlock" if conf.network else "landlock+netns"
    return Launch(
        launcher, mechanism + ("+read-only-mounts" if read_only else "") + ("+hidden" if conf.hidden else ""), True
    )


def read_report(fd: int, timeout_s: float = REPORT_TIMEOUT_S) -> str:
    """What the launcher reported before the command started: '' once it runs confined.

    The report pipe closes (EOF) when the launcher has confined itself and exec'd the
    command; any text is a failure. Silence past the timeout counts as a failure too."""
    import select
    import time

    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "the sandbox launcher did not report in time"
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        data = os.read(fd, 4096)
        if not data:
            return b"".join(chunks).decode("utf-8", "replace")
        chunks.append(data)
