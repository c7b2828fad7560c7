"""Agent tool calls → catalog calls, through the per-agent mappings in catalogs/agents/*.json.

In: an agent name, the agent's tool name and input. Out: the catalog calls to decide (usually
one; an apply_patch touching three files is three), or none when the tool is unmapped.
"""

from __future__ import annotations

import os
from _collections_abc import (
    Mapping,
)  # collections.abc's own source, loaded at start-up (collections.abc loads collections)

from ...common import json_io
from .._base.frozen import record
from .._base.memo import memoised
from ..package_data import package_path
from ..patterns import Pattern

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Any

AGENTS = ("claude-code", "codex", "cursor", "gemini")
MODE_FLAG = "permission-mode-"  # + the agent's permission mode: the flag a session in that mode decides under


def mode_flags(mode: Any) -> frozenset:
    """The request flags of an agent session's permission mode (`acceptEdits` → `permission-mode-acceptEdits`)."""
    return frozenset({MODE_FLAG + mode}) if isinstance(mode, str) and mode.isalnum() else frozenset()


@record(slots=False)
class AgentTool:
    name: str
    tool: str  # the catalog tool
    family: str  # shell | read | edit | domain | plain: how permission specifiers read
    needs_permission: bool
    args: Mapping[str, str]
    fixed: Mapping[str, Any]
    when_true: Mapping[str, Mapping[str, Any]]
    paths: tuple[str, ...]
    urls: tuple[str, ...]
    argv: tuple[str, ...]
    patch: tuple[str, ...] | None  # the arguments that may hold an apply_patch text, the first present used
    cwd: str | None = None  # the catalog argument that takes the call's working directory (a shell's `workdir`)
    only: Mapping[str, str] | None = None  # catalog argument -> glob (`!glob`: not it) marking this tool's calls
    specifier: str | None = None  # the catalog argument a `Tool(specifier)` rule of the plain family names


@record(slots=False)
class AgentMapping:
    agent: str
    mcp_prefix: str
    tools: Mapping[str, AgentTool]
    families: Mapping[str, tuple[str, ...]]


@record(slots=False)
class CatalogCall:
    tool: str | None  # None: the agent tool has no catalog counterpart
    args: dict


def _names(value) -> tuple[str, ...] | None:
    return None if value is None else (value,) if isinstance(value, str) else tuple(value)


@memoised(64)
def load_mapping(agent: str) -> AgentMapping:
    if agent not in AGENTS:
        raise ValueError(f"unknown agent `{agent}` (known: {', '.join(AGENTS)})")
    with open(os.path.join(package_path("dshc.catalogs"), "agents", f"{agent}.json"), encoding="utf-8") as handle:
        raw = json_io.loads(handle.read())
    tools = {
        name: AgentTool(
            name,
            t["tool"],
            t["family"],
            bool(t["needs_permission"]),
            dict(t.get("args", {})),
            dict(t.get("fixed", {})),
            dict(t.get("when_true", {})),
            tuple(t.get("paths", ())),
            tuple(t.get("urls", ())),
            tuple(t.get("argv", ())),
            _names(t.get("patch")),
            t.get("cwd"),
            t.get("only"),
            t.get("specifier"),
        )
        for name, t in raw["tools"].items()
    }
    return AgentMapping(raw["agent"], raw["mcp_prefix"], tools, {k: tuple(v) for k, v in raw["families"].items()})


def normal_path(value: Any, cwd: str | None) -> Any:
    """Absolute and without `.`/`..` segments, so a path pattern sees the file the tool would touch."""
    if not isinstance(value, str) or not value:
        return value
    path = os.path.expanduser(value)
    if not os.path.isabs(path) and cwd:
        path = os.path.join(cwd, path)
    return os.path.normpath(path) if os.path.isabs(path) else value


def normal_url(value: Any) -> Any:
    """Scheme and host in lower case, as every URL parser reads them, so a domain rule sees the real host."""
    if not isinstance(value, str):
        return value
    found = _URL.match(value)
    return found.group(1).lower() + found.group(2).lower() + found.group(3) if found else value


_URL = Pattern(r"(?s)^([A-Za-z][A-Za-z0-9+.\-]*://)([^/?#]*)(.*)$")
_PATCH_FILE = Pattern(r"(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$")


def map_call(agent: str, name: str, tool_input: Mapping[str, Any] | None, cwd: str | None = None) -> list[CatalogCall]:
    """The catalog calls an agent's tool call stands for; [CatalogCall(None, {})] when unmapped."""
    mapping = load_mapping(agent)
    spec = mapping.tools.get(name)
    if spec is None:
        return [CatalogCall(None, {})]
    source = tool_input if isinstance(tool_input, Mapping) else {}
    args: dict[str, Any] = dict(spec.fixed)
    for theirs, ours in spec.args.items():
        if theirs in source:
            value = source[theirs]
            if theirs in spec.argv and isinstance(value, list):
                import shlex  # an argv given as a list: rare, and shlex imports `re`

                value = shlex.join(str(v) for v in value)
            args[ours] = value
    for theirs, implied in spec.when_true.items():
        if source.get(theirs) is True:
            args.update(implied)
    for field in spec.paths:
        if field in args:
            args[field] = normal_path(args[field], cwd)
    if spec.cwd and cwd and spec.cwd not in args:
        # a relative path in a command line is where the shell is (`cd sub` earlier in the session), as a
        # file tool's relative path is: `cat ../../.ssh/id_rsa` from `a/b` is the Read of that file
        args[spec.cwd] = cwd
    for field in spec.urls:
        if field in args:
            args[field] = normal_url(args[field])
    if spec.patch is None:
        return [CatalogCall(spec.tool, args)]
    text = next((source[name] for name in spec.patch if isinstance(source.get(name), str)), None)
    files = [a or b for a, b in _PATCH_FILE.findall(text)] if isinstance(text, str) else []
    if not files:  # a patch we cannot read still gets a decision, on no particular file
        return [CatalogCall(spec.tool, args)]
    return [CatalogCall(spec.tool, {**args, "file_path": normal_path(f.strip(), cwd)}) for f in files]
