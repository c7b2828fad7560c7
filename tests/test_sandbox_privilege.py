"""A confined command holds no privilege, whoever runs dshc and whatever the mode: as root with the network
allowed (no user namespace) it used to keep every capability, so a block-device node made in the workspace
wrote raw bytes outside it, and the hostname and the clock could be changed. Every capability is dropped and
a seccomp filter refuses device nodes, mounts, the hostname, the clock, VSOCK sockets (a way out of a VM with
the network off) and pushing input into a terminal (TIOCSTI, TIOCLINUX: CVE-2017-5226; the upper-half
bypass of a 64-bit comparison of a 32-bit argument is CVE-2019-10063). Real processes; every attempt is
harmless when it succeeds (the hostname set to itself, `settimeofday(NULL, NULL)`, a node never opened)."""

from __future__ import annotations

import fcntl
import os
import platform
import select
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from dshc.runtime import sandbox
from dshc.runtime.sandbox import confinement_in, plan

PROBE = sandbox.probe()
needs_landlock = pytest.mark.skipif(PROBE.landlock_abi < 1 or not PROBE.seccomp, reason="needs Landlock and libseccomp")
needs_bwrap = pytest.mark.skipif(PROBE.bwrap is None or not PROBE.seccomp, reason="needs bubblewrap and libseccomp")
# calls made by number, on purpose with impossible arguments: the kernel would answer EINVAL or EFAULT, a
# filter that refuses them answers EPERM before any argument is read
NUMBERS = {
    "x86_64": {"socket": 41, "settimeofday": 164, "clock_settime": 227, "adjtimex": 159, "mount": 165},
    "aarch64": {"socket": 198, "settimeofday": 170, "clock_settime": 112, "adjtimex": 171, "mount": 40},
}
needs_numbers = pytest.mark.skipif(platform.machine() not in NUMBERS, reason="syscall numbers known for this CPU")

ATTEMPTS = r"""
import ctypes, errno, fcntl, os, socket, stat, sys, termios
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
N = NUMBERS
def attempt(name, call):
    try:
        call()
    except OSError as exc:
        print(f"{name}={errno.errorcode.get(exc.errno, exc.errno)}")
    else:
        print(f"{name}=ok")
def raw(number, *args):
    if libc.syscall(number, *args) < 0:
        raise OSError(ctypes.get_errno(), "")
def raw_fd(number, *args):
    fd = libc.syscall(number, *args)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "")
    return fd
def ioctl(fd, request, value):
    if libc.ioctl(fd, ctypes.c_ulong(request), ctypes.c_char_p(value)) < 0:
        raise OSError(ctypes.get_errno(), "")
for line in open("/proc/self/status"):
    if line.startswith(("CapEff", "CapPrm", "CapBnd", "CapAmb", "CapInh", "NoNewPrivs")):
        print(f"{line.split()[0][:-1].lower()}={line.split()[1]}")
os.chdir(os.environ["TMPDIR"])  # writable in every mode: what refuses a node there is the lack of privilege
attempt("block", lambda: os.mknod("blk", 0o600 | stat.S_IFBLK, os.makedev(7, 200)))
attempt("char", lambda: os.mknod("chr", 0o600 | stat.S_IFCHR, os.makedev(1, 3)))
attempt("fifo", lambda: os.mkfifo("fifo"))
attempt("hostname", lambda: socket.sethostname(socket.gethostname()))
domain = open("/proc/sys/kernel/domainname", "rb").read().strip()
def set_domain():
    if libc.setdomainname(domain, len(domain)) != 0:
        raise OSError(ctypes.get_errno(), "")
attempt("domainname", set_domain)
attempt("settimeofday", lambda: raw(N["settimeofday"], None, None))
attempt("clock_settime", lambda: raw(N["clock_settime"], 0x7FFF, None))
attempt("adjtimex", lambda: raw(N["adjtimex"], None))
os.makedirs("mnt", exist_ok=True)
attempt("mount", lambda: raw(N["mount"], b"none", b"mnt", b"tmpfs", 0, None))
os.rmdir("mnt")
attempt("vsock", lambda: socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM))
attempt("vsock_high", lambda: os.close(raw_fd(N["socket"], ctypes.c_long(socket.AF_VSOCK | 1 << 32),
                                             socket.SOCK_STREAM, 0)))
# with the network off a Unix socket is refused (test_sandbox_local_sockets); the kernel reads the family as
# an int, so its upper half must not walk around the filter
attempt("unix_high", lambda: os.close(raw_fd(N["socket"], ctypes.c_long(socket.AF_UNIX | 1 << 32),
                                            socket.SOCK_STREAM, 0)))
print("nodes=" + ",".join(sorted(name for name in ("blk", "chr") if os.path.lexists(name))))
os.unlink("fifo") if os.path.lexists("fifo") else None
if os.isatty(0):  # the terminal it was started in, as a hook's command is
    tty = 0
else:  # a terminal it makes its own: it leads a session of its own and opens it
    if os.getsid(0) != os.getpid():
        os.setsid()
    try:
        tty = os.open(sys.argv[1], os.O_RDONLY)  # reading is all TIOCSTI needs
    except OSError as exc:
        tty = exc
if isinstance(tty, OSError):  # not there to be reached
    print(f"tiocsti={errno.errorcode[tty.errno]}\ntiocsti_high={errno.errorcode[tty.errno]}")
else:
    attempt("tiocsti", lambda: fcntl.ioctl(tty, termios.TIOCSTI, b"x"))
    attempt("tiocsti_high", lambda: ioctl(tty, termios.TIOCSTI | 1 << 32, b"y"))
"""


