"""Per-call decisions without scanning every rule: a policy and a call in, a Decision out.

A policy is indexed per tool name: rules whose condition is only request facts are grouped by effect and by
that condition, compiled to a closure (`_tiers`: a call evaluates each condition once and stops at the
strictest effect that holds; the summary is remembered per request, or made once when no fact condition can
change it; a tool's fact conditions are also one generated function, `tier_code`); rules that test one
argument with a glob (or with an `or` of globs: one entry each) are indexed by the glob's literal prefix,
suffix or whole text, so a call looks up the rules it matches instead of trying them all, and each group it
hits is summarised the same way. A group reading few fact tests is also tabulated when its index is built
(`fact_tables`): a request reads its fact tests once, as a bitmask, and a call looks the group's summary up
by it instead of evaluating conditions.
Anything else is evaluated as written, by its condition compiled once (`compile_condition`). A call tries
only the guards its arguments may fire, found by their globs the same way (`guard_index`). The Decision whole
rule groups make is made once and shared by requests (`RequestDecider._concluded`). Running guards,
bucketing, strictest-wins and the conclusion are the shared core's (`core.py`), so decisions are exactly
those of `reference.decide` (a property test holds the two together).
"""

from __future__ import annotations


from .. import ast
from ..catalog import ToolDef
from ..conditions import SHELL_FIELDS, Env, compile_condition, compile_facts
from ..file_pattern import FilePattern
from .._base.frozen import record
from ..globs import glob_match
from ..lru import LRU, MISSING
from ..resolve import EffectivePolicy
from ..paths import CanonicalPath, home_glob, path_inside
from .core import DENIED, Buckets, PolicyCore, Tally, is_shell, lenient, position, run_guards, tool_env
from .affixes import AffixIndex, literal_keys, path_segment
from .effects import RANK, RULE_EFFECTS
from .decision import NO_POLICY, Decision, LaterDeny, Verdict
from .fact_tables import FactAtoms
from .guard_index import GuardIndex
from .split import SEARCHES, canonical, decide_parts, decide_reads, search_parts, shell_parts, with_paths
from .tier_code import NOTHING, compile_tiers

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..shell import Analysis

DECIDED_CACHE = 1024  # decisions kept per tool index, by the rule groups that made them (shared by requests)
GROUP_CACHE = 4096  # glob groups' summaries kept per request (more only when indexes were built anew)
SEGMENT_CACHE = 4096  # parsed shell commands kept per policy
NAME_CACHE = 1024  # tool names remembered per policy and per request (a name can be anything a model says)


@record(slots=False)
class _Globbed:
    """A rule that tests one argument with a glob: the rule, its other conditions, the glob."""

    rule: ast.Rule
    # the rule's fact condition compiled (`compile_facts`), or None: no condition besides the glob
    facts: Callable[[Env, str], bool | None] | None
    pattern: str


def _position(placed: tuple) -> int:
    return placed[0]


