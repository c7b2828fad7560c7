"""Composition → a networkx graph → Mermaid or DOT text.

Nodes: host, presets (with extends), mounted packages, the services they need, tools they
register, and the scope chain. An edge a gate cut (disabled row, false condition, missing
service, a knob that removes a tool, a restriction) is kept, marked and labelled with why.
"""

from __future__ import annotations

import json

import networkx as nx

from .compose import Composition
from .gates.base import GateContext


def composition_graph(ctx: GateContext) -> nx.MultiDiGraph:
    comp: Composition = ctx.composition
    g = nx.MultiDiGraph()  # one package can be mounted by several rows
    host = f"host:{comp.host.name.text}"
    g.add_node(host, kind="host", label=f"host {comp.host.name.text} ({comp.request.platform})")
    resolved = ctx.resolved
    for layer, preset in (("rows", comp.host_rows), ("roster", comp.preset)):
        if preset is None:
            continue
        node = f"preset:{preset.name}"
        g.add_node(
            node, kind="preset", label=f"preset {preset.name}" + (f" ({comp.mode})" if layer == "roster" else "")
        )
        g.add_edge(host, node, label=layer, cut=False)
        parent = preset.decl.extends
        while parent is not None:
            target = f"preset:{parent.text}"
            g.add_node(target, kind="preset", label=f"preset {parent.text}")
            g.add_edge(node, target, label="extends", cut=False)
            node, parent = target, resolved.tables["preset"][parent.text].extends  # type: ignore[union-attr]  # Preset declarations
    for row in comp.rows:
        package = f"package:{row.package}"
        g.add_node(package, kind="package", label=row.package)
        origin = (
            f"preset:{comp.preset.name}"
            if row.layer == "preset" and comp.preset
            else (
                f"preset:{comp.host_rows.name}" if row.layer == "host" and comp.host_rows else f"scope:{row.layer[6:]}"
            )
        )
        name = row.mount.row_name if row.mount else "own"
        status = {
            "registered": None,
            "disabled": "disabled",
            "condition-false": "condition false",
            "pending": "waits for " + ", ".join(row.missing),
        }[row.status]
        label = f"mount {name}" if row.mount else "own registration"
        g.add_edge(origin, package, label=label + (f" — {status}" if status else ""), cut=status is not None)
        for service in resolved.catalog.package_by_id[row.package].requires:
            node = f"service:{service}"
            present = service in comp.services
            g.add_node(node, kind="service", label=service + ("" if present else " (missing)"))
            g.add_edge(package, node, label="needs", cut=not present)
        for reg in row.registered:
            tool = f"tool:{reg.name}"
            visible = reg.name in ctx.visible
            g.add_node(tool, kind="tool", label=reg.name)
            blocking = ctx.restriction_blocking(reg.name) if not visible else None
            why = f"{blocking[1]} in scope {blocking[0].name}" if blocking else None
            g.add_edge(package, tool, label="registers" + (f" — {why}" if why else ""), cut=not visible)
            if reg.tool.provider:
                provider = f"service:{reg.tool.provider}"
                ready = reg.tool.provider in comp.services
                g.add_node(provider, kind="service", label=reg.tool.provider + ("" if ready else " (missing)"))
                g.add_edge(
                    tool, provider, label="provider" + ("" if ready else " — unavailable when called"), cut=not ready
                )
        for _, dropped_name, reason, _ in row.dropped:
            tool = f"tool:{dropped_name}"
            g.add_node(tool, kind="tool", label=dropped_name)
            g.add_edge(
                package,
                tool,
                label=f"removed by {reason}"
                if not reason.startswith("missing:")
                else "waits for " + reason.split(":", 1)[1],
                cut=True,
            )
    previous = None
    for scope in comp.chain:
        node = f"scope:{scope.name}"
        g.add_node(node, kind="scope", label=f"scope {scope.name}")
        g.add_edge(
            previous or (f"preset:{comp.preset.name}" if comp.preset else host),
            node,
            label="child" if previous else "joins",
            cut=False,
        )
        previous = node
    return g


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _id(node: str) -> str:
    return "n_" + "".join(c if c.isalnum() else "_" for c in node)


def to_mermaid(g: nx.MultiDiGraph) -> str:
    lines = ["flowchart LR"]
    shapes = {
        "host": ("[[", "]]"),
        "preset": ("[", "]"),
        "package": ("(", ")"),
        "service": ("{{", "}}"),
        "tool": ("([", "])"),
        "scope": ("[/", "/]"),
    }
    for node, data in sorted(g.nodes(data=True)):
        left, right = shapes[data["kind"]]
        lines.append(f"  {_id(node)}{left}{_quote(data['label'])}{right}")
    cut_indexes = []
    for index, (a, b, data) in enumerate(sorted(g.edges(data=True), key=lambda e: (e[0], e[1], e[2]["label"]))):
        arrow = "-.->" if data["cut"] else "-->"
        label = ("✂ " if data["cut"] else "") + data["label"]
        lines.append(f"  {_id(a)} {arrow}|{_quote(label)}| {_id(b)}")
        if data["cut"]:
            cut_indexes.append(str(index))
    if cut_indexes:
        lines.append(f"  linkStyle {','.join(cut_indexes)} stroke:#c00,color:#c00")
    return "\n".join(lines) + "\n"


def to_dot(g: nx.MultiDiGraph) -> str:
    shapes = {
        "host": "box3d",
        "preset": "box",
        "package": "component",
        "service": "hexagon",
        "tool": "ellipse",
        "scope": "folder",
    }
    lines = ["digraph composition {", "  rankdir=LR;"]
    for node, data in sorted(g.nodes(data=True)):
        lines.append(f"  {_quote(node)} [label={_quote(data['label'])}, shape={shapes[data['kind']]}];")
    for a, b, data in sorted(g.edges(data=True), key=lambda e: (e[0], e[1], e[2]["label"])):
        style = ', style=dashed, color="#cc0000", fontcolor="#cc0000"' if data["cut"] else ""
        label = ("cut: " if data["cut"] else "") + data["label"]
        lines.append(f"  {_quote(a)} -> {_quote(b)} [label={_quote(label)}{style}];")
    lines.append("}")
    return "\n".join(lines) + "\n"
