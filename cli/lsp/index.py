"""ast.Document → the names in it that an editor can point at, and the one under a cursor.

In: a parsed Document. Out: Refs (what kind of name, its text, its span, the declaration around
it); `ref_at(line, col)` picks the innermost one, so a tool inside a rule wins over the rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ...compiler import ast
from ...compiler.source import Span


@dataclass(frozen=True)
class Ref:
    kind: str  # preset | host | scope | policy | commands | package | tool | risk | service | fact | config | rule | guard
    text: str
    span: Span
    decl: ast.Decl  # the declaration the name is written in
    node: ast.Rule | ast.Guard | ast.Mount | None = None  # kind rule/guard: its rule or guard; config: its mount
    defines: bool = False  # the name a declaration introduces (not a reference to one)


def refs(document: ast.Document) -> Iterator[Ref]:
    for decl in document.decls:
        kind = ast.DECL_KIND[type(decl)]
        if decl.name.span is not None:  # a parsed document's names all have one
            yield Ref(kind, decl.name.text, decl.name.span, decl, defines=True)
        extends = getattr(decl, "extends", None)
        if extends is not None:
            yield Ref(kind, extends.text, extends.span, decl)
        yield from _decl_refs(decl)


def _name(kind: str, name: ast.Name | None, decl, node=None) -> Iterator[Ref]:
    if name is not None and name.span is not None:
        yield Ref(kind, name.text, name.span, decl, node)


def _names(kind: str, names, decl) -> Iterator[Ref]:
    for name in names:
        yield from _name(kind, name, decl)


def _decl_refs(decl) -> Iterator[Ref]:
    if isinstance(decl, ast.Preset):
        yield from _names("service", decl.provides, decl)
        for mount in decl.mounts:
            yield from _name("package", mount.package, decl, mount)
            yield from _name("tool", mount.alias, decl)
            for entry in mount.config:
                yield from _name("config", entry.key, decl, mount)
            yield from _condition(mount.condition, decl)
    elif isinstance(decl, ast.Host):
        yield from _names("service", decl.provides, decl)
        yield from _name("preset", decl.roster_default, decl)
        yield from _name("preset", decl.rows, decl)
        yield from _name("policy", decl.policy, decl)
    elif isinstance(decl, ast.Scope):
        yield from _name("scope", decl.parent, decl)
        for names in (decl.only, decl.hide, decl.own):
            yield from _names("tool", names, decl)
    elif isinstance(decl, ast.Policy):
        items: tuple[ast.Rule | ast.Guard, ...] = (*decl.rules, *decl.guards)
        for item in items:
            if item.span is not None:
                yield Ref("rule" if isinstance(item, ast.Rule) else "guard", _item_label(item), item.span, decl, item)
            for target in item.targets:
                yield from _name(target.kind, target.name, decl, item)
            yield from _condition(item.condition, decl)


def _item_label(item) -> str:
    return item.effect if isinstance(item, ast.Rule) else item.name.text


def _condition(expr, decl) -> Iterator[Ref]:
    for atom in ast.atoms(expr):
        fact = getattr(atom, "fact", None)
        if fact is not None and fact.span is not None:
            # `has NAME` tests a service the host provides, not a fact
            kind = "service" if isinstance(atom, ast.Has) and len(fact.path) == 1 else "fact"
            yield Ref(kind, fact.dotted, fact.span, decl)
        if isinstance(atom, ast.InClass):
            yield from _name("commands", atom.name, decl)
        elif isinstance(atom, ast.Flag):
            yield from _name("flag", atom.name, decl)


def _contains(span: Span, line: int, col: int) -> bool:
    """1-based line and column; the end column is exclusive, but a cursor just after a name still points at it."""
    if (line, col) < (span.line, span.col):
        return False
    return (line, col) <= (span.end_line, span.end_col)


def _size(span: Span) -> tuple[int, int]:
    return span.end_line - span.line, span.end_col - span.col if span.end_line == span.line else 10**6


def ref_at(document: ast.Document, line: int, col: int) -> Ref | None:
    """The innermost name at a 1-based position, or None."""
    found = [r for r in refs(document) if _contains(r.span, line, col)]
    return min(found, key=lambda r: _size(r.span)) if found else None
