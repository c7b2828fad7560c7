"""tool-fs-search: glob and grep. In: a pattern and a search root inside the sandbox; out:
workspace-relative paths (newest first) or matching lines, both capped. grep's patterns run on
RE2, whose time is linear in the input, so no pattern from the model can hang the run."""

from __future__ import annotations

import bisect
import fnmatch
import itertools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import re2

from .base import ToolContext, arg_str, fail, invalid
from .sandbox import allowed_to_read, resolve_path, shown

GLOB_MAX_RESULTS = 100
GREP_MAX_MATCHES = 250
GREP_MAX_FILE_BYTES = 20 * 1024 * 1024
GREP_MAX_LINE_CHARS = 500
BINARY_SNIFF_BYTES = 8192
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn"})
_ABORT_EVERY = 256


def _root(args: Mapping[str, Any], ctx: ToolContext, *, directory: bool) -> str:
    given = arg_str(args, "path", required=False) or "."
    real = resolve_path(ctx, given, write=False)
    if not os.path.exists(real):
        raise fail("fs-not-found", path=given)
    if directory and not os.path.isdir(real):
        raise fail("fs-not-directory", path=given)
    return real


def _check_abort(ctx: ToolContext, seen: int) -> None:
    if seen % _ABORT_EVERY == 0 and ctx.abort.is_set():
        raise fail("aborted")


def _in_skipped_dir(rel_parts: tuple[str, ...]) -> bool:
    return any(part in SKIPPED_DIRS for part in rel_parts[:-1])


