"""The five gates' results for one tool as `explain` shows them: JSON (`explain --json`, the decision API,
the explorer) and text (the terminal, the editor's hover)."""

from __future__ import annotations


def _gate_json(result) -> dict:
    data = {
        "gate": result.gate,
        "status": result.status,
        "reason": result.reason,
        "source": str(result.source) if result.source else None,
        "counterfactual": result.counterfactual,
    }
    if result.detail is not None:  # a conditional tool: the rules its calls turn on
        data["per_call"] = result.detail
    return data


def explain_json(tool: str, results) -> dict:
    failed = next((r.gate for r in results if r.status == "fail"), None)
    policy = next((r.value for r in results if r.gate == "allowed" and r.status != "not-reached"), None)
    return {
        "tool": tool,
        "available": failed is None,
        "failed_gate": failed,
        "policy": policy,
        "gates": [_gate_json(r) for r in results],
    }


def explain_text(tool: str, results) -> str:
    data = explain_json(tool, results)
    head = (
        f"`{tool}` is not available: gate `{data['failed_gate']}` fails"
        if not data["available"]
        else f"`{tool}` is available for some calls"
        if data["policy"] == "conditional"
        else f"`{tool}` is available"
    )
    lines = [head]
    for r in results:
        mark = {"pass": "pass", "fail": "FAIL", "not-reached": "  - "}[r.status]
        lines.append(f"  {r.gate:<10} {mark:<5} {r.reason}")
        if r.source and r.status != "not-reached":
            lines.append(f"  {'':<10} {'':<5} at {r.source}")
        if r.counterfactual and r.status == "fail":
            lines.append(f"  {'':<10} {'':<5} fix: {r.counterfactual}")
    return "\n".join(lines) + "\n"
