"""A Ref under the cursor → markdown: what the catalog says of it, and what `explain` / `decide` answer.

In: the Ref, the Program it belongs to (None when the sources do not resolve: then only the
catalog speaks), the catalog and the workspace root. Out: markdown text, or None.
Tools are explained in the request the surrounding declaration stands for: a preset's tools
under that preset, a scope's under that scope, a policy's under that policy.
"""

from __future__ import annotations

import fnmatch
import json

from ...compiler import ast
from ...compiler.catalog import Catalog, Package, ToolDef
from ...compiler.diagnostics import DshError
from ...compiler.facts import COMPOSITION_FACTS, HOST_SERVICES, REQUEST_FACTS
from ...compiler.fmt import expr_text
from ...compiler.program import Program
from ...compiler.request import Request
from ..explanation import explain_json, explain_text
from .index import Ref

MAX_TOOLS = 8  # a hover over `package(tool-fs)` or `mcp_*` shows this many decisions, then says how many more


def context(ref: Ref) -> tuple[Request, str]:
    """The request the declaration around `ref` stands for, and the CLI flags that name it."""
    name = ref.decl.name.text
    if isinstance(ref.decl, ast.Preset):
        return Request(preset=name), name
    if isinstance(ref.decl, ast.Scope):
        return Request(scope=name), f"--scope {name}"
    if isinstance(ref.decl, ast.Policy):
        return Request(policy=name), f"--policy {name}"
    if isinstance(ref.decl, ast.Host):
        return Request(host=name), f"--host {name}"
    return Request(), ""


def hover(ref: Ref, program: Program | None, catalog: Catalog, workspace: str | None) -> str | None:
    if ref.kind == "tool":
        return _tool(ref, program, catalog, workspace)
    if ref.kind == "package":
        return _package(ref, program, catalog, workspace)
    if ref.kind in ("rule", "guard") and isinstance(ref.node, (ast.Rule, ast.Guard)):  # `index` sets it so
        return _rule(ref, ref.node, program, catalog, workspace)
    if ref.kind == "config" and isinstance(ref.node, ast.Mount):
        return _config(ref, ref.node, catalog)
    if ref.kind == "fact":
        return _fact(ref)
    if ref.kind == "service":
        return _service(ref.text, catalog)
    if ref.kind in ("preset", "scope", "policy", "host"):
        return _declaration(ref, program)
    return None


# --- tools ---------------------------------------------------------------------------------
def _tool_line(tool: ToolDef) -> str:
    execution = "parallel" if tool.parallel_safe else "exclusive"
    risk = f", risk {', '.join(tool.risk)}" if tool.risk else ""
    summary = tool.description.strip().splitlines()[0] if tool.description.strip() else ""
    return f"`{tool.definition}` ({execution}{risk}): {summary}"


def _tool(ref: Ref, program, catalog: Catalog, workspace) -> str:
    lines = [f"**tool** `{ref.text}`"]
    definitions = [
        t for t in catalog.definitions.values() if fnmatch.fnmatchcase(t.name, ref.text) or ref.text in t.aliases
    ]
    lines += [f"- {_tool_line(t)}" for t in definitions[:MAX_TOOLS]]
    if not definitions:
        lines.append("- no catalog definition has this name")
    if program is not None and not _is_glob(ref.text):
        lines.append(_explained(program, ref, ref.text))
        if isinstance(ref.decl, ast.Policy):
            lines.append(_decided(program, ref, [ref.text], workspace))
    return "\n\n".join(lines)


def _explained(program: Program, ref: Ref, name: str) -> str:
    request, flags = context(ref)
    try:
        text = explain_text(name, program.explain(request, name))
    except DshError as exc:
        text = "; ".join(d.message for d in exc.diagnostics)
    return f"`dshc explain {name} {flags}`:\n```\n{text.rstrip()}\n```"


def _decided(program: Program, ref: Ref, names: list[str], workspace, args: dict | None = None) -> str:
    request, flags = context(ref)
    rows = []
    for name in names[:MAX_TOOLS]:
        try:
            decision = program.decide(request, name, args or {}, workspace=workspace)
            where = ", ".join(f"{rid} at {span}" if span else rid for rid, span in decision.deciding)
            rows.append(f"{name}: {decision.effect}: {decision.reason}" + (f" (decided by {where})" if where else ""))
        except DshError as exc:
            rows.append(f"{name}: " + "; ".join(d.message for d in exc.diagnostics))
    more = f"\n… and {len(names) - MAX_TOOLS} more" if len(names) > MAX_TOOLS else ""
    shown = json.dumps(args or {}, ensure_ascii=False)
    which = "a call with the arguments this rule tests" if args else "a call without arguments"
    return f"`dshc decide TOOL --args '{shown}' {flags}` ({which}):\n```\n" + "\n".join(rows) + more + "\n```"


