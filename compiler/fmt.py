"""ast.Document → canonical text: one item per line, two-space indent, comments kept.

Items keep their source order (order is meaning for nobody, but moving lines would move
comments away from what they describe). `parse(format(x)) == parse(x)` and formatting is
idempotent; both are property-tested.
"""

from __future__ import annotations

from ..common import json_io
from . import ast
from ._base.frozen import record

INDENT = "  "
WIDTH = 100
PRECEDENCE = {ast.Or: 1, ast.And: 2, ast.Not: 3}


@record
class _Item:
    line: int
    end_line: int
    col: int
    text: str


def format_document(document: ast.Document) -> str:
    comments = sorted(document.comments, key=lambda c: c.line)
    out: list[str] = []
    cursor = 0  # index of the next comment to place
    last_line = None  # source line of what was emitted last, to keep one blank line where there was one
    after_block = False

    def emit(line: int, end_line: int, text: str, indent: str, top_level: bool) -> None:
        nonlocal last_line, after_block
        gap = last_line is not None and line > last_line + 1
        if out and (gap or (top_level and after_block)):
            out.append("")
        out.extend(indent + part for part in text.split("\n"))
        last_line, after_block = end_line, False

    def comments_until(until_line: int, indent: str, top_level: bool, trailing_from: int | None = None) -> list[str]:
        nonlocal cursor
        trailing = []
        while cursor < len(comments) and comments[cursor].line <= until_line:
            comment = comments[cursor]
            if trailing_from is not None and comment.line >= trailing_from:
                trailing.append(comment.text)
            else:
                emit(comment.line, comment.line, comment.text, indent, top_level)
            cursor += 1
        return trailing

    for decl in sorted(document.decls, key=lambda d: (_line(d.span), _col(d.span))):
        start, end = _line(decl.span), _end_line(decl.span)
        trailing = comments_until(start, "", True, trailing_from=start)
        emit(start, start, _with_trailing(_header(decl) + " {", trailing), "", True)
        for item in sorted(_items(decl), key=lambda i: (i.line, i.col)):
            # only a comment on the item's last line can trail it: two trailing comments would join into one
            trailing = comments_until(item.end_line, INDENT, False, trailing_from=item.end_line)
            emit(item.line, item.end_line, _with_trailing(item.text, trailing), INDENT, False)
        trailing = comments_until(end, INDENT, False, trailing_from=end)
        out.append(_with_trailing("}", trailing))
        last_line, after_block = end, True
    comments_until(10**9, "", True)
    return "\n".join(out) + "\n"


def _with_trailing(line: str, trailing: list[str]) -> str:
    return line + ("  " + " ".join(trailing) if trailing else "")


def _line(span) -> int:
    return span.line if span else 0


def _end_line(span) -> int:
    return span.end_line if span else 0


def _col(span) -> int:
    return span.col if span else 0


def _header(decl) -> str:
    kind = ast.DECL_KIND[type(decl)]
    parts = [kind, decl.name.text]
    if decl.title is not None:
        parts.append(_string(decl.title))
    extends = getattr(decl, "extends", None)
    if extends is not None:
        parts += ["extends", extends.text]
    return " ".join(parts)


def _item(keyword: str, span, text: str, end_span=None) -> _Item:
    return _Item(_line(span), _end_line(end_span or span), _col(span), f"{keyword} {text}" if keyword else text)


def _list_item(keyword: str, names) -> list[_Item]:
    if not names:
        return []
    return [_Item(_line(names[0].span), _end_line(names[-1].span), _col(names[0].span), _wrap(keyword, names))]


def _wrap(keyword: str, names) -> str:
    lines, current = [], keyword
    for index, name in enumerate(names):
        piece = name.text + ("," if index < len(names) - 1 else "")
        if len(current) + 1 + len(piece) > WIDTH - len(INDENT) and current != keyword:
            lines.append(current)
            current = " " * len(keyword) + " " + piece
        else:
            current = f"{current} {piece}"
    lines.append(current)
    return "\n".join(lines)


