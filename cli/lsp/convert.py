"""Compiler values → LSP values: a Span → a Range in the client's position encoding, a
Diagnostic → an LSP Diagnostic (code, severity, message with its help).

Spans count code points from 1 with an exclusive end; LSP counts from 0 in UTF-16 units (or
what the client chose), so every range goes through the codec with the text it points into.
"""

from __future__ import annotations

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec, ServerTextPosition

from ...compiler.diagnostics import Diagnostic
from ...compiler.source import Span

SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}


def span_range(span: Span | None, text: str, codec: PositionCodec) -> types.Range:
    if span is None:
        start = types.Position(line=0, character=0)
        return types.Range(start=start, end=start)
    lines = text.split("\n")
    start = codec.position_to_client_units(lines, ServerTextPosition(span.line - 1, span.col - 1))
    end = codec.position_to_client_units(lines, ServerTextPosition(span.end_line - 1, span.end_col - 1))
    return types.Range(start=start, end=end)


def diagnostic(d: Diagnostic, text: str, codec: PositionCodec) -> types.Diagnostic:
    message = d.message + (f"\nhelp: {d.help}" if d.help else "")
    return types.Diagnostic(
        range=span_range(d.span, text, codec),
        message=message,
        code=d.code,
        severity=SEVERITY.get(d.severity, types.DiagnosticSeverity.Error),
        source="dshc",
    )


def full_range(text: str) -> types.Range:
    """The whole document: an end one line past the last is how LSP says "to the end"."""
    return types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=len(text.split("\n")), character=0)
    )