class _FieldIndex:
    """One argument's glob rules, looked up by the literal text, prefix or suffix of their globs."""

    __slots__ = (
        "exact",
        "prefix",
        "suffix",
        "other",
        "segmented",
        "unsegmented",
        "tiers",
        "tables",
        "prefixed",
        "suffixed",
        "every",
        "optioned",
        "_unseen",
        "_exact_sorted",
        "_tabulate",
    )

    def __init__(self) -> None:
        self.exact: dict = {}  # text -> [entry]
        self.prefix: dict = {}  # literal prefix -> [entry]  ("abc*")
        self.suffix: dict = {}  # literal suffix -> [entry]  ("*abc")
        self.other: list = []  # any other glob: tried as written
        # of those, a path glob holding a literal segment (`*/pkg12/*.py`): tried on a path with that part only
        self.segmented: dict = {}  # segment -> [(position in other, entry)]
        self.unsegmented: list = []  # (position in other, entry) of the rest
        # a shell command's denies and asks written with options, by the program whose grammar reads them
        # (`rm -rf /*` under `rm`): tried one by one on a command read by that grammar (`shell.with_options`)
        self.optioned: dict = {}
        self.tiers: dict = {}  # id(group) -> the group's rules as `_tiers`
        # id(group) -> (bits, {mask & bits: summary}) (`FactAtoms.tabulate`); a group no fact condition
        # changes (`_fixed`) is one summary under every mask
        self.tables: dict = {}
        self.prefixed = self.suffixed = AffixIndex({})  # the prefix and suffix groups a text matches (`seal`)
        self.every: tuple = ()  # every entry once (`seal`)
        self._unseen: tuple = ()  # `unseen()`'s group (`seal`)
        self._exact_sorted: AffixIndex | None = None  # the exact texts, sorted: made by the first shell call needing it
        self._tabulate: Callable[[tuple], tuple | None] | None = None  # `seal`'s: tabulates a group made later

    def add(self, entry: _Globbed, shell: bool) -> None:
        keys = literal_keys(entry.pattern, shell)
        if not keys:
            segment = None if shell else path_segment(entry.pattern)
            placed = (len(self.other), entry)
            if segment:
                self.segmented.setdefault(segment, []).append(placed)
            else:
                self.unsegmented.append(placed)
            self.other.append(entry)
        for kind, key in keys:
            getattr(self, kind).setdefault(key, []).append(entry)
        if shell and lenient(entry.rule):
            from ..shell_options import pattern_reading

            reading = pattern_reading(entry.pattern)
            if reading is not None:
                self.optioned.setdefault(reading.program, []).append(entry)

    def seal(self, tabulate) -> None:
        for table in (self.exact, self.prefix, self.suffix):
            for key in table:
                table[key] = tuple(table[key])  # a group: one object per key, remembered per request
        groups = [group for table in (self.exact, self.prefix, self.suffix) for group in table.values()]
        entries = [entry for group in groups for entry in group] + self.other
        self.every = tuple({id(e): e for e in entries}.values())  # once each: `git *` is in two groups
        self._unseen = tuple(entry for entry in self.every if lenient(entry.rule))
        self._tabulate = tabulate
        for group in groups:
            self._tier(group)
        self.prefixed, self.suffixed = AffixIndex(self.prefix), AffixIndex(self.suffix, suffixes=True)

    def _tier(self, group: tuple) -> None:
        """The group's tiers, and its table where it has one (set first: a reader finding the tiers finds it)."""
        tiers = _tiers((entry.facts, entry.rule) for entry in group)
        fixed = _fixed(tiers)
        made = (0, {0: fixed}) if fixed is not None else self._tabulate(tiers)  # type: ignore[misc]  # seal sets it first
        if made is not None:
            self.tables[id(group)] = made
        self.tiers[id(group)] = tiers

    def others(self, forms) -> list:
        """The `other` entries a text (in any of its forms) may match, in rule order: a segmented glob's
        only where the text has its segment among its parts."""
        if not self.segmented:
            return self.other
        found = list(self.unsegmented)
        segmented = self.segmented
        for part in {part for form in forms for part in form.split("/")}:  # a path's few parts, not the table
            if part in segmented:
                found += segmented[part]
        found.sort(key=_position)
        return [entry for _, entry in found]

    def unseen(self) -> tuple:
        """Every deny and ask entry, as one group: what a value no glob can be read against may match (an
        opaque shell command, a line that does not parse, a value that is not text). Tiered when first
        asked for: most fields never meet such a value, and tabulating a large field's costs."""
        group = self._unseen
        if id(group) not in self.tiers:
            self._tier(group)  # threads racing here make equal tiers and tables
        return group

    def groups(self, text: str) -> list[tuple]:
        """The groups of entries whose literal part matches `text` (globs in `other` excluded)."""
        found = []
        group = self.exact.get(text)
        if group:
            found.append(group)
        prefixed, suffixed = self.prefixed, self.suffixed
        if text.startswith(prefixed.literals):  # C-level tests first: most texts match no literal
            found += prefixed.matching(text)  # each shortest first, as the tally reads them
        if text.endswith(suffixed.literals):
            found += suffixed.matching(text)
        return found

    def segment_entries(self, segment) -> list[_Globbed]:
        """The entries `segment_matches` admits for a parsed simple command that is not opaque: denies and
        asks where it possibly matches (its basename form too), allows where it surely does. Found by
        their globs' literal parts, like a text's groups: only `other` globs are tried one by one."""
        from ..shell import by_base, segment_matches

        found: dict = {}
        for form in (segment, by_base(segment)) if segment.base else (segment,):
            for entry in self._possibly(form):
                if lenient(entry.rule):
                    found[id(entry)] = entry
        if segment.allowable:
            for entry in self._surely(segment):
                if not lenient(entry.rule):
                    found[id(entry)] = entry
        for entry in self.other:
            if segment_matches(segment, entry.pattern, lenient(entry.rule)):
                found[id(entry)] = entry
        if segment.options is not None:
            from ..shell_options import options_match

            for entry in self.optioned.get(segment.options.program, ()):
                if options_match(segment.options, entry.pattern):
                    found[id(entry)] = entry
        return list(found.values())

    def _possibly(self, segment) -> list[_Globbed]:
        """Keyed entries that some command the segment could be matches (`glob_prefix_viable`): after
        the literal words `start`, an expansion may be anything. A literal glob matches if it starts
        with `start`; `L*` if `L` and `start` are one a prefix of the other; `*S` always."""
        literal = segment.literal_words
        if literal == len(segment.argv):
            return self._grouped(segment.text)
        start = " ".join(segment.argv[:literal])
        if self._exact_sorted is None:
            self._exact_sorted = AffixIndex(self.exact)
        groups = (
            *self._exact_sorted.extending(start),
            *self.prefixed.matching(start),
            *self.prefixed.extending(start),
            *self.suffix.values(),
        )
        return [entry for group in groups for entry in group]

    def _surely(self, segment) -> list[_Globbed]:
        """Keyed entries that every command the segment could be matches (`glob_accepts_any_continuation`):
        only `L*` where the literal words and a space start with `L`."""
        literal = segment.literal_words
        if literal == len(segment.argv):
            return self._grouped(segment.text)
        start = " ".join(segment.argv[:literal]) + " " if literal else ""
        return [entry for group in self.prefixed.matching(start) for entry in group]

    def _grouped(self, text: str) -> list[_Globbed]:
        return [entry for group in self.groups(text) for entry in group]


class _ToolIndex:
    """Everything that decides one tool: its guards, fact tiers, glob indexes and other rules."""

    # CPython lays slots out sorted by name: `answer`, what most calls read alone, sits beside the object's
    # header, in the cache line that reading the index touches anyway (a cold call's cost is its misses)
    __slots__ = (
        "answer",
        "searches",
        "unnamed",
        "denied",
        "guards",
        "paths",
        "facts_only",
        "guard_index",
        "plain",
        "plain_code",
        "plain_fixed",
        "plain_single",
        "plain_table",
        "decided",
        "globbed",
        "generic",
        "placed",
        "shell",
        "grouped_only",
        "risk",
    )

    def __init__(self, name: str, guards: list, plain: tuple, globbed: dict, generic: list, shell: bool) -> None:
        self.guards = guards
        self.guard_index = GuardIndex(guards, shell, name)  # which guards a call's arguments may fire
        self.plain = plain  # per effect, strictest first: (effect, ((compiled fact condition or None, rules), …))
        # plain as one generated function (`tier_code`), when it has a fact condition
        self.plain_code: Callable | None = None
        self.plain_fixed: tuple | None = None  # plain's summary when no fact condition changes it (`_fixed`)
        self.plain_single: tuple | None = None  # (its one condition, the summary when it holds) when plain is one group
        self.plain_table: tuple | None = None  # plain tabulated by the request's fact mask (`FactAtoms.tabulate`)
        # the ids of the rule groups that decided a call -> (those groups, the decision they make), shared
        # by requests (`RequestDecider._concluded`); the entry holds its groups, so no other takes their ids
        self.decided: dict = {}
        self.globbed = globbed  # argument field -> _FieldIndex
        self.generic = generic  # (rule, its condition compiled: `compile_condition`) for rules tried as written
        self.placed: dict[tuple, _Placed] = {}  # (field, inside) -> rules gated by an `inside`/`outside` test
        self.shell = shell
        self.risk: tuple[str, ...] | None = (
            None  # the tool's risk axes (`call.network`); None: a tool the catalog does not know
        )
        self.facts_only = False  # only request facts decide (guards aside): no argument read, no shell line split
        self.unnamed = False  # no rule or guard names the tool: the policy's unmatched decision
        # every argument rule is in a glob group (literal text, prefix or suffix) and nothing else is
        # tried one by one: a call with text arguments no guard may fire on is `_decide_grouped`
        self.grouped_only = False
        # a rule without condition denies the tool and its calls are not split: every call is denied by rules
        # (guards aside), whatever its arguments or request
        self.denied = False
        self.searches = False  # a search tool: its calls also read the path they name (`split.SEARCHES`)
        self.paths = False  # the tool has path parameters: a call's are made canonical before any rule reads them
        # what a call gets whatever its arguments say, when nothing else needs reading: DENIED_OUTRIGHT
        # (`denied`, no guard, no path, not a search), UNNAMED (`unnamed`, no path, not a search), else None
        self.answer: str | None = None


