"""A dshc policy → a Gemini CLI policy TOML file (`[[rule]]` with toolName, commandPrefix / commandRegex /
argsPattern, decision and priority), plus a note on every rule that did not translate exactly.

In: an EffectivePolicy. Out: the TOML text and notes (kinds as `prefix_rules.ExportNote`). Gemini CLI takes
the highest-priority rule that matches, dshc the strictest: denies are written at 900, asks at 600, allows at
300, and the policy's default as catch-alls at 1 and 2, so the order of strictness is the same.
"""

from __future__ import annotations

import json
import re

from .. import ast
from .._base.frozen import record
from .agents import load_mapping
from .prefix_rules import ExportNote, RuleWriter, command_globs, heads, outside_workspace, prefix_of, wrappers

DECISIONS = {"allow": "allow", "ask": "ask_user", "deny": "deny"}
PRIORITY = {"deny": 900, "ask": 600, "allow": 300}
SHELL = "run_shell_command"
MAX_REGEX = 2048  # Gemini CLI's isSafeRegExp refuses longer patterns


@record
class GeminiExport:
    text: str
    notes: tuple[ExportNote, ...]

    @property
    def weaker(self) -> bool:
        return any(note.kind == "weaker" for note in self.notes)


def _tools() -> dict[str, list[str]]:
    """Catalog tool → the Gemini CLI tools that map onto it (`glob` is `glob` and `list_directory`)."""
    out: dict[str, list[str]] = {}
    for name, tool in load_mapping("gemini").tools.items():
        out.setdefault(tool.tool, []).append(name)
    return out


def _path_args() -> dict[str, list[str]]:
    """Catalog tool → the Gemini argument names that carry its `file_path` (they changed across releases)."""
    out: dict[str, list[str]] = {}
    for name, tool in load_mapping("gemini").tools.items():
        for theirs, ours in tool.args.items():
            if ours == "file_path":
                out.setdefault(tool.tool, []).append(theirs)
    return out


QUOTES = "[\\\\\"']*"  # quotes and backslashes bash removes from a word (`e"ch"o`, `\\rm`), as JSON text shows them
GAP = "[\\\\\"'\\s]+"  # what may stand between two words: blanks, and the quotes around a quoted word
END = "[\\\\\"'\\s]"  # what follows a command's last word of a prefix: a blank, a quote, or the value's end


def _regex(glob: str, effect: str) -> str:
    """A glob as a regex over the JSON text of a string value. An allow's is the text as written, its `*`
    inside the value (it may meet less: a value holding `"`); a deny's also meets the words quoted or split
    by quotes, as dshc reads them after the shell removes the quotes, and its `*` may run past the value
    (it meets more): either way never wider."""
    star, one = ('[^"]*', '[^"]') if effect == "allow" else (".*", ".")
    parts = []
    for piece in re.split(r"([*?])", glob):
        if piece in ("*", "?"):
            parts.append(star if piece == "*" else one)
        elif effect == "allow":
            parts.append(re.escape(json.dumps(piece)[1:-1]))
        else:
            parts.append("".join(GAP if c == " " else re.escape(json.dumps(c)[1:-1]) + QUOTES for c in piece))
    return "".join(parts)


