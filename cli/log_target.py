"""A `--log` target (a JSONL path or a postgresql:// DSN) → an open EventLog, or the log's records.

A DSN's spool lives in the user's private cache folder (<cache>/dshc/spool, 0700, files 0600,
checked as every dshc cache is), one file per (database, session). `read_log_target` and
`log_records` are the one reader for both stores (replay, audit and suggest use them). A hook given no
log writes to `project_log`, in the user's state folder: outside the workspace its commands may write.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator

from ..common.digest import sha256  # not hashlib: it loads OpenSSL (a hook writes these records)
from ..compiler import user_cache
from ..compiler.diagnostics import Diagnostic, DshError
from ..compiler._base.frozen import replace
from ..runtime.events import EventLog, LogRead, read_log
from ..runtime.log_format import blob_dir
from ..runtime.pg_log import is_dsn
from .extras import require

SPOOL_FOLDER = "spool"


def open_log(target: str | None, session: str | None = None) -> EventLog:
    if target is None or not is_dsn(target):
        try:
            if target:
                os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
            return EventLog(target, session=session)
        except OSError as exc:  # a link or a foreign file planted where the log goes (`state_files`) among them
            raise DshError(
                [Diagnostic("DSH107", f"cannot open the event log: {exc.strerror or exc}", path=target)]
            ) from None
    require("postgres", "a postgresql:// event log")  # before spooling: records must not wait for a driver never there
    from ..runtime.pg_log import PostgresEventLog

    session = session or os.urandom(6).hex()
    folder, prefix = spool_folder(target), _prefix(target)
    _ship_leftovers(target, folder, prefix, session)
    return PostgresEventLog(target, _spool_file(folder, f"{prefix}{_safe(session)}.jsonl"), session)


def project_log(root: str) -> str:
    """<state>/dshc/<project key>/events.jsonl: the hook's log for the project at `root` when none is
    configured (state: XDG_STATE_HOME, else ~/.local/state), keyed by a digest of the project's real path.
    Its folders are made 0700 and refused unless they are this user's folders (not links); DSH107 if not."""
    from ..runtime.state_files import UnsafeStateFile

    base = os.environ.get("XDG_STATE_HOME")
    if not base or not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    real = os.path.realpath(root)
    digest = sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    key = f"{_safe(os.path.basename(real))[:40]}-{digest}"  # the name to find it by, the digest to tell them apart
    folder = os.path.join(base, "dshc", key)
    try:
        if not os.path.isabs(folder):  # no home to speak of: never a log relative to the working folder
            raise FileNotFoundError(errno.ENOENT, "no home folder for the user's state folder")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        for path in (os.path.dirname(folder), folder):
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
                raise UnsafeStateFile(path, "it is not a folder of this user's")
    except OSError as exc:
        raise DshError(
            [
                Diagnostic(
                    "DSH107",
                    f"no state folder for the event log: {exc.strerror or exc}",
                    help='give the hook a log: `--log FILE` or `log = "FILE"` in .dshc',
                )
            ]
        ) from None
    return os.path.join(folder, "events.jsonl")


def read_log_target(target: str, calls_digest: str | None = None) -> LogRead:
    """The whole log, from a JSONL path or a DSN (from a DSN, with `calls_digest`, only the sessions of
    runs of that calls file); DSH107 when it cannot be read, DSH407 without the `postgres` extra."""
    if is_dsn(target):
        require("postgres", "a postgresql:// event log")
    try:
        if is_dsn(target):
            from ..runtime.pg_log import read_postgres

            return read_postgres(target, calls_digest)
        return read_log(target)
    except OSError as exc:
        raise DshError(
            [Diagnostic("DSH107", f"cannot read the event log: {exc.strerror or exc}", path=_shown(target))]
        ) from None
    except Exception as exc:  # noqa: BLE001 - a database error (psycopg's own classes) is a user-facing one
        if not is_dsn(target):
            raise
        raise DshError(
            [
                Diagnostic(
                    "DSH107", f"cannot read the event log from the database: {_first_line(exc)}", path=_shown(target)
                )
            ]
        ) from None


def read_dsn_for_resume(target: str, calls_digest: str) -> LogRead:
    """What earlier runs of one calls file logged to a DSN, for resuming: the database's records of their
    sessions and every record a writer fsynced to its spool but never shipped (the database was away, or
    the run died first), each (session, seq) once. A database that cannot be read is DSH107: the run
    refuses rather than re-run."""
    require("postgres", "a postgresql:// event log")
    try:
        stored = read_log_target(target, calls_digest)
    except DshError as exc:
        raise DshError(
            [
                replace(
                    d,
                    help="a run logging to a database resumes from what it holds, so it does not start "
                    "while the database cannot be read; log to a JSONL file to run offline",
                )
                for d in exc.diagnostics
            ]
        ) from None
    return with_spooled(target, stored)


