"""Per-call decisions without scanning every rule.

A policy is indexed per tool name: rules whose condition is only request facts are grouped by
that condition (evaluated once per request, then remembered); rules that test one argument
with a glob are indexed by the glob's literal prefix, suffix or whole text, so a call looks
up the rules it matches instead of trying them all. Anything else is evaluated as written.
Decisions are exactly those of `policy.decide` (a property test holds the two together).
"""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from . import ast
from .catalog import ToolDef
from .conditions import SHELL_FIELDS, Env, evaluate
from .globs import glob_match
from .policy import RANK, Decision, _targets, finish, guard_decision, position
from .resolve import EffectivePolicy
from .shell import command_segments

WILD = ("*", "?")
_MISSING = object()
COMBINED_CACHE = 4096  # finished decisions kept per request, by the glob groups that made them


@dataclass(frozen=True)
class _Globbed:
    rule: ast.Rule
    facts: ast.Expr | None
    pattern: str


@dataclass
class _FieldIndex:
    exact: dict = field(default_factory=dict)  # text -> [entry]
    prefix: dict = field(default_factory=dict)  # literal prefix -> [entry]  ("abc*")
    suffix: dict = field(default_factory=dict)  # literal suffix -> [entry]  ("*abc")
    other: list = field(default_factory=list)  # any other glob: tried as written
    prefix_lengths: list = field(default_factory=list)
    suffix_lengths: list = field(default_factory=list)

    def add(self, entry: _Globbed, shell: bool) -> None:
        pattern = entry.pattern
        body = pattern[:-1]
        if not any(w in pattern for w in WILD):
            self.exact.setdefault(pattern, []).append(entry)
        elif pattern.endswith("*") and not any(w in body for w in WILD):
            self.prefix.setdefault(body, []).append(entry)
            if shell and body.endswith(" "):  # `git *` also covers the bare `git`
                self.exact.setdefault(body[:-1], []).append(entry)
        elif pattern.startswith("*") and not any(w in pattern[1:] for w in WILD):
            self.suffix.setdefault(pattern[1:], []).append(entry)
        else:
            self.other.append(entry)

    def seal(self) -> None:
        for table in (self.exact, self.prefix, self.suffix):
            for key in table:
                table[key] = tuple(table[key])  # a group: one object per key, remembered per request
        self.prefix_lengths = sorted({len(p) for p in self.prefix})
        self.suffix_lengths = sorted({len(s) for s in self.suffix})

    def groups(self, text: str) -> list[tuple]:
        """The groups of entries whose literal part matches `text` (globs in `other` excluded)."""
        found = []
        group = self.exact.get(text)
        if group:
            found.append(group)
        for length in self.prefix_lengths[:bisect_right(self.prefix_lengths, len(text))]:
            group = self.prefix.get(text[:length])
            if group:
                found.append(group)
        for length in self.suffix_lengths[:bisect_right(self.suffix_lengths, len(text))]:
            group = self.suffix.get(text[len(text) - length:])
            if group:
                found.append(group)
        return found

    def matching(self, text: str, shell: bool) -> list[_Globbed]:
        found = [entry for group in self.groups(text) for entry in group]
        found.extend(e for e in self.other if glob_match(e.pattern, text, shell))
        return found

    def everything(self) -> list[_Globbed]:
        out = [e for group in (*self.exact.values(), *self.prefix.values(), *self.suffix.values()) for e in group]
        return list({id(e): e for e in out + self.other}.values())


@dataclass
class _ToolIndex:
    guards: list
    plain: dict  # facts condition (or None) -> [rule]
    globbed: dict  # argument field -> _FieldIndex
    generic: list  # rules evaluated as written
    shell: bool


def _split(condition):
    """(facts-only part, (field, pattern) or None) when the condition has the indexed shape."""
    if condition is None:
        return None, None
    items = condition.items if isinstance(condition, ast.And) else (condition,)
    facts, glob = [], None
    for item in items:
        if isinstance(item, ast.Matches) and item.fact.path[0] == "args" and len(item.fact.path) == 2 and glob is None:
            glob = (item.fact.path[1], item.pattern)
        elif _facts_only(item):
            facts.append(item)
        else:
            return False
    if not facts:
        return None, glob
    return (facts[0] if len(facts) == 1 else ast.And(tuple(facts))), glob


def _facts_only(expr) -> bool:
    return all(isinstance(a, ast.Flag) or a.fact.path[0] != "args" for a in ast.atoms(expr))


@lru_cache(maxsize=4096)
def _segments(command: str):
    return command_segments(command)


