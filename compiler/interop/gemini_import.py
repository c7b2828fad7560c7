"""Gemini CLI policy TOML (`[[rule]]` tables) → a `.dsh` policy, plus what could not be said exactly.

In: the text of one or more policy files of one tier. Out: policy text and notes. Gemini CLI takes the
highest-priority rule that matches (file order among equal priorities), dshc the strictest: so each rule is
written with `and not (…)` of every higher rule that would have answered less strictly first, and a rule such a
rule always answers first is left out. A pattern is read when it is literal text and `.*`; a deny or ask whose
pattern is not is widened to its whole tool (stricter), an allow left out (Gemini CLI's default asks).
"""

from __future__ import annotations

import os
import re
import tomllib

from .._base.frozen import record
from .agents import load_mapping
from .claude_settings import Imported, Note
from .dsl_out import PolicyText, any_of, q

DECISIONS: dict[object, str] = {"allow": "allow", "ask_user": "ask", "deny": "deny"}  # (any value looked up)
STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}
# a regex piece → a glob piece: `.*` and `[^"]*` any run, `.` and `[^"]` one character, `\s` and `\s+` a blank
# (dshc reads a command's words one blank apart), `\X` the character X
_PIECE = re.compile(r'\.\*|\[\^"\]\*|\[\^"\]|\\s\+?|\\(.)|\.|([^\\^$|()\[\]{}+*?.])')


@record
class _Rule:
    where: str
    effect: str
    priority: int
    targets: tuple[str, ...]
    condition: str | None
    exact: bool


def regex_glob(regex: str) -> str | None:
    """A regex of literal characters and `.*` as a dshc glob, or None (a `*` or `?` the text holds cannot be
    written literally in a glob)."""
    out, at = [], 0
    while at < len(regex):
        found = _PIECE.match(regex, at)
        if found is None:
            return None
        piece = found.group(0)
        char = found.group(1) or found.group(2)
        if piece.startswith("\\s"):
            out.append(" ")
        elif char is not None:
            if char in "*?" or found.group(1) is not None and char.isalnum():
                return None  # a literal `*`, or `\d`, `\s`, …: no glob says it
            out.append(char)
        else:
            out.append("*" if piece.endswith("*") else "?")
        at = found.end()
    return "".join(out)


def _value_glob(regex: str) -> str | None:
    """A pattern read from the start of a JSON string value: to its closing quote when it ends with one."""
    closed = regex.endswith('"') and not regex.endswith('\\"')
    glob = regex_glob(regex[:-1] if closed else regex)
    return None if glob is None else glob if closed or glob.endswith("*") else glob + "*"


