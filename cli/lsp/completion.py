"""The text before the cursor → what may be written there: package names, config keys, tool
names, facts, services, declaration names, keywords.

In: the document text, a 0-based line and a code-point column, and the Vocabulary of the loaded
sources. Out: Candidates and the column where the word being typed starts. Purely lexical, so it
works while the file does not parse (as it mostly does not while one types).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...compiler.catalog import Catalog
from ...compiler.facts import (
    APPROVALS,
    COMPOSITION_FACTS,
    HOST_SERVICES,
    MODES,
    PLACES,
    PLATFORMS,
    REQUEST_FACTS,
    SANDBOX_MODES,
)
from ...compiler.program import Program

DECL_KEYWORDS = ("preset", "host", "scope", "policy", "commands")
BLOCK_KEYWORDS = {
    "preset": ("mount", "present", "provides"),
    "host": ("provides", "platforms", "flags", "roster", "rows", "present", "policy"),
    "scope": ("parent", "approval", "only", "hide", "own", "present"),
    "policy": ("sandbox", "network", "writable", "approval", "allow", "ask", "deny", "guard", "default"),
    "commands": (),
}
EFFECTS = ("allow", "ask", "deny")
CONDITION_KEYWORDS = ("has", "flag", "not")
_TOKEN = re.compile(
    r'(?P<string>"(?:[^"\\\n]|\\.)*"?)|(?P<comment>#[^\n]*)|(?P<cmp>==|!=)'
    r"|(?P<name>[A-Za-z_*?][A-Za-z0-9_\-*?]*)|(?P<punct>[{}()\[\],:;=.])|(?P<space>\s+)|(?P<other>.)"
)


@dataclass(frozen=True)
class Candidate:
    label: str
    kind: str  # keyword | package | tool | fact | service | config | declaration | value
    detail: str = ""


@dataclass(frozen=True)
class Vocabulary:
    """The names completion offers, from the catalog and the last sources that resolved."""

    catalog: Catalog
    declared: dict[str, tuple[str, ...]] = field(default_factory=dict)  # kind -> names
    flags: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()

    @classmethod
    def of(cls, catalog: Catalog, program: Program | None) -> "Vocabulary":
        if program is None:
            return cls(catalog)
        tables = program.resolved.tables
        declared = {kind: tuple(sorted(table)) for kind, table in tables.items()}
        flags = sorted({f.text for host in program.resolved.hosts.values() for f in host.flags})
        classes = sorted({c.name for policy in program.resolved.policies.values() for c in policy.classes})
        return cls(catalog, declared, tuple(flags), tuple(classes))

    def services(self) -> list[Candidate]:
        names = self.catalog.services | set(HOST_SERVICES)
        return [Candidate(s, "service", HOST_SERVICES.get(s, "")) for s in sorted(names)]

    def packages(self) -> list[Candidate]:
        return [Candidate(p.id, "package", p.summary) for p in self.catalog.packages]

    def tools(self) -> list[Candidate]:
        found: dict[str, Candidate] = {}
        for tool in self.catalog.definitions.values():
            for name in (tool.name, *tool.aliases):
                found.setdefault(name, Candidate(name, "tool", tool.definition))
        return [found[n] for n in sorted(found)]

    def names(self, kind: str) -> list[Candidate]:
        return [Candidate(n, "declaration", kind) for n in self.declared.get(kind, ())]


@dataclass(frozen=True)
class _Token:
    kind: str | None  # the token pattern's group name (each alternative has one)
    text: str
    start: int  # offset in the text


def _tokens(text: str) -> list[_Token]:
    return [
        _Token(m.lastgroup, m.group(), m.start())
        for m in _TOKEN.finditer(text)
        if m.lastgroup not in ("space", "comment")
    ]


def complete(text: str, line: int, col: int, vocab: Vocabulary) -> tuple[list[Candidate], int]:
    lines = text.split("\n")
    if line >= len(lines):
        return [], col
    before = "\n".join(lines[:line] + [lines[line][:col]])
    if _in_string_or_comment(lines[line][:col], before):
        return [], col
    tokens = _tokens(before)
    start = col
    if tokens and tokens[-1].kind == "name" and tokens[-1].start + len(tokens[-1].text) == len(before):
        start = col - len(tokens[-1].text)
        tokens = tokens[:-1]
    return _candidates(tokens, vocab), start


def _in_string_or_comment(line_before: str, before: str) -> bool:
    last = None
    for match in _TOKEN.finditer(before):
        last = match
    if last is None:
        return False
    if last.lastgroup == "comment":
        return True
    return last.lastgroup == "string" and (len(last.group()) == 1 or not last.group().endswith('"'))


@dataclass
class _Where:
    decl: str | None = None  # the declaration block the cursor is in
    mount_package: str | None = None  # set inside a mount's `{ config }`
    rule_start: int | None = None  # index of the current rule's effect token


def _where(tokens: list[_Token]) -> _Where:
    where, pending_decl, last_mount = _Where(), None, None
    stack: list[tuple[str, str | None]] = []  # open braces: ("decl", its kind) or ("config", its mount's package)
    for index, token in enumerate(tokens):
        if token.kind == "name" and not stack and token.text in DECL_KEYWORDS:
            pending_decl = token.text
        elif token.kind == "name" and token.text == "mount" and stack:
            last_mount = (
                tokens[index + 1].text if index + 1 < len(tokens) and tokens[index + 1].kind == "name" else None
            )
        elif token.text == "{":
            stack.append(("config", last_mount) if stack else ("decl", pending_decl))
        elif token.text == "}" and stack:
            stack.pop()
        if stack and token.kind == "name" and token.text in (*EFFECTS, "guard") and _item_start(tokens, index):
            where.rule_start = index
    if stack:
        where.decl = next(name for kind, name in stack if kind == "decl")
        if stack[-1][0] == "config":
            where.mount_package = stack[-1][1]
    return where


def _item_start(tokens: list[_Token], index: int) -> bool:
    """Is tokens[index] the first token of a block item? (`deny` after `guard x:` is not.)"""
    return index == 0 or tokens[index - 1].text != ":"


def _candidates(tokens: list[_Token], vocab: Vocabulary) -> list[Candidate]:
    where = _where(tokens)
    prev = tokens[-1].text if tokens else None
    if where.decl is None:
        if prev == "extends" and len(tokens) >= 3:
            return vocab.names(_header_kind(tokens))
        if prev in (None, "}"):
            return [Candidate(k, "keyword") for k in DECL_KEYWORDS]
        # after `KIND NAME` or its title, the header may go on with `extends`
        named = len(tokens) >= 2 and tokens[-2].text in DECL_KEYWORDS and tokens[-1].kind == "name"
        titled = len(tokens) >= 3 and tokens[-3].text in DECL_KEYWORDS and tokens[-1].kind == "string"
        return [Candidate("extends", "keyword")] if named or titled else []
    if where.mount_package is not None:
        if prev in ("{", ","):
            package = vocab.catalog.package_by_id.get(where.mount_package)
            return (
                [Candidate(k, "config", f"{knob.type}: {knob.summary}") for k, knob in sorted(package.config.items())]
                if package
                else []
            )
        return []
    keyword = _list_keyword(tokens) if prev == "," else prev
    found = _argument(keyword, tokens, where, vocab)
    if found is not None:
        return found
    return [Candidate(k, "keyword") for k in BLOCK_KEYWORDS.get(where.decl, ())]


def _header_kind(tokens: list[_Token]) -> str:
    """The kind of the declaration whose header holds the last token (`preset NAME … extends`)."""
    return next(t.text for t in reversed(tokens) if t.kind == "name" and t.text in DECL_KEYWORDS)


def _list_keyword(tokens: list[_Token]) -> str | None:
    """The keyword a comma-separated list started with: `provides a, b, |` → `provides`."""
    index = len(tokens) - 1
    while index >= 1 and tokens[index].text == ",":
        index -= 1
        if tokens[index].text == ")":  # package(x) / risk(x) targets
            index -= 3
        index -= 1
    if index < 0:
        return None
    if tokens[index].text == "deny" and index >= 1 and tokens[index - 1].text == ":":
        return "deny"
    return tokens[index].text


def _argument(keyword: str | None, tokens: list[_Token], where: _Where, vocab: Vocabulary) -> list[Candidate] | None:
    """What follows `keyword`; None when the cursor starts a new block item instead."""
    decl = where.decl
    values = lambda names, kind="value": [Candidate(n, kind) for n in names]  # noqa: E731 - a local shorthand
    simple = {
        "mount": vocab.packages,
        "provides": vocab.services,
        "has": vocab.services,
        "only": vocab.tools,
        "hide": vocab.tools,
        "own": vocab.tools,
        "parent": lambda: vocab.names("scope"),
        "rows": lambda: vocab.names("preset"),
        "extends": lambda: vocab.names(decl) if decl is not None else [],
        "approval": lambda: values(APPROVALS),
        "present": lambda: values(MODES),
        "platforms": lambda: values(PLATFORMS),
        "network": lambda: values(("allow", "deny")),
        "flags": lambda: values(vocab.flags),
        "flag": lambda: values(vocab.flags),
        "fallback": lambda: values(("unsandboxed",)),
        "is": lambda: values(vocab.classes),
        "inside": lambda: values(PLACES),
        "outside": lambda: values(PLACES),
    }
    if keyword in simple:
        return simple[keyword]()
    if keyword == "policy" and decl == "host":
        return vocab.names("policy")
    if keyword == "default":
        return vocab.names("preset") if decl == "host" else values(EFFECTS)
    if keyword == "sandbox":
        return values((*SANDBOX_MODES, "fallback"))
    if keyword in EFFECTS and decl == "policy":
        return vocab.tools() + [Candidate("package(", "keyword"), Candidate("risk(", "keyword")]
    if keyword == "(" and len(tokens) >= 2 and tokens[-2].text in ("package", "risk"):
        if tokens[-2].text == "package":
            return vocab.packages()
        return values(sorted(vocab.catalog.risk_axes))
    if keyword in ("when", "and", "or", "not", "("):
        return _facts(decl)
    if keyword == "." and len(tokens) >= 2 and tokens[-2].text == "args":
        return _argument_names(tokens, where, vocab)
    if keyword in ("=", "==", "!=", "in", "[", "matches", "contains", "except", "as", "writable", "guard", ":"):
        return []  # a value, a new name or a string: nothing to offer
    return None


def _facts(decl: str | None) -> list[Candidate]:
    facts = REQUEST_FACTS if decl == "policy" else COMPOSITION_FACTS
    found = [
        Candidate(name, "fact", kind + (f": {', '.join(allowed)}" if allowed else ""))
        for name, (kind, allowed) in sorted(facts.items())
    ]
    if decl == "policy":
        from ...compiler.session import CALL_FACTS, SESSION_FACTS

        found.append(Candidate("args", "fact", "the call's arguments: args.NAME"))
        found += [
            Candidate(name, "fact", f"{kind}: {what}")
            for name, (kind, what) in (*SESSION_FACTS.items(), *CALL_FACTS.items())
        ]
    return found + [Candidate(k, "keyword") for k in CONDITION_KEYWORDS]


def _argument_names(tokens: list[_Token], where: _Where, vocab: Vocabulary) -> list[Candidate]:
    """`args.|` in a rule: the parameters of the tools that rule names (every tool's when it names none)."""
    named = set()
    if where.rule_start is not None:
        for token in tokens[where.rule_start + 1 :]:
            if token.text == "when":
                break
            if token.kind == "name":
                named.add(token.text)
    tools = [t for t in vocab.catalog.definitions.values() if t.name in named or t.package in named] or list(
        vocab.catalog.definitions.values()
    )
    params: dict[str, str] = {}
    for tool in tools:
        for name, schema in tool.parameters.get("properties", {}).items():
            params.setdefault(name, f"{schema.get('type', 'any')} parameter of `{tool.name}`")
    return [Candidate(name, "fact", detail) for name, detail in sorted(params.items())]
