"""tool-fs: read, write, edit and read_image. In: a path in the workspace; out: the file
window or what changed. Mutations enforce read-before-write against `state.observed`."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any

from .base import ToolContext, arg_bool, arg_int, arg_str, fail, invalid
from .sandbox import resolve_path

READ_LIMIT = 2000          # lines returned when no limit is given
MAX_LINE_CHARS = 2000      # longer lines are cut in read output

# surrogateescape round-trips bytes that are not UTF-8, so an edit never corrupts them
ENCODING, ERRORS = "utf-8", "surrogateescape"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_bytes(ctx: ToolContext, real: str, given: str) -> bytes:
    if os.path.isdir(real):
        raise fail("fs-is-directory", path=given)
    try:
        with open(real, "rb") as handle:
            return handle.read()
    except (FileNotFoundError, NotADirectoryError):
        raise fail("fs-not-found", path=given) from None
    except OSError as exc:
        raise fail("fs-io", verb="read", path=given, reason=exc.strerror or exc) from None


def observe(ctx: ToolContext, real: str, data: bytes) -> None:
    with ctx.state.lock:
        ctx.state.observed[real] = digest(data)


def require_observed(ctx: ToolContext, real: str, given: str, current: bytes) -> None:
    """The file must have been read (or written) in this session and be unchanged since."""
    with ctx.state.lock:
        seen = ctx.state.observed.get(real)
    if seen is None:
        raise fail("fs-not-observed", path=given)
    if seen != digest(current):
        raise fail("fs-stale", path=given)


def store(ctx: ToolContext, real: str, data: bytes, given: str) -> None:
    try:
        os.makedirs(os.path.dirname(real), exist_ok=True)
        # open in place (not rename over) so the file keeps its inode, mode and hard links
        with open(real, "wb") as handle:
            handle.write(data)
    except OSError as exc:
        raise fail("fs-io", verb="write", path=given, reason=exc.strerror or exc) from None
    observe(ctx, real, data)


def existing_bytes(ctx: ToolContext, real: str, given: str) -> bytes | None:
    """Current content of a file about to be replaced, or None when there is none yet."""
    if os.path.isdir(real):
        raise fail("fs-is-directory", path=given)
    if not os.path.lexists(real):
        return None
    return load_bytes(ctx, real, given)


def split_lines(text: str) -> list[str]:
    return text.splitlines()


def read(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    given = arg_str(args, "file_path")
    real = resolve_path(ctx, given, write=False)
    data = load_bytes(ctx, real, given)
    observe(ctx, real, data)
    offset = arg_int(args, "offset", default=1, minimum=0) or 1   # 1-based; 0 reads from the top
    limit = arg_int(args, "limit", default=READ_LIMIT, minimum=1)
    lines = split_lines(data.decode(ENCODING, "replace"))
    window = lines[offset - 1:offset - 1 + limit]
    truncated = offset - 1 + len(window) < len(lines)
    cut = []
    for line in window:
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS]
            truncated = True
        cut.append(line)
    return {"path": real, "content": "\n".join(cut), "lines": len(cut), "truncated": truncated}


def replace_whole_file(ctx: ToolContext, given: str, text: str) -> dict[str, Any]:
    """Create or overwrite a file; an existing one must have been read, unchanged since."""
    real = resolve_path(ctx, given, write=True)
    current = existing_bytes(ctx, real, given)
    if current is not None:
        require_observed(ctx, real, given, current)
    data = text.encode(ENCODING, ERRORS)
    store(ctx, real, data, given)
    return {"path": real, "bytes": len(data), "created": current is None}


def write(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    written = replace_whole_file(ctx, arg_str(args, "file_path"), arg_str(args, "content"))
    return {"path": written["path"], "bytes": written["bytes"]}


def edit(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    given = arg_str(args, "file_path")
    old = arg_str(args, "old_string")
    new = arg_str(args, "new_string")
    replace_all = arg_bool(args, "replace_all", False)
    real = resolve_path(ctx, given, write=True)
    current = load_bytes(ctx, real, given)
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
    store(ctx, real, updated.encode(ENCODING, ERRORS), given)
    return {"path": real, "replacements": count if replace_all else 1}


def read_image(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    raise fail("image-unavailable")


def numbered(content: str, first: int) -> str:
    """`cat -n` style: right-aligned line number, a tab, the line."""
    if not content:
        return ""
    return "\n".join(f"{n:6d}\t{line}" for n, line in enumerate(content.split("\n"), start=first))


def render_read(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    first = max(1, int(args.get("offset") or 1))
    if value["lines"] == 0:
        return f"(no lines at or after line {first})" if first > 1 else "(empty file)"
    text = numbered(value["content"], first)
    if value.get("truncated"):
        text += f"\n[showing {value['lines']} lines from line {first}; the file continues or lines were cut]"
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
