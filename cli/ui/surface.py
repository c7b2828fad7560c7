"""Program + contexts → the JSON the page draws: the tools × contexts matrix, one cell's explanation, a diff.

Every answer comes from the library verbs `dshc compile`, `explain`, `decide` and `diff` use, so the
page and the CLI cannot disagree.
"""

from __future__ import annotations

import itertools
import json


from ...compiler.diagnostics import DshError, invalid_request
from ...compiler.facts import PLATFORMS
from ...compiler.program import Program
from ...compiler.render import human
from ...compiler.request import InvalidRequest, Request
from ...compiler.verify import WORKSPACE, ClassDecider
from ..explanation import explain_json

AXES = ("preset", "host", "platform", "scope", "mode", "policy", "plan")
MAX_COLUMNS = 48  # a wider matrix is unreadable at 1280 px; the page says to fix an axis instead
EXCERPT_CONTEXT = 2  # source lines shown around a deciding declaration

# the first failing gate → a short label readable without colour; allowed/ready failures stay on the wire
GATE_LABELS = {
    None: "on",
    "registered": "✗ reg",
    "visible": "✗ vis",
    "projected": "✗ proj",
    "allowed": "on · deny",
    "ready": "on · n/a",
}
ON_THE_WIRE = (None, "allowed", "ready")
GATE_SHORT = {"registered": "reg", "visible": "vis", "projected": "proj", "ready": "n/a"}


def axis_values(program: Program) -> dict[str, list]:
    """Each axis's values in a fixed order; None is "what the declarations choose"."""
    resolved = program.resolved
    return {
        "preset": [None, *sorted(resolved.presets)],
        "host": sorted(resolved.hosts),
        "platform": list(PLATFORMS),
        "scope": sorted(resolved.scopes),
        "mode": [None, "native", "code", "both"],
        "policy": [None, *sorted(resolved.policies)],
        "plan": [False, True],
    }


def to_request(context: dict) -> Request:
    unknown_keys = sorted(set(context) - set(AXES))
    if unknown_keys:
        raise DshError([invalid_request(f"unknown context key `{unknown_keys[0]}`", f"keys: {', '.join(AXES)}")])
    try:
        return Request(**{k: v for k, v in context.items() if v is not None})
    except InvalidRequest as exc:
        error = exc.errors()[0]
        raise DshError(
            [
                invalid_request(
                    f"invalid context: {'.'.join(map(str, error['loc']))}: {error['msg']}", f"keys: {', '.join(AXES)}"
                )
            ]
        )


def context_of(request: Request) -> dict:
    return {
        "preset": request.preset,
        "host": request.host,
        "platform": request.platform,
        "scope": request.scope,
        "mode": request.mode,
        "policy": request.policy,
        "plan": request.plan,
    }


def columns(base: dict, vary: list[str], values: dict[str, list]) -> list[dict]:
    """The contexts of the matrix: `base` with every combination of the varied axes' values."""
    vary = [axis for axis in AXES if axis in vary]  # a fixed axis order, whatever order the page sent
    combos = list(itertools.product(*(values[axis] for axis in vary)))
    if len(combos) > MAX_COLUMNS:
        raise DshError(
            [
                invalid_request(
                    f"{len(combos)} columns is more than {MAX_COLUMNS}", "vary fewer axes, or fix one to a single value"
                )
            ]
        )
    return [{**base, **dict(zip(vary, combo))} for combo in combos]


def _label(context: dict, vary: list[str]) -> str:
    def show(axis):
        value = context[axis]
        if axis == "plan":
            return "plan" if value else "no plan"
        if value is None:
            return "host's default preset" if axis == "preset" else f"{axis}: declared"
        return value

    return " · ".join(show(axis) for axis in AXES if axis in vary) or "this context"


def _error_text(program: Program, exc: DshError) -> str:
    return human(exc.diagnostics, sources={**program.sources, **exc.sources})


def matrix(program: Program, base: dict, vary: list[str], colour: str = "gate", args: dict | None = None) -> dict:
    """Tools × contexts. Per cell the first failing gate (or, colouring by decision, the effect on a call
    with `args`); per column the counts and the view's fingerprint, or the error composing it."""
    values = axis_values(program)
    contexts = columns(base, vary, values)
    out_columns, tables = [], []
    for context in contexts:
        column: dict = {
            "context": context,
            "label": _label(context, vary),
            "error": None,
            "fingerprint": None,
            "wire": [],
            "sdk": None,
            "counts": {},
        }
        table = None
        try:
            request = to_request(context)
            view = program.view(request)
            table = program.explain_all(request)
            column.update(
                fingerprint=view.fingerprint,
                wire=list(view.names),
                sdk=[e.name for e in view.sdk] if view.sdk is not None else None,
            )
        except DshError as exc:
            column["error"] = _error_text(program, exc)
        out_columns.append(column)
        tables.append((table, column))
    names = sorted({name for table, _ in tables if table for name in table})
    cells: dict[str, list] = {name: [] for name in names}
    for table, column in tables:
        counts = {"on the wire": 0, "available": 0}
        for name in names:
            cell = _cell(program, column, table, name, colour, args)
            cells[name].append(cell)
            if cell is None:
                continue
            counts["on the wire"] += cell["wire"]
            counts["available"] += cell["gate"] is None
            if colour == "decision":
                counts[cell["decision"]] = counts.get(cell["decision"], 0) + 1
        column["counts"] = counts if table else {}
    return {
        "axes": list(AXES),
        "values": values,
        "columns": out_columns,
        "tools": names,
        "cells": cells,
        "colour": colour,
        "args": args,
    }