class _Placed:
    """The rules of one tool that test an argument `inside` (or `outside`) the workspace, besides request
    facts and at most one glob: indexed as a tool's rules are, and read only when the test holds."""

    __slots__ = ("rules", "plain", "fixed", "table", "globbed", "_compiled")

    def __init__(self) -> None:
        self.rules: list = []  # every one, in source order: read one by one when the test's value is not known
        self.plain: tuple = ()  # the fact-only ones as `_tiers`
        self.fixed: tuple | None = None  # `_fixed(plain)`
        self.table: tuple | None = None  # plain tabulated by the request's fact mask, or None
        self.globbed: dict = {}  # field -> _FieldIndex
        self._compiled: list | None = None  # `as_written()`, made when first needed

    def as_written(self) -> list:
        """(rule, its condition compiled) for every rule: compiled when a call first needs them (rare: a
        value that is not text, no workspace), not for every placement of every tool."""
        if self._compiled is None:
            self._compiled = [(rule, compile_condition(rule.condition, lenient(rule))) for rule in self.rules]
        return self._compiled


def _tiers(pairs) -> tuple:
    """(compiled fact condition or None, rule) pairs → per effect, strictest first, the rules grouped by
    condition: (effect, ((condition, rules), …)). A call evaluates each condition once and stops at the
    first effect some rule of which holds — no rule of a milder effect can change the outcome (strictest
    wins, and an undecided milder rule never makes a stricter one conditional)."""
    by_effect: dict = {effect: {} for effect in RULE_EFFECTS}
    for test, rule in pairs:  # closures are shared per (condition, side), so equal conditions group
        by_effect[rule.effect].setdefault(test, []).append(rule)
    return tuple(
        (effect, tuple((test, tuple(sorted(rules, key=position))) for test, rules in groups.items()))
        for effect, groups in by_effect.items()
        if groups
    )


def _fixed(tiers: tuple):
    """What `_tiered` answers for `tiers` on every request when none of their rules has a fact
    condition (made once, when the policy is indexed); None when some condition must be read."""
    if any(test is not None for _, groups in tiers for test, _ in groups):
        return None
    if not tiers:
        return NOTHING
    effect, groups = tiers[0]
    return effect, tuple(rules for _, rules in groups), ()


def _split(condition):
    """(facts-only part, globs, (field, inside) or None) when the condition has the indexed shape: request
    facts, at most one glob test on an argument — or one `or` of such tests —, and at most one `inside` /
    `outside` test on an argument, joined by `and`. `globs`: the (field, pattern) alternatives, any one of
    which matching is the glob test holding (a glob test on an argument is True or False, never
    undecided, so an `or` of them is exactly "some alternative matches"); () for none."""
    if condition is None:
        return None, (), None
    items = condition.items if isinstance(condition, ast.And) else (condition,)
    facts, globs, place = [], (), None
    for item in items:
        alternatives = () if globs else _glob_alternatives(item)
        if alternatives:
            globs = alternatives
        elif isinstance(item, ast.Place) and ast.argument_field(item) and place is None:
            place = (item.fact.path[1], item.inside)
        elif _facts_only(item):
            facts.append(item)
        else:
            return False
    if not facts:
        return None, globs, place
    return (facts[0] if len(facts) == 1 else ast.And(tuple(facts))), globs, place


def _glob_alternatives(item) -> tuple:
    """((field, pattern), …) of `args.F matches "P"`, or of an `or` of such tests; else ()."""
    tests = ast.disjuncts(item)
    if all(isinstance(test, ast.Matches) and ast.argument_field(test) for test in tests):
        return tuple((ast.argument_field(test), test.pattern) for test in tests)
    return ()


def _facts_only(expr) -> bool:
    """Only request facts: no argument, no session, no `call.*` (read per call, as arguments are)."""
    return all(isinstance(a, ast.Flag) or a.fact.path[0] not in ("args", "session", "call") for a in ast.atoms(expr))


