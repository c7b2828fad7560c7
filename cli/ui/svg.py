"""The composition graph (networkx, from `compiler.graph`) → a layered SVG drawn on the server.

Columns by kind (host, presets and scopes, packages, tools, services), rows ordered by the mean
row of their predecessors to keep edges short; an edge a gate cut is dashed and marked ✂, so the
picture reads without colour.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

import networkx as nx

COLUMN = {"host": 0, "preset": 1, "scope": 1, "package": 2, "tool": 3, "service": 4}
ROW_HEIGHT, NODE_HEIGHT, CHAR_WIDTH, PADDING, GAP, MARGIN = 28, 20, 6.6, 8, 48, 12
SHAPE_RADIUS = {"host": 0, "preset": 2, "scope": 2, "package": 6, "tool": 10, "service": 0}
ORDER_PASSES = 3


def _width(label: str) -> float:
    return len(label) * CHAR_WIDTH + 2 * PADDING


def layout(g: nx.MultiDiGraph) -> dict[str, tuple[float, float, float]]:
    """node → (x, y, width): fixed columns, rows ordered by the barycentre of their neighbours."""
    columns: dict[int, list[str]] = {}
    for node, data in g.nodes(data=True):
        columns.setdefault(COLUMN[data["kind"]], []).append(node)
    row: dict[str, float] = {}
    for index in sorted(columns):
        columns[index].sort(key=lambda n: (g.nodes[n]["kind"] != "preset", n))
        row.update({n: i for i, n in enumerate(columns[index])})
    for _ in range(ORDER_PASSES):
        for index in sorted(columns)[1:]:

            def centre(node):
                near = [row[p] for p in g.predecessors(node) if COLUMN[g.nodes[p]["kind"]] < index]
                return (sum(near) / len(near) if near else row[node], node)

            columns[index].sort(key=centre)
            row.update({n: i for i, n in enumerate(columns[index])})
    positions: dict[str, tuple[float, float, float]] = {}
    x: float = MARGIN
    for index in sorted(columns):
        width = max(_width(g.nodes[n]["label"]) for n in columns[index])
        for i, node in enumerate(columns[index]):
            positions[node] = (x, MARGIN + i * ROW_HEIGHT, _width(g.nodes[node]["label"]))
        x += width + GAP
    return positions


def _edge_path(a, b) -> tuple[str, float, float]:
    (x1, y1, w1), (x2, y2, _) = a, b
    y1, y2 = y1 + NODE_HEIGHT / 2, y2 + NODE_HEIGHT / 2
    if x2 > x1:  # forward: right side to left side
        sx, tx = x1 + w1, x2
        bend = (tx - sx) / 2
        return (
            f"M{sx:.1f},{y1:.1f} C{sx + bend:.1f},{y1:.1f} {tx - bend:.1f},{y2:.1f} {tx:.1f},{y2:.1f}",
            (sx + tx) / 2,
            (y1 + y2) / 2,
        )
    # same column (extends, scope chain): a loop out to the left
    return (
        f"M{x1:.1f},{y1:.1f} C{x1 - 40:.1f},{y1:.1f} {x2 - 40:.1f},{y2:.1f} {x2:.1f},{y2:.1f}",
        min(x1, x2) - 30,
        (y1 + y2) / 2,
    )


def to_svg(g: nx.MultiDiGraph, title: str) -> str:
    positions = layout(g)
    width = max((x + w for x, _, w in positions.values()), default=0) + MARGIN
    height = max((y for _, y, _ in positions.values()), default=0) + NODE_HEIGHT + 2 * MARGIN
    cuts = sum(1 for *_, d in g.edges(data=True) if d["cut"])
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" aria-labelledby="graph-title '
        f'graph-desc" width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}">',
        f'<title id="graph-title">{escape(title)}</title>',
        f'<desc id="graph-desc">{g.number_of_nodes()} nodes, {g.number_of_edges()} edges, {cuts} cut by a gate '
        "(dashed, marked ✂)</desc>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="context-stroke"/></marker></defs>',
    ]
    edges = sorted(g.edges(data=True), key=lambda e: (e[2]["cut"], e[0], e[1], e[2]["label"]))
    for a, b, data in edges:  # cut edges last, so they are drawn over the rest
        path, mx, my = _edge_path(positions[a], positions[b])
        kind = "edge cut" if data["cut"] else "edge"
        label = ("cut: " if data["cut"] else "") + data["label"]
        parts.append(
            f'<g class="{kind}" data-from="{escape(a)}" data-to="{escape(b)}"><title>{escape(a)} → '
            f'{escape(b)}: {escape(label)}</title><path d="{path}" marker-end="url(#arrow)"'
            + (' stroke-dasharray="6 4"' if data["cut"] else "")
            + "/>"
            + (f'<text class="scissors" x="{mx:.1f}" y="{my + 4:.1f}">✂</text>' if data["cut"] else "")
            + "</g>"
        )
    for node, data in sorted(g.nodes(data=True)):
        x, y, w = positions[node]
        parts.append(
            f'<g class="node {data["kind"]}" data-node="{escape(node)}"><title>{escape(data["kind"])}: '
            f'{escape(data["label"])}</title><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" '
            f'height="{NODE_HEIGHT}" rx="{SHAPE_RADIUS[data["kind"]]}"/><text x="{x + PADDING:.1f}" '
            f'y="{y + NODE_HEIGHT - 6:.1f}">{escape(data["label"])}</text></g>'
        )
    parts.append("</svg>")
    return "\n".join(parts)


def cut_list(g: nx.MultiDiGraph) -> list[dict]:
    """The cut edges as text, for the legend beside the picture."""
    return [
        {"from": g.nodes[a]["label"], "to": g.nodes[b]["label"], "why": data["label"]}
        for a, b, data in sorted(g.edges(data=True), key=lambda e: (e[0], e[1], e[2]["label"]))
        if data["cut"]
    ]
