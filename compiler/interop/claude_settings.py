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

from .agents import MODE_FLAG, load_mapping
from .dsl_out import PolicyText, any_of, both, q

EFFECTS = ("deny", "ask", "allow")
RULE = re.compile(r"^\s*([A-Za-z_][\w\-*]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
# commands dshc's shell analysis reads through to the command they run (compiler/shell/): an allow of the
# wrapper's line covers the wrapped command only where that command is allowed too
WRAPPERS = frozenset(
    {"builtin", "command", "doas", "env", "exec", "nice", "nohup", "stdbuf", "sudo", "time", "timeout", "xargs"}
)
# what may follow a `prefix:*` allow's text inside an argument (`npm run test:*` covers `npm run test:unit`);
# after the program name itself only a space: `npm:*` never covers `npmx` or `npm-check`
SEPARATORS = (" ", ":", "-", ".", "/")
# in bypassPermissions mode Claude Code still asks before writes to .git, .claude, .vscode and .idea; dshc asks
# for every folder whose name starts with a dot (stricter, and two globs: each glob on a path doubles the
# argument classes `dshc diff` and `verify` split the paths into)
PROTECTED = (".*/*", "*/.*/*")
MAX_PORT_DIGITS = 5


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
    """Claude Code's gitignore-style path specifiers → portable dshc globs (`*` crosses `/`): project paths
    relative to the workspace, home paths under `~/`, `//` paths absolute. No machine's folders are written."""

    @staticmethod
    def globs(spec: str) -> tuple[list[str], bool]:
        """(globs, relative to the project): `//abs`, `~/x`, `/x` (project), `./x` or `x` (cwd = project)."""
        relative = not spec.startswith(("//", "~/"))
        if spec.startswith("//"):
            anchor, rest, anchored = "", spec[1:], True
        elif spec.startswith("~/"):
            anchor, rest, anchored = "~", spec[1:], True
        elif spec.startswith("/"):
            anchor, rest, anchored = "", spec, True
        else:
            rest = spec[2:] if spec.startswith("./") else spec
            # gitignore: a pattern without an inner slash matches at any depth
            anchor, rest, anchored = "", "/" + rest, "/" in rest.rstrip("/")
        if rest.endswith("/"):
            rest += "**"
        out: list[str] = []
        for variant in [rest] if anchored else [rest, "/**" + rest]:
            out += _expand_globstar(anchor + variant)
        globs = [p.replace("**", "*") for p in dict.fromkeys(out)]
        # dshc compares a path inside the workspace relative to it
        return ([g[1:] for g in globs] if relative else globs), relative


def _expand_globstar(pattern: str) -> list[str]:
    """`a/**/b` matches `a/b` too: each `/**/` is either `/` or `/*/`."""
    index = pattern.find("/**/")
    if index < 0:
        return [pattern]
    head, tail = pattern[:index], pattern[index + 4 :]
    return [head + "/" + t for t in _expand_globstar(tail)] + [head + "/**/" + t for t in _expand_globstar(tail)]


def _single_star(spec: str) -> bool:
    return re.search(r"(?<!\*)\*(?!\*)", spec) is not None


def _portable(path: str, root: str, home: str) -> str:
    """`path` as a reader of the policy on another machine can place it: under the project, `~/`, or its name."""
    for base, shown in ((root, ""), (home, "~/")):
        if base and path.startswith(base.rstrip("/") + "/"):
            return shown + path[len(base.rstrip("/")) + 1 :]
    return os.path.basename(path)


class _Importer:
    def __init__(
        self, settings: dict, sources: list[str], root: str, home: str, name: str, origins: dict | None = None
    ):
        self.settings = settings
        self.sources = [_portable(source, root, home) for source in sources]
        # (effect, rule text) -> the file of a hierarchy the rule came from, shown beside it
        self.origins = {key: _portable(path, root, home) for key, path in (origins or {}).items()}
        self.home = home.rstrip("/")
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
        # the policy is the `default` mode's; the other modes are the session's (`flag permission-mode-…`,
        # `plan_mode`), which the hook reads from every call, so a session that leaves a mode leaves its rules
        policy = PolicyText(
            self.name,
            "Claude Code settings: " + ", ".join(os.path.basename(s) for s in self.sources),
            "workspace-write" if enabled else "danger-full-access",
            "ask",
            "ask",
            header=[
                f"Imported from {', '.join(self.sources)} by `dshc import claude-code`.",
                "Each rule is preceded by the setting it came from.",
            ],
        )
        if mode not in ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto"):
            self.note(
                f"defaultMode {mode}", "not a Claude Code permission mode; sessions decide by the mode they are in"
            )
        elif mode != "default":
            self.note(
                f"defaultMode {mode}",
                "the mode a session starts in: the hook follows each call's "
                "`permission_mode`, so the mode's rules hold only while the session is in it",
            )
        inside = self._working_dirs(perms.get("additionalDirectories") or [])
        self._base_rules(policy, inside)
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
            if entry.startswith("~/") or entry == "~":
                folder = "~/" + os.path.normpath(entry[2:]) if entry != "~" else "~"
            elif entry.startswith(self.home + "/"):
                folder = "~/" + os.path.normpath(entry[len(self.home) + 1 :])
            else:
                folder = os.path.normpath(entry)
            if folder.startswith(".."):
                self.note(f"additionalDirectories {entry}", "a folder above the project; left out (calls there ask)")
                continue
            if folder == ".":
                continue  # the workspace itself
            globs += [folder, folder.rstrip("/") + "/*"]
        return {
            f: " or ".join([f"args.{f} inside workspace"] + [f"args.{f} matches {q(g)}" for g in globs])
            for f in ("file_path", "path")
        }

    def _base_rules(self, policy: PolicyText, inside: dict[str, str]) -> None:
        free = sorted({t.tool for t in self.mapping.tools.values() if not t.needs_permission and t.family != "read"})
        policy.rule(
            "Claude Code reads inside the working directories without asking",
            "allow",
            ["read", "read_image"],
            inside["file_path"],
        )
        policy.rule(
            "Claude Code searches inside the working directories without asking",
            "allow",
            ["glob", "grep"],
            f"not has args.path or ({inside['path']})",
        )
        policy.rule("Claude Code runs these tools without asking", "allow", free)
        policy.rule(
            "plan mode: nothing is changed or run while the session plans",
            "deny",
            ["edit", "write", "bash", "pwsh"],
            "plan_mode",
        )
        policy.rule(
            "acceptEdits mode: file edits in the working directories are accepted",
            "allow",
            ["edit", "write"],
            f"flag {MODE_FLAG}acceptEdits and ({inside['file_path']})",
        )
        bypass = f"flag {MODE_FLAG}bypassPermissions"
        policy.rule(
            "bypassPermissions mode: every mapped tool runs without asking",
            "allow",
            sorted({t.tool for t in self.mapping.tools.values()}),
            bypass,
        )
        policy.rule(
            "bypassPermissions mode: writes to .git, .claude, .vscode and .idea still ask (here: to any dot-folder)",
            "ask",
            ["edit", "write"],
            f"{bypass} and {any_of('args.file_path', PROTECTED)}",
        )

    def _sandbox(self, policy: PolicyText, sandbox: dict) -> None:
        if sandbox.get("autoAllowBashIfSandboxed", True) is True:
            excluded = [self._command_glob(str(c), "ask") for c in sandbox.get("excludedCommands") or []]
            # a command that asks to leave the sandbox (dangerouslyDisableSandbox) is not sandboxed either
            condition = both(
                "not has args.sandbox_permissions",
                f"not {any_of('args.command', [g for e in excluded for g in e])}" if excluded else None,
            )
            policy.rule(
                "sandbox.autoAllowBashIfSandboxed: sandboxed commands run without asking"
                + (" (excludedCommands run outside the sandbox, so they do not)" if excluded else ""),
                "allow",
                ["bash"],
                condition,
            )
        for key in sorted(set(sandbox) - {"enabled", "autoAllowBashIfSandboxed", "excludedCommands"}):
            self.note(f"sandbox.{key}", "confinement of the process itself, not a permission rule; not expressed")

    # --- one rule ---
    def _rule(self, policy: PolicyText, effect: str, text: str) -> None:
        origin = f"permissions.{effect}: {text}"
        if (effect, text) in self.origins:
            origin += f"  (from {self.origins[effect, text]})"
        match = RULE.match(text)
        if not match:
            self.note(
                text,
                "not a `Tool` or `Tool(specifier)` rule; skipped"
                + ("" if effect == "allow" else " — this deny or ask cannot be read, so it matches nothing"),
            )
            return
        name, spec = match.group(1), match.group(2)
        spec = None if spec is None or spec.strip() in ("", "*") else spec
        if name.startswith(self.mapping.mcp_prefix):
            return self._mcp(policy, effect, text, name, spec, origin)
        tool = self.mapping.tools.get(name)
        if tool is None:
            return self._unmapped(policy, effect, text, name, spec, origin)
        if tool.family == "domain" and spec is not None and spec.replace(" ", "") == "domain:*":
            spec = None  # any domain: every fetch
        only = self._only(tool)
        if spec is None:
            # a bare Read / Edit covers every tool of its family, as Claude Code applies them
            family = self.mapping.families.get(tool.family)
            targets = list(family) if family and name in ("Read", "Edit") else [tool.tool]
            if effect == "deny" and only is None:  # a bare deny takes the tool out of the model's context
                policy.hidden += targets
            return policy.rule(origin, effect, targets, only if targets == [tool.tool] else None)
        if tool.family == "shell":
            return self._shell(policy, effect, text, tool.tool, spec, origin)
        if tool.family in ("read", "edit"):
            return self._path(policy, effect, text, name, tool, spec, origin)
        if tool.family == "domain" and spec.startswith("domain:"):
            return self._domain(policy, effect, text, spec[len("domain:") :].strip(), origin)
        if tool.specifier:
            return policy.rule(
                origin,
                effect,
                [tool.tool],
                both(self._text_condition(f"args.{tool.specifier}", spec.strip(), effect), only),
            )
        return self._whole_tool(policy, effect, text, [tool.tool], only, origin)

    def _only(self, tool) -> str | None:
        """The condition telling this agent tool's calls from the others mapped onto its catalog tool."""
        if not tool.only:
            return None
        parts = [
            f"not args.{field} matches {q(glob[1:])}" if glob.startswith("!") else f"args.{field} matches {q(glob)}"
            for field, glob in tool.only.items()
        ]
        return " and ".join(parts)

    def _whole_tool(self, policy, effect, text, targets, condition, origin) -> None:
        """A specifier dshc cannot express: a deny or ask covers the whole tool (stricter); an allow is skipped."""
        if effect == "allow":
            self.note(text, "the specifier cannot be expressed; skipped (the tool stays under the policy default)")
            return
        self.note(
            text, f"the specifier cannot be expressed; every `{targets[0]}` call is {effect}ed instead (stricter)"
        )
        policy.rule(origin + "  (specifier widened to the whole tool)", effect, targets, condition)

    def _unmapped(self, policy, effect, text, name, spec, origin) -> None:
        """A tool dshc has no catalog counterpart for: the hook decides its calls under its own name."""
        if spec is None:
            return policy.rule(origin, effect, ["*"], f"tool == {q(name)}")
        if effect == "allow":
            self.note(
                text, f"`{name}` is not a Claude Code tool dshc maps; skipped (the tool stays under the policy default)"
            )
            return
        self.note(
            text,
            f"`{name}` is not a Claude Code tool dshc maps; the specifier cannot be expressed, so every "
            f"`{name}` call is {effect}ed instead (stricter)",
        )
        policy.rule(origin + "  (specifier widened to the whole tool)", effect, ["*"], f"tool == {q(name)}")

    def _text_condition(self, fact: str, spec: str, effect: str) -> str:
        """Claude Code's `prefix:*`, `*` wildcards or exact text, on a plain argument."""
        return any_of(fact, self._prefix_globs(spec, effect, False))

    def _prefix_globs(self, spec: str, effect: str, shell: bool) -> list[str]:
        if not spec.endswith(":*"):
            return [spec]
        prefix = spec[:-2].rstrip()
        # shell globs: `p *` also covers the bare `p`; elsewhere the bare prefix is spelled out
        bare = [] if shell else [prefix]
        if effect != "allow":
            # a prefix of the text, however it goes on (`p?*`: at least one more character): the strictest reading
            return bare + [prefix + " *", prefix + "?*"]
        return bare + [prefix + sep + "*" for sep in (SEPARATORS if " " in prefix else (" ",))]

    def _command_glob(self, spec: str, effect: str) -> list[str]:
        """A Bash specifier as globs over dshc's reading of a simple command: its words, unquoted, one space
        apart. `prefix:*` is a prefix of the command text (Claude Code's documented `Bash(npm run test:*)`)."""
        tail = ":*" if spec.endswith(":*") else ""
        body = spec[:-2] if tail else spec
        return self._prefix_globs(self._words(body) + tail, effect, True)

    def _words(self, body: str) -> str:
        if not any(c in body for c in "'\"\\"):
            return " ".join(body.split())
        import shlex

        try:
            return " ".join(shlex.split(body))
        except ValueError:  # unbalanced quotes: Claude Code compares the text, which no command's words spell
            self.note(body, "unbalanced quotes; compared as written")
            return body

    def _shell(self, policy, effect, text, target, spec, origin) -> None:
        patterns = self._command_glob(spec, effect)
        head = patterns[0].split(" ", 1)[0]
        if head in WRAPPERS and effect == "allow":
            self.note(
                text,
                f"dshc reads through `{head}` to the command it runs: this allow covers a line only "
                "where that command is allowed too (stricter)",
            )
        if effect == "allow" and "*" in spec and any(c in spec for c in "'\""):
            self.note(
                text,
                "dshc compares a command's words, not its quotes: a `*` inside quotes may also cover "
                "further words (slightly wider)",
            )
        if "?" in spec and effect == "allow":
            self.note(
                text, "`?` is literal in Claude Code but one character in dshc globs: this allow is slightly wider"
            )
        policy.rule(origin, effect, [target], any_of("args.command", patterns))

    def _path(self, policy, effect, text, name, tool, spec, origin) -> None:
        if re.search(r"\[.*\]", spec):
            if effect == "allow":
                self.note(text, "character classes cannot be expressed in dshc globs; skipped")
                return
            self.note(text, "character classes widened to any one character (stricter)")
            spec = re.sub(r"\[[^\]]*\]", "?", spec)
        if effect == "allow" and _single_star(spec):
            self.note(text, "a single `*` in dshc globs also crosses `/`: this allow also covers deeper files")
        globs, relative = _Paths.globs(spec)
        # a project-relative glob also reads absolute paths outside the workspace: an allow keeps to the workspace
        guard = "args.{} inside workspace" if relative and effect == "allow" else None
        only = self._only(tool)
        if name in ("Read", "Edit", "Write", "MultiEdit", "NotebookEdit"):
            family = self.mapping.families[tool.family]
            file_tools = [tool.tool] if only else [t for t in family if t not in ("glob", "grep")]
            policy.rule(
                origin,
                effect,
                file_tools,
                both(guard and guard.format("file_path"), any_of("args.file_path", globs), only),
            )
            if tool.family == "read":
                policy.rule(
                    origin + "  (searches rooted there)",
                    effect,
                    ["glob", "grep"],
                    both(guard and guard.format("path"), any_of("args.path", globs)),
                )
                if effect != "allow":
                    self.note(
                        text,
                        "a Glob or Grep over a folder that merely contains such files is not caught "
                        "(Claude Code applies Read rules to searches only on a best-effort basis)",
                    )
            return
        policy.rule(origin, effect, [tool.tool], both(guard and guard.format("path"), any_of("args.path", globs)))

    def _domain(self, policy, effect, text, domain, origin) -> None:
        if not re.fullmatch(r"(\*\.)?[A-Za-z0-9.\-]+", domain):
            if effect == "allow":
                self.note(text, "not a domain name; skipped")
                return
            return self._whole_tool(policy, effect, text, ["web_fetch"], None, origin)
        domain = domain.lower()
        if effect == "allow" and domain.startswith("*."):
            self.note(text, "a `*` in an allowed host would also match `/` and `@` in dshc globs (any host); skipped")
            return
        if effect == "allow":
            # no `?…` form: `?` is a one-character wildcard in dshc globs, so `host?*` would admit `host.evil`;
            # a port is one to five characters up to the path, and a `@` after it would make it userinfo
            urls = [f"{s}://{domain}{t}" for s in ("https", "http") for t in ("", "/*")]
            ports = [
                f"{s}://{domain}:{'?' * n}{t}"
                for s in ("https", "http")
                for n in range(1, MAX_PORT_DIGITS + 1)
                for t in ("", "/*")
            ]
            condition = (
                f"({any_of('args.url', urls)} or ({any_of('args.url', ports)} and not "
                f"args.url matches {q(f'*://{domain}:*@*')}))"
            )
        else:
            # fail closed: ports, userinfo and subdomains of a denied host are denied too
            urls = [f"*://{domain}{t}" for t in ("", "/*", ":*", "?*", "#*")] + [f"*://*.{domain}*", f"*://*@{domain}*"]
            condition = any_of("args.url", urls)
        policy.rule(origin, effect, ["web_fetch"], condition)

    def _mcp(self, policy, effect, text, name, spec, origin) -> None:
        rest = name[len(self.mapping.mcp_prefix) :]
        server, _, tool = rest.partition("__")
        if not tool or tool == "*":
            condition = f"tool matches {q(f'mcp__{server}__*')}"
        elif "*" in tool:
            condition = f"tool matches {q(name)}"
        else:
            condition = f"tool == {q(name)}"
        if spec is not None:
            if effect == "allow":
                self.note(text, "MCP rules take no specifier; skipped")
                return
            self.note(text, f"MCP rules take no specifier; every call of the tool is {effect}ed instead (stricter)")
        policy.rule(origin, effect, ["*"], condition)


# where Claude Code reads managed settings, which outrank every other file
MANAGED = {
    "linux": "/etc/claude-code/managed-settings.json",
    "darwin": "/Library/Application Support/ClaudeCode/managed-settings.json",
    "win32": "C:\\ProgramData\\ClaudeCode\\managed-settings.json",
}
RULE_ARRAYS = ("allow", "ask", "deny", "additionalDirectories")


def hierarchy(settings_file: str, home: str, platform: str) -> list[str]:
    """The settings files Claude Code reads for the project of `settings_file` that exist, lowest precedence
    first: the user's, the project's, the project's local one, the managed one."""
    folder = os.path.dirname(os.path.abspath(settings_file))
    candidates = (
        os.path.join(home, ".claude", "settings.json"),
        os.path.join(folder, "settings.json"),
        os.path.abspath(settings_file),
        os.path.join(folder, "settings.local.json"),
        MANAGED.get(platform),
    )
    return [path for path in dict.fromkeys(candidates) if path and os.path.isfile(path)]


def merge_settings(layers: list[tuple[str, dict]]) -> tuple[dict, dict]:
    """Settings files, lowest precedence first → (one settings object, (effect, rule) → the file it came from).
    As Claude Code merges scopes: the rule arrays and `additionalDirectories` of every file are joined (a deny in
    any file stands), any other value is the highest file's that sets it (`sandbox`, key by key)."""
    merged: dict = {"permissions": {}}
    origins: dict = {}
    for path, settings in layers:
        if not isinstance(settings, dict):
            raise ValueError(f"{path}: a settings file is a JSON object")
        for key, value in settings.items():
            if key == "permissions" and isinstance(value, dict):
                perms = merged["permissions"]
                for field, entry in value.items():
                    if field in RULE_ARRAYS and isinstance(entry, list):
                        joined = perms.setdefault(field, [])
                        for rule in entry:
                            if rule not in joined:
                                joined.append(rule)
                                if isinstance(rule, str):
                                    origins[field, rule] = path
                    else:
                        perms[field] = entry
            elif isinstance(value, dict) and isinstance(merged.get(key), dict):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
    return merged, origins


def import_hierarchy(
    layers: list[tuple[str, dict]], root: str | None = None, home: str | None = None, name: str = "claude-code"
) -> Imported:
    """Several settings files (lowest precedence first) as one policy: `merge_settings`, each rule marked with
    its file."""
    if len(layers) == 1:
        return import_settings(layers[0][1], layers[0][0], root, home, name)
    settings, origins = merge_settings(layers)
    return _Importer(
        settings,
        [path for path, _ in layers],
        root or _project_of(layers[-1][0]),
        home or os.path.expanduser("~"),
        name,
        origins,
    ).run()


def _project_of(source: str) -> str:
    folder = os.path.dirname(os.path.abspath(source))
    return os.path.dirname(folder) if os.path.basename(folder) == ".claude" else folder


def import_settings(
    settings: dict, source: str, root: str | None = None, home: str | None = None, name: str = "claude-code"
) -> Imported:
    """`root`: the project folder (default: the one holding `.claude/`). Its `/x` and `./x` rules are written
    relative to the workspace the policy decides for, `~/x` ones under `~/`: the policy holds no machine's paths."""
    if not isinstance(settings, dict):
        raise ValueError("a settings file is a JSON object")
    if root is None:
        root = _project_of(source)
    return _Importer(settings, [source], root, home or os.path.expanduser("~"), name).run()