class CompiledPolicy:
    """One policy indexed per tool name; built once per Program, shared by its requests."""

    def __init__(self, policy: EffectivePolicy):
        self.policy = policy
        self.core = PolicyCore(policy)
        self.segments: LRU[Analysis | None] = LRU(SEGMENT_CACHE)  # command text -> its analysis (`analysed`)
        self._tools: LRU[_ToolIndex] = LRU(NAME_CACHE)  # any tool name may be asked, not only the catalog's
        # name -> (the ToolDef object last asked, its index): a call passes the same object again, and an
        # identity test is cheaper than hashing the key. Bounded by clearing (it only shortcuts `_tools`).
        self._last: dict[str, tuple] = {}
        self._interned: dict = {}  # equal fact conditions share one object, so a call evaluates each once
        self._compiled: dict = {}  # (interned condition's id, side) -> (condition, its closure)
        self._source: dict = {}  # a closure -> the condition it was made from (for `tier_code`)
        self.atoms = FactAtoms()  # a request's facts as one bitmask, for the rule groups tabulated by it
        self._enforced: dict = {}  # "read" | "write" -> the rules the sandbox enforces (`protected.enforced_rules`)
        self._without: dict = {}  # rules left out -> this policy compiled without them (`deferral.without`)
        self._session: bool | None = None  # `reads_session()`, found on first use

    def reads_session(self) -> bool:
        """Whether a rule or guard tests the session (`session.*`), found once."""
        found = self._session
        if found is None:
            items: tuple[ast.Item, ...] = (*self.policy.rules, *self.policy.guards)
            found = self._session = any(
                not isinstance(atom, ast.Flag) and atom.fact.path[0] == "session"
                for item in items
                for atom in ast.atoms(item.condition)
            )
        return found

    def deferred(self, kind: str, pattern, workspace: str | None):
        """What an access to a whole tree may leave to the sandbox (`deferral.deferral`), or None."""
        enforced = self._enforced.get(kind)
        if enforced is None:
            from .protected import enforced_rules

            enforced = self._enforced.setdefault(kind, enforced_rules(self.policy, kind))
        if not (enforced[0] or enforced[1]):
            return None
        from .deferral import deferral

        return deferral(self.policy, enforced, kind, pattern, workspace)

    def without(self, rules: frozenset) -> "CompiledPolicy":
        found = self._without.get(rules)
        if found is None:
            from .deferral import without

            found = self._without.setdefault(rules, CompiledPolicy(without(self.policy, rules)))
        return found

    def _intern(self, facts):
        return None if facts is None else self._interned.setdefault(facts, facts)

    def compiled(self, facts, lenient_: bool):
        """The closure evaluating an interned fact condition on one side (None for no condition)."""
        if facts is None:
            return None
        key = (id(facts), lenient_)
        found = self._compiled.get(key)
        if found is None:
            made = (facts, compile_facts(facts, lenient_))
            self._source[made[1]] = facts  # before it is published: whoever finds the closure finds its source
            # the first closure published wins: rules of one condition group under one test in every index
            found = self._compiled.setdefault(key, made)
        return found[1]

    def analysed(self, command: str):
        """A shell command's analysis (`shell.analyse`), remembered: calls repeat their commands."""
        found = self.segments.find(command)
        if found is MISSING:
            from ..shell import analyse  # the shell analyser loads only for shell calls

            found = self.segments.put(command, analyse(command))
        return found

    def index(self, name: str, tool: ToolDef | None) -> _ToolIndex:
        # one name can be different tools in different compositions (a definition, a preset's risk override)
        last = self._last.get(name)
        if last is not None and last[0] is tool:
            return last[1]
        key = (name, tool.definition, tool.risk, tool.path_parameters) if tool is not None else (name, None, (), ())
        found = self._tools.find(key)
        if found is MISSING:
            found = self._tools.put(key, self._build(name, tool))
        if len(self._last) >= NAME_CACHE:
            self._last.clear()
        self._last[name] = (tool, found)  # the entry holds the object, so its identity is never reused
        return found

    def _tiers_of(self, plain: dict) -> tuple:
        """{facts: [rule]} -> `_tiers` of the rules with their fact conditions compiled."""
        return _tiers((self.compiled(facts, lenient(rule)), rule) for facts, rules in plain.items() for rule in rules)

    def _build(self, name: str, tool: ToolDef | None) -> _ToolIndex:
        shell = is_shell(tool)
        rules, guards = self.core.relevant(name, tool)
        index = _ToolIndex(name, guards, (), {}, [], shell)
        index.risk = tool.risk if tool is not None else None
        plains: dict = {None: {}}  # placement or None (the tool's own) -> {facts: [fact-only rule]}
        tabulate = lambda tiers: self.atoms.tabulate(tiers, name, self._source.__getitem__)  # noqa: E731
        for rule in rules:
            shape = _split(rule.condition)
            # a shell command's `inside` sees one simple command at a time (`conditions`): read as written
            if shape is False or (shape[2] is not None and shell and shape[2][0] in SHELL_FIELDS):
                index.generic.append((rule, compile_condition(rule.condition, lenient(rule))))
                continue
            facts, globs, place = shape
            facts = self._intern(facts)
            target: _ToolIndex | _Placed = index
            if place is not None:
                placed = index.placed.get(place)
                if placed is None:
                    placed = index.placed[place] = _Placed()
                placed.rules.append(rule)
                target = placed
            if not globs:
                plains.setdefault(place, {}).setdefault(facts, []).append(rule)
            for field_name, pattern in globs:  # an `or` of globs: one entry each, the rule held if any matches
                command = shell and field_name in SHELL_FIELDS
                field_index = target.globbed.get(field_name)
                if field_index is None:  # not setdefault: it would make an index per rule to throw away
                    field_index = target.globbed[field_name] = _FieldIndex()
                field_index.add(
                    _Globbed(rule, self.compiled(facts, lenient(rule)), pattern if command else home_glob(pattern)),
                    command,
                )
        for place, placed in index.placed.items():
            placed.plain = self._tiers_of(plains.get(place, {}))
            placed.fixed = _fixed(placed.plain)
            placed.table = tabulate(placed.plain) if placed.fixed is None else None
            for field_index in placed.globbed.values():
                field_index.seal(tabulate)
        index.plain = self._tiers_of(plains[None])
        index.plain_fixed = _fixed(index.plain)
        if len(index.plain) == 1 and len(index.plain[0][1]) == 1 and index.plain[0][1][0][0] is not None:
            ((effect, ((test, rules),)),) = index.plain
            index.plain_single = (test, (effect, (rules,), ()))
        if index.plain_fixed is None:
            index.plain_table = tabulate(index.plain)
        # generated code only where there is no table: where a table cannot answer (a fact test undecided),
        # neither can the code, and the closures decide
        if index.plain_table is None:
            index.plain_code = compile_tiers(index.plain, self._source.__getitem__)
        for field_index in index.globbed.values():
            field_index.seal(tabulate)
        index.facts_only = not (index.globbed or index.generic or index.placed or shell)
        index.grouped_only = not (
            index.generic or index.placed or shell or any(f.other for f in index.globbed.values())
        )
        index.unnamed = index.facts_only and not index.plain and not guards
        index.searches = tool is not None and tool.definition in SEARCHES
        index.paths = tool is not None and bool(tool.path_parameters)
        index.denied = (
            not shell
            and bool(index.plain)
            and index.plain[0][0] == "deny"
            and any(test is None for test, _ in index.plain[0][1])
        )
        if not (index.paths or index.searches):
            index.answer = UNNAMED if index.unnamed else DENIED_OUTRIGHT if index.denied and not guards else None
        return index


# `_ToolIndex.answer`
DENIED_OUTRIGHT, UNNAMED = "denied outright", "unnamed"


class _DeniedTool(LaterDeny):
    """A call to a tool `_ToolIndex.denied`: (decider, name, (tool, its index), arguments as called,
    workspace). The tool and its index are the policy's own pair (`CompiledPolicy._last`), so making one
    touches neither object."""

    reason = DENIED

    def _list(self) -> tuple:
        decider, name, (tool, index), args, workspace = self
        return decider._listing(name, tool, index, args, workspace)


