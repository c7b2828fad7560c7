"""A dshc policy → Codex's execpolicy `.rules` (Starlark `prefix_rule` calls) and its `config.toml` lines.

In: an EffectivePolicy. Out: the rules text, the config text and one note per rule that did not
translate exactly, with its kind: `stricter` (Codex holds something at least as strict), `dropped`
(an allow left out, so Codex asks), `moot` (a rule on a tool Codex does not have) or `weaker` (a deny or
ask Codex has no way to hold).
"""
from __future__ import annotations

import itertools
import json

from .. import ast
from ..frozen import record
from ..policy.core import PolicyCore
from .agents import load_mapping

DECISIONS = {"allow": "allow", "ask": "prompt", "deny": "forbidden"}
FILE_TOOLS = ("read", "read_image", "glob", "grep", "write", "edit")
# Codex checks a `bash -lc SCRIPT` by its commands only when SCRIPT is plain words joined by `&&`, `||`, `;`,
# `|` (codex-rs/shell-command/src/bash.rs); any other script meets no rule but one on the shell itself
SHELLS = ("bash", "sh", "zsh")
SHELL_FLAGS = ("-c", "-lc")
MAX_GROUPED = 5  # a pattern with more words than this gets no rules for its words quoted together


@record
class ExportNote:
    where: str
    kind: str  # stricter | dropped | moot | weaker
    message: str

    def text(self) -> str:
        return f"{self.where}: {self.kind}: {self.message}"


@record
class CodexExport:
    rules: str
    config: str
    notes: tuple[ExportNote, ...]

    @property
    def weaker(self) -> bool:
        return any(note.kind == "weaker" for note in self.notes)


def _knowledge():
    from ..shell_data import knowledge
    return knowledge()


def _heads(program: str) -> list[str]:
    """dshc reads `/usr/bin/git` as `git`: the rule names the program by every path dshc trusts."""
    if "/" in program:
        return [program]
    return [program] + [f"{d}/{program}" for d in sorted(_knowledge().trusted_dirs)]


def _wrappers(transparent: bool) -> list[str]:
    """Wrappers whose next word, given no option, is the command they run (`sudo rm`, `nohup rm`);
    `transparent`: only those that change nothing of it, which an allow of the command covers."""
    out = []
    for name, wrapper in _knowledge().wrappers.items():
        if wrapper.positional or wrapper.subcommands or wrapper.user_shell or wrapper.operands_written \
                or wrapper.each_string or wrapper.opaque_always:
            continue
        # input appended or substituted into the command is unknown to dshc: no allow covers it
        if transparent and (not wrapper.transparent or wrapper.appends or wrapper.replaces or wrapper.placeholders):
            continue
        out.append(name)
    return sorted(out)


def _literal_prefix(glob: str) -> tuple[list[str], bool]:
    """The glob's literal words before its first wildcard, and whether the glob is exactly those words
    followed by anything (`git status *`), which is what a Codex prefix rule matches."""
    words = glob.split(" ")
    open_end = len(words) >= 2 and words[-1] == "*"
    body = words[:-1] if open_end else words
    literal = list(itertools.takewhile(lambda w: w and "*" not in w and "?" not in w, body))
    return literal, open_end and len(literal) == len(body)


def _command_globs(condition) -> list[ast.Matches | ast.MatchesExcept] | None:
    """The globs of a condition that is `args.command matches` (with `except`) or an `or` of them."""
    items = condition.items if isinstance(condition, ast.Or) else (condition,)
    if all(isinstance(i, (ast.Matches, ast.MatchesExcept)) and i.fact.path == ("args", "command") for i in items):
        return list(items)
    return None


def _outside_workspace(condition) -> bool:
    return isinstance(condition, ast.Place) and not condition.inside and condition.fact.path == ("args", "file_path") \
        and condition.place.text == "workspace"


def _escalation(condition) -> bool | None:
    """True: the condition needs an escalation (`has args.sandbox_permissions`, alone or in an `and`);
    False: it is `not has args.sandbox_permissions`; None: neither."""
    def has(c) -> bool:
        return isinstance(c, ast.Has) and c.fact.path == ("args", "sandbox_permissions")
    if isinstance(condition, ast.Not) and has(condition.item):
        return False
    items = condition.items if isinstance(condition, ast.And) else (condition,)
    return True if any(has(i) for i in items) else None


