"""Rule coverage for `dshc test --coverage`: which rules, guards, defaults, mounts and scope
restrictions no test exercised.

In: the documents under test and the spans the tests touched. Out: the coverable items, each
with its kind, id and span, and which of them were exercised. An item is exercised when a
touched span lies within its own: a call's deciding rule, guard or default; the mount row
(or its config entry) that registered or dropped a tool a case states something about; the
`hide`/`only`/`own` entry that hid, admitted or registered such a tool.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Iterable

from ..compiler import ast
from ..compiler.source import Span

KINDS = ("rule", "guard", "default", "mount", "only", "hide", "own")


@dataclass(frozen=True)
class Item:
    kind: str
    id: str  # `policy/deny@12` as decisions name rules; `standard/mount:tool-web`, `child/hide:schedule_*`
    span: Span

    def to_json(self, text: str | None) -> dict:
        return {"kind": self.kind, "id": self.id, "source": str(self.span), "text": text}


def items(documents: Iterable[ast.Document]) -> list[Item]:
    found = [
        Item(kind, id_, span)
        for document in documents
        for decl in document.decls
        for kind, id_, span in _decl_items(decl)
        if span is not None
    ]
    return sorted(found, key=lambda i: (i.span.path, i.span.line, i.span.col))


def _decl_items(decl) -> list[tuple[str, str, Span | None]]:
    """(kind, id, span) of each item `decl` declares; `items` leaves out one without a span."""
    name = decl.name.text
    if isinstance(decl, ast.Policy):
        out = [
            ("rule", f"{name}/{r.effect}@{r.span.line}" if r.span else f"{name}/{r.effect}", r.span) for r in decl.rules
        ]
        out += [("guard", f"{name}/guard:{g.name.text}", g.span) for g in decl.guards]
        if decl.default is not None:
            out.append(("default", f"{name}/default", decl.default.span))
        return out
    if isinstance(decl, ast.Preset):
        return [("mount", f"{name}/mount:{m.row_name}", m.span) for m in decl.mounts]
    if isinstance(decl, ast.Scope):
        return [
            (kind, f"{name}/{kind}:{entry.text}", entry.span)
            for kind in ("only", "hide", "own")
            for entry in getattr(decl, kind)
        ]
    return []


def within(inner: Span, outer: Span) -> bool:
    return (
        inner.path == outer.path
        and (inner.line, inner.col) >= (outer.line, outer.col)
        and (inner.end_line, inner.end_col) <= (outer.end_line, outer.end_col)
    )


def exercised(all_items: list[Item], touched: Iterable[Span]) -> set[Item]:
    by_path: dict[str, list[Span]] = {}
    for span in touched:
        if span is not None:
            by_path.setdefault(span.path, []).append(span)
    return {item for item in all_items if any(within(s, item.span) for s in by_path.get(item.span.path, ()))}


# the gates whose sources are declarations a case exercises by naming a tool (rules and
# defaults are exercised only by calls: a static verdict is not a test of a rule)
COMPOSITION_GATES = ("registered", "visible")


def touched_by_tool(program, request, name: str) -> list[Span]:
    """The mount rows and scope entries that decide whether `name` reaches this request."""
    spans = [
        r.source for r in program.explain(request, name) if r.gate in COMPOSITION_GATES and isinstance(r.source, Span)
    ]
    ctx = program.gate_context(request)
    if name in ctx.visible:  # every `only` pattern on the chain that admitted it
        for scope in ctx.composition.chain:
            spans += [p.span for p in scope.only if fnmatch.fnmatchcase(name, p.text)]
    return spans


def touched_by_view(program, request) -> list[Span]:
    """A pinned view tests every row of the composition: those that put tools on the wire and
    those (disabled, condition false, waiting for a service) that keep theirs off it."""
    return [row.mount.span for row in program.composition(request).rows if row.mount is not None]


def line_text(sources, span: Span) -> str | None:
    text = sources.get(span.path)
    if text is None:
        return None
    lines = text.splitlines()
    return lines[span.line - 1].strip() if 0 < span.line <= len(lines) else None
