"""Claude Code settings.json → a `.dsh` policy with the same decisions, plus what could not be said.

In: the settings' `permissions` (allow / ask / deny, defaultMode, additionalDirectories) and
`sandbox` blocks. Out: policy text (plus a scope hiding the tools denied outright, which Claude
Code removes from the model's context) and notes (rule text + why), never a silent drop.
Claude Code evaluates deny, then ask, then allow, first match wins: the same as dshc's
strictest-wins, so each rule becomes one dshc rule of the same effect.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .agents import load_mapping
from .dsl_out import PolicyText, any_of, both, q

EFFECTS = ("deny", "ask", "allow")
RULE = re.compile(r"^\s*([A-Za-z_][\w\-*]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
DOTDOT = ('*/../*', '*/..')  # a path that climbs out again never satisfies an allow
# commands dshc's shell analysis reads through to the command they run (compiler/shell.py):
# a rule on the wrapper itself would only ever see the wrapped command
WRAPPERS = frozenset({"builtin", "command", "doas", "env", "exec", "nice", "nohup", "stdbuf", "sudo", "time",
                      "timeout", "xargs"})


@dataclass(frozen=True)
class Note:
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


@dataclass(frozen=True)
class Imported:
    text: str
    notes: tuple[Note, ...]


class _Paths:
    """Claude Code's gitignore-style path specifiers → absolute dshc globs (`*` crosses `/`)."""

    def __init__(self, root: str, home: str):
        self.root = root.rstrip("/") or "/"
        self.home = home.rstrip("/")

    def base(self, spec: str) -> tuple[str, str, bool]:
        """(anchor folder, rest, anchored): `//abs`, `~/x`, `/x` (project), `./x` or `x` (cwd = project)."""
        if spec.startswith("//"):
            return "", spec[1:], True
        if spec.startswith("~/"):
            return self.home, spec[1:], True
        if spec.startswith("/"):
            return self.root, spec, True
        rest = spec[2:] if spec.startswith("./") else spec
        # gitignore: a pattern without an inner slash matches at any depth
        return self.root, "/" + rest, "/" in rest.rstrip("/")

    def globs(self, spec: str) -> list[str]:
        anchor, rest, anchored = self.base(spec)
        if rest.endswith("/"):
            rest += "**"
        variants = [rest] if anchored else [rest, "/**" + rest]
        out: list[str] = []
        for variant in variants:
            out += _expand_globstar(anchor + variant)
        return [p.replace("**", "*") for p in dict.fromkeys(out)]


def _expand_globstar(pattern: str) -> list[str]:
    """`a/**/b` matches `a/b` too: each `/**/` is either `/` or `/*/`."""
    index = pattern.find("/**/")
    if index < 0:
        return [pattern]
    head, tail = pattern[:index], pattern[index + 4:]
    return [head + "/" + t for t in _expand_globstar(tail)] + [head + "/**/" + t for t in _expand_globstar(tail)]


def _single_star(spec: str) -> bool:
    return re.search(r"(?<!\*)\*(?!\*)", spec) is not None