class _Writer:
    def __init__(self, policy) -> None:
        self.policy = policy
        self.core = PolicyCore(policy)
        self.lines: list[str] = []
        self.notes: list[ExportNote] = []
        self.read_only = False  # a write deny or ask the sandbox holds
        self.shell_off = False
        self.shell_denies = False
        self.shell_allows = False
        codex_tools = {tool.tool for tool in load_mapping("codex").tools.values()}
        self.codex_tools = codex_tools

    def where(self, item) -> str:
        return self.core.rule_id(item) + (f" at {item.span}" if item.span else "")

    def note(self, item, kind: str, message: str) -> None:
        self.notes.append(ExportNote(self.where(item), kind, message))

    def emit(self, item, effect: str, pattern: list, justification: str) -> None:
        self.lines.append(f"prefix_rule(pattern={json.dumps(pattern)}, decision=\"{DECISIONS[effect]}\", "
                          f"justification={json.dumps(justification)})")

    def item(self, item, effect: str, targets: list[str]) -> None:
        condition = item.condition
        escalation = _escalation(condition) if condition is not None else None
        for tool in targets:
            if escalation is True and effect == "ask":
                continue  # Codex's approval policy asks before a command or patch leaves the sandbox
            if effect == "ask" and tool in ("write", "edit") and _outside_workspace(condition) \
                    and self.sandbox() == "workspace-write":
                continue  # so does Codex's workspace-write sandbox before a write outside the workspace
            if tool == "bash":
                self.shell(item, effect, condition)
            elif tool in ("write", "edit") and effect != "allow" and (condition is None or escalation is False):
                self.read_only = True
                if effect == "deny" and escalation is not False and self.approval() != "never":
                    self.note(item, "weaker", f"`{tool}` asks in Codex's read-only sandbox: Codex has no per-tool deny")
                elif escalation is not False:
                    self.note(item, "stricter", f"`{tool}` needs an approval in Codex's read-only sandbox")
            elif effect == "allow":
                self.note(item, "dropped", f"`{tool}`: Codex has no per-tool allow; its sandbox and approval policy decide")
            elif tool in FILE_TOOLS or tool in self.codex_tools:
                self.note(item, "weaker", f"`{tool}`: Codex's rules read command lines only; this {effect} has no "
                                          "Codex form (shell commands reaching the same files are not held either)")
            else:
                self.note(item, "moot", f"`{tool}` is not a Codex tool: nothing to export")

    def shell(self, item, effect: str, condition) -> None:
        if condition is None:
            if effect == "deny":
                self.shell_off = True
            elif effect == "ask":
                self.note(item, "weaker", "a prefix rule needs a program: `untrusted` asks for every command but "
                                          "Codex's known-safe ones")
            return
        globs = _command_globs(condition)
        if globs is None and effect != "allow" and isinstance(condition, ast.And):
            # a deny or ask on one conjunct alone holds more calls: at least as strict
            globs = next((g for c in condition.items if (g := _command_globs(c)) is not None), None)
            if globs is not None:
                self.note(item, "stricter", "only its `args.command matches` part is exported: it meets more commands")
        if globs is None:
            if effect == "allow":
                self.note(item, "dropped", "its condition has no prefix-rule form: Codex asks instead")
            else:
                self.note(item, "weaker", "its condition has no prefix-rule form")
            return
        for glob in globs:
            self.glob(item, effect, glob)

    def glob(self, item, effect: str, test) -> None:
        from ..shell_options import pattern_reading
        literal, exact = _literal_prefix(test.pattern)
        excepted = isinstance(test, ast.MatchesExcept)
        if effect == "allow":
            if not exact or excepted:
                why = "its `except` options" if excepted else f"`{test.pattern}` is not words followed by ` *`"
                self.note(item, "dropped", f"{why}: a Codex prefix rule would allow more, so Codex asks instead")
                return
            self.emit(item, effect, [_heads(literal[0]), *literal[1:]], f"dshc {self.where(item)}: {test.pattern}")
            self.emit(item, effect, [_wrappers(True), _heads(literal[0]), *literal[1:]],
                      f"dshc {self.where(item)}: {test.pattern}, run by a wrapper that changes nothing of it")
            self.shell_allows = True
            return
        self.shell_denies = True
        reading = pattern_reading(test.pattern)
        if reading is not None:  # dshc meets the options in any order and spelling: Codex compares words
            literal = list(itertools.takewhile(lambda w: not w.startswith("-"), literal))
        if not literal:
            self.note(item, "weaker", f"`{test.pattern}` names no program: a prefix rule cannot hold it")
            return
        if not exact or excepted or reading is not None:
            self.note(item, "stricter", f"`{test.pattern}` is exported as every command starting "
                                        f"`{' '.join(literal)}`")
        justification = f"dshc {self.where(item)}: {test.pattern}"
        for words in _groupings(literal[1:]):
            self.emit(item, effect, [_heads(literal[0]), *words], justification)
        self.emit(item, effect, [_wrappers(False), _heads(literal[0]), *literal[1:]], justification + ", wrapped")

    def sandbox(self) -> str:
        return self.policy.sandbox.text if self.policy.sandbox is not None else "read-only"

    def approval(self) -> str:
        if self.policy.approval is not None and self.policy.approval.text == "never":
            return "never"
        default = self.policy.default.text if self.policy.default is not None else "deny"
        return "on-request" if default == "allow" else "untrusted"


