"""tool-fs: read, write, edit and read_image. In: a path in the workspace; out: the file
window or what changed. Mutations enforce read-before-write against `state.observed`."""

from __future__ import annotations

import codecs
import hashlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from .base import ToolContext, arg_bool, arg_int, arg_str, fail, invalid
from .sandbox import open_file, resolve_path

READ_LIMIT = 2000  # lines returned when no limit is given
MAX_LINE_CHARS = 2000  # longer lines are cut in read output
# edit and str_replace_editor hold the whole file (and the changed copy): bounded, FS_TOO_LARGE past it
WHOLE_FILE_MAX_BYTES = 64 << 20

# surrogateescape round-trips bytes that are not UTF-8, so an edit never corrupts them
ENCODING, ERRORS = "utf-8", "surrogateescape"


CHUNK = 1 << 20  # bytes per read, and characters per encoded slice on write


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_fd(fd: int, given: str) -> bytes:
    """The whole file, for the tools that must hold it (edit, str_replace_editor): refused past
    WHOLE_FILE_MAX_BYTES by its size, and again if it grows while being read."""
    try:
        size = os.fstat(fd).st_size
        if size > WHOLE_FILE_MAX_BYTES:
            raise fail("fs-too-large", path=given, size=f"{size} bytes exceeds", limit=WHOLE_FILE_MAX_BYTES)
        with os.fdopen(os.dup(fd), "rb", closefd=True) as handle:
            handle.seek(0)
            data = handle.read(WHOLE_FILE_MAX_BYTES + 1)
    except OSError as exc:
        raise fail("fs-io", verb="read", path=given, reason=exc.strerror or exc) from None
    if len(data) > WHOLE_FILE_MAX_BYTES:
        raise fail("fs-too-large", path=given, size="content exceeds", limit=WHOLE_FILE_MAX_BYTES)
    return data


def load_bytes(ctx: ToolContext, real: str, given: str) -> bytes:
    fd, _ = open_file(ctx, real, given, write=False)
    try:
        return _read_fd(fd, given)
    finally:
        os.close(fd)


def observe(ctx: ToolContext, real: str, data: bytes) -> None:
    remember(ctx, real, digest(data))


def remember(ctx: ToolContext, real: str, sha256_hex: str) -> None:
    with ctx.state.lock:
        ctx.state.observed[real] = sha256_hex


def require_observed(ctx: ToolContext, real: str, given: str, current: bytes) -> None:
    require_digest(ctx, real, given, digest(current))


def require_digest(ctx: ToolContext, real: str, given: str, current_sha256: str) -> None:
    """The file must have been read (or written) in this session and be unchanged since."""
    with ctx.state.lock:
        seen = ctx.state.observed.get(real)
    if seen is None:
        raise fail("fs-not-observed", path=given)
    if seen != current_sha256:
        raise fail("fs-stale", path=given)


def _hash_rest(handle, hasher) -> None:
    for chunk in iter(lambda: handle.read(CHUNK), b""):
        hasher.update(chunk)


def _hash_fd(fd: int) -> str:
    hasher = hashlib.sha256()
    with os.fdopen(os.dup(fd), "rb", closefd=True) as handle:
        handle.seek(0)
        _hash_rest(handle, hasher)
    return hasher.hexdigest()


def _overwrite(fd: int, content: str | bytes, given: str) -> tuple[int, str]:
    """Replace the open file's content (in place: it keeps its inode and mode), text encoded a
    slice at a time so a large payload is never held twice; returns (bytes, sha256)."""
    hasher, size = hashlib.sha256(), 0
    try:
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        for start in range(0, len(content), CHUNK):
            piece = content[start : start + CHUNK]
            if isinstance(piece, str):
                piece = piece.encode(ENCODING, ERRORS)
            hasher.update(piece)
            size += len(piece)
            view = memoryview(piece)
            while view:
                view = view[os.write(fd, view) :]
    except OSError as exc:
        raise fail("fs-io", verb="write", path=given, reason=exc.strerror or exc) from None
    return size, hasher.hexdigest()


def store(ctx: ToolContext, real: str, data: str | bytes, given: str) -> int:
    """Write `data` to the file at `real` (already judged by resolve_path), creating it and its
    folders as needed; returns the bytes written and records them as observed."""
    fd, _ = open_file(ctx, real, given, write=True, create=True)
    try:
        size, sha = _overwrite(fd, data, given)
    finally:
        os.close(fd)
    remember(ctx, real, sha)
    return size


_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines ends a line at


def _lines(handle) -> Iterator[tuple[str, bool]]:
    """The lines str.splitlines would give, read from a binary stream one chunk at a time,
    each cut to MAX_LINE_CHARS (with a flag when cut) so no line is ever held whole."""
    decoder = codecs.getincrementaldecoder(ENCODING)("replace")

    def pieces() -> Iterator[str]:
        carry = ""
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            text = carry + decoder.decode(chunk)
            # a \r at the end may be the first half of \r\n: decide with the next chunk
            carry = "\r" if text.endswith("\r") else ""
            yield from (text[:-1] if carry else text).splitlines(keepends=True)
        yield from (carry + decoder.decode(b"", final=True)).splitlines(keepends=True)

    head, pending = "", False
    for piece in pieces():
        body = piece.rstrip(_BREAKS)  # a piece holds one terminator at most, at its end
        if len(head) <= MAX_LINE_CHARS:
            head += body[: MAX_LINE_CHARS + 1 - len(head)]
        pending = True
        if body != piece:
            yield head[:MAX_LINE_CHARS], len(head) > MAX_LINE_CHARS
            head, pending = "", False
    if pending:
        yield head[:MAX_LINE_CHARS], len(head) > MAX_LINE_CHARS