class _Importer:
    def __init__(self, name: str, sources: list[str]) -> None:
        self.mapping = load_mapping("gemini")
        self.notes: list[Note] = []
        self.rules: list[_Rule] = []
        self.policy = PolicyText(
            name,
            "Gemini CLI policy: " + ", ".join(os.path.basename(s) for s in sources),
            "danger-full-access",
            "ask",
            "ask",
            header=[
                f"Imported from {', '.join(sources)} by `dshc import gemini`.",
                "Each rule is preceded by the policy rule it came from; Gemini CLI's own "
                "default policies are not part of these files.",
            ],
        )

    def read(self, source: str, text: str) -> None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{source} is not TOML: {exc}") from None
        rules = data.get("rule", [])
        if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
            raise ValueError(f"{source}: `rule` must be an array of tables ([[rule]])")
        for index, rule in enumerate(rules):
            self.rule(f"{source} rule #{index + 1}", rule)
        if data.get("safety_checker"):
            self.notes.append(Note(source, "`safety_checker` runs a program dshc does not; not imported"))

    def rule(self, where: str, raw: dict) -> None:
        effect = DECISIONS.get(raw.get("decision"))
        priority = raw.get("priority", 0)
        names = raw.get("toolName")
        names = [names] if isinstance(names, str) else names
        if effect is None or not isinstance(priority, int) or not names or not all(isinstance(n, str) for n in names):
            raise ValueError(f"{where}: a rule needs toolName, decision allow|ask_user|deny and an integer priority")
        for key in sorted(
            set(raw) & {"interactive", "toolAnnotations", "allowRedirection", "allow_redirection", "subagent"}
        ):
            self.notes.append(
                Note(
                    where,
                    f"`{key}` is not read: the rule applies "
                    + ("never (stricter)" if effect == "allow" else "always (stricter)"),
                )
            )
            if effect == "allow":
                return
        targets, tool_test = self.targets(where, raw, names, effect)
        if not targets:
            return
        condition, exact = self.condition(where, raw, targets, effect)
        if condition is False:
            return
        mode_test = self.modes(where, raw.get("modes"), effect)
        if mode_test is False:
            return
        condition = " and ".join(f"({c})" for c in (mode_test, condition) if c) or None
        if tool_test:
            condition = " and ".join(f"({c})" for c in (tool_test, condition) if c)
        self.rules.append(_Rule(where, effect, priority, tuple(targets), condition, exact))

    def modes(self, where: str, modes, effect: str):
        """The condition of a rule's `modes`, None for none, False to leave the rule out. Of Gemini CLI's
        modes dshc sees plan mode only: a deny or ask holds in the others too, an allow only in default."""
        if not modes:
            return None
        modes = set(modes)
        if effect != "allow":
            if modes == {"plan"}:
                return "plan_mode"
            if modes < {"default", "autoEdit", "yolo", "plan"}:
                self.notes.append(Note(where, f"modes {sorted(modes)}: the {effect} holds in every mode (stricter)"))
            return None
        if "default" in modes:
            return None if "plan" in modes else "not plan_mode"
        if "plan" in modes:
            return "plan_mode"
        self.notes.append(Note(where, f"modes {sorted(modes)}: modes dshc does not see; the allow is left out"))
        return False

    def targets(self, where: str, raw: dict, names: list[str], effect: str) -> tuple[list[str], str | None]:
        server = raw.get("mcpName")
        if server is not None:
            tests = [
                f"tool matches {q(f'mcp__{server}__*')}" if n == "*" else f"tool == {q(f'mcp__{server}__{n}')}"
                for n in names
            ]
            return ["*"], tests[0] if len(tests) == 1 else "(" + " or ".join(tests) + ")"
        if "*" in names:
            return ["*"], None
        out = []
        for name in names:
            spec = self.mapping.tools.get(name)
            if spec is None:
                self.notes.append(
                    Note(
                        where,
                        f"`{name}` has no catalog tool: the rule is not imported for it"
                        + (" (its deny or ask is lost)" if effect != "allow" else ""),
                    )
                )
            elif spec.tool not in out:
                out.append(spec.tool)
        return out, None

    def condition(self, where: str, raw: dict, targets: list[str], effect: str):
        """The dshc condition and whether it is exact; False: leave the rule out (an allow not said exactly)."""
        prefix, regex, args = raw.get("commandPrefix"), raw.get("commandRegex"), raw.get("argsPattern")
        if prefix is not None:
            prefixes = [prefix] if isinstance(prefix, str) else prefix
            return any_of("args.command", [f"{p} *" for p in prefixes]), True
        glob, fact = None, None
        if regex is not None:
            glob, fact = _value_glob(regex), "args.command"
        elif args is not None:
            found = re.match(r'^\\?"(\w+)\\?":\\?"', args)
            fields = {
                ours
                for t in targets
                for spec in self.mapping.tools.values()
                if spec.tool == t
                for theirs, ours in spec.args.items()
                if found and theirs == found.group(1)
            }
            if found and len(fields) == 1:
                glob, fact = _value_glob(args[found.end() :]), "args." + fields.pop()
        else:
            return None, True
        if glob is not None:
            return f"{fact} matches {q(glob)}", True
        pattern = regex if regex is not None else args
        if effect == "allow":
            self.notes.append(
                Note(where, f"the pattern `{pattern}` has no glob form: the allow is left out (dshc asks)")
            )
            return False, False
        self.notes.append(
            Note(
                where, f"the pattern `{pattern}` has no glob form: the {effect} holds every call of the tool (stricter)"
            )
        )
        return None, False

    def render(self) -> str:
        # Gemini CLI's order: priority, highest first; the file order among equals (a stable sort)
        ordered = sorted(self.rules, key=lambda r: -r.priority)
        for at, rule in enumerate(ordered):
            before = [h for h in ordered[:at] if STRICTNESS[h.effect] < STRICTNESS[rule.effect]]
            for targets, firsts in _reaching(rule, before):
                unless = _unless(targets, firsts)
                if unless is None:
                    self.notes.append(
                        Note(rule.where, f"a higher rule always answers first for {', '.join(targets)}: left out there")
                    )
                    continue
                condition = " and ".join(f"({c})" for c in [rule.condition, *unless] if c) if unless else rule.condition
                self.policy.rule(f"{rule.where}: priority {rule.priority}", rule.effect, targets, condition)
        return self.policy.render()


def _reaching(rule: _Rule, before: list[_Rule]) -> list[tuple[list[str], list[_Rule]]]:
    """The rule's targets grouped by the earlier, less strict rules that reach each."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for target in rule.targets:
        reach = tuple(i for i, h in enumerate(before) if "*" in h.targets or target in h.targets or target == "*")
        groups.setdefault(reach, []).append(target)
    return [(targets, [before[i] for i in reach]) for reach, targets in groups.items()]


def _unless(targets: list[str], firsts: list[_Rule]) -> list[str] | None:
    """`not (…)` of each earlier rule that answers first, or None when one always does. Only an exact one is
    taken out: one widened (an ask on the whole tool) would take out more than Gemini CLI does."""
    out = []
    for first in firsts:
        if not first.exact:
            continue
        test = first.condition
        if "*" in targets and "*" not in first.targets:  # on every tool: the earlier rule reaches only its own
            tools = " or ".join(f"tool == {q(t)}" for t in first.targets)
            test = " and ".join(f"({c})" for c in (tools, test) if c)
        if test is None:
            return None
        out.append(f"not ({test})")
    return out


def import_gemini(files: dict[str, str], name: str = "gemini") -> Imported:
    """`files`: path → text of policy TOML files of one tier."""
    importer = _Importer(name, list(files))
    for source, text in files.items():
        importer.read(source, text)
    return Imported(importer.render(), tuple(importer.notes))