def _groupings(words: list[str]) -> list[list[str]]:
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


def export_codex(policy) -> CodexExport:
    writer = _Writer(policy)
    for rule in policy.rules:
        writer.item(rule, rule.effect, [t.name.text for t in rule.targets])
    for guard in policy.guards:
        writer.item(guard, "deny", [t.name.text for t in guard.targets])
    default = policy.default.text if policy.default is not None else "deny"
    if writer.shell_allows and default != "allow":
        writer.notes.append(ExportNote(policy.name, "weaker", "dshc also decides each file an allowed command reads "
                                       "or writes (`> f`, `cp`'s target) by the file rules and the default; Codex's "
                                       "allow rules cover the command, and only its sandbox confines the writes"))
    if writer.shell_denies or writer.shell_allows and default != "allow":
        writer.lines.append(f"prefix_rule(pattern={json.dumps([list(SHELLS), list(SHELL_FLAGS)])}, "
                            "decision=\"prompt\", justification=\"dshc: a shell script Codex cannot split into "
                            "plain commands is not read by these rules\")")
    approval = writer.approval()
    if default == "deny" and approval != "never":
        writer.notes.append(ExportNote(f"{policy.name}/default", "weaker", "Codex has no default deny: a command "
                                       "no rule matches asks (`untrusted`), and Codex's known-safe commands run"))
    header = [f"# Codex execpolicy rules for dshc policy `{policy.name}`, written by `dshc export codex`.",
              "# Rules hold command prefixes; what did not translate exactly is listed on stderr."]
    rules = "\n".join(header + list(dict.fromkeys(writer.lines))) + "\n"
    return CodexExport(rules, _config(policy, writer, approval), tuple(writer.notes))


def _config(policy, writer: _Writer, approval: str) -> str:
    sandbox = writer.sandbox()
    if writer.read_only and sandbox != "read-only":
        sandbox = "read-only"
    lines = [f"# config.toml lines for dshc policy `{policy.name}`, written by `dshc export codex`",
             f"sandbox_mode = \"{sandbox}\"", f"approval_policy = \"{approval}\""]
    if sandbox == "workspace-write":
        network = policy.network is not None and policy.network.text == "allow"
        lines += ["", "[sandbox_workspace_write]", f"network_access = {'true' if network else 'false'}"]
        if policy.writable:
            lines.append(f"writable_roots = {json.dumps([root.text for root in policy.writable])}")
    if writer.shell_off:
        lines += ["", "[features]", "shell_tool = false"]
    return "\n".join(lines) + "\n"
