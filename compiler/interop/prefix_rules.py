"""What an agent's prefix-rule engine can say of a dshc shell rule: a glob's literal words, the program by
every trusted path and behind the wrappers dshc reads through, and the note on a rule that did not
translate exactly; `RuleWriter` walks a policy for an agent's writer. In: a policy, ast conditions and
globs. Out: words and notes; the agent modules write the rules.
"""

from __future__ import annotations

import itertools

from .. import ast
from .._base.frozen import record
from ..policy.core import PolicyCore

MAX_GROUPED = 5  # a pattern with more words than this gets no rules for its words quoted together


@record
class ExportNote:
    where: str
    kind: str  # stricter | dropped | moot | weaker
    message: str

    def text(self) -> str:
        return f"{self.where}: {self.kind}: {self.message}"


def _knowledge():
    from ..shell_data import knowledge

    return knowledge()


def heads(program: str) -> list[str]:
    """dshc reads `/usr/bin/git` as `git`: the rule names the program by every path dshc trusts."""
    if "/" in program:
        return [program]
    return [program] + [f"{d}/{program}" for d in sorted(_knowledge().trusted_dirs)]


def wrappers(transparent: bool) -> list[str]:
    """Wrappers whose next word, given no option, is the command they run (`sudo rm`, `nohup rm`);
    `transparent`: only those that change nothing of it, which an allow of the command covers."""
    out = []
    for name, wrapper in _knowledge().wrappers.items():
        if (
            wrapper.positional
            or wrapper.subcommands
            or wrapper.user_shell
            or wrapper.operands_written
            or wrapper.each_string
            or wrapper.opaque_always
        ):
            continue
        # input appended or substituted into the command is unknown to dshc: no allow covers it
        if transparent and (not wrapper.transparent or wrapper.appends or wrapper.replaces or wrapper.placeholders):
            continue
        out.append(name)
    return sorted(out)


def literal_prefix(glob: str) -> tuple[list[str], bool]:
    """The glob's literal words before its first wildcard, and whether the glob is exactly those words
    followed by anything (`git status *`), which is what a Codex prefix rule matches."""
    words = glob.split(" ")
    open_end = len(words) >= 2 and words[-1] == "*"
    body = words[:-1] if open_end else words
    literal = list(itertools.takewhile(lambda w: w and "*" not in w and "?" not in w, body))
    return literal, open_end and len(literal) == len(body)


def command_globs(
    condition, fact: tuple[str, ...] = ("args", "command")
) -> list[ast.Matches | ast.MatchesExcept] | None:
    """The globs of a condition that is `FACT matches` (with `except`) or an `or` of them."""
    items = condition.items if isinstance(condition, ast.Or) else (condition,)
    if all(isinstance(i, (ast.Matches, ast.MatchesExcept)) and i.fact.path == fact for i in items):
        return list(items)
    return None


def outside_workspace(condition) -> bool:
    return (
        isinstance(condition, ast.Place)
        and not condition.inside
        and condition.fact.path == ("args", "file_path")
        and condition.place.text == "workspace"
    )


def escalation(condition) -> bool | None:
    """True: the condition needs an escalation (`has args.sandbox_permissions`, alone or in an `and`);
    False: it is `not has args.sandbox_permissions`; None: neither."""

    def has(c) -> bool:
        return isinstance(c, ast.Has) and c.fact.path == ("args", "sandbox_permissions")

    if isinstance(condition, ast.Not) and has(condition.item):
        return False
    items = condition.items if isinstance(condition, ast.And) else (condition,)
    return True if any(has(i) for i in items) else None


def groupings(words: list[str]) -> list[list[str]]:
    """The words as given and every way of quoting neighbours together (`git "commit -m"`): dshc matches a
    command's words joined by spaces, Codex its argv tokens."""
    if len(words) < 2 or len(words) > MAX_GROUPED:
        return [words]
    out = []
    for cuts in itertools.product((False, True), repeat=len(words) - 1):
        tokens, current = [], words[0]
        for cut, word in zip(cuts, words[1:]):
            if cut:
                current += " " + word
            else:
                tokens.append(current)
                current = word
        out.append([*tokens, current])
    return out


@record
class Prefix:
    """What a prefix rule holds of one `args.command matches` test: `words` (None: no rule), and unless the rule is
    exact, the note's kind (`stricter`, `dropped`, `weaker`) and message."""

    words: tuple[str, ...] | None
    kind: str | None = None
    message: str = ""


def prefix_of(test, effect: str, agent: str) -> Prefix:
    """An allow only when the glob is words then ` *` (else left out: the agent asks); a deny or ask as its
    words before the first wildcard or option (dshc meets options in any order and spelling), at least as
    strict."""
    from ..shell_options import pattern_reading

    literal, exact = literal_prefix(test.pattern)
    excepted = isinstance(test, ast.MatchesExcept)
    if effect == "allow":
        if not exact or excepted:
            why = "its `except` options" if excepted else f"`{test.pattern}` is not words followed by ` *`"
            return Prefix(None, "dropped", f"{why}: a {agent} prefix rule would allow more, so {agent} asks instead")
        return Prefix(tuple(literal))
    reading = pattern_reading(test.pattern)
    if reading is not None:
        literal = list(itertools.takewhile(lambda w: not w.startswith("-"), literal))
    if not literal:
        return Prefix(None, "weaker", f"`{test.pattern}` names no program: a prefix rule cannot hold it")
    if not exact or excepted or reading is not None:
        return Prefix(
            tuple(literal), "stricter", f"`{test.pattern}` is exported as every command starting `{' '.join(literal)}`"
        )
    return Prefix(tuple(literal))


class RuleWriter:
    """Walks a policy's rules and guards (a guard is a deny) into `item`, which each agent's writer defines,
    and keeps the notes, each naming its rule as decisions do."""

    agent = ""

    def __init__(self, policy) -> None:
        self.policy = policy
        self.core = PolicyCore(policy)
        self.notes: list[ExportNote] = []
        self.default = policy.default.text if policy.default is not None else "deny"
        self.never = policy.approval is not None and policy.approval.text == "never"

    def run(self):
        for rule in self.policy.rules:
            self.item(rule, rule.effect, [t.name.text for t in rule.targets])
        for guard in self.policy.guards:
            self.item(guard, "deny", [t.name.text for t in guard.targets])
        return self

    def item(self, item, effect: str, targets: list[str]) -> None:
        raise NotImplementedError

    def where(self, item) -> str:
        return self.core.rule_id(item) + (f" at {item.span}" if item.span else "")

    def note(self, item, kind: str, message: str) -> None:
        self.notes.append(ExportNote(self.where(item), kind, message))

    def shell_tests(self, item, effect: str, condition) -> list | None:
        """The `args.command` tests of a shell rule's condition, or None (noted). A deny or ask whose condition
        is an `and` is exported on its command part alone, which holds more calls: at least as strict."""
        tests = command_globs(condition)
        if tests is None and effect != "allow" and isinstance(condition, ast.And):
            tests = next((g for c in condition.items if (g := command_globs(c)) is not None), None)
            if tests is not None:
                self.note(item, "stricter", "only its `args.command matches` part is exported: it meets more commands")
        if tests is None:
            self.note(
                item,
                "dropped" if effect == "allow" else "weaker",
                f"its condition has no {self.agent} form"
                + (f": {self.agent} asks instead" if effect == "allow" else ""),
            )
        return tests