class _Writer(RuleWriter):
    agent = "Gemini CLI"

    def __init__(self, policy) -> None:
        super().__init__(policy)
        self.rules: list[dict] = []
        self.tools = _tools()

    def add(self, effect: str, tools: list[str], **match) -> None:
        effect = "deny" if effect == "ask" and self.never else effect  # an ask under `approval never` denies
        self.rules.append(
            {
                "toolName": tools[0] if len(tools) == 1 else tools,
                **match,
                "decision": DECISIONS[effect],
                "priority": PRIORITY[effect],
            }
        )

    def item(self, item, effect: str, targets: list[str]) -> None:
        condition = item.condition
        for tool in targets:
            theirs = self.tools.get(tool)
            if theirs is None:
                self.note(item, "moot", f"`{tool}` is not a Gemini CLI tool: nothing to export")
            elif condition is None:
                self.add(effect, theirs)
            elif tool == "bash":
                self.shell(item, effect, condition)
            else:
                self.path(item, effect, tool, theirs, condition)

    def path(self, item, effect: str, tool: str, theirs: list[str], condition) -> None:
        names = _path_args().get(tool)
        tests = command_globs(condition, ("args", "file_path"))
        if effect != "allow" and outside_workspace(condition):
            self.note(item, "stricter", f"`{tool}` outside the workspace: Gemini CLI's file tools refuse such paths")
        elif tests is None or not names or any(isinstance(t, ast.MatchesExcept) for t in tests):
            self.note(
                item, "dropped" if effect == "allow" else "weaker", f"`{tool}`: its condition has no argsPattern form"
            )
        elif effect == "allow":
            self.note(
                item,
                "dropped",
                f"`{tool}`: dshc reads a path canonical, Gemini CLI as the model wrote it; an allow on it is left out",
            )
        else:
            keys = names[0] if len(names) == 1 else "(?:" + "|".join(names) + ")"
            for test in tests:
                # any leading folder: dshc resolves a relative glob against the workspace, Gemini CLI sees what
                # the model wrote, so the pattern meets more paths than dshc's
                self.add(effect, theirs, argsPattern=f'"{keys}":"[^"]*{_regex(test.pattern.lstrip("/"), effect)}"')
            self.note(item, "stricter", f"`{tool}`: the path pattern meets the name under any folder")

    def shell(self, item, effect: str, condition) -> None:
        for test in self.shell_tests(item, effect, condition) or ():
            self.glob(item, effect, test)

    def glob(self, item, effect: str, test) -> None:
        from ..shell_options import pattern_reading

        found = prefix_of(test, effect, "Gemini CLI")
        whole = (
            not isinstance(test, ast.MatchesExcept)
            and test.pattern.strip("* ") != ""
            and (effect == "allow" or pattern_reading(test.pattern) is None)
        )
        if found.kind is not None and whole:
            # not a prefix, but a whole-command regex says it: Gemini CLI checks each simple command alone
            globs = (test.pattern, test.pattern[:-2]) if test.pattern.endswith(" *") else (test.pattern,)
            for glob in globs:
                for regex in _command_regexes(glob, effect):
                    self.add(effect, [SHELL], commandRegex=regex)
            return
        if found.kind is not None:
            self.note(item, found.kind, found.message)
        if found.words is None:
            return
        program, rest = found.words[0], " ".join(found.words[1:])
        if effect == "allow":
            prefixes = [f"{lead} {rest}".strip() for lead in _leads(program, effect)]
            self.add(effect, [SHELL], commandPrefix=prefixes[0] if len(prefixes) == 1 else prefixes)
        else:  # as a regex, so the words match quoted as well
            for regex in _command_regexes(f"{program} {rest}".strip(), effect, END):
                self.add(effect, [SHELL], commandRegex=regex)


def _leads(program: str, effect: str) -> list[str]:
    """The program by every path dshc reads as it, and behind the wrappers dshc reads through (for an
    allow, only those that change nothing of what they run)."""
    return heads(program) + [f"{w} {program}" for w in wrappers(effect == "allow")]


def _command_regexes(glob: str, effect: str, end: str = '"') -> list[str]:
    """commandRegexes (each matched after `"command":"`) for a simple command the glob matches: the whole
    command (`end` the value's closing quote) or, with `END`, every command starting with the glob's words.
    Several when the program's spellings make one too long for Gemini CLI (it refuses a regex over 2,048)."""
    first, _, tail = glob.partition(" ")
    if "*" in first or "?" in first:
        return [_regex(glob, effect) + end]
    after = (_regex(" " + tail, effect) if tail else "") + end
    out, leads = [], [_regex(lead, effect) for lead in _leads(first, effect)]
    while leads:
        size = 1
        # with `"command":"` and the group around the leads
        while size < len(leads) and len("|".join(leads[: size + 1]) + after) < MAX_REGEX - 32:
            size += 1
        out.append("(?:" + "|".join(leads[:size]) + ")" + after)
        leads = leads[size:]
    return out


def export_gemini(policy) -> GeminiExport:
    writer = _Writer(policy).run()
    default = "deny" if writer.default == "ask" and writer.never else writer.default
    # a shell catch-all with a pattern, so Gemini CLI's own known-safe list does not turn the default's ask
    # into an allow (its heuristics read only rules without one)
    catch_alls = [
        {"toolName": SHELL, "commandRegex": ".*", "decision": DECISIONS[default], "priority": 2},
        {"toolName": "*", "decision": DECISIONS[default], "priority": 1},
    ]
    header = [
        f"# Gemini CLI policy for dshc policy `{policy.name}`, written by `dshc export gemini`.",
        "# Priorities: deny 900, ask 600, allow 300, the default 1-2; what did not translate is on stderr.",
    ]
    body = [
        "\n".join(["[[rule]]", *(f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in rule.items())])
        for rule in [*_unique(writer.rules), *catch_alls]
    ]
    return GeminiExport("\n".join(header) + "\n\n" + "\n\n".join(body) + "\n", tuple(writer.notes))


def _unique(rules: list[dict]) -> list[dict]:
    seen, out = set(), []
    for rule in rules:
        key = json.dumps(rule, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(rule)
    return out