def glob(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pattern = arg_str(args, "pattern")
    root = _root(args, ctx, directory=True)
    if not pattern or os.path.isabs(pattern):
        raise invalid("`pattern` must be a non-empty pattern relative to `path`")
    found: list[tuple[float, str]] = []
    try:
        matches = Path(root).glob(pattern)
        for seen, match in enumerate(matches, start=1):
            _check_abort(ctx, seen)
            real = os.path.realpath(match)
            if not os.path.isfile(real) or not allowed_to_read(ctx, real):
                continue
            if match.is_relative_to(root) and _in_skipped_dir(match.relative_to(root).parts):
                continue
            try:
                mtime = os.stat(real).st_mtime
            except OSError:
                continue
            found.append((mtime, shown(ctx, os.path.normpath(str(match)))))
    except (ValueError, NotImplementedError) as exc:
        raise invalid(f"`pattern` is not a usable glob: {exc}") from None
    # newest first; the path breaks ties so equal mtimes still give one order
    found.sort(key=lambda item: (-item[0], item[1]))
    return {"paths": [path for _, path in found[:GLOB_MAX_RESULTS]], "truncated": len(found) > GLOB_MAX_RESULTS}


def expand_braces(pattern: str) -> list[str]:
    """`*.{py,pyi}` -> [`*.py`, `*.pyi`]; nested and repeated groups expand recursively."""
    match = re.search(r"\{([^{}]*)\}", pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [expanded for option in match.group(1).split(",") for expanded in expand_braces(head + option + tail)]


def _included(rel: str, patterns: list[str]) -> bool:
    name = os.path.basename(rel)
    return any(fnmatch.fnmatchcase(name, p) or ("/" in p and fnmatch.fnmatchcase(rel, p)) for p in patterns)


def _walk_files(root: str) -> Iterator[str]:
    if os.path.isfile(root):
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            yield os.path.join(dirpath, name)


class _TooLarge(Exception):
    """A file over GREP_MAX_FILE_BYTES: not searched, and named in the result."""


def _text_lines(path: str) -> list[str] | None:
    try:
        if os.path.getsize(path) > GREP_MAX_FILE_BYTES:
            raise _TooLarge(path)
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None
    return data.decode("utf-8", "replace").splitlines()


def _compile(pattern: bytes):
    options = re2.Options()
    options.log_errors = False  # the error comes back in the result, not on our stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise invalid(
            f"`pattern` is not a regular expression the linear-time engine accepts "
            f"(no backreferences or lookaround): {detail}"
        ) from None


# Anchors to the whole text and inline flag groups may match a line alone but not the joined
# text, so such patterns are only ever tried line by line.
_LINE_ONLY = re.compile(r"\\[Az]|\(\?")


class LineMatcher:
    """Which lines of a file match. Each line is decided by searching that line alone; a search
    over the joined text (multi-line mode) only proposes candidates, since a search per line
    costs far more per call than one search over the file. Both run on UTF-8 bytes, the file
    encoded once (RE2 would encode a str again on every call)."""

    def __init__(self, pattern: str):
        self.line = _compile(pattern.encode("utf-8"))
        self.text = None if _LINE_ONLY.search(pattern) else _compile(b"(?m)" + pattern.encode("utf-8"))

    def matching(self, lines: list[str], ctx: ToolContext) -> Iterator[int]:
        if not lines:
            return
        if self.text is None:
            for index, line in enumerate(lines):
                _check_abort(ctx, index + 1)
                if self.line.search(line.encode("utf-8")) is not None:
                    yield index
            return
        joined = "\n".join(lines)
        text = joined.encode("utf-8")
        sizes = map(len, lines) if joined.isascii() else (len(line.encode("utf-8")) for line in lines)
        starts = [0, *itertools.accumulate(size + 1 for size in sizes)]  # byte offset of each line
        del joined
        position, seen = 0, 0
        while position <= len(text) and (found := self.text.search(text, position)) is not None:
            seen += 1
            _check_abort(ctx, seen)
            index = bisect.bisect_right(starts, found.start()) - 1
            if self.line.search(lines[index].encode("utf-8")) is not None:
                yield index
            position = starts[index + 1]


def grep(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    pattern = arg_str(args, "pattern")
    include = arg_str(args, "include", required=False)
    matcher = LineMatcher(pattern)
    root = _root(args, ctx, directory=False)
    includes = expand_braces(include) if include else None
    matches: list[dict[str, Any]] = []
    too_large: list[str] = []
    withheld: list[str] = []  # files the policy does not let this call read
    truncated = False
    for seen, path in enumerate(_walk_files(root), start=1):
        _check_abort(ctx, seen)
        rel = os.path.relpath(path, root) if path != root else os.path.basename(path)
        if includes is not None and not _included(rel, includes):
            continue
        if not os.path.isfile(path) or not allowed_to_read(ctx, path):
            continue
        if ctx.may_read is not None and not _may_read(ctx.may_read, path):
            withheld.append(shown(ctx, os.path.normpath(path)))
            continue
        try:
            lines = _text_lines(path)
        except _TooLarge:
            too_large.append(shown(ctx, os.path.normpath(path)))
            continue
        if lines is None:
            continue
        for index in matcher.matching(lines, ctx):
            if len(matches) == GREP_MAX_MATCHES:
                truncated = True
                break
            match = {
                "path": shown(ctx, os.path.normpath(path)),
                "line": index + 1,
                "text": lines[index][:GREP_MAX_LINE_CHARS],
            }
            if len(lines[index]) > GREP_MAX_LINE_CHARS:
                match["cut"] = True
            matches.append(match)
        if truncated:
            break
    value: dict[str, Any] = {"matches": matches, "truncated": truncated}
    if too_large:
        value["not_searched"] = too_large  # over GREP_MAX_FILE_BYTES
    if withheld:
        value["withheld"] = withheld
    return value


def _may_read(may_read: Callable[[str], bool], path: str) -> bool:
    """The policy's read rules on a file a search comes upon: at the path it was found and, for a link, the
    file it reads (a rule may name either)."""
    real = os.path.realpath(path)
    return may_read(path) and (real == path or may_read(real))


def render_glob(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    if not value["paths"]:
        return "no files matched"
    text = "\n".join(value["paths"])
    if value["truncated"]:
        text += f"\n[only the {len(value['paths'])} most recently modified matches are shown; narrow the pattern]"
    return text


GREP_LINE_CUT_MARKER = f" [… line cut at {GREP_MAX_LINE_CHARS} characters]"


def render_grep(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    lines = [
        f"{m['path']}:{m['line']}:{m['text']}{GREP_LINE_CUT_MARKER if m.get('cut') else ''}" for m in value["matches"]
    ] or ["no matches"]
    if value["truncated"]:
        lines.append(f"[stopped after {len(value['matches'])} matches; narrow the pattern or the path]")
    if value.get("not_searched"):
        lines.append(f"[not searched, larger than {GREP_MAX_FILE_BYTES >> 20} MiB: {', '.join(value['not_searched'])}]")
    if value.get("withheld"):
        lines.append(f"[not searched, the policy does not allow reading them: {', '.join(value['withheld'])}]")
    return "\n".join(lines)


BODIES = {"tool-fs-search/glob": glob, "tool-fs-search/grep": grep}
RENDERERS = {"tool-fs-search/glob": render_glob, "tool-fs-search/grep": render_grep}