class _DeniedByFacts(LaterDeny):
    """A call `_decide_grouped` found denied by its fact-only rules: (decider, name, index, arguments as
    called, those rules' parts, their undecided rules)."""

    reason = DENIED

    def _list(self) -> tuple:
        return self[0]._grouped_listing(*self[1:])


class RequestDecider:
    """Decides calls for one request: the facts are fixed, so fact-only conditions are evaluated once."""

    # slots: a cold call reads its fields from the object itself, not through a dict
    __slots__ = (
        "compiled",
        "_last",
        "tool_for",
        "core",
        "approval",
        "approval_source",
        "env",
        "_facts_read",
        "_atoms",
        "_summaries",
        "_facts",
        "_groups",
        "_deferring",
    )

    # None only for a request without a policy: `decide` answers NO_POLICY then, `guard` None, and no other
    # method is reached (so they are typed as set)
    compiled: CompiledPolicy
    core: PolicyCore
    _atoms: FactAtoms

    def __init__(self, compiled: CompiledPolicy | None, approval: str, approval_source, env: Env, tool_for=None):
        self.compiled = compiled  # type: ignore[assignment]  # None: see the class's annotations
        self._last = compiled._last if compiled is not None else {}  # name -> (tool, its index)
        self.tool_for = tool_for  # name -> ToolDef, for the files a shell call redirects
        self.core = compiled.core if compiled is not None else None  # type: ignore[assignment]  # as above
        self.approval = approval
        self.approval_source = approval_source
        self.env = env
        # the request's fact tests read once, when its decider is made (`FactAtoms`): tabulated rule
        # groups are looked up by the mask; read again only when an index built since numbers a new test
        # (how many tests were numbered when read, the mask when every test is decided else None, (holds,
        # undecided bits)): one tuple, stored whole, so a thread never pairs one reading's count with another's mask
        self._facts_read: tuple = (-1, None, None)
        self._atoms = None  # type: ignore[assignment]  # None: see the class's annotations
        if compiled is not None:
            self._atoms = compiled.atoms
            self._fact_mask()
        # per tool name, once per request (each made on first need). A model may invent names without
        # end: each memo is bounded by clearing (`_keep`) — plain dicts, as a cold decision writes one
        # entry and an ordered map's bookkeeping would be most of its cost.
        self._summaries: dict[str, tuple] = {}  # the fact-only rules' tiers read (`_tiered`)
        self._facts: dict[str, Decision] = {}  # the decision, when only request facts decide the tool
        # id(glob group) -> (the group, its summary): the entry holds the group, so its id cannot be
        # reused by another while remembered (an index the policy's LRU drops is built anew, new groups)
        self._groups: dict[int, tuple] = {}
        self._deferring: dict = {}  # rules left to the sandbox -> the decider without them (`_leaving`)

    def _leaving(self, left) -> "RequestDecider":
        """The decider of a part (`split.shell_parts`): this one, or one without the rules the sandbox enforces."""
        if left is None:
            return self
        found = self._deferring.get(left.rules)
        if found is None:
            found = self._deferring.setdefault(
                left.rules,
                RequestDecider(
                    self.compiled.without(left.rules), self.approval, self.approval_source, self.env, self.tool_for
                ),
            )
        return found

    def decide(
        self,
        name: str,
        tool: ToolDef | None,
        args,
        workspace: str | None = None,
        include_guards: bool = True,
        searched: bool = True,
    ) -> Verdict:
        """`searched`: a search tool's call is also a read of the path it names (False: the call alone)."""
        last = self._last.get(name)  # the policy's own shortcut, read without a call (`CompiledPolicy.index`)
        if last is not None and last[0] is tool:
            index = last[1]
            answer = index.answer  # the two commonest calls, reading nothing else of the index or the tool
            if answer is DENIED_OUTRIGHT and type(args) is dict:
                # as called: the caller may change its mapping afterwards
                return _DeniedTool((self, name, last, args.copy(), workspace))
            if answer is UNNAMED:
                return self.core.unmatched(self.approval, self.approval_source)
        elif self.compiled is None:
            return NO_POLICY
        else:
            index = self.compiled.index(name, tool)
        if index.searches and searched:  # `grep`: its call, and a read of its path where reads have rules
            made = canonical(tool, args, workspace)
            reads = search_parts(tool, made, workspace, self.tool_for, self.names)
            if reads:
                own = self.decide(name, tool, made, workspace, include_guards, False)
                return with_paths(
                    decide_reads(
                        name,
                        own,
                        reads,
                        lambda part, part_tool, part_args: self.decide(
                            part, part_tool, part_args, workspace, include_guards
                        ),
                    ),
                    args,
                    made,
                )
        decision: Verdict
        if index.unnamed:  # no rule or guard names the tool
            decision = self.core.unmatched(self.approval, self.approval_source)
        elif index.denied and not (include_guards and index.guards):
            # a rule denies the tool on every request and nothing is stricter: the call's arguments and facts
            # only choose which agreeing rules the decision lists, found when they are first read
            kept = args.copy() if type(args) is dict else args  # as called: the caller may change its mapping
            decision = _DeniedTool((self, name, (tool, index), kept, workspace))
        elif index.facts_only and not (include_guards and index.guards):
            decision = self._facts_decide(name, index)
        else:
            return self._decide_call(name, tool, index, args, workspace, include_guards)
        # the arguments cannot change these three; they are read only to name canonical paths in the reason
        return with_paths(decision, args, canonical(tool, args, workspace)) if index.paths else decision

    def _listing(self, name: str, tool: ToolDef | None, index: "_ToolIndex", args, workspace: str | None) -> tuple:
        """The deciding rules of a call to a tool `_ToolIndex.denied`: as the call's own path finds them."""
        return self._decide_call(name, tool, index, args, workspace, False).deciding

    def _decide_call(
        self, name: str, tool: ToolDef | None, index: "_ToolIndex", args, workspace: str | None, include_guards: bool
    ) -> Verdict:
        """`decide` for a tool whose decision may read the call's arguments."""
        if index.facts_only and not (include_guards and index.guards):
            return self._facts_decide(name, index)
        made = canonical(tool, args, workspace) if index.paths else args
        decision = guards = None
        if index.grouped_only and type(made) is dict:  # never a shell tool: no split comes first
            guards = index.guard_index.candidates(made) if include_guards and index.guards else ()
            if not guards:
                decision = self._decide_grouped(name, index, made)  # the common call, without `_decide`'s tests
        if decision is None:
            decision = self._decide(name, tool, index, made, workspace, include_guards, guards)
        return decision if made is args else with_paths(decision, args, made)

    def _decide(
        self,
        name: str,
        tool: ToolDef | None,
        index: "_ToolIndex",
        args,
        workspace: str | None,
        include_guards: bool,
        guards: tuple | None = None,
    ) -> Verdict:
        """`guards`: the guards these arguments may fire, when the caller has found them already."""
        # only a shell tool's call is split (asked here, so other tools skip the call)
        parts = (
            shell_parts(
                True,
                args,
                workspace,
                self.tool_for,
                self.compiled.analysed,
                self.names,
                self.core.option_programs(),
                self.compiled.deferred,
            )
            if index.shell
            else None
        )
        if parts is not None:
            return decide_parts(
                name,
                tool,
                parts,
                lambda part, part_tool, part_args, left: self._leaving(left).decide(
                    part, part_tool, part_args, workspace, include_guards
                ),
            )
        if guards is None:
            guards = index.guard_index.candidates(args) if include_guards and index.guards else ()
        if not index.globbed and not index.generic and not index.placed and not guards:
            return self._facts_decide(name, index)
        call = _Call(self, name, index, args, workspace)
        unsure = False
        if guards:  # the others' globs do not match: they neither fire nor are undecided
            fired, unsure = run_guards(guards, call.env(), test=index.guard_index.holds)
            if fired is not None:
                return self.core.guard_decision(fired)
        best, deciding, plain_maybe = self._plain_summary(name, index)
        call.tally.add_parts(best, deciding)
        call.maybe.extend(plain_maybe)
        self._match_fields(call, index.globbed, args)
        for place, placed in index.placed.items():
            holds = self._place_holds(call, place)
            if holds is None:  # not a text, or no workspace: the rule's side decides (`conditions`)
                env = call.env()
                for rule, test in placed.as_written():
                    call.add(rule, test(env, name))
            elif holds:
                best, deciding, placed_maybe = self._placed_summary(name, placed)
                call.tally.add_parts(best, deciding)
                call.maybe.extend(placed_maybe)
                self._match_fields(call, placed.globbed, args)
        if index.generic:
            env = call.env()
            for rule, test in index.generic:
                call.add(rule, test(env, name))
        if call.matched:
            call.tally.add_matched(call.matched)
        return self._conclude(call, unsure)

    def _match_fields(self, call: "_Call", globbed: dict, args) -> None:
        for field_name, field_index in globbed.items():
            if isinstance(args, dict) and field_name in args:  # an absent argument matches no glob
                self._match_field(call, field_name, field_index, args[field_name])

    @staticmethod
    def _place_holds(call: "_Call", place: tuple) -> bool | None:
        """Whether `args.FIELD inside|outside workspace` holds for this call, as `conditions` reads it:
        False for an absent argument; None where the rule's side decides (a value that is not text, no
        workspace, arguments that are not a mapping)."""
        field, inside = place
        args = call.args
        if type(args) is not dict:
            return None
        value = args.get(field, MISSING)
        if value is MISSING:
            return False
        if not isinstance(value, str) or call.workspace is None:
            return None
        if type(value) is FilePattern:  # a file the command cannot name: where its directory is
            holds = value.inside(call.workspace)
            return None if holds is None else holds is inside
        return call.inside(value) is inside

    def _placed_summary(self, name: str, placed: _Placed):
        """(strictest effect or None, its rules, undecidable rules) of a placement's fact-only rules."""
        if placed.fixed is not None:
            return placed.fixed
        tabled = self._tabled(placed.table)
        return tabled if tabled is not None else self._tiered(name, placed.plain)

    def _decide_grouped(self, name: str, index: "_ToolIndex", args: dict) -> Verdict | None:
        """`_decide` for the common call, in one pass: every argument a rule reads is plain text and
        every rule on it is in a glob group, so the decision is the fact-only rules' and the hit
        groups' summaries (per request), tallied strictest-wins and concluded (`_concluded`). None when
        some argument is not plain text or a path in one form (the general path takes it)."""
        effect, parts, maybe = self._plain_summary(name, index)  # tuples, joined only when a group adds to them
        if effect == "deny":
            # nothing is stricter than a deny the request's facts already make: the glob groups could only
            # add rules that agree, so they are found when the decision's rules are first read
            kept = args.copy()  # as called: the caller may change its mapping afterwards
            return _DeniedByFacts((self, name, index, kept, parts, maybe))
        return self._grouped(name, index, args, effect, parts, maybe)

    def _grouped_listing(self, name: str, index: "_ToolIndex", args: dict, parts, maybe) -> tuple:
        """The deciding rules of a call `_decide_grouped` found denied by its fact-only rules alone."""
        decision: Verdict | None = self._grouped(name, index, args, "deny", parts, maybe)
        if decision is None:  # an argument that is not plain text: the general path lists them
            decision = self._decide(name, None, index, args, None, False, ())
        return decision.deciding

    def _grouped(self, name: str, index: "_ToolIndex", args: dict, effect, parts, maybe) -> Decision | None:
        """`_decide_grouped` from the fact-only rules' summary on: the hit glob groups' summaries tallied."""
        facts_read = self._facts_read
        mask = facts_read[1] if facts_read[0] == self._atoms.count else self._fact_mask()
        for field_name, field_index in index.globbed.items():
            value = args.get(field_name, MISSING)
            if value is MISSING:
                continue  # an absent argument matches no glob
            if type(value) is not str and not (type(value) is CanonicalPath and value.absolute == value):
                return None  # another value, or a path with two forms to match
            for group in field_index.groups(value):  # a request with an undecided test: `_group_summary`
                table = field_index.tables.get(id(group)) if mask is not None else None
                found = table[1].get(mask & table[0]) if table is not None else None
                if found is None:
                    found = self._group_summary(name, group, field_index)
                top = found[0]
                if found[2]:
                    maybe += found[2]
                if top is not None:
                    if effect is None or RANK[top] > RANK[effect]:
                        effect, parts = top, found[1]
                    elif top == effect:
                        parts += found[1]
        return self._concluded(index, effect, parts, maybe)

    def _match_field(self, call: "_Call", field_name: str, field_index: "_FieldIndex", value) -> None:
        """Glob rules on one argument: whole groups by literal text, else entries one by one."""
        shell = call.index.shell and field_name in SHELL_FIELDS
        if type(value) is FilePattern:  # denies and asks whose glob may meet it, allows that surely hold
            admitted = {
                id(entry.rule): entry
                for entry in field_index.every
                if (value.may_match(entry.pattern) if lenient(entry.rule) else value.surely_matches(entry.pattern))
            }
            for entry in admitted.values():
                self._admit(call.name, entry, call)
            return
        if not isinstance(value, str) or shell:
            self._glob_matches(call, field_index, value)
            return
        if isinstance(value, CanonicalPath) and value.absolute != value:  # a path matches in either form
            forms = value.forms()
            groups = list({id(g): g for form in forms for g in field_index.groups(form)}.values())
        else:
            forms, groups = (value,), field_index.groups(value)
        for group in groups:
            self._add_group(call, group, field_index)
        for entry in field_index.others(forms):
            if any(glob_match(entry.pattern, form) for form in forms):
                self._admit(call.name, entry, call)

    def _conclude(self, call: "_Call", unsure: bool) -> Decision:
        return self._concluded(
            call.index, call.tally.effect, call.tally.parts, call.maybe, bool(call.matched) or unsure, unsure
        )

    def _concluded(
        self, index: _ToolIndex, effect: str | None, parts, maybe, one_off: bool = False, unsure: bool = False
    ) -> Decision:
        """The decision from the tally's strictest effect and its groups of rules. When whole rule groups
        the index holds alone made it (not `one_off`: rules matched one by one, or a guard unsure) and no
        rule is undecided, it is a function of those groups: made by the first call that reaches it and
        shared by every request, as `PolicyCore.unmatched` shares its own — save an ask under approval
        `never`, whose decision names where `never` was set. Only the object is shared: every condition
        was evaluated for this call."""
        if not (one_off or maybe or effect == "ask" and self.approval == "never"):
            if effect is None:  # no rule matched: the policy's one answer for that
                return self.core.unmatched(self.approval, self.approval_source)
            key = id(parts[0]) if len(parts) == 1 else tuple(map(id, parts))
            found = index.decided.get(key)
            if found is None:
                found = _keep(
                    index.decided,
                    key,
                    (parts, self.core.conclude_parts(self.approval, self.approval_source, effect, parts)),
                    DECIDED_CACHE,
                )
            return found[1]
        return self.core.conclude_parts(self.approval, self.approval_source, effect, parts, maybe, unsure)

    def _facts_decide(self, name: str, index: "_ToolIndex") -> Decision:
        """A tool whose rules read only request facts: one decision per request, whatever the call."""
        if not index.plain:  # no rule names the tool: the policy's own answer, the same for every request
            return self.core.unmatched(self.approval, self.approval_source)
        fixed = index.plain_fixed
        if fixed is not None:
            return self._concluded(index, *fixed)  # (effect, parts, maybe), like any summary
        found = self._facts.get(name)  # a warm call's one lookup
        if found is None:
            tabled = self._tabled(index.plain_table)  # read once per request: no summary kept
            best, deciding, maybe = tabled if tabled is not None else self._plain_tiered(name, index)
            found = _keep(self._facts, name, self._concluded(index, best, deciding, maybe))
        return found

    def guard(self, name: str, tool: ToolDef | None, args, workspace: str | None = None) -> Decision | None:
        """The guards alone, as their own pipeline stage runs them: a deny, or None when all abstain.

        A guard whose condition cannot be decided denies here: at call time nothing may slip through.
        """
        if self.compiled is None:
            return None
        args = canonical(tool, args, workspace)
        parts = shell_parts(
            is_shell(tool),
            args,
            workspace,
            self.tool_for,
            self.compiled.analysed,
            self.names,
            self.core.option_programs(),
            self.compiled.deferred,
        )
        if parts is not None:
            return next(
                (
                    fired
                    for _, part, part_tool, part_args, _, left in parts
                    if (
                        fired := self._leaving(left).guard(
                            part or name, part_tool if part else tool, part_args, workspace
                        )
                    )
                ),
                None,
            )
        index = self.compiled.index(name, tool)
        if index.searches:  # a guard on `read` fires for the files a search reads
            fired = next(
                (
                    fired
                    for _, part, part_tool, part_args in search_parts(tool, args, workspace, self.tool_for, self.names)
                    or ()
                    if (fired := self.guard(part, part_tool, part_args, workspace))
                ),
                None,
            )
            if fired is not None:
                return fired
        guards = index.guard_index.candidates(args) if index.guards else ()
        if not guards:
            return None
        fired, _ = run_guards(
            guards,
            self._env_for(name, args, workspace, index.shell, index.risk),
            unsure_fires=True,
            test=index.guard_index.holds,
        )
        return self.core.guard_decision(fired) if fired is not None else None

    def names(self, name: str, tool: ToolDef | None) -> bool:
        """Whether some rule or guard of the policy names the tool (`split.shell_parts`)."""
        return not self.compiled.index(name, tool).unnamed

    def _env_for(self, name: str, args=None, workspace=None, shell=False, risk=None) -> Env:
        return tool_env(self.env, name, shell, args, workspace, self.compiled.policy.classes, risk)

    def _add_group(self, call: "_Call", group: tuple, field_index: _FieldIndex) -> None:
        top, rules, unsure_rules = self._group_summary(call.name, group, field_index)
        call.maybe.extend(unsure_rules)
        if top is not None:
            call.tally.add_parts(top, rules)

    def _group_summary(self, name: str, group: tuple, field_index: _FieldIndex):
        """(strictest effect, its rules in source order, undecidable rules) of one glob group: looked up when
        it is tabulated (always, when no fact condition changes it), else read once per request."""
        tabled = self._tabled(field_index.tables.get(id(group)))
        if tabled is not None:
            return tabled
        found = self._groups.get(id(group))
        if found is None:
            found = _keep(
                self._groups, id(group), (group, self._tiered(name, field_index.tiers[id(group)])), GROUP_CACHE
            )
        return found[1]

    def _admit(self, name: str, entry: _Globbed, buckets: Buckets) -> None:
        """The entry's glob matched: its rule applies when its fact condition holds too."""
        value = True if entry.facts is None else entry.facts(self.env, name)
        buckets.add(entry.rule, value)

    def _plain_summary(self, name: str, index: _ToolIndex):
        """(strictest effect or None, its rules, undecidable rules) of the fact-only rules: once per request
        (the index's own when no fact condition can change it)."""
        if index.plain_fixed is not None:
            return index.plain_fixed
        tabled = self._tabled(index.plain_table)
        if tabled is not None:
            return tabled
        found = self._summaries.get(name)
        return found if found is not None else _keep(self._summaries, name, self._plain_tiered(name, index))

    def _tabled(self, table):
        """A tabulated group's summary for this request's facts; None when it is not tabulated or reads
        a fact test this request cannot decide."""
        if table is None:
            return None
        facts_read = self._facts_read
        if facts_read[0] != self._atoms.count:
            facts_read = self._read_facts()
        mask = facts_read[1]
        if mask is None:
            mask, undecided = facts_read[2]
            if undecided & table[0]:
                return None
        return table[1].get(mask & table[0])

    def _fact_mask(self) -> int | None:
        """The request's fact mask when every numbered test is decided (else None: see `_facts_read`)."""
        return self._read_facts()[1]

    def _read_facts(self) -> tuple:
        """`_facts_read`, read again when an index built since numbered a new test."""
        atoms, facts_read = self._atoms, self._facts_read
        if facts_read[0] != atoms.count:
            known = atoms.count  # read first: a test numbered meanwhile makes the next call read again
            holds, undecided = atoms.mask(self.env)
            facts_read = self._facts_read = (known, None if undecided else holds, (holds, undecided))
        return facts_read  # this thread's reading: another may have stored an older one since

    def _plain_tiered(self, name: str, index: _ToolIndex):
        """`_tiered` of the index's fact-only rules: a single condition's made summaries, else their generated
        function when they have one, else the closures."""
        single = index.plain_single
        if single is not None:  # one condition: its summary either way is made already
            value = single[0](self.env, name)
            if value is True:
                return single[1]
            if value is False:
                return NOTHING
        run = index.plain_code
        if run is not None:
            found = run(self.env, name)
            if found is not None:  # None: a fact is absent, and the closures' three-valued logic decides
                return found
        return self._tiered(name, index.plain)

    def _tiered(self, name: str, tiers: tuple):
        """(strictest effect that holds or None, its rules as parts each in source order — merged only if
        a decision's rules are read —, undecidable rules that matter)."""
        maybe: list = []
        for effect, groups in tiers:
            matched: list = []
            for test, rules in groups:
                value = True if test is None else test(self.env, name)
                if value is True:
                    matched.append(rules)
                elif value is None:
                    maybe.extend(rules)
            if matched:
                return effect, tuple(matched), tuple(maybe)
        return None, (), tuple(maybe)

    def _glob_matches(self, call: "_Call", index: _FieldIndex, value) -> None:
        """Shell commands and non-text values. Where no glob can be read against the value (it is not
        text, or a command that is opaque or does not parse) every deny and ask may match and no allow:
        that group's summary, like any group's (a table lookup, not one test per rule). A simple command
        of literal words is a text: the groups its text hits, by their summaries, as any argument's.
        Else the entries the command matches are admitted one by one."""
        segment = getattr(value, "segment", None)
        if segment is not None and segment.plain:
            text = segment.text
            for group in index.groups(text):
                self._add_group(call, group, index)
            for entry in index.other:
                if glob_match(entry.pattern, text, True):
                    self._admit(call.name, entry, call)
            return
        candidates = self._shell_candidates(index, value) if isinstance(value, str) else None
        if candidates is None:
            self._add_group(call, index.unseen(), index)
            return
        for entry, ok in candidates:
            if ok:
                self._admit(call.name, entry, call)

    def _shell_candidates(self, index: _FieldIndex, command: str):
        """Which glob entries a shell command matches: one simple command (`split` made the call
        one part per segment) with expansion words, a hazard or a program named by its path — found
        by their literal parts (`segment_entries`) —, or, for a line that did not split, the whole
        line. None when the command is opaque or does not parse: it may match any deny or ask and
        never an allow."""
        segment = getattr(command, "segment", None)
        if segment is None:
            found = self.compiled.analysed(command)
            if found is None:
                return None
            if not found.segments:  # an empty line (one with a file access is split): no glob matches it
                return []
            return [(e, _line_matches(found, e.pattern, lenient(e.rule))) for e in index.every]
        if segment.opaque:
            return None
        return [(e, True) for e in index.segment_entries(segment)]