def _is_glob(text: str) -> bool:
    return any(c in text for c in "*?")


# --- packages ------------------------------------------------------------------------------
def _package(ref: Ref, program, catalog: Catalog, workspace) -> str:
    package = catalog.package_by_id.get(ref.text)
    if package is None:
        return f"**package** `{ref.text}`: not in the catalog"
    lines = [f"**package** `{package.id}`: {package.summary}"]
    if package.requires:
        lines.append("requires services: " + ", ".join(f"`{s}`" for s in package.requires))
    if package.config:
        lines.append(
            "config:\n"
            + "\n".join(
                f"- `{key}` ({knob.type}"
                + (f", default `{knob.default}`" if knob.default is not None else "")
                + (", required" if knob.required else "")
                + f"): {knob.summary}"
                for key, knob in sorted(package.config.items())
            )
        )
    lines.append("tools:\n" + "\n".join(f"- {_tool_line(t)}" for t in package.tools))
    if program is not None:
        if isinstance(ref.decl, ast.Policy):
            lines.append(_decided(program, ref, _package_names(package), workspace))
        else:
            lines.append(_availability(program, ref, _package_names(package)))
    return "\n\n".join(lines)


def _package_names(package: Package) -> list[str]:
    return sorted({t.name for t in package.tools})


def _availability(program: Program, ref: Ref, names: list[str]) -> str:
    """One `explain` line per tool: available, or the gate that stops it."""
    request, flags = context(ref)
    rows = []
    for name in names[:MAX_TOOLS]:
        try:
            data = explain_json(name, program.explain(request, name))
            rows.append(f"{name}: " + ("available" if data["available"] else f"fails gate `{data['failed_gate']}`"))
        except DshError as exc:
            rows.append(f"{name}: " + "; ".join(d.message for d in exc.diagnostics))
    return f"`dshc explain TOOL {flags}`:\n```\n" + "\n".join(rows) + "\n```"


# --- rules ---------------------------------------------------------------------------------
def _rule(ref: Ref, item: ast.Rule | ast.Guard, program, catalog: Catalog, workspace) -> str:
    targets = ", ".join(t.name.text if t.kind == "tool" else f"{t.kind}({t.name.text})" for t in item.targets)
    head = f"{item.effect} {targets}" if isinstance(item, ast.Rule) else f"guard {item.name.text}: deny {targets}"
    if item.condition is not None:
        head += f" when {expr_text(item.condition)}"
    lines = [
        f"**{ref.kind}** in policy `{ref.decl.name.text}`:\n```\n{head}\n```",
        "rule order never matters: the strictest matching decision wins (deny > ask > allow)",
    ]
    if program is not None:
        names = sorted({n for t in item.targets for n in _target_names(t, catalog)})
        if names:
            lines.append(_decided(program, ref, names, workspace))
            sample = sample_arguments(item.condition)
            if sample:
                lines.append(_decided(program, ref, names, workspace, sample))
    return "\n\n".join(lines)


def sample_arguments(condition) -> dict:
    """Arguments the condition's positive `args.*` tests speak of: `matches "git push*"` → "git push".

    Only a sample to show a decision for: a negated test or an unusual pattern may still not match.
    """
    found: dict = {}
    negated = {id(a) for n in _negations(condition) for a in ast.atoms(n.item)}
    for atom in ast.atoms(condition):
        fact = getattr(atom, "fact", None)
        if id(atom) in negated or fact is None or len(fact.path) != 2 or fact.path[0] != "args":
            continue
        if isinstance(atom, ast.Matches):
            found.setdefault(fact.path[1], atom.pattern.replace("*", "").replace("?", "x").strip())
        elif isinstance(atom, ast.Compare) and atom.op == "==":
            found.setdefault(fact.path[1], atom.value)
        elif isinstance(atom, ast.Member) and atom.values:
            found.setdefault(fact.path[1], atom.values[0])
    return found


def _negations(expr):
    if isinstance(expr, ast.Not):
        yield expr
    elif isinstance(expr, (ast.And, ast.Or)):
        for item in expr.items:
            yield from _negations(item)


