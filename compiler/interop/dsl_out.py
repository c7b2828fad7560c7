"""Building blocks for writing `.dsh` policy text: quoted strings, conditions, commented rules.

In: effects, catalog targets, condition pieces. Out: policy source text the ordinary parser reads,
each rule preceded by a comment naming the setting it came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


def q(text: str) -> str:
    """A DSL string literal (the parser reads JSON escapes)."""
    return json.dumps(text, ensure_ascii=False)


def any_of(fact: str, patterns) -> str:
    parts = [f"{fact} matches {q(p)}" for p in dict.fromkeys(patterns)]
    return parts[0] if len(parts) == 1 else "(" + " or ".join(parts) + ")"


def both(*conditions: str | None) -> str | None:
    present = [c for c in conditions if c]
    return " and ".join(present) if present else None


@dataclass
class PolicyText:
    name: str
    title: str
    sandbox: str
    approval: str
    default: str
    header: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)  # tools a scope of the same name keeps off the wire

    def rule(self, origin: str, effect: str, targets, condition: str | None = None) -> None:
        self.lines.append("  # " + origin.replace("\n", "\\n").replace("\r", "\\r"))
        self.lines.append(f"  {effect} {', '.join(targets)}" + (f" when {condition}" if condition else ""))

    def render(self) -> str:
        head = [f"# {line}" for line in self.header]
        body = [
            f"policy {self.name} {q(self.title)} {{",
            f"  sandbox {self.sandbox}",
            f"  approval {self.approval}",
            f"  default {self.default}",
            *self.lines,
            "}",
        ]
        if self.hidden:
            body += [
                "",
                "# The tools denied outright are not offered to the model at all.",
                f"scope {self.name} {q(self.title + ' (tool view)')} {{",
                "  parent root",
                f"  hide {', '.join(dict.fromkeys(self.hidden))}",
                "}",
            ]
        return "\n".join(head + body) + "\n"
