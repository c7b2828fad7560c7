"""`dshc ls [KIND] [NAME]`: the presets, hosts, scopes, policies, packages and tools there are.

In: the loaded program (shipped declarations + --load files) and its catalog. Out: one line per
item — name, one-line summary, source `path:line:col` — or the same rows as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..compiler import ast
from ..compiler.diagnostics import Diagnostic, DshError, did_you_mean
from ..compiler.package_data import package_dir

KINDS = ("presets", "hosts", "scopes", "policies", "commands", "packages", "tools")
# the code an unknown name of each kind is reported with (the same codes as everywhere else)
UNKNOWN_CODES = {
    "presets": "DSH204",
    "hosts": "DSH205",
    "scopes": "DSH206",
    "policies": "DSH207",
    "commands": "DSH219",
    "packages": "DSH201",
    "tools": "DSH406",
}


@dataclass(frozen=True)
class Item:
    kind: str
    name: str
    summary: str
    source: str | None

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "summary": self.summary, "source": self.source}


def cmd_ls(args, out, err) -> int:
    from .command_context import program_of as _program

    kind = _kind(args.kind)
    program = _program(args)
    kinds = (kind,) if kind else KINDS
    items = [item for k in kinds for item in LISTERS[k](program)]
    if args.name is not None:
        if kind is None:
            raise DshError(
                [Diagnostic("DSH405", "a NAME needs a KIND before it", help=f"e.g. `dshc ls presets {args.name}`")]
            )
        items = [item for item in items if item.name == args.name]
        if not items:
            raise DshError([_unknown(kind, args.name, [i.name for i in LISTERS[kind](program)])])
    if args.json:
        out.write(json.dumps({"items": [i.to_json() for i in items]}, indent=2, ensure_ascii=False) + "\n")
        return 0
    width = max((len(i.name) for i in items), default=0)
    for k in kinds:
        rows = [i for i in items if i.kind == k]
        if not rows:
            continue
        if len(kinds) > 1:
            out.write(f"{k}:\n")
        for item in rows:
            out.write(f"  {item.name:<{width}}  {item.summary}" + (f"  ({item.source})" if item.source else "") + "\n")
    return 0


def _kind(text: str | None) -> str | None:
    if text is None:
        return None
    singular = {k[:-1] if k != "policies" else "policy": k for k in KINDS}
    if text in KINDS or text in singular:
        return singular.get(text, text)
    hint = did_you_mean(text, KINDS)
    raise DshError(
        [
            Diagnostic(
                "DSH405", f"unknown kind `{text}`", help=(hint + " " if hint else "") + "kinds: " + ", ".join(KINDS)
            )
        ]
    )


def _unknown(kind: str, name: str, candidates) -> Diagnostic:
    hint = did_you_mean(name, candidates)
    shown = sorted(candidates)
    listed = ", ".join(f"`{c}`" for c in shown[:40]) + (f" and {len(shown) - 40} more" if len(shown) > 40 else "")
    return Diagnostic(
        UNKNOWN_CODES[kind],
        f"unknown {kind[:-1] if kind != 'policies' else 'policy'} `{name}`",
        help=(hint + " " if hint else "") + f"known: {listed}" if shown else f"there are no {kind}",
    )


def _head(decl) -> list[str]:
    """The summary's opening parts: the title, and what the declaration extends."""
    return [f'"{decl.title}"' if decl.title else "(no title)"] + (
        [f"extends {decl.extends.text}"] if getattr(decl, "extends", None) else []
    )


def _declared(program, kind: str):
    """(name, declaration as written, its flattened form) of one kind, by name."""
    effective = getattr(program.resolved, {"preset": "presets", "scope": "scopes", "policy": "policies"}[kind])
    for name, decl in sorted(program.resolved.tables[kind].items()):
        yield name, decl, effective[name]


def _where(node) -> str | None:
    return str(node.span) if node is not None and node.span is not None else None


def _presets(program):
    for name, decl, effective in _declared(program, "preset"):
        parts = _head(decl)
        parts.append(f"{len(effective.mounts)} mount rows")
        if effective.present:
            parts.append(f"present {effective.present.text}")
        yield Item("presets", name, " · ".join(parts), _where(decl.name))