def _cell(program: Program, column: dict, table, name: str, colour: str, args: dict | None) -> dict | None:
    if table is None:
        return None
    results = table.get(name)
    if results is None:  # registered by another column's declarations only
        return {"gate": "registered", "wire": False, "sdk": False, "label": GATE_LABELS["registered"]}
    failed = next((r.gate for r in results if r.status == "fail"), None)
    sdk = column["sdk"] is not None and name in column["sdk"]
    label = "sdk" if failed == "projected" and sdk else GATE_LABELS[failed]
    policy = next((r.value for r in results if r.gate == "allowed" and r.status != "not-reached"), None)
    if failed is None and policy == "conditional":  # on the wire; the policy decides call by call
        label = "on · conditional"
    cell = {"gate": failed, "wire": failed in ON_THE_WIRE, "sdk": sdk, "label": label, "policy": policy}
    if colour == "decision":
        decision = program.decide(to_request(column["context"]), name, args or {}, workspace=WORKSPACE)
        stopped = decision.gate if decision.gate != "allowed" else None
        cell.update(
            decision=decision.effect,
            label=decision.effect + (f" @{GATE_SHORT.get(stopped, stopped)}" if stopped else ""),
        )
    return cell


def argument_classes(program: Program) -> list[dict]:
    """The argument classes the policies' own patterns induce (as `verify` uses), with the tools they concern."""
    decider = ClassDecider()
    policies = list(program.resolved.policies.values())
    found: dict[str, set] = {}
    for tool in program.catalog.definitions.values():
        for witness in decider.classes_for(tool.name, tool, policies):
            found.setdefault(json.dumps(witness, sort_keys=True), set()).add(tool.name)
    return [{"args": json.loads(key), "tools": sorted(tools)} for key, tools in sorted(found.items())]


def excerpt(program: Program, source) -> dict | None:
    """The lines of a span with a little context, the span's own lines marked."""
    if source is None:
        return None
    text = program.sources.get(source.path)
    if text is None:
        return {"path": source.path, "line": source.line, "lines": []}
    lines = text.splitlines()
    first, last = max(1, source.line - EXCERPT_CONTEXT), min(len(lines), source.end_line + EXCERPT_CONTEXT)
    return {
        "path": source.path,
        "line": source.line,
        "col": source.col,
        "lines": [
            {"n": n, "text": lines[n - 1], "hl": source.line <= n <= source.end_line} for n in range(first, last + 1)
        ],
    }


def _enforcement(program: Program, request: Request, tool: str) -> list[dict] | None:
    """For a tool that starts processes under a policy: which layer holds each of its denies (`dshc verify
    --enforcement`), else None."""
    from ..host import describe_sandbox, host_mechanism

    described = describe_sandbox(program, request, tool) if request.policy else None
    policy = program.composition(request).policy
    if described is None or described["applies_to"] != "processes" or policy is None:
        return None
    from ...compiler.enforcement import enforcement_map

    return [row.to_json() for row in enforcement_map(policy, host_mechanism())]


def explain(program: Program, context: dict, tool: str, args: dict | None = None) -> dict:
    """One cell: the five gates with their sources, the deciding declaration's lines, the fix."""
    request = to_request(context)
    results = program.explain(request, tool)
    data = explain_json(tool, results)
    for gate, result in zip(data["gates"], results):
        gate["excerpt"] = excerpt(program, result.source) if result.status != "not-reached" else None
    deciding = next((r for r in results if r.status == "fail"), None) or next(
        (r for r in results if r.gate == "allowed" and r.source), None
    )
    data["deciding"] = (
        {
            "gate": deciding.gate,
            "source": str(deciding.source) if deciding.source else None,
            "excerpt": excerpt(program, deciding.source),
            "fix": deciding.counterfactual,
        }
        if deciding is not None
        else None
    )
    data["context"] = context_of(request)
    data["enforcement"] = _enforcement(program, request, tool)
    if args is not None:
        decision = program.decide(request, tool, args, workspace=WORKSPACE)
        data["decision"] = {
            "effect": decision.effect,
            "gate": decision.gate,
            "reason": decision.reason,
            "args": args,
            "rules": [
                {"rule": rule, "source": str(span) if span else None, "excerpt": excerpt(program, span)}
                for rule, span in decision.deciding
            ],
        }
    return data
