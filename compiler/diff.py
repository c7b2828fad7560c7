"""Two programs (or two contexts) → what changed per cell, and whether anything widened.

A cell is (preset, host, platform, scope, mode). Changes are grouped by what changed and
which declarations are responsible on each side, with the cells they affect, so one edit
reads as one change however many cells it touches.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from .diagnostics import DshError
from .facts import PLATFORMS
from .gates import GATE_NAMES
from .policy import widens
from .request import Request

MODES = (None, "native", "code", "both")  # None: the mode the declarations choose


@dataclass
class Change:
    kind: str  # added | removed | execution | policy | ready | composable | broken
    tool: str | None
    widening: bool
    detail: str
    old: dict | None
    new: dict | None
    cells: list = field(default_factory=list)

    def key(self):
        # grouped by the declarations responsible, not by wording that names the cell
        where = lambda side: side and side["source"]  # noqa: E731
        return (self.kind, self.tool or "", self.detail, where(self.old), where(self.new))


def cells(old, new) -> list[Request]:
    found = []
    for host in sorted(set(old.resolved.hosts) & set(new.resolved.hosts)):
        roster = old.resolved.hosts[host].roster and new.resolved.hosts[host].roster
        presets = sorted(set(old.resolved.presets) & set(new.resolved.presets)) if roster else [None]
        scopes = sorted(set(old.resolved.scopes) & set(new.resolved.scopes))
        for preset, platform, scope, mode in itertools.product(presets, PLATFORMS, scopes, MODES):
            found.append(Request(host=host, preset=preset, platform=platform, scope=scope, mode=mode))
    return found


def _view(program, request):
    try:
        return program.view(request), None
    except DshError as exc:
        return None, exc.diagnostics[0]


def _reachable(view) -> dict:
    entries = {e.name: e for e in (view.sdk or ())}
    entries.update({e.name: e for e in view.tools})
    return entries


def _side(program, request, tool, gate) -> dict:
    results = program.explain(request, tool)
    chosen = next((r for r in results if r.gate == gate), None) if gate else None
    if chosen is None:
        chosen = next((r for r in results if r.status == "fail"), results[GATE_NAMES.index("registered")])
    return {"source": str(chosen.source) if chosen.source else None, "reason": chosen.reason}


def _cell(request: Request) -> dict:
    return {"preset": request.preset, "host": request.host, "platform": request.platform, "scope": request.scope,
            "mode": request.mode or "declared"}


def diff_programs(old, new, requests=None, new_requests=None) -> dict:
    requests = requests if requests is not None else cells(old, new)
    new_requests = new_requests if new_requests is not None else requests
    grouped: dict = {}
    fingerprints_changed = 0
    for request, new_request in zip(requests, new_requests):
        old_view, old_error = _view(old, request)
        new_view, new_error = _view(new, new_request)
        found: list[Change] = []
        if old_view is None and new_view is None:
            continue
        if old_view is None or new_view is None:
            broken = new_view is None
            error = new_error if broken else old_error
            found.append(Change("broken" if broken else "composable", None, not broken,
                                f"{error.code}: {error.message}", None, None))
        else:
            if old_view.fingerprint != new_view.fingerprint:
                fingerprints_changed += 1
            found += _tool_changes(old, new, request, new_request, old_view, new_view)
        for change in found:
            existing = grouped.setdefault(change.key(), change)
            existing.cells.append(_cell(new_request))
    changes = sorted(grouped.values(), key=lambda c: (not c.widening, c.kind, c.tool or "", c.detail))
    return {
        "cells_compared": len(requests),
        "fingerprints_changed": fingerprints_changed,
        "widening": any(c.widening for c in changes),
        "changes": [{"kind": c.kind, "tool": c.tool, "widening": c.widening, "detail": c.detail, "old": c.old,
                     "new": c.new, "cells": c.cells} for c in changes],
    }


def _tool_changes(old, new, request, new_request, old_view, new_view) -> list[Change]:
    before, after = _reachable(old_view), _reachable(new_view)
    out = []
    for name in sorted(set(before) | set(after)):
        if name not in before:
            out.append(Change("added", name, True, "now visible", _side(old, request, name, None),
                              _side(new, new_request, name, "registered")))
            continue
        if name not in after:
            out.append(Change("removed", name, False, "no longer visible", _side(old, request, name, "registered"),
                              _side(new, new_request, name, None)))
            continue
        a, b = before[name], after[name]
        if a.execution != b.execution:
            out.append(Change("execution", name, False, f"{a.execution} → {b.execution}",
                              _side(old, request, name, "registered"), _side(new, new_request, name, "registered")))
        if a.policy != b.policy:
            out.append(Change("policy", name, widens(a.policy, b.policy),
                              f"{a.policy} → {b.policy}", _side(old, request, name, "allowed"),
                              _side(new, new_request, name, "allowed")))
        if a.ready != b.ready:
            out.append(Change("ready", name, False, f"{a.ready} → {b.ready}", _side(old, request, name, "ready"),
                              _side(new, new_request, name, "ready")))
    return out


def render_text(result: dict) -> str:
    lines = []
    for change in result["changes"]:
        mark = "WIDENS" if change["widening"] else "      "
        lines.append(f"{mark} {change['kind']:<11} {change['tool'] or '-':<22} {change['detail']}  "
                     f"({len(change['cells'])} cell{'s' if len(change['cells']) != 1 else ''})")
        for side in ("old", "new"):
            info = change[side]
            if info:
                lines.append(f"       {side}: {info['reason']}" + (f" at {info['source']}" if info["source"] else ""))
    lines.append(f"{len(result['changes'])} change(s) over {result['cells_compared']} cells; "
                 f"fingerprint changed in {result['fingerprints_changed']}")
    return "\n".join(lines) + "\n"
