"""The event log's on-disk form: a record (dict) → one framed line, and a raw line → record or a reason.

A line is the record's JSON with a CRC-32 of its own bytes as the last member, so a reader
tells a whole record from a torn or altered one. String values above BLOB_MIN_BYTES live
beside the log, named by their SHA-256 (`{"$blob": "sha256:…", "size": n}` in the record).
"""

from __future__ import annotations

import os
import zlib
from _thread import get_ident  # not `threading`: a hook writes records

from . import state_files
from ..common import json_io  # not the json package: it loads `re` (a hook writes records)

BLOB_MIN_BYTES = 64 * 1024
_SLICE_CHARS = 1 << 20  # a large value is encoded and hashed a slice at a time
_CRC_KEY = b',"crc32":"'
_BLOB, _LITERAL = "$blob", "$literal"
_HEX = frozenset("0123456789abcdef")


class BadRecord(ValueError):
    """One line that is not a whole record; the message says why."""


def blob_dir(log_path: str) -> str:
    return log_path + ".blobs"


def encode(record: dict) -> bytes:
    """One framed line: `{…,"crc32":"xxxxxxxx"}\\n`; the CRC covers the bytes before the member."""
    text = json_io.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        body = text.encode("utf-8")
    except UnicodeEncodeError:
        # a lone surrogate (model-supplied text) has no UTF-8 form: JSON's \u escape keeps it exactly
        body = json_io.dumps(record, ensure_ascii=True, separators=(",", ":"), default=str).encode("ascii")
    if not body.startswith(b"{") or body == b"{}":
        raise ValueError("a record is a non-empty JSON object")
    head = body[:-1]
    return head + _CRC_KEY + b"%08x" % zlib.crc32(head) + b'"}\n'


def decode(raw: bytes) -> dict:
    """A line without its newline → the record; a torn, altered or foreign line raises BadRecord."""
    at = raw.rfind(_CRC_KEY)
    if at < 0 and raw.startswith(b"{") and raw.endswith(b"}"):
        return _object(raw)  # a record of the unframed format that came before; JSON still rejects a torn one
    if at < 0 or not raw.endswith(b'"}') or len(raw) != at + len(_CRC_KEY) + 10:
        raise BadRecord("the record has no checksum (torn or not written by dshc)")
    head, written = raw[:at], raw[at + len(_CRC_KEY) : -2]
    if b"%08x" % zlib.crc32(head) != written:
        raise BadRecord("the record's checksum does not match (torn or altered)")
    return _object(head + b"}")


def _object(raw: bytes) -> dict:
    try:
        record = json_io.loads(raw)
    except ValueError as exc:
        raise BadRecord(f"the record is not JSON: {exc}") from None
    except RecursionError:
        raise BadRecord("the record nests too deeply to be read") from None
    if not isinstance(record, dict):
        raise BadRecord("the record is not a JSON object")
    return record


def externalise(value: object, directory: str | None) -> object:
    """Large strings → blob references (written, fsynced and renamed into place first).

    Objects that already look like a reference are wrapped in `$literal`, so a model cannot
    forge one. Without a directory (an in-memory log) the value is returned as it is.
    """
    if directory is None:
        return value
    return _externalised(value, lambda text: _store_blob(directory, text))


def stored_form(value: object) -> object:
    """The value as `externalise` stores it, with no blob written: what the hash chain covers of a record
    read back with its blobs resolved (a database log holds them resolved)."""
    return _externalised(value, _blob_reference)


def _externalised(value: object, store) -> object:
    if isinstance(value, str):
        # at most 4 bytes per character: only a string that may reach the threshold is measured
        if len(value) * 4 < BLOB_MIN_BYTES or (
            len(value) < BLOB_MIN_BYTES and len(value.encode("utf-8", "surrogatepass")) < BLOB_MIN_BYTES
        ):
            return value
        ref, size = store(value)
        return {_BLOB: ref, "size": size}
    if isinstance(value, dict):
        inner = {k: _externalised(v, store) for k, v in value.items()}
        return {_LITERAL: inner} if (_BLOB in value or _LITERAL in value) else inner
    if isinstance(value, (list, tuple)):
        return [_externalised(v, store) for v in value]
    return value


def _blob_reference(text: str) -> tuple[str, int]:
    from hashlib import sha256  # OpenSSL's, for large values; loaded only when a blob is written or read

    digest, size = sha256(), 0
    for chunk in _utf8_slices(text):
        digest.update(chunk)
        size += len(chunk)
    return "sha256:" + digest.hexdigest(), size