def _singles(pairs) -> list[_Item]:
    return [_item(keyword, name.span, name.text) for keyword, name in pairs if name is not None]


def _items(decl) -> list[_Item]:
    if isinstance(decl, ast.Preset):
        return (
            _list_item("provides", decl.provides)
            + [_Item(_line(m.span), _end_line(m.span), _col(m.span), _mount(m)) for m in decl.mounts]
            + _singles([("present", decl.present)])
            + _singles([("present", n) for n in decl.repeated])
        )
    if isinstance(decl, ast.Host):
        items = (
            _list_item("platforms", decl.platforms)
            + _list_item("provides", decl.provides)
            + _list_item("flags", decl.flags)
            + _singles([("rows", decl.rows), ("present", decl.present), ("policy", decl.policy)])
        )
        if decl.roster:
            text = "roster" + (f" default {decl.roster_default.text}" if decl.roster_default else "")
            items.append(_Item(_line(decl.roster_span), _end_line(decl.roster_span), _col(decl.roster_span), text))
        return items
    if isinstance(decl, ast.Scope):
        return (
            _singles([("parent", decl.parent), ("approval", decl.approval), ("present", decl.present)])
            + _list_item("only", decl.only)
            + _list_item("hide", decl.hide)
            + _list_item("own", decl.own)
        )
    if isinstance(decl, ast.Policy):
        items = _singles(
            [
                ("sandbox", decl.sandbox),
                ("sandbox fallback", decl.fallback),
                ("network", decl.network),
                ("approval", decl.approval),
                ("default", decl.default),
            ]
        )
        items += [_item("writable", root.span, _string(root.text)) for root in decl.writable]
        items += [
            _Item(
                _line(line.span),
                _end_line(line.span),
                _col(line.span),
                _wrap(f"network {line.effect.text}", [ast.Name(_string(h.text), h.span) for h in line.hosts]),
            )
            for line in decl.network_hosts
        ]
        items += _list_item("include", decl.includes)
        items += [_Item(_line(r.span), _end_line(r.span), _col(r.span), _rule(r)) for r in decl.rules]
        items += [_Item(_line(g.span), _end_line(g.span), _col(g.span), _guard(g)) for g in decl.guards]
        return items
    if isinstance(decl, ast.Commands):
        return [_Item(_line(e.span), _end_line(e.span), _col(e.span), _command_entry(e)) for e in decl.entries]
    if isinstance(decl, ast.Upstream):
        return _upstream_items(decl)
    raise TypeError(type(decl))


def _upstream_items(decl: ast.Upstream) -> list[_Item]:
    items = [
        _item(keyword, name.span, _string(name.text))
        for keyword, name in (("command", decl.command), ("url", decl.url))
        if name
    ]
    if decl.args_span is not None:
        items.append(_item("args", decl.args_span, value_text(tuple(decl.args))))
    if decl.env_span is not None:
        env = ", ".join(f"{e.key.text} = {value_text(e.value)}" for e in decl.env)
        items.append(_item("env", decl.env_span, "{ " + env + " }" if env else "{}"))
    items += [_item("risk", r.span, f"{r.tool.text} " + ", ".join(a.text for a in r.axes)) for r in decl.risk]
    return items


def _command_entry(entry: ast.CommandEntry) -> str:
    text = _string(" ".join(entry.words))
    return text + (" except " + ", ".join(_string(o) for o in entry.excluded) if entry.excluded else "")


def _mount(mount: ast.Mount) -> str:
    text = f"mount {mount.package.text}"
    if mount.alias is not None:
        text += f" as {mount.alias.text}"
    if mount.config:
        text += " { " + ", ".join(f"{e.key.text} = {value_text(e.value)}" for e in mount.config) + " }"
    if mount.condition is not None:
        text += " when " + expr_text(mount.condition)
    if mount.disabled:
        text += " disabled"
    return text


def _targets(targets) -> str:
    return ", ".join(t.name.text if t.kind == "tool" else f"{t.kind}({t.name.text})" for t in targets)