class CompiledPolicy:
    def __init__(self, policy: EffectivePolicy):
        self.policy = policy
        self._tools: dict[str, _ToolIndex] = {}
        self._interned: dict = {}  # equal fact conditions share one object, so a request evaluates each once

    def _intern(self, facts):
        return None if facts is None else self._interned.setdefault(facts, facts)

    def index(self, name: str, tool: ToolDef | None) -> _ToolIndex:
        found = self._tools.get(name)
        if found is None:
            found = self._tools[name] = self._build(name, tool)
        return found

    def _build(self, name: str, tool: ToolDef | None) -> _ToolIndex:
        shell = tool is not None and "any-process" in tool.risk
        index = _ToolIndex([g for g in self.policy.guards if _targets(g, name, tool)], {}, {}, [], shell)
        for rule in self.policy.rules:
            if not _targets(rule, name, tool):
                continue
            shape = _split(rule.condition)
            if shape is False:
                index.generic.append(rule)
                continue
            facts, glob = shape
            facts = self._intern(facts)
            if glob is None:
                index.plain.setdefault(facts, []).append(rule)
            else:
                field_name, pattern = glob
                index.globbed.setdefault(field_name, _FieldIndex()).add(
                    _Globbed(rule, facts, pattern), shell and field_name in SHELL_FIELDS)
        for field_index in index.globbed.values():
            field_index.seal()
        return index