def _hosts(program):
    for name, decl in sorted(program.resolved.hosts.items()):
        parts = [*_head(decl), "platforms " + (", ".join(p.text for p in decl.platforms) or "any")]
        if decl.roster:
            parts.append("roster" + (f" (default {decl.roster_default.text})" if decl.roster_default else ""))
        if decl.rows:
            parts.append(f"rows {decl.rows.text}")
        if decl.policy:
            parts.append(f"policy {decl.policy.text}")
        parts.append(f"{len(decl.provides)} services")
        yield Item("hosts", name, " · ".join(parts), _where(decl.name))


def _scopes(program):
    for name, decl, effective in _declared(program, "scope"):
        parts = _head(decl)
        parts.append(f"parent {effective.parent}" if effective.parent else "a root scope")
        if effective.approval:
            parts.append(f"approval {effective.approval.text}")
        for label, names in (("only", effective.only), ("hide", effective.hide), ("own", effective.own)):
            if names:
                parts.append(f"{label} " + ", ".join(n.text for n in names))
        yield Item("scopes", name, " · ".join(parts), _where(decl.name))


def _policies(program):
    for name, decl, effective in _declared(program, "policy"):
        parts = _head(decl)
        for label, value in (
            ("sandbox", effective.sandbox),
            ("approval", effective.approval),
            ("default", effective.default),
        ):
            parts.append(f"{label} {value.text if value else '-'}")
        parts.append(f"{_count(len(effective.rules), 'rule')}, {_count(len(effective.guards), 'guard')}")
        yield Item("policies", name, " · ".join(parts), _where(decl.name))


def _commands(program):
    seen: dict[str, list[ast.Commands]] = {}
    for document in program.resolved.documents:
        for decl in document.decls:
            if isinstance(decl, ast.Commands):
                seen.setdefault(decl.name.text, []).append(decl)
    for name, decls in sorted(seen.items()):
        entries = sum(len(d.entries) for d in decls)
        title = next((d.title for d in decls if d.title), None)
        parts = [f'"{title}"' if title else "(no title)", f"{entries} commands"]
        if len(decls) > 1:
            parts.append(f"declared in {len(decls)} places")
        yield Item("commands", name, " · ".join(parts), _where(decls[0].name))


def _packages(program):
    for package in program.catalog.packages:
        tools = ", ".join(t.name for t in package.tools)
        needs = f" · needs {', '.join(package.requires)}" if package.requires else ""
        yield Item(
            "packages", package.id, f"{package.summary} · tools {tools}{needs}", _package_file(program, package.id)
        )


def _tools(program):
    rows = sorted(
        ((t.name, package.id, t) for package in program.catalog.packages for t in package.tools),
        key=lambda row: (row[0], row[1]),
    )
    for name, package, tool in rows:
        execution = "parallel" if tool.parallel_safe else "exclusive"
        first = tool.description.strip().split("\n", 1)[0]
        summary = first if len(first) <= 80 else first[:77] + "…"
        yield Item("tools", name, f"{package} · {execution} · {summary}", _package_file(program, package, name))


def _package_file(program, package_id: str, tool: str | None = None) -> str | None:
    """`catalogs/packages/ID.json[:line:col]` for the shipped catalog: where a package (or a tool's
    `"name"`) is written. Another catalog's packages have no known file."""
    from ..compiler.catalog import load_catalog

    if program.catalog is not load_catalog():  # the shipped catalog is loaded once per process
        return None
    path = f"catalogs/packages/{package_id}.json"
    try:
        text = package_dir("dshc.catalogs").joinpath("packages", f"{package_id}.json").read_text(encoding="utf-8")
    except OSError:
        return None
    needle = f'"name": "{tool}"' if tool else f'"id": "{package_id}"'
    index = text.find(needle)
    if index < 0:
        return path
    line = text.count("\n", 0, index) + 1
    col = index - text.rfind("\n", 0, index)
    return f"{path}:{line}:{col}"


LISTERS = {
    "presets": _presets,
    "hosts": _hosts,
    "scopes": _scopes,
    "policies": _policies,
    "commands": _commands,
    "packages": _packages,
    "tools": _tools,
}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