def _rule(rule: ast.Rule) -> str:
    return _conditional(f"{rule.effect} {_targets(rule.targets)}", rule.condition)


def _guard(guard: ast.Guard) -> str:
    return _conditional(f"guard {guard.name.text}: deny {_targets(guard.targets)}", guard.condition)


def _conditional(head: str, condition) -> str:
    """`HEAD when CONDITION` on one line; past the width, an `or` of tests one line each group:
    `HEAD` / `  when A or B` / `    or C` (newlines are insignificant to the parser). An `and` whose last
    test is such an `or` wraps it the same way inside its parentheses: `  when A and (B or C` / `    or D)`."""
    if condition is None:
        return head
    text = f"{head} when {expr_text(condition)}"
    if len(INDENT) + len(text) <= WIDTH:
        return text
    if isinstance(condition, ast.Or):
        lead, alternatives, close = "  when", condition.items, ""
    elif isinstance(condition, ast.And) and isinstance(condition.items[-1], ast.Or):
        first = " and ".join(expr_text(item, PRECEDENCE[ast.And]) for item in condition.items[:-1])
        lead, alternatives, close = f"  when {first} and (", condition.items[-1].items, ")"
    else:
        return text
    lines, current = [head], lead
    for index, item in enumerate(alternatives):
        piece = expr_text(item, PRECEDENCE[ast.Or])
        joined = f"{current}{'' if close else ' '}{piece}" if index == 0 else f"{current} or {piece}"
        if index and len(INDENT) + len(joined) + len(close) > WIDTH:
            lines.append(current)
            joined = f"    or {piece}"
        current = joined
    lines.append(current + close)
    return "\n".join(lines)


def _string(text: str) -> str:
    return json_io.dumps(text, ensure_ascii=False)


def value_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    return repr(value)


def expr_text(expr, parent: int = 0) -> str:
    own = PRECEDENCE.get(type(expr), 4)
    if isinstance(expr, ast.Or):
        text = " or ".join(expr_text(i, own) for i in expr.items)
    elif isinstance(expr, ast.And):
        text = " and ".join(expr_text(i, own) for i in expr.items)
    elif isinstance(expr, ast.Not):
        text = "not " + expr_text(expr.item, own)
    elif isinstance(expr, ast.Compare):
        text = f"{expr.fact.dotted} {expr.op} {value_text(expr.value)}"
    elif isinstance(expr, ast.Member):
        text = f"{expr.fact.dotted} in {value_text(expr.values)}"
    elif isinstance(expr, ast.ListTest):
        operand = value_text(expr.values[0]) if expr.quantifier == "contains" else value_text(expr.values)
        text = f"{expr.fact.dotted} {expr.quantifier}{'' if expr.quantifier == 'contains' else ' in'} {operand}"
    elif isinstance(expr, ast.Length):
        text = f"length({expr.fact.dotted}) {expr.op} {value_text(expr.value)}"
    elif isinstance(expr, ast.Matches):
        text = f"{expr.fact.dotted} matches {_string(expr.pattern)}"
    elif isinstance(expr, ast.MatchesExcept):
        text = f"{expr.fact.dotted} matches {_string(expr.pattern)} except " + ", ".join(
            _string(option) for option in expr.excepted
        )
    elif isinstance(expr, ast.Place):
        text = f"{expr.fact.dotted} {'inside' if expr.inside else 'outside'} {expr.place.text}"
    elif isinstance(expr, ast.InClass):
        text = f"{expr.fact.dotted} is {expr.name.text}"
    elif isinstance(expr, ast.Has):
        text = f"has {expr.fact.dotted}"
    elif isinstance(expr, ast.Flag):
        text = f"flag {expr.name.text}"
    elif isinstance(expr, ast.Truthy):
        text = expr.fact.dotted
    else:
        raise TypeError(type(expr))
    # a nested And/Or keeps its own parentheses so the tree shape survives a round trip
    needs = own < parent or (own == parent and own in (1, 2))
    return f"({text})" if needs else text