def with_spooled(target: str, stored: LogRead) -> LogRead:
    """The database's records and, after them, every record a writer fsynced to its spool but never shipped (the
    database was away, or the writer died first), each (session, seq) once."""
    folder, prefix = spool_folder(target), _prefix(target)
    seen = {(r.get("session"), r.get("seq")) for r in stored.records}
    spooled = []
    for name in sorted(os.listdir(folder)):
        if name.startswith(prefix) and name.endswith(".jsonl"):
            for record in read_log(os.path.join(folder, name), resolve_blobs=False).records:
                key = (record.get("session"), record.get("seq"))
                if key not in seen:
                    seen.add(key)
                    spooled.append(record)
    records = stored.records + tuple(spooled)
    return LogRead(records, tuple(range(1, len(records) + 1)), (), False)


def spooled_blobs(dsn: str, session: str | None) -> str:
    """Where a spooled record's long strings were put: beside its session's spool (a JSONL log keeps them
    beside itself, `log_format.blob_dir`)."""
    return blob_dir(os.path.join(spool_folder(dsn), f"{_prefix(dsn)}{_safe(str(session))}.jsonl"))


def log_records(target: str) -> Iterator[dict]:
    """Each whole record of a JSONL log or a PostgreSQL log, in stored order."""
    yield from read_log_target(target).records


def spool_folder(dsn: str) -> str:
    """<cache>/dshc/spool, made 0700 and checked to be ours; DSH107 when no private folder can be had."""
    if not user_cache.usable():
        raise _no_spool("this platform cannot check a private folder")
    root = user_cache.cache_root()
    if root is None:  # as `open_folder` would say
        raise _no_spool("no cache folder")
    try:
        parent = user_cache.open_folder()
    except (user_cache.UntrustedCache, OSError) as exc:
        raise _no_spool(str(exc)) from None
    try:
        try:
            os.mkdir(SPOOL_FOLDER, 0o700, dir_fd=parent)
        except FileExistsError:
            pass
        info = os.stat(SPOOL_FOLDER, dir_fd=parent, follow_symlinks=False)
        user_cache.check_owned(info, SPOOL_FOLDER, stat.S_ISDIR)
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise user_cache.UntrustedCache(f"`{SPOOL_FOLDER}` is open to other users")
    except (user_cache.UntrustedCache, OSError) as exc:
        raise _no_spool(str(exc)) from None
    finally:
        os.close(parent)
    return os.path.join(root, "dshc", SPOOL_FOLDER)


def _spool_file(folder: str, name: str) -> str:
    path = os.path.join(folder, name)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | user_cache.SAFE_OPEN, 0o600)
        try:
            user_cache.check_owned(os.fstat(fd), path, stat.S_ISREG)
        finally:
            os.close(fd)
    except (user_cache.UntrustedCache, OSError) as exc:
        raise _no_spool(str(exc)) from None
    return path


def _ship_leftovers(dsn: str, folder: str, prefix: str, session: str) -> None:
    """Spools of ended sessions that still hold unsent records (more than the kept last one) go now."""
    from ..runtime.pg_log import PostgresEventLog

    for name in sorted(os.listdir(folder)):
        if not (name.startswith(prefix) and name.endswith(".jsonl")) or name == f"{prefix}{_safe(session)}.jsonl":
            continue
        path = os.path.join(folder, name)
        with open(path, "rb") as handle:
            if handle.read().count(b"\n") <= 1:
                continue
        PostgresEventLog(dsn, path, name[len(prefix) : -len(".jsonl")]).close()


def _prefix(dsn: str) -> str:
    # the spool's name never carries the password, only a digest of the whole DSN
    return "pg-" + sha256(dsn.encode()).hexdigest()[:16] + "-"


_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _safe(text: str) -> str:
    """`text` with every character but ASCII letters, digits, `_`, `.` and `-` made `_`, cut to 120."""
    return "".join(c if c in _SAFE else "_" for c in text[:120])


def _shown(target: str) -> str:
    """A DSN as diagnostics show it: without its password."""
    import re

    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", target)


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _no_spool(why: str) -> DshError:
    return DshError([Diagnostic("DSH107", f"no private spool folder for the PostgreSQL log: {why}")])