def _script(tmp_path) -> Path:
    script = tmp_path / "attempts.py"
    script.write_text(f"NUMBERS = {NUMBERS[platform.machine()]!r}\n{ATTEMPTS}")
    return script


def _drained(main: int) -> bytes:
    """What reached a terminal's other side, read until it has been quiet for 0.2 s."""
    echoed = b""
    while select.select([main], [], [], 0.2)[0]:
        echoed += os.read(main, 1024)
    return echoed


def attempts(run, tmp_path, **context) -> tuple[dict, bytes]:
    """Run the attempts confined, with a terminal of their own: (name -> `ok` or the errno's name, what reached
    the terminal's other side)."""
    script = _script(tmp_path)
    main, secondary = os.openpty()
    try:
        output = run(f"python3 {script} {os.ttyname(secondary)} 2>&1", **context)
        echoed = _drained(main)
    finally:
        os.close(main)
        os.close(secondary)
    found = dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
    assert set(found) >= {*REFUSED, "fifo"}, output
    return found, echoed


REFUSED = (
    "block",
    "char",
    "hostname",
    "domainname",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "mount",
    "vsock",
    "vsock_high",
    "tiocsti",
    "tiocsti_high",
)


def _check(found: dict, echoed: bytes, bounding: bool = True) -> None:
    for name in REFUSED:
        assert found.get(name) == "EPERM", (name, found)
    for name in ("capeff", "capprm", "capamb", "capinh"):
        assert int(found[name], 16) == 0, (name, found)
    # nothing to gain back at an exec either (uid 0's, a set-user-ID program's): no_new_privs keeps the permitted
    # set to what it was; the launcher empties the bounding set besides (bubblewrap leaves it)
    assert found["nonewprivs"] == "1" and (int(found["capbnd"], 16) == 0 or not bounding), found
    assert b"x" not in echoed and b"y" not in echoed
    assert found["nodes"] == "" and found["fifo"] == "ok", found  # what needs no privilege still works


@needs_landlock
@needs_numbers
@pytest.mark.parametrize(
    "context",
    [{"network": True}, {}, {"sandbox": "read-only", "network": True}],
    ids=["network-allow", "network-off", "read-only"],
)
def test_a_confined_command_holds_no_privilege(run_bash, tmp_path, context):
    found, echoed = attempts(run_bash, tmp_path, **context)
    _check(found, echoed)
    assert found["unix_high"] == ("ok" if context.get("network") else "EPERM"), found


@needs_bwrap
@needs_numbers
def test_bubblewrap_holds_no_privilege_either(run_bash, tmp_path):
    found, echoed = attempts(run_bash, tmp_path, network=True, sandbox_backend="bwrap")
    # bubblewrap's own /dev has no terminal of the caller's to open (the next test hands one over)
    assert found["tiocsti"] == found["tiocsti_high"] == "ENOENT", found
    _check({**found, "tiocsti": "EPERM", "tiocsti_high": "EPERM"}, echoed, bounding=False)


@needs_numbers
@pytest.mark.parametrize(
    "backend", [pytest.param("auto", marks=needs_landlock), pytest.param("bwrap", marks=needs_bwrap)]
)
def test_the_terminal_a_command_is_started_in_takes_no_input_from_it(tmp_path, backend):
    # a hook's command line runs in the agent's shell: the terminal there is its controlling one and its stdin
    script = _script(tmp_path)
    (tmp_path / "ws").mkdir()
    (tmp_path / "tmp").mkdir()
    conf = confinement_in("workspace-write", str(tmp_path / "ws"), str(tmp_path / "tmp"), network=True, backend=backend)
    launch = plan(conf, [sys.executable, "-I", str(script), "-"], -1)
    main, secondary = os.openpty()

    def take_the_terminal():
        os.setsid()
        fcntl.ioctl(secondary, termios.TIOCSCTTY, 0)

    try:
        done = subprocess.run(
            launch.argv,
            stdin=secondary,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path / "ws",
            env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
            preexec_fn=take_the_terminal,
        )
        echoed = _drained(main)
    finally:
        os.close(main)
        os.close(secondary)
    found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert found.get("tiocsti") == found.get("tiocsti_high") == "EPERM", done.stdout + done.stderr
    assert b"x" not in echoed and b"y" not in echoed
