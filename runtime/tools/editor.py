"""tool-str-replace-editor: one tool with view, create, str_replace and insert commands.
In: a command and a path; out: the view or what changed. Same sandbox and read-before-write
rules as tool-fs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from .base import ToolContext, arg_int, arg_str, fail, invalid, thaw
from .fs import ENCODING, ERRORS, load_bytes, numbered, observe, replace_whole_file, require_observed, store
from .sandbox import resolve_path, shown

DIRECTORY_DEPTH = 2
DIRECTORY_MAX_ENTRIES = 500


def _view_directory(ctx: ToolContext, real: str) -> dict[str, Any]:
    entries: list[str] = []
    truncated = False
    base_depth = real.rstrip(os.sep).count(os.sep)
    for dirpath, dirnames, filenames in os.walk(real, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        names = [d + "/" for d in dirnames] + sorted(f for f in filenames if not f.startswith("."))
        if dirpath.rstrip(os.sep).count(os.sep) - base_depth >= DIRECTORY_DEPTH - 1:
            dirnames[:] = []
        for name in names:
            if len(entries) == DIRECTORY_MAX_ENTRIES:
                truncated = True
                break
            entries.append(os.path.relpath(os.path.join(dirpath, name), real) + ("/" if name.endswith("/") else ""))
        if truncated:
            break
    return {"path": shown(ctx, real), "kind": "directory", "entries": sorted(entries), "truncated": truncated}


def _view(args: Mapping[str, Any], ctx: ToolContext, given: str) -> dict[str, Any]:
    real = resolve_path(ctx, given, write=False)
    if os.path.isdir(real):
        return _view_directory(ctx, real)
    data = load_bytes(ctx, real, given)
    observe(ctx, real, data)
    lines = data.decode(ENCODING, "replace").splitlines()
    first, last = 1, len(lines)
    window = args.get("view_range")
    if window is not None:
        window = thaw(window)
        if (
            not isinstance(window, list)
            or len(window) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in window)
        ):
            raise invalid("`view_range` must be two line numbers [first, last]; last may be -1 for the end")
        first, last = window[0], (len(lines) if window[1] == -1 else window[1])
        if first < 1 or last < first or first > max(1, len(lines)):
            raise invalid(f"`view_range` {window} does not fit a file of {len(lines)} lines")
    content = "\n".join(lines[first - 1 : last])
    truncated = len(content) > ctx.max_output_chars
    if truncated:
        content = content[: ctx.max_output_chars]
    return {"path": real, "kind": "file", "content": content, "start_line": first, "truncated": truncated}


def _create(args: Mapping[str, Any], ctx: ToolContext, given: str) -> dict[str, Any]:
    text = arg_str(args, "file_text", required=False)
    if text is None:
        raise invalid("`file_text` is required for create")
    return replace_whole_file(ctx, given, text)


def _loaded_for_change(ctx: ToolContext, given: str) -> tuple[str, str]:
    real = resolve_path(ctx, given, write=True)
    current = load_bytes(ctx, real, given)
    require_observed(ctx, real, given, current)
    return real, current.decode(ENCODING, ERRORS)


def _str_replace(args: Mapping[str, Any], ctx: ToolContext, given: str) -> dict[str, Any]:
    old = arg_str(args, "old_str", required=False)
    new = arg_str(args, "new_str", required=False) or ""
    if not old:
        raise invalid("`old_str` is required for str_replace and must not be empty")
    real, text = _loaded_for_change(ctx, given)
    count = text.count(old)
    if count == 0:
        raise fail("fs-no-match", what="old_str", path=given)
    if count > 1:
        raise fail("fs-many-matches", what="old_str", count=count, path=given, hint="")
    store(ctx, real, text.replace(old, new, 1).encode(ENCODING, ERRORS), given)
    return {"path": real, "replacements": 1}


def _insert(args: Mapping[str, Any], ctx: ToolContext, given: str) -> dict[str, Any]:
    after = arg_int(args, "insert_line", minimum=0)
    new = arg_str(args, "new_str", required=False)
    if after is None or new is None:
        raise invalid("`insert_line` and `new_str` are required for insert")
    real, text = _loaded_for_change(ctx, given)
    lines = text.splitlines(keepends=True)
    if after > len(lines):
        raise invalid(f"`insert_line` {after} is past the end of a file of {len(lines)} lines")
    if lines and not lines[-1].endswith(("\n", "\r")) and after == len(lines):
        lines[-1] += "\n"
    block = new if new.endswith("\n") else new + "\n"
    lines.insert(after, block)
    store(ctx, real, "".join(lines).encode(ENCODING, ERRORS), given)
    return {"path": real, "inserted_at": after, "lines": len(block.splitlines())}


COMMANDS = {"view": _view, "create": _create, "str_replace": _str_replace, "insert": _insert}


def str_replace_editor(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    command = arg_str(args, "command")
    given = arg_str(args, "path")
    handler = COMMANDS.get(command)
    if handler is None:
        raise invalid(f"`command` must be one of {', '.join(COMMANDS)}")
    return {"command": command, **handler(args, ctx, given)}


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    command = value["command"]
    if command == "view" and value["kind"] == "directory":
        text = "\n".join(value["entries"]) or "(empty directory)"
        return text + ("\n[listing cut short]" if value["truncated"] else "")
    if command == "view":
        text = numbered(value["content"], value["start_line"]) or "(empty file)"
        return text + ("\n[output cut short; view a smaller range]" if value["truncated"] else "")
    if command == "create":
        return f"{'created' if value['created'] else 'overwrote'} {value['path']} ({value['bytes']} bytes)"
    if command == "str_replace":
        return f"replaced 1 occurrence in {value['path']}"
    return f"inserted {value['lines']} line(s) after line {value['inserted_at']} of {value['path']}"


BODIES = {"tool-str-replace-editor/str_replace_editor": str_replace_editor}
RENDERERS = {"tool-str-replace-editor/str_replace_editor": render}
