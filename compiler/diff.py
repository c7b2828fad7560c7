"""Two programs (or two contexts) → what changed per cell, and whether anything widened.

A cell is (preset, host, platform, scope, mode). Per cell the views are compared (tools
added or removed, execution, readiness, the policy label on the wire), and then decisions:
every tool reachable on both sides is decided, under every policy both programs define,
for each argument class `verify` uses, so a removed deny rule shows as a widening with a
witness call even where no label changes. Changes are grouped by what changed and which
declarations are responsible on each side, with the cells they affect, so one edit reads
as one change however many cells it touches.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

from .compose import under_policy
from .diagnostics import DshError
from .facts import PLATFORMS
from .gates import GATE_NAMES
from .policy import PERMISSIVENESS, widens
from .request import Request
from .verify import ClassDecider

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
    policy: str | None = None  # decision changes: the policy both sides were decided under
    witness: dict | None = None  # decision changes: a call decided differently

    def key(self):
        # grouped by the declarations responsible, not by wording that names the cell
        where = lambda side: side and side["source"]  # noqa: E731
        return (
            self.kind,
            self.tool or "",
            self.detail,
            where(self.old),
            where(self.new),
            self.policy,
            repr(sorted(self.witness.items())) if self.witness is not None else None,
        )


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
    return {
        "preset": request.preset,
        "host": request.host,
        "platform": request.platform,
        "scope": request.scope,
        "mode": request.mode or "declared",
    }


def diff_programs(old, new, requests=None, new_requests=None) -> dict:
    requests = requests if requests is not None else cells(old, new)
    new_requests = new_requests if new_requests is not None else requests
    grouped: dict = {}
    fingerprints_changed = 0
    decider = ClassDecider()
    for request, new_request in zip(requests, new_requests):
        old_view, old_error = _view(old, request)
        new_view, new_error = _view(new, new_request)
        found: list[Change] = []
        if old_view is None and new_view is None:
            continue
        if old_view is None or new_view is None:
            broken = new_view is None
            error = new_error if broken else old_error
            found.append(
                Change(
                    "broken" if broken else "composable", None, not broken, f"{error.code}: {error.message}", None, None
                )
            )
        else:
            if old_view.fingerprint != new_view.fingerprint:
                fingerprints_changed += 1
            labels = _tool_changes(old, new, request, new_request, old_view, new_view)
            found += labels
            found += _decision_changes(decider, old, new, request, new_request, old_view, new_view, labels)
        for change in found:
            existing = grouped.setdefault(change.key(), change)
            existing.cells.append(_cell(new_request))
    changes = sorted(grouped.values(), key=lambda c: (not c.widening, c.kind, c.tool or "", c.detail))
    return {
        "cells_compared": len(requests),
        "fingerprints_changed": fingerprints_changed,
        "widening": any(c.widening for c in changes),
        "decisions": decider.report.decisions,
        "exact": decider.report.exact,
        "notes": decider.report.notes,
        "changes": [
            {
                "kind": c.kind,
                "tool": c.tool,
                "widening": c.widening,
                "detail": c.detail,
                "old": c.old,
                "new": c.new,
                "policy": c.policy,
                "witness": c.witness,
                "cells": c.cells,
            }
            for c in changes
        ],
    }


def _tool_changes(old, new, request, new_request, old_view, new_view) -> list[Change]:
    before, after = _reachable(old_view), _reachable(new_view)
    out = []
    for name in sorted(set(before) | set(after)):
        if name not in before:
            out.append(
                Change(
                    "added",
                    name,
                    True,
                    "now visible",
                    _side(old, request, name, None),
                    _side(new, new_request, name, "registered"),
                )
            )
            continue
        if name not in after:
            out.append(
                Change(
                    "removed",
                    name,
                    False,
                    "no longer visible",
                    _side(old, request, name, "registered"),
                    _side(new, new_request, name, None),
                )
            )
            continue
        a, b = before[name], after[name]
        if a.execution != b.execution:
            out.append(
                Change(
                    "execution",
                    name,
                    False,
                    f"{a.execution} → {b.execution}",
                    _side(old, request, name, "registered"),
                    _side(new, new_request, name, "registered"),
                )
            )
        if a.policy != b.policy:
            out.append(
                Change(
                    "policy",
                    name,
                    widens(a.policy, b.policy),
                    f"{a.policy} → {b.policy}",
                    _side(old, request, name, "allowed"),
                    _side(new, new_request, name, "allowed"),
                )
            )
        if a.ready != b.ready:
            out.append(
                Change(
                    "ready",
                    name,
                    False,
                    f"{a.ready} → {b.ready}",
                    _side(old, request, name, "ready"),
                    _side(new, new_request, name, "ready"),
                )
            )
    return out


def _compositions(old, new, request: Request, new_request: Request) -> list[tuple]:
    """The compositions to decide under: each context's own if one names a policy, else the cell's
    under every policy both programs define."""
    old_comp, new_comp = old.composition(request), new.composition(new_request)
    if request.policy is not None or new_request.policy is not None:
        return [(old_comp, new_comp)]
    names = sorted(set(old.resolved.policies) & set(new.resolved.policies))
    return [
        (under_policy(old_comp, old.resolved.policies[n]), under_policy(new_comp, new.resolved.policies[n]))
        for n in names
    ]


def _decision_changes(
    decider: ClassDecider, old, new, request, new_request, old_view, new_view, labels: list[Change]
) -> list[Change]:
    """Per tool reachable on both sides and per policy: the first call that widened, and the first that narrowed."""
    before, after = _reachable(old_view), _reachable(new_view)
    names = sorted(set(before) & set(after))
    # a label that changed between two definite effects already says how every call changed
    definite = {c.tool for c in labels if c.kind == "policy" and "conditional" not in c.detail}
    out = []
    for old_comp, new_comp in _compositions(old, new, request, new_request):
        if old_comp.policy is None or new_comp.policy is None:
            continue
        # the same rules, approval and facts decide the same tool the same way: nothing to try
        same = (old_comp.policy, old_comp.approval, old_comp.env(), request.plan) == (
            new_comp.policy,
            new_comp.approval,
            new_comp.env(),
            new_request.plan,
        )
        for name in names:
            old_tool = old.catalog.definitions.get(before[name].definition)
            new_tool = new.catalog.definitions.get(after[name].definition)
            if (same and old_tool == new_tool) or (old_comp.policy.name == old_view.policy and name in definite):
                continue
            out += _first_differences(
                decider, old_comp, new_comp, name, old_tool, new_tool, request.plan, new_request.plan
            )
    return out


def _first_differences(decider, old_comp, new_comp, name, old_tool, new_tool, old_plan, new_plan) -> list[Change]:
    classes = decider.classes_for(name, new_tool, [old_comp.policy, new_comp.policy])
    mine = decider.decisions(old_comp.policy, old_comp, name, old_tool, old_plan, classes)
    theirs = decider.decisions(new_comp.policy, new_comp, name, new_tool, new_plan, classes)
    out = []
    for wider in (True, False):
        differing = [
            (abs(PERMISSIVENESS[b] - PERMISSIVENESS[a]), len(args), -i, args)
            for i, (args, a, b) in enumerate(zip(classes, mine, theirs))
            if a != b and widens(a, b) is wider
        ]
        if not differing:
            continue
        # the widest step, then the fullest call (a witness a reader recognises), then the first
        args = max(differing, key=lambda d: d[:3])[3]
        sides = [
            decider.decision(comp.policy, comp, name, tool, plan, args)
            for comp, tool, plan in ((old_comp, old_tool, old_plan), (new_comp, new_tool, new_plan))
        ]
        policy = (
            new_comp.policy.name
            if old_comp.policy.name == new_comp.policy.name
            else f"{old_comp.policy.name} → {new_comp.policy.name}"
        )
        old_side, new_side = (_decision_side(c.policy.name, d) for c, d in zip((old_comp, new_comp), sides))
        out.append(
            Change(
                "decision",
                name,
                wider,
                f"{sides[0].effect} → {sides[1].effect}",
                old_side,
                new_side,
                policy=policy,
                witness=dict(args),
            )
        )
    return out


def _decision_side(policy: str, decision) -> dict:
    rule, span = decision.deciding[0] if decision.deciding else (policy, None)
    return {"source": str(span) if span else None, "reason": f"{rule}: {decision.reason}"}


def render_text(result: dict) -> str:
    lines = []
    for change in result["changes"]:
        mark = "WIDENS" if change["widening"] else "      "
        under = f" under policy `{change['policy']}`" if change["policy"] else ""
        lines.append(
            f"{mark} {change['kind']:<11} {change['tool'] or '-':<22} {change['detail']}{under}  "
            f"({len(change['cells'])} cell{'s' if len(change['cells']) != 1 else ''})"
        )
        if change["witness"] is not None:
            lines.append(f"       witness: {json.dumps(change['witness'], sort_keys=True, default=str)}")
        for side in ("old", "new"):
            info = change[side]
            if info:
                lines.append(f"       {side}: {info['reason']}" + (f" at {info['source']}" if info["source"] else ""))
    lines.append(
        f"{len(result['changes'])} change(s) over {result['cells_compared']} cells; "
        f"fingerprint changed in {result['fingerprints_changed']}"
    )
    return "\n".join(lines) + "\n"