def read(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    given = arg_str(args, "file_path")
    offset = arg_int(args, "offset", default=1, minimum=0) or 1  # 1-based; 0 reads from the top
    limit = arg_int(args, "limit", default=READ_LIMIT, minimum=1)
    real = resolve_path(ctx, given, write=False)
    fd, _ = open_file(ctx, real, given, write=False)
    try:
        with os.fdopen(fd, "rb", closefd=False) as raw:
            hasher = hashlib.sha256()
            handle = _Hashing(raw, hasher)
            window, cut_lines, more = [], [], False
            for index, (line, was_cut) in enumerate(_lines(handle)):
                if index >= offset - 1 + limit:
                    more = True
                    break
                if index >= offset - 1:
                    window.append(line)
                    if was_cut:
                        cut_lines.append(index + 1)
            # read-before-write needs the digest of the whole file; it streams, nothing is kept
            _hash_rest(raw, hasher)
    except OSError as exc:
        raise fail("fs-io", verb="read", path=given, reason=exc.strerror or exc) from None
    finally:
        os.close(fd)
    remember(ctx, real, hasher.hexdigest())
    value = {"path": real, "content": "\n".join(window), "lines": len(window), "truncated": bool(cut_lines) or more}
    if cut_lines:
        value["cut_lines"] = cut_lines  # 1-based numbers of the lines cut at MAX_LINE_CHARS
    if more:
        value["next_offset"] = offset + len(window)
    return value


class _Hashing:
    """A binary reader that feeds everything it returns to a hasher."""

    def __init__(self, raw, hasher) -> None:
        self._raw, self._hasher = raw, hasher

    def read(self, size: int) -> bytes:
        data = self._raw.read(size)
        self._hasher.update(data)
        return data


def replace_whole_file(ctx: ToolContext, given: str, text: str, escalates: bool = False) -> dict[str, Any]:
    """Create or overwrite a file; an existing one must have been read, unchanged since.
    The check and the write use one open fd, so the file judged is the file written."""
    real = resolve_path(ctx, given, write=True, escalates=escalates)
    fd, created = open_file(ctx, real, given, write=True, create=True)
    try:
        if not created:
            try:
                require_digest(ctx, real, given, _hash_fd(fd))
            except OSError as exc:
                raise fail("fs-io", verb="read", path=given, reason=exc.strerror or exc) from None
        size, sha = _overwrite(fd, text, given)
    finally:
        os.close(fd)
    remember(ctx, real, sha)
    return {"path": real, "bytes": size, "created": created}


def write(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    written = replace_whole_file(ctx, arg_str(args, "file_path"), arg_str(args, "content"), escalates=True)
    return {"path": written["path"], "bytes": written["bytes"]}


def edit(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    given = arg_str(args, "file_path")
    old = arg_str(args, "old_string")
    new = arg_str(args, "new_string")
    replace_all = arg_bool(args, "replace_all", False)
    real = resolve_path(ctx, given, write=True, escalates=True)
    fd, _ = open_file(ctx, real, given, write=True)
    try:
        current = _read_fd(fd, given)
        require_observed(ctx, real, given, current)
        if not old:
            raise invalid("`old_string` must not be empty")
        if old == new:
            raise fail("fs-no-change")
        text = current.decode(ENCODING, ERRORS)
        count = text.count(old)
        if count == 0:
            raise fail("fs-no-match", what="old_string", path=given)
        if count > 1 and not replace_all:
            raise fail("fs-many-matches", what="old_string", count=count, path=given, hint=", or set replace_all")
        updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        _, sha = _overwrite(fd, updated, given)
    finally:
        os.close(fd)
    remember(ctx, real, sha)
    return {"path": real, "replacements": count if replace_all else 1}


def read_image(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    raise fail("image-unavailable", path=arg_str(args, "file_path"))


LINE_CUT_MARKER = f" [… line cut at {MAX_LINE_CHARS} characters]"


def numbered(content: str, first: int, cut: frozenset[int] = frozenset()) -> str:
    """`cat -n` style: right-aligned line number, a tab, the line (a cut line says so at its end)."""
    if not content:
        return ""
    return "\n".join(
        f"{n:6d}\t{line}{LINE_CUT_MARKER if n in cut else ''}"
        for n, line in enumerate(content.split("\n"), start=first)
    )


def render_read(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    first = max(1, int(args.get("offset") or 1))
    if value["lines"] == 0:
        return f"(no lines at or after line {first})" if first > 1 else "(empty file)"
    text = numbered(value["content"], first, frozenset(value.get("cut_lines") or ()))
    if value.get("next_offset"):
        text += (
            f"\n[showing {value['lines']} lines from line {first}; the file continues — "
            f"read on with offset={value['next_offset']}]"
        )
    return text


def render_write(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    return f"wrote {value['bytes']} bytes to {value['path']}"


def render_edit(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    n = value["replacements"]
    return f"edited {value['path']}: {n} replacement{'s' if n != 1 else ''}"


BODIES = {
    "tool-fs/read": read,
    "tool-fs/write": write,
    "tool-fs/edit": edit,
    "tool-fs/read_image": read_image,
}
RENDERERS = {
    "tool-fs/read": render_read,
    "tool-fs/write": render_write,
    "tool-fs/edit": render_edit,
}