class _Importer:
    def __init__(self, settings: dict, source: str, root: str, home: str, name: str):
        self.settings = settings
        self.source = source
        self.paths = _Paths(root, home)
        self.mapping = load_mapping("claude-code")
        self.notes: list[Note] = []
        self.name = name

    def note(self, rule: str, message: str) -> None:
        self.notes.append(Note(rule, message))

    # --- the whole file ---
    def run(self) -> Imported:
        perms = self.settings.get("permissions") or {}
        sandbox = self.settings.get("sandbox") or {}
        if not isinstance(perms, dict) or not isinstance(sandbox, dict):
            raise ValueError("`permissions` and `sandbox` must be JSON objects")
        mode = perms.get("defaultMode", "default")
        enabled = sandbox.get("enabled") is True
        default, approval = {"bypassPermissions": ("allow", "ask"), "dontAsk": ("deny", "never")}.get(mode, ("ask", "ask"))
        policy = PolicyText(self.name, f"Claude Code settings: {os.path.basename(self.source)}",
                            "workspace-write" if enabled else "danger-full-access", approval, default,
                            header=[f"Imported from {self.source} by `dshc import claude-code`.",
                                    "Each rule is preceded by the setting it came from."])
        if mode not in ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"):
            self.note(f"defaultMode {mode}", "this mode cannot be expressed; imported as `default` (ask when no rule matches)")
        inside = self._working_dirs(perms.get("additionalDirectories") or [])
        self._base_rules(policy, mode, inside)
        if enabled:
            self._sandbox(policy, sandbox)
        for effect in EFFECTS:
            rules = perms.get(effect) or []
            if not isinstance(rules, list):
                self.note(f"permissions.{effect}", "must be a list of rule strings; nothing imported from it")
                continue
            for text in rules:
                if not isinstance(text, str):
                    self.note(f"permissions.{effect}", f"`{text!r}` is not a rule string; skipped")
                    continue
                self._rule(policy, effect, text)
        for key in sorted(set(perms) - {"allow", "ask", "deny", "defaultMode", "additionalDirectories"}):
            self.note(f"permissions.{key}", "not a permission rule dshc knows; ignored")
        return Imported(policy.render(), tuple(self.notes))

    def _working_dirs(self, extra) -> dict[str, str]:
        """Per path field, the condition 'inside a working directory' (the workspace + additionalDirectories)."""
        globs: list[str] = []
        for entry in extra if isinstance(extra, list) else []:
            if not isinstance(entry, str) or "\\" in entry or re.match(r"^[A-Za-z]:", entry):
                self.note(f"additionalDirectories {entry}", "not a POSIX path; left out (calls there ask)")
                continue
            folder = os.path.normpath(os.path.expanduser(entry) if entry.startswith("~") else
                                      entry if entry.startswith("/") else os.path.join(self.paths.root, entry))
            globs += [folder, folder.rstrip("/") + "/*"]
        return {f: " or ".join([f"args.{f} inside workspace"] + [f"args.{f} matches {q(g)}" for g in globs])
                for f in ("file_path", "path")}

    def _base_rules(self, policy: PolicyText, mode: str, inside: dict[str, str]) -> None:
        free = sorted({t.tool for t in self.mapping.tools.values() if not t.needs_permission and t.family != "read"})
        policy.rule("Claude Code reads inside the working directories without asking", "allow", ["read", "read_image"],
                    f"({inside['file_path']}) and not {any_of('args.file_path', DOTDOT)}")
        policy.rule("Claude Code searches inside the working directories without asking", "allow", ["glob", "grep"],
                    f"not has args.path or (({inside['path']}) and not {any_of('args.path', DOTDOT)})")
        policy.rule("Claude Code runs these tools without asking", "allow", free)
        if mode == "acceptEdits":
            policy.rule("defaultMode acceptEdits: file edits in the working directories are accepted", "allow",
                        ["edit", "write"], f"({inside['file_path']}) and not {any_of('args.file_path', DOTDOT)}")
        if mode == "plan":
            policy.rule("defaultMode plan: nothing is changed or run while planning", "deny",
                        ["edit", "write", "bash", "pwsh"])

    def _sandbox(self, policy: PolicyText, sandbox: dict) -> None:
        if sandbox.get("autoAllowBashIfSandboxed", True) is True:
            excluded = [self._command_glob(str(c)) for c in sandbox.get("excludedCommands") or []]
            # a command that asks to leave the sandbox (dangerouslyDisableSandbox) is not sandboxed either
            condition = both("not has args.sandbox_permissions",
                             f"not {any_of('args.command', excluded)}" if excluded else None)
            policy.rule("sandbox.autoAllowBashIfSandboxed: sandboxed commands run without asking"
                        + (" (excludedCommands run outside the sandbox, so they do not)" if excluded else ""),
                        "allow", ["bash"], condition)
        for key in sorted(set(sandbox) - {"enabled", "autoAllowBashIfSandboxed", "excludedCommands"}):
            self.note(f"sandbox.{key}", "confinement of the process itself, not a permission rule; not expressed")

    # --- one rule ---
    def _rule(self, policy: PolicyText, effect: str, text: str) -> None:
        origin = f"permissions.{effect}: {text}"
        match = RULE.match(text)
        if not match:
            self.note(text, "not a `Tool` or `Tool(specifier)` rule; skipped")
            return
        name, spec = match.group(1), match.group(2)
        spec = None if spec is None or spec.strip() in ("", "*") else spec
        if name.startswith(self.mapping.mcp_prefix):
            return self._mcp(policy, effect, text, name, spec, origin)
        tool = self.mapping.tools.get(name)
        if tool is None:
            self.note(text, f"`{name}` is not a Claude Code tool dshc maps; skipped"
                      + (" (the tool stays under the policy default)" if effect == "allow" else
                         " — a deny or ask that cannot be imported leaves those calls to the policy default"))
            return
        family = self.mapping.families.get(tool.family)
        if spec is None:
            # a bare Read / Edit covers every tool of its family, as Claude Code applies them
            targets = list(family) if family and name in ("Read", "Edit") else [tool.tool]
            if effect == "deny":  # a bare deny takes the tool out of the model's context in Claude Code
                policy.hidden += targets
            return policy.rule(origin, effect, targets)
        if tool.family == "shell":
            return self._shell(policy, effect, text, tool.tool, spec, origin)
        if tool.family in ("read", "edit"):
            return self._path(policy, effect, text, name, tool, spec, origin)
        if tool.family == "domain" and spec.startswith("domain:"):
            return self._domain(policy, effect, text, spec[len("domain:"):].strip(), origin)
        if effect == "deny":
            self.note(text, f"the specifier cannot be expressed; every `{tool.tool}` call is denied instead (stricter)")
            return policy.rule(origin + "  (specifier widened to the whole tool)", effect, [tool.tool])
        self.note(text, "the specifier cannot be expressed; skipped (the tool stays under the policy default)")

    def _command_glob(self, spec: str) -> str:
        # `prefix:*` is a word-boundary prefix: `npm:*` is `npm` or `npm …`, never `npmx`
        return spec[:-2].rstrip() + " *" if spec.endswith(":*") else spec

    def _shell(self, policy, effect, text, target, spec, origin) -> None:
        pattern = self._command_glob(spec)
        head = pattern.split(" ", 1)[0]
        if head in WRAPPERS and pattern.strip() != head:
            self.note(text, f"dshc reads through `{head}` to the command it runs, so a rule on `{head}` itself "
                      "never matches; not imported" + (" — those calls fall to the other rules and the default"
                                                       if effect != "allow" else ""))
            return
        if "?" in pattern and effect == "allow":
            self.note(text, "`?` is literal in Claude Code but one character in dshc globs: this allow is slightly wider")
        policy.rule(origin, effect, [target], f"args.command matches {q(pattern)}")

    def _path(self, policy, effect, text, name, tool, spec, origin) -> None:
        if re.search(r"\[.*\]", spec):
            if effect == "allow":
                self.note(text, "character classes cannot be expressed in dshc globs; skipped")
                return
            self.note(text, "character classes widened to any one character (stricter)")
            spec = re.sub(r"\[[^\]]*\]", "?", spec)
        if effect == "allow" and _single_star(spec):
            self.note(text, "a single `*` in dshc globs also crosses `/`: this allow also covers deeper files")
        globs = self.paths.globs(spec)
        guard = None if effect != "allow" else "not {}"
        if name in ("Read", "Edit", "Write", "MultiEdit", "NotebookEdit"):
            family = self.mapping.families[tool.family]
            file_tools = [t for t in family if t not in ("glob", "grep")]
            condition = any_of("args.file_path", globs)
            policy.rule(origin, effect, file_tools,
                        both(condition, guard and guard.format(any_of("args.file_path", DOTDOT))))
            if tool.family == "read":
                policy.rule(origin + "  (searches rooted there)", effect, ["glob", "grep"],
                            both(any_of("args.path", globs), guard and guard.format(any_of("args.path", DOTDOT))))
                if effect != "allow":
                    self.note(text, "a Glob or Grep over a folder that merely contains such files is not caught "
                              "(Claude Code applies Read rules to searches only on a best-effort basis)")
            return
        policy.rule(origin, effect, [tool.tool],
                    both(any_of("args.path", globs), guard and guard.format(any_of("args.path", DOTDOT))))

    def _domain(self, policy, effect, text, domain, origin) -> None:
        if not re.fullmatch(r"(\*\.)?[A-Za-z0-9.\-]+", domain):
            self.note(text, "not a domain name; skipped")
            return
        if effect == "allow" and domain.startswith("*."):
            self.note(text, "a `*` in an allowed host would also match `/` and `@` in dshc globs (any host); skipped")
            return
        if effect == "allow":
            # no `?…` form: `?` is a one-character wildcard in dshc globs, so `host?*` would admit `host.evil`
            urls = [f"{s}://{domain}{t}" for s in ("https", "http") for t in ("", "/*")]
        else:
            # fail closed: ports, userinfo and subdomains of a denied host are denied too
            urls = [f"*://{domain}{t}" for t in ("", "/*", ":*", "?*", "#*")] + [f"*://*.{domain}*", f"*://*@{domain}*"]
        policy.rule(origin, effect, ["web_fetch"], any_of("args.url", urls))

    def _mcp(self, policy, effect, text, name, spec, origin) -> None:
        rest = name[len(self.mapping.mcp_prefix):]
        server, _, tool = rest.partition("__")
        if spec is not None:
            self.note(text, "MCP rules take no specifier; skipped")
            return
        if not tool or tool == "*":
            condition = f"tool matches {q(f'mcp__{server}__*')}"
        elif "*" in tool:
            condition = f"tool matches {q(name)}"
        else:
            condition = f"tool == {q(name)}"
        policy.rule(origin, effect, ["*"], condition)


def import_settings(settings: dict, source: str, root: str | None = None, home: str | None = None,
                    name: str = "claude-code") -> Imported:
    """`root`: the project folder `/x` and `./x` rules are relative to (default: the one holding `.claude/`)."""
    if not isinstance(settings, dict):
        raise ValueError("a settings file is a JSON object")
    if root is None:
        folder = os.path.dirname(os.path.abspath(source))
        root = os.path.dirname(folder) if os.path.basename(folder) == ".claude" else folder
    return _Importer(settings, source, root, home or os.path.expanduser("~"), name).run()
