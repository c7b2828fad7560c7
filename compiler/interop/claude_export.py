"""A dshc policy → Claude Code `permissions`, for the rules that translate exactly.

In: an EffectivePolicy. Out: `{"permissions": {"allow", "ask", "deny"}}` and notes naming every
rule, guard or setting left out (with its id and `file:line`), so nothing is lost silently.
Exact forms: a rule on mapped tools without a condition, and a shell rule whose condition is
`args.command matches` glob(s) without `?` (one character in dshc, literal in Claude Code).
"""

from __future__ import annotations

from .. import ast
from ..policy.core import PolicyCore
from .agents import load_mapping


def _reverse() -> dict[str, str]:
    names: dict[str, str] = {"read_image": "Read"}  # Claude Code's Read also reads images
    for agent_name, tool in load_mapping("claude-code").tools.items():
        names.setdefault(tool.tool, agent_name)  # the first listed agent tool is the canonical one
    return names


def _wider(targets: list[str], effect: str) -> str | None:
    """A Claude Code `Read` or `Edit` rule covers its whole family: an allow or ask naming only part
    of the family would widen (a deny only gets stricter, which is allowed)."""
    if effect == "deny":
        return None
    for head, family in load_mapping("claude-code").families.items():
        named = set(targets) & set(family)
        if named and named != set(family) and any(_reverse()[t] == head.capitalize() for t in named):
            return f"Claude Code's `{head.capitalize()}` also covers {', '.join(sorted(set(family) - named))}"
    return None


def _patterns(condition) -> list[str] | None:
    items = condition.items if isinstance(condition, ast.Or) else (condition,)
    out = []
    for item in items:
        if not (isinstance(item, ast.Matches) and item.fact.path == ("args", "command")) or "?" in item.pattern:
            return None
        out.append(item.pattern)
    return out


def export_policy(policy) -> tuple[dict, list[str]]:
    names = _reverse()
    lists: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    notes: list[str] = []

    def where(item) -> str:
        return f"{PolicyCore(policy).rule_id(item)}" + (f" at {item.span}" if item.span else "")

    for rule in policy.rules:
        targets = [t.name.text for t in rule.targets]
        unmapped = [t for t in rule.targets if t.kind != "tool" or t.name.text not in names]
        if unmapped:
            notes.append(
                f"{where(rule)}: target(s) {', '.join(t.name.text for t in unmapped)} have no Claude Code tool"
            )
            continue
        wider = _wider(targets, rule.effect)
        if wider:
            notes.append(f"{where(rule)}: not exact: {wider}")
            continue
        if rule.condition is None:
            lists[rule.effect] += [names[t] for t in targets]
            continue
        patterns = _patterns(rule.condition)
        shells = [names[t] for t in targets if load_mapping("claude-code").tools[names[t]].family == "shell"]
        if patterns is None or len(shells) != len(targets):
            notes.append(f"{where(rule)}: its condition has no exact Claude Code form")
            continue
        lists[rule.effect] += [f"{tool}({p})" for tool in shells for p in patterns]
        if rule.effect != "allow":  # dshc also meets other spellings of a pattern's options; Claude Code does not
            from ..shell_options import pattern_reading

            notes += [
                f"{where(rule)}: other spellings of its options (`{reading.text}`): Claude Code matches `{p}` as text"
                for p in patterns
                if (reading := pattern_reading(p)) is not None
            ]
    for guard in policy.guards:
        notes.append(f"{where(guard)}: guards have no Claude Code form")
    if policy.default is not None:
        notes.append(
            f"{policy.name}/default `{policy.default.text}`: Claude Code's defaultMode is per tool kind; not exported"
        )
    permissions = {k: list(dict.fromkeys(v)) for k, v in lists.items() if v}
    return {"permissions": permissions}, notes
