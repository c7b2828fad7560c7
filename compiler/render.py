"""The only place diagnostics become text: human (with a caret excerpt) or JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .diagnostics import MAX_REPORTED, Diagnostic, capped


def diagnostic_json(d: Diagnostic) -> dict:
    s = d.span
    out = {
        "code": d.code,
        "severity": d.severity,
        "message": d.message,
        "path": d.where,
        "line": s.line if s else None,
        "col": s.col if s else None,
        "end_line": s.end_line if s else None,
        "end_col": s.end_col if s else None,
        "help": d.help,
    }
    if d.json_path is not None:
        out["json_path"] = d.json_path
    return out


def diagnostics_json(diags: Iterable[Diagnostic]) -> list[dict]:
    return [diagnostic_json(d) for d in sorted(diags, key=Diagnostic.sort_key)]


def human(diags: Iterable[Diagnostic], limit: int = MAX_REPORTED, sources: Mapping[str, str] | None = None) -> str:
    """Diagnostics as text; `sources` (path -> text, from the Program or DshError) gives caret excerpts."""
    shown, more = capped(diags, limit)
    blocks = [_one(d, sources or {}) for d in shown]
    if more:
        blocks.append(f"… and {more} more")
    return "\n".join(blocks)


SHOWN = 160  # characters of a source line shown under a diagnostic; a longer line is cut around the spot


def _window(line: str, start: int, width: int) -> tuple[int, str, int]:
    """(caret offset, the line as shown, caret width): a long line cut to SHOWN characters around the spot,
    `…` marking each cut, so a 32,000-character word prints one line, not 32 KB of carets."""
    if len(line) <= SHOWN:
        return start, line, width
    width = min(width, SHOWN // 2)
    left = max(0, start - SHOWN // 4)
    shown = line[left : left + SHOWN]
    head = "…" if left else ""
    tail = "…" if left + SHOWN < len(line) else ""
    return start - left + len(head), head + shown + tail, width


def _one(d: Diagnostic, sources: Mapping[str, str]) -> str:
    where = ""
    if d.span is not None:
        where = f"{d.span}: "
    elif d.where:
        where = f"{d.where}: " if d.json_path is None else f"{d.where}: {d.json_path}: "
    lines = [f"{where}{d.severity}[{d.code}]: {d.message}"]
    if d.span is not None:
        text = sources.get(d.span.path)
        if text is not None:
            source_lines = text.splitlines()
            if 0 < d.span.line <= len(source_lines):
                line = source_lines[d.span.line - 1].expandtabs(1)
                width = (d.span.end_col - d.span.col) if d.span.end_line == d.span.line else len(line) - d.span.col + 1
                start, line, width = _window(line, d.span.col - 1, max(1, width))
                gutter = f"{d.span.line:>4} | "
                lines.append(gutter + line)
                lines.append(" " * (len(gutter) + start) + "^" * width)
    if d.help:
        lines.append(f"  help: {d.help}")
    return "\n".join(lines)