def _utf8_slices(text: str):
    """A large value's UTF-8, a slice at a time (lone surrogates kept: they are decoded alike)."""
    for start in range(0, len(text), _SLICE_CHARS):
        yield text[start : start + _SLICE_CHARS].encode("utf-8", "surrogatepass")


def internalise(value: object, directory: str) -> object:
    """Blob references → their strings; a missing or altered blob raises BadRecord."""
    if isinstance(value, dict):
        if _LITERAL in value and len(value) == 1 and isinstance(value[_LITERAL], dict):
            return {k: internalise(v, directory) for k, v in value[_LITERAL].items()}
        if _BLOB in value:
            return _load_blob(directory, value.get(_BLOB), value.get("size"))
        return {k: internalise(v, directory) for k, v in value.items()}
    if isinstance(value, list):
        return [internalise(v, directory) for v in value]
    return value


def _blob_path(directory: str, ref: str) -> str:
    return os.path.join(directory, ref.replace(":", "-"))


def _store_blob(directory: str, text: str) -> tuple[str, int]:
    """Write `text` as UTF-8 under its SHA-256, a slice at a time, so a large value is never
    held a second time as bytes. Returns (reference, size in bytes). The folder is opened without
    following a link (`state_files`), and a failed write leaves no partial file behind."""
    parent = state_files.open_folder(os.path.dirname(os.path.abspath(directory)))
    try:
        folder = state_files.open_subfolder(parent, os.path.basename(directory), directory, create=True)
    finally:
        os.close(parent)
    try:
        return _write_blob(folder, directory, text)
    finally:
        os.close(folder)


def _write_blob(folder: int, directory: str, text: str) -> tuple[str, int]:
    from hashlib import sha256  # OpenSSL's, for large values; loaded only when a blob is written or read

    digest, size = sha256(), 0
    partial = f".{os.getpid()}.{get_ident()}.partial"
    fd = state_files.open_file(
        folder, partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, os.path.join(directory, partial), 0o644
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in _utf8_slices(text):
                digest.update(chunk)
                size += len(chunk)
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        ref = "sha256:" + digest.hexdigest()
        # a blob is whole under its name or absent; a link planted under that name is replaced, not followed
        os.replace(partial, os.path.basename(_blob_path(directory, ref)), src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(partial, dir_fd=folder)
        except OSError:
            pass
        raise
    return ref, size


def sweep_partials(directory: str) -> int:
    """Remove the partial blobs writers that died mid-write left in `directory` (named by their pid, which
    is no longer running); a live writer's is left. Returns how many were removed."""
    try:
        parent = state_files.open_folder(os.path.dirname(os.path.abspath(directory)))
    except OSError:
        return 0
    try:
        folder = state_files.open_subfolder(parent, os.path.basename(directory), directory, create=False)
    except OSError:
        return 0  # no blob folder (or one dshc does not use): nothing of its own to clean
    finally:
        os.close(parent)
    removed = 0
    try:
        for name in os.listdir(folder):
            pid = _partial_writer(name)
            if pid is not None and not _running(pid):
                os.unlink(name, dir_fd=folder)
                removed += 1
    finally:
        os.close(folder)
    return removed


def _partial_writer(name: str) -> int | None:
    """The writer's pid in `_write_blob`'s name for a blob being written (`.PID.N.partial`), else None."""
    parts = name.split(".")
    if len(parts) != 4 or parts[0] or parts[3] != "partial" or not all(p.isascii() and p.isdigit() for p in parts[1:3]):
        return None
    return int(parts[1])


def _is_ref(ref: str) -> bool:
    """`sha256:` and 64 lowercase hex digits."""
    return len(ref) == 71 and ref.startswith("sha256:") and _HEX.issuperset(ref[7:])


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: running
    return True


def _load_blob(directory: str, ref: object, size: object) -> str:
    if not isinstance(ref, str) or not _is_ref(ref) or not isinstance(size, int):
        raise BadRecord("a blob reference needs `$blob: sha256:…` and an integer `size`")
    try:
        with open(os.open(_blob_path(directory, ref), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise BadRecord(f"blob `{ref}` cannot be read: {exc.strerror or exc}") from None
    from hashlib import sha256

    if len(data) != size or "sha256:" + sha256(data).hexdigest() != ref:
        raise BadRecord(f"blob `{ref}` does not match its hash and size")
    return data.decode("utf-8", "surrogatepass")
