"""Codex config.toml (+ execpolicy `prefix_rule(...)` files) → a `.dsh` policy, plus what could not be said.

In: `approval_policy`, `sandbox_mode`, `[sandbox_workspace_write]` and rules files. Out: policy text
and notes. A rules file is Starlark; only literal `prefix_rule(...)` calls are read (parsed as a
Python expression tree, never executed). Each rule's `match` / `not_match` examples are checked
against the imported pattern, and any disagreement is a note.
"""

from __future__ import annotations

import ast as pyast
import itertools
import os
import shlex
import tomllib

from ..globs import glob_match
from .claude_settings import Imported, Note
from .dsl_out import PolicyText, any_of

DECISIONS = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}
# commands Codex runs without asking under `untrusted` (its known-safe list, without the ones
# whose flags can write or execute: find, rg, sed)
SAFE_COMMANDS = (
    "cat",
    "cd",
    "echo",
    "false",
    "grep",
    "head",
    "ls",
    "nl",
    "pwd",
    "rev",
    "seq",
    "stat",
    "tail",
    "tr",
    "true",
    "uname",
    "uniq",
    "wc",
    "which",
    "whoami",
    "git status",
    "git log",
    "git diff",
    "git show",
)


def import_codex(config_text: str, source: str, rules: dict[str, str] | None = None, name: str = "codex") -> Imported:
    """`rules`: path → text of execpolicy files."""
    try:
        config = tomllib.loads(config_text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source} is not TOML: {exc}") from None
    notes: list[Note] = []
    approval_policy = config.get("approval_policy", "on-request")
    sandbox_mode = config.get("sandbox_mode", "read-only")
    if sandbox_mode not in ("read-only", "workspace-write", "danger-full-access"):
        notes.append(Note(f"sandbox_mode = {sandbox_mode!r}", "unknown mode; imported as `read-only`"))
        sandbox_mode = "read-only"
    if approval_policy not in ("untrusted", "on-failure", "on-request", "never"):
        notes.append(Note(f"approval_policy = {approval_policy!r}", "unknown policy; imported as `untrusted`"))
        approval_policy = "untrusted"
    policy = PolicyText(
        name,
        f"Codex config: {os.path.basename(source)}",
        sandbox_mode,
        "never" if approval_policy == "never" else "ask",
        "ask" if approval_policy == "untrusted" else "allow",
        header=[
            f"Imported from {source} by `dshc import codex`.",
            "Each rule is preceded by the setting it came from.",
        ],
    )
    origin = f"approval_policy = {approval_policy!r}"
    if approval_policy == "untrusted":
        policy.rule(
            origin + ": reads and known-safe commands run without asking",
            "allow",
            ["read", "read_image", "glob", "grep", "todo_write"],
        )
        policy.rule(origin, "allow", ["bash"], any_of("args.command", [c + " *" for c in SAFE_COMMANDS]))
    elif approval_policy == "on-failure":
        notes.append(
            Note(
                origin,
                "Codex asks after a sandboxed command fails; a failure is not known before the "
                "call, so only escalations ask",
            )
        )
    if approval_policy in ("on-request", "on-failure"):
        policy.rule(origin + ": leaving the sandbox needs an approval", "ask", ["bash"], "has args.sandbox_permissions")
    _sandbox(policy, config, sandbox_mode, notes)
    for path, text in (rules or {}).items():
        _rules_file(policy, path, text, notes)
    for key in sorted(set(config) - {"approval_policy", "sandbox_mode", "sandbox_workspace_write"}):
        if key in ("shell_environment_policy", "profiles", "mcp_servers"):
            notes.append(Note(key, "not a permission setting dshc imports; ignored"))
    return Imported(policy.render(), tuple(notes))


def _sandbox(policy: PolicyText, config: dict, mode: str, notes: list[Note]) -> None:
    origin = f"sandbox_mode = {mode!r}"
    if mode == "read-only":
        policy.rule(origin + ": file changes need an approval", "ask", ["edit", "write"])
        return
    if mode != "workspace-write":
        return
    table = config.get("sandbox_workspace_write") or {}
    roots = [r for r in table.get("writable_roots", []) if isinstance(r, str)]
    outside = "args.file_path outside workspace"
    if roots:
        outside += " and not " + any_of(
            "args.file_path", [p for r in roots for p in (r.rstrip("/"), r.rstrip("/") + "/*")]
        )
    policy.rule(
        origin + (f" with writable_roots {roots}" if roots else "") + ": writes elsewhere need an approval",
        "ask",
        ["edit", "write"],
        outside,
    )
    if "network_access" in table:
        notes.append(
            Note(
                f"sandbox_workspace_write.network_access = {table['network_access']!r}",
                "network confinement of the sandbox, not a permission rule; not expressed",
            )
        )
    for key in sorted(set(table) - {"writable_roots", "network_access"}):
        notes.append(Note(f"sandbox_workspace_write.{key}", "sandbox detail, not a permission rule; not expressed"))


def _rules_file(policy: PolicyText, path: str, text: str, notes: list[Note]) -> None:
    try:
        tree = pyast.parse(text, filename=path)
    except SyntaxError as exc:
        notes.append(Note(path, f"cannot read the rules file: {exc.msg} at line {exc.lineno}"))
        return
    for statement in tree.body:
        call = statement.value if isinstance(statement, pyast.Expr) else None
        where = f"{path}:{statement.lineno}"
        if not (isinstance(call, pyast.Call) and isinstance(call.func, pyast.Name) and call.func.id == "prefix_rule"):
            notes.append(Note(where, "only `prefix_rule(...)` calls are imported; skipped"))
            continue
        try:
            fields = {k.arg: pyast.literal_eval(k.value) for k in call.keywords}
        except ValueError:
            notes.append(Note(where, "a `prefix_rule` argument is not a literal; skipped"))
            continue
        _prefix_rule(policy, where, fields, notes)


def _prefix_rule(policy: PolicyText, where: str, fields: dict, notes: list[Note]) -> None:
    pattern = fields.get("pattern")
    effect = DECISIONS.get(fields.get("decision", "allow"))
    if not isinstance(pattern, list) or not pattern or effect is None:
        notes.append(
            Note(where, "a prefix_rule needs a non-empty `pattern` list and decision allow|prompt|forbidden; skipped")
        )
        return
    alternatives = [[t] if isinstance(t, str) else list(t) for t in pattern]
    globs = [" ".join(shlex.quote(t) for t in combo) + " *" for combo in itertools.product(*alternatives)]
    if effect == "allow" and any(c in "".join(g[:-2] for g in globs) for c in "*?"):
        notes.append(Note(where, "`*` or `?` inside a token is a wildcard in dshc globs: this allow is wider"))
    origin = f"{where}: prefix_rule(pattern={pattern!r}, decision={fields.get('decision', 'allow')!r})"
    policy.rule(origin, effect, ["bash"], any_of("args.command", globs))
    for example in fields.get("match", []) or []:
        line = example if isinstance(example, str) else shlex.join(example)
        if not any(glob_match(g, line, shell=True) for g in globs):
            notes.append(Note(where, f"its `match` example `{line}` does not match the imported pattern"))
    for example in fields.get("not_match", []) or []:
        line = example if isinstance(example, str) else shlex.join(example)
        if any(glob_match(g, line, shell=True) for g in globs):
            notes.append(Note(where, f"its `not_match` example `{line}` matches the imported pattern"))