def _line_matches(found, pattern: str, deny_side: bool) -> bool:
    """A whole unsplit line (no segments, no files): what `conditions` decides for it."""
    from ..shell import segment_matches

    if deny_side:
        return any(segment_matches(s, pattern, True) for s in found.segments)
    return bool(found.segments) and not found.files and all(segment_matches(s, pattern, False) for s in found.segments)


def _keep(memo: dict, key, value, limit: int = NAME_CACHE):
    """memo[key] = value, the memo cleared first when it holds `limit` entries; the value."""
    if len(memo) >= limit:
        memo.clear()
    memo[key] = value
    return value


class _Call(Buckets):
    """One call being decided: the rules it matched one by one (shell fields, odd values, other
    globs, generic rules — it is their Buckets), its tally and its environment, built only if a
    guard or an unindexed rule needs it."""

    __slots__ = ("decider", "name", "index", "args", "workspace", "tally", "_env", "_inside")

    def __init__(self, decider: RequestDecider, name: str, index: _ToolIndex, args, workspace):
        self.decider, self.name, self.index, self.args, self.workspace = decider, name, index, args, workspace
        self.matched, self.maybe = [], []  # Buckets' own two lists, set here: one call less per decision
        self.tally = Tally()
        self._env: Env | None = None
        self._inside: dict | None = None

    def inside(self, path: str) -> bool:
        """Whether `path` is inside the workspace, once per call and path (`paths.path_inside`)."""
        key = (path, getattr(path, "absolute", None))  # a canonical path's absolute form counts too
        if self._inside is None:
            self._inside = {}
        found = self._inside.get(key)
        if found is None:
            found = self._inside[key] = path_inside(path, self.workspace)
        return found

    def env(self) -> Env:
        if self._env is None:
            self._env = self.decider._env_for(self.name, self.args, self.workspace, self.index.shell, self.index.risk)
        return self._env