class RequestDecider:
    """Decides calls for one request: the facts are fixed, so fact-only conditions are evaluated once."""

    def __init__(self, compiled: CompiledPolicy | None, approval: str, approval_source, env: Env):
        self.compiled = compiled
        self.approval = approval
        self.approval_source = approval_source
        self.env = env
        self._facts: dict[tuple, bool | None] = {}
        self._plain: dict[str, tuple] = {}
        self._decisions: dict[str, Decision] = {}
        self._groups: dict[int, tuple] = {}
        self._combined: dict[tuple, Decision] = {}

    def _fact(self, name: str, expr, lenient: bool) -> bool | None:
        """A fact-only condition for one tool (the `tool` fact is its name): evaluated once per request."""
        key = (name, id(expr), lenient)
        found = self._facts.get(key, _MISSING)
        if found is _MISSING:
            found = self._facts[key] = evaluate(expr, self._env_for(name), lenient)
        return found

    def _env_for(self, name: str, args=None, workspace=None, shell=False) -> Env:
        return Env({**self.env.facts, "tool": name}, self.env.services, self.env.flags, args, workspace, shell)

    def decide(self, name: str, tool: ToolDef | None, args, workspace: str | None = None,
               include_guards: bool = True) -> Decision:
        if self.compiled is None:
            return Decision("allow", "no policy applies", ())
        policy = self.compiled.policy
        index = self.compiled.index(name, tool)
        env = None
        unsure = False
        if include_guards and index.guards:
            env = self._env_for(name, args, workspace, index.shell)
            fired, unsure = self._guards(policy, index, env)
            if fired is not None:
                return fired
        best, deciding, maybe = self._plain_summary(name, index)
        parts = [deciding] if best is not None else []
        maybe = list(maybe)
        loose: list = []  # matched rules found one by one (shell fields, odd values, other globs, generic)
        touched = False
        hits = [name]  # the groups that decided, as a cache key for the finished decision
        for field_name, field_index in index.globbed.items():
            if not isinstance(args, dict) or field_name not in args:
                continue  # an absent argument matches no glob
            value = args[field_name]
            if isinstance(value, str) and not (index.shell and field_name in SHELL_FIELDS):
                for group in field_index.groups(value):
                    top, rules, unsure_rules = self._group_summary(name, group)
                    if unsure_rules:
                        maybe.extend(unsure_rules)
                    if top is None:
                        continue
                    touched = True
                    hits.append(id(group))
                    if best is None or RANK[top] > RANK[best]:
                        best, parts = top, [rules]
                    elif top == best:
                        parts.append(rules)
                for entry in field_index.other:
                    if glob_match(entry.pattern, value):
                        self._admit(name, entry, loose, maybe)
            else:
                self._glob_matches(name, field_index, value, index.shell and field_name in SHELL_FIELDS, loose, maybe)
        if index.generic:
            env = env or self._env_for(name, args, workspace, index.shell)
            for rule in index.generic:
                value = evaluate(rule.condition, env, rule.effect != "allow")
                if value is True:
                    loose.append(rule)
                elif value is None:
                    maybe.append(rule)
        if loose:
            touched = True
            top = max((r.effect for r in loose), key=RANK.__getitem__)
            rules = sorted((r for r in loose if r.effect == top), key=position)
            if best is None or RANK[top] > RANK[best]:
                best, parts = top, [rules]
            elif top == best:
                parts.append(rules)
        if not touched and not maybe and not unsure:
            return self._plain_decision(name, best, deciding)  # nothing argument-specific hit
        if loose or maybe or unsure:
            return finish(policy, self.approval, self.approval_source, best, tuple(parts), maybe, unsure)
        key = tuple(hits)  # the same groups hit → the same decision
        found = self._combined.get(key)
        if found is None:
            if len(self._combined) >= COMBINED_CACHE:
                self._combined.clear()
            found = self._combined[key] = finish(policy, self.approval, self.approval_source, best, tuple(parts))
        return found

    def guard(self, name: str, tool: ToolDef | None, args, workspace: str | None = None) -> Decision | None:
        """The guards alone, as their own pipeline stage runs them: a deny, or None when all abstain.

        A guard whose condition cannot be decided denies here: at call time nothing may slip through.
        """
        if self.compiled is None:
            return None
        index = self.compiled.index(name, tool)
        if not index.guards:
            return None
        fired, _ = self._guards(self.compiled.policy, index,
                                           self._env_for(name, args, workspace, index.shell), unsure_fires=True)
        return fired

    @staticmethod
    def _guards(policy, index: _ToolIndex, env: Env, unsure_fires: bool = False):
        """(the deny of the first guard that fires, whether some guard could not be decided)."""
        unsure = False
        for guard in index.guards:
            value = True if guard.condition is None else evaluate(guard.condition, env, True)
            if value is True or (value is None and unsure_fires):
                return guard_decision(policy, guard), unsure
            unsure |= value is None
        return None, unsure

    def _plain_decision(self, name: str, best, deciding) -> Decision:
        found = self._decisions.get(name)
        if found is None:
            found = self._decisions[name] = finish(self.compiled.policy, self.approval, self.approval_source, best,
                                                   (deciding,) if best is not None else ())
        return found

    def _group_summary(self, name: str, group: tuple):
        """(strictest effect, its rules in source order, undecidable rules) of one glob group, once per request."""
        found = self._groups.get(id(group))
        if found is None:
            matched, maybe = [], []
            for entry in group:
                self._admit(name, entry, matched, maybe)
            best = max((r.effect for r in matched), key=RANK.__getitem__) if matched else None
            rules = tuple(sorted((r for r in matched if r.effect == best), key=position))
            found = self._groups[id(group)] = (best, rules, tuple(maybe))
        return found

    def _admit(self, name: str, entry: _Globbed, matched: list, maybe: list) -> None:
        """The entry's glob matched: its rule applies when its fact condition holds too."""
        if entry.facts is not None:
            holds = self._fact(name, entry.facts, entry.rule.effect != "allow")
            if holds is None:
                maybe.append(entry.rule)
                return
            if holds is False:
                return
        matched.append(entry.rule)

    def _plain_summary(self, name: str, index: _ToolIndex):
        """(strictest effect or None, its rules, undecidable rules) of the fact-only rules: once per request."""
        found = self._plain.get(name)
        if found is None:
            matched, maybe = [], []
            for facts, rules in index.plain.items():
                for rule in rules:
                    value = True if facts is None else self._fact(name, facts, rule.effect != "allow")
                    if value is True:
                        matched.append(rule)
                    elif value is None:
                        maybe.append(rule)
            best = max((r.effect for r in matched), key=RANK.__getitem__) if matched else None
            deciding = tuple(sorted((r for r in matched if r.effect == best), key=position))
            found = self._plain[name] = (best, deciding, tuple(maybe))
        return found

    def _glob_matches(self, name: str, index: _FieldIndex, value, shell: bool, matched, maybe) -> None:
        """Shell commands and non-text values: entries are admitted one by one."""
        if not isinstance(value, str):
            candidates = [(e, e.rule.effect != "allow") for e in index.everything()]  # odd value: denies only
        else:
            candidates = self._shell_candidates(index, value)
        for entry, ok in candidates:
            if ok:
                self._admit(name, entry, matched, maybe)

    @staticmethod
    def _shell_candidates(index: _FieldIndex, command: str):
        segments = _segments(command)
        if segments is None or any(s.opaque for s in segments):
            # cannot be analysed (fully): may match any deny or ask, never satisfies an allow
            return [(e, True) for e in index.everything() if e.rule.effect != "allow"]
        per_segment = [{id(e): e for e in index.matching(s.text, True)} for s in segments]
        union = {k: v for hits in per_segment for k, v in hits.items()}
        # deny/ask: any segment matches; allow: every segment matches
        return [(entry, entry.rule.effect != "allow" or all(key in hits for hits in per_segment))
                for key, entry in union.items()]
