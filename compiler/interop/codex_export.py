"""A dshc policy → Codex's execpolicy `.rules` (Starlark `prefix_rule` calls) and its `config.toml` lines.

In: an EffectivePolicy. Out: the rules text, the config text and one note per rule that did not
translate exactly, with its kind: `stricter` (Codex holds something at least as strict), `dropped`
(an allow left out, so Codex asks), `moot` (a rule on a tool Codex does not have) or `weaker` (a deny or
ask Codex has no way to hold).
"""

from __future__ import annotations

import json

from .._base.frozen import record
from .agents import load_mapping
from .prefix_rules import ExportNote, RuleWriter, escalation, groupings, heads, outside_workspace, prefix_of, wrappers

DECISIONS = {"allow": "allow", "ask": "prompt", "deny": "forbidden"}
FILE_TOOLS = ("read", "read_image", "glob", "grep", "write", "edit")
# Codex checks a `bash -lc SCRIPT` by its commands only when SCRIPT is plain words joined by `&&`, `||`, `;`,
# `|` (codex-rs/shell-command/src/bash.rs); any other script meets no rule but one on the shell itself
SHELLS = ("bash", "sh", "zsh")
SHELL_FLAGS = ("-c", "-lc")


@record
class CodexExport:
    rules: str
    config: str
    notes: tuple[ExportNote, ...]

    @property
    def weaker(self) -> bool:
        return any(note.kind == "weaker" for note in self.notes)


class _Writer(RuleWriter):
    agent = "Codex"

    def __init__(self, policy) -> None:
        super().__init__(policy)
        self.lines: list[str] = []
        self.read_only = False  # a write deny or ask the sandbox holds
        self.shell_off = False
        self.shell_denies = False
        self.shell_allows = False
        self.codex_tools = {tool.tool for tool in load_mapping("codex").tools.values()}

    def emit(self, item, effect: str, pattern: list, justification: str) -> None:
        self.lines.append(
            f'prefix_rule(pattern={json.dumps(pattern)}, decision="{DECISIONS[effect]}", '
            f"justification={json.dumps(justification)})"
        )

    def item(self, item, effect: str, targets: list[str]) -> None:
        condition = item.condition
        escalated = escalation(condition) if condition is not None else None
        for tool in targets:
            if escalated is True and effect == "ask":
                continue  # Codex's approval policy asks before a command or patch leaves the sandbox
            if (
                effect == "ask"
                and tool in ("write", "edit")
                and outside_workspace(condition)
                and self.sandbox() == "workspace-write"
            ):
                continue  # so does Codex's workspace-write sandbox before a write outside the workspace
            if tool == "bash":
                self.shell(item, effect, condition)
            elif tool in ("write", "edit") and effect != "allow" and (condition is None or escalated is False):
                self.read_only = True
                if effect == "deny" and escalated is not False and self.approval() != "never":
                    self.note(item, "weaker", f"`{tool}` asks in Codex's read-only sandbox: Codex has no per-tool deny")
                elif escalated is not False:
                    self.note(item, "stricter", f"`{tool}` needs an approval in Codex's read-only sandbox")
            elif effect == "allow":
                self.note(
                    item, "dropped", f"`{tool}`: Codex has no per-tool allow; its sandbox and approval policy decide"
                )
            elif tool in FILE_TOOLS or tool in self.codex_tools:
                self.note(
                    item,
                    "weaker",
                    f"`{tool}`: Codex's rules read command lines only; this {effect} has no "
                    "Codex form (shell commands reaching the same files are not held either)",
                )
            else:
                self.note(item, "moot", f"`{tool}` is not a Codex tool: nothing to export")

    def shell(self, item, effect: str, condition) -> None:
        if condition is None:
            if effect == "deny":
                self.shell_off = True
            elif effect == "ask":
                self.note(
                    item,
                    "weaker",
                    "a prefix rule needs a program: `untrusted` asks for every command but Codex's known-safe ones",
                )
            return
        for test in self.shell_tests(item, effect, condition) or ():
            self.glob(item, effect, test)

    def glob(self, item, effect: str, test) -> None:
        found = prefix_of(test, effect, "Codex")
        self.shell_denies |= effect != "allow"  # even one with no rule: the shell-script rule still asks
        if found.kind is not None:
            self.note(item, found.kind, found.message)
        if found.words is None:
            return
        first, rest = heads(found.words[0]), list(found.words[1:])
        justification = f"dshc {self.where(item)}: {test.pattern}"
        if effect == "allow":
            self.shell_allows = True
            self.emit(item, effect, [first, *rest], justification)
            self.emit(
                item,
                effect,
                [wrappers(True), first, *rest],
                justification + ", run by a wrapper that changes nothing of it",
            )
            return
        for words in groupings(rest):
            self.emit(item, effect, [first, *words], justification)
        self.emit(item, effect, [wrappers(False), first, *rest], justification + ", wrapped")

    def sandbox(self) -> str:
        return self.policy.sandbox.text if self.policy.sandbox is not None else "read-only"

    def approval(self) -> str:
        return "never" if self.never else "on-request" if self.default == "allow" else "untrusted"


def export_codex(policy) -> CodexExport:
    writer = _Writer(policy).run()
    default = writer.default
    if writer.shell_allows and default != "allow":
        writer.notes.append(
            ExportNote(
                policy.name,
                "weaker",
                "dshc also decides each file an allowed command reads "
                "or writes (`> f`, `cp`'s target) by the file rules and the default; Codex's "
                "allow rules cover the command, and only its sandbox confines the writes",
            )
        )
    if writer.shell_denies or writer.shell_allows and default != "allow":
        writer.lines.append(
            f"prefix_rule(pattern={json.dumps([list(SHELLS), list(SHELL_FLAGS)])}, "
            'decision="prompt", justification="dshc: a shell script Codex cannot split into '
            'plain commands is not read by these rules")'
        )
    approval = writer.approval()
    if default == "deny" and approval != "never":
        writer.notes.append(
            ExportNote(
                f"{policy.name}/default",
                "weaker",
                "Codex has no default deny: a command "
                "no rule matches asks (`untrusted`), and Codex's known-safe commands run",
            )
        )
    header = [
        f"# Codex execpolicy rules for dshc policy `{policy.name}`, written by `dshc export codex`.",
        "# Rules hold command prefixes; what did not translate exactly is listed on stderr.",
    ]
    rules = "\n".join(header + list(dict.fromkeys(writer.lines))) + "\n"
    return CodexExport(rules, _config(policy, writer, approval), tuple(writer.notes))


def _config(policy, writer: _Writer, approval: str) -> str:
    sandbox = writer.sandbox()
    if writer.read_only and sandbox != "read-only":
        sandbox = "read-only"
    lines = [
        f"# config.toml lines for dshc policy `{policy.name}`, written by `dshc export codex`",
        f'sandbox_mode = "{sandbox}"',
        f'approval_policy = "{approval}"',
    ]
    if sandbox == "workspace-write":
        network = policy.network is not None and policy.network.text == "allow"
        lines += ["", "[sandbox_workspace_write]", f"network_access = {'true' if network else 'false'}"]
        if policy.writable:
            lines.append(f"writable_roots = {json.dumps([root.text for root in policy.writable])}")
    if writer.shell_off:
        lines += ["", "[features]", "shell_tool = false"]
    return "\n".join(lines) + "\n"
