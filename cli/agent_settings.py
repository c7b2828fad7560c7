"""An agent's own permission settings file (Claude Code, Codex, Gemini CLI) read as a `.dsh` source, so
`dshc diff` and `verify --against` can take one as a side."""

from __future__ import annotations

import json
import os
import re

from ..compiler.diagnostics import Diagnostic, DshError


def read_input(path: str) -> str:
    """The text of an input file, or DSH107 saying why it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise DshError([Diagnostic("DSH107", f"cannot read an input file: {exc}", path=path)])


def agent_source(spec: str):
    """An agent's permission settings as one side of `dshc diff`: Claude Code's `settings*.json` or
    `managed-settings.json`, a Gemini CLI policy `*.toml` (`[[rule]]` tables), Codex's other `*.toml`,
    imported to a `.dsh` source; None for anything else."""
    name = os.path.basename(spec)
    if not os.path.isfile(spec):
        return None
    if name.endswith(".json") and (name.startswith("settings") or name == "managed-settings.json"):
        agent = "claude-code"
    elif name.endswith(".toml"):
        agent = "codex"
    else:
        return None
    text = read_input(spec)
    if agent == "codex" and re.search(r"(?m)^\s*\[\[\s*rule\s*\]\]", text):
        agent = "gemini"
    from ..compiler.program import SourceFile

    try:
        if agent == "claude-code":
            from ..compiler.interop.claude_settings import import_settings

            try:
                settings = json.loads(text)
            except ValueError as exc:
                raise ValueError(f"{spec} is not JSON: {exc}") from None
            policy = import_settings(settings, os.path.abspath(spec)).text
        elif agent == "gemini":
            from ..compiler.interop.gemini_import import import_gemini

            policy = import_gemini({os.path.abspath(spec): text}).text
        else:
            from ..compiler.interop.codex_config import import_codex

            policy = import_codex(text, os.path.abspath(spec)).text
    except ValueError as exc:
        raise DshError([Diagnostic("DSH405", str(exc), path=spec)])
    return SourceFile(f"{spec} ({agent} import)", policy.encode("utf-8"))