def _target_names(target: ast.Target, catalog: Catalog) -> list[str]:
    text = target.name.text
    if target.kind == "package":
        package = catalog.package_by_id.get(text)
        return _package_names(package) if package else []
    if target.kind == "risk":
        return [t.name for t in catalog.definitions.values() if text in t.risk]
    if _is_glob(text):
        return [n for n in catalog.shipped_names if fnmatch.fnmatchcase(n, text)]
    return [text]


# --- the rest ------------------------------------------------------------------------------
def _config(ref: Ref, mount: ast.Mount, catalog: Catalog) -> str:
    package = catalog.package_by_id.get(mount.package.text)
    knob = package.config.get(ref.text) if package else None
    if package is None or knob is None:
        return f"**config** `{ref.text}`: not a key of package `{mount.package.text}`"
    values = f"; one of {', '.join(f'`{v}`' for v in knob.values)}" if knob.values else ""
    default = f"; default `{knob.default}`" if knob.default is not None else ""
    return (
        f"**config** `{package.id}.{ref.text}` ({knob.type}{values}{default}): {knob.summary}\n\neffect: {knob.effect}"
    )


def _fact(ref: Ref) -> str:
    facts = REQUEST_FACTS if isinstance(ref.decl, ast.Policy) else COMPOSITION_FACTS
    if ref.text.startswith("args."):
        if ref.text.endswith((".env_read", ".env_set")):
            return (
                f"**fact** `{ref.text}` (names): the environment variables the shell line "
                f"{'reads' if ref.text.endswith('read') else 'sets'}; `matches`, `in`, or alone (not empty)"
            )
        return f"**fact** `{ref.text}`: the call's argument `{ref.text[5:]}` (typed by the tool's parameter schema)"
    if ref.text.startswith(("session.", "call.")) and isinstance(ref.decl, ast.Policy):
        from ...compiler.session import CALL_FACTS, SESSION_FACTS

        found = SESSION_FACTS.get(ref.text) or CALL_FACTS.get(ref.text)
        if found is not None:
            kind, what = found
            return f"**fact** `{ref.text}` ({kind}): {what}"
    known = facts.get(ref.text)
    if known is None:
        return f"**fact** `{ref.text}`: not a fact here; facts are " + ", ".join(f"`{f}`" for f in sorted(facts))
    kind, values = known
    return f"**fact** `{ref.text}` ({kind})" + (f": one of {', '.join(f'`{v}`' for v in values)}" if values else "")


def _service(name: str, catalog: Catalog) -> str:
    if name in HOST_SERVICES:
        return f"**service** `{name}`: {HOST_SERVICES[name]}"
    users = sorted(p.id for p in catalog.packages if name in p.requires)
    providers = sorted({t.definition for t in catalog.definitions.values() if t.provider == name or name in t.requires})
    if not users and not providers:
        return f"**service** `{name}`: no catalog package needs it"
    parts = [f"**service** `{name}`"]
    if users:
        parts.append("packages that wait for it: " + ", ".join(f"`{u}`" for u in users))
    if providers:
        parts.append("tools that need it: " + ", ".join(f"`{p}`" for p in providers[:MAX_TOOLS]))
    return "\n\n".join(parts)


def _declaration(ref: Ref, program) -> str | None:
    if program is None:
        return None
    decl = program.resolved.tables.get(ref.kind, {}).get(ref.text)
    if decl is None:
        return f"**{ref.kind}** `{ref.text}`: not declared in the loaded sources"
    lines = [
        f"**{ref.kind}** `{ref.text}`" + (f": {decl.title}" if decl.title else ""),
        f"declared at {decl.name.span}",
    ]
    request = {
        "preset": Request(preset=ref.text),
        "scope": Request(scope=ref.text),
        "host": Request(host=ref.text),
    }.get(ref.kind)
    if request is not None:
        try:
            view = program.view(request)
            lines.append(
                f"`dshc compile {_flags(ref)}`: {len(view.tools)} tools on the wire: "
                + ", ".join(f"`{t.name}`" for t in view.tools)
            )
        except DshError as exc:
            lines.append("does not compile: " + "; ".join(d.message for d in exc.diagnostics))
    elif ref.kind == "policy":
        policy = program.resolved.policies[ref.text]
        settings = [
            f"{key} `{value.text}`"
            for key, value in (("sandbox", policy.sandbox), ("approval", policy.approval), ("default", policy.default))
            if value is not None
        ]
        lines.append(", ".join(settings + [f"{len(policy.rules)} rules", f"{len(policy.guards)} guards"]))
    return "\n\n".join(lines)


def _flags(ref: Ref) -> str:
    return {"preset": ref.text, "scope": f"--scope {ref.text}", "host": f"--host {ref.text}"}[ref.kind]
