"""`dshc hook gemini|codex|cursor`: other agents' hook protocols (`PROTOCOLS`), the Claude Code hook's decisions.

In: the agent's hook JSON on stdin. Out: the decision as that agent's protocol takes it, on stdout, exit 0
(`hook.other_agent` reads the event and renders the answer through the agent's row).
The decision is `dshc hook claude-code`'s (`hook._pre`: the same project file, rules, sandbox and guards)
through the agent's tool mapping in catalogs/agents/; any problem is a deny that says why.
- Gemini CLI (geminicli.com/docs/hooks/reference): BeforeTool → `{"decision": allow|deny, "reason"}`, a
  sandboxed shell command as `hookSpecificOutput.tool_input` (merged over the call's arguments); AfterTool
  logs the result and answers `{}`. It cannot ask: an ask is a deny that says so.
- Codex (openai/codex codex-rs/hooks): PreToolUse → a deny as `hookSpecificOutput.permissionDecision`; Codex
  runs a call whose hook answers `ask`, or `allow` without `updatedInput`, as if no hook had answered, so an
  ask is a deny and an allow prints nothing (Codex's own approval policy applies) unless it rewrites the
  command into the sandbox. PostToolUse logs the result and prints nothing.
- Cursor (cursor.com/docs/agent/hooks): beforeShellExecution and beforeMCPExecution →
  `{"permission": allow|deny|ask, "user_message", "agent_message"}`, beforeReadFile → `{"permission":
  allow|deny}`. Cursor cannot rewrite a command, so one the policy's sandbox must confine is denied.
"""

from __future__ import annotations

from ..common import json_io

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable

    # an agent's answer to a decision: (event, effect, reason, rewritten input) -> its JSON, None for nothing
    Render = Callable[[str, str, str, dict | None], dict | None]

USAGE = """usage: dshc hook gemini|codex|cursor [PRESET] [--config .dshc] [--load PATH]... [--no-shipped] [--preset P]
                             [--host H] [--platform P] [--scope S] [--policy P] [--log EVENTS.jsonl]
                             [--workspace DIR]

Reads one Gemini CLI (BeforeTool, AfterTool), Codex (PreToolUse, PostToolUse) or Cursor
(beforeShellExecution, beforeMCPExecution, beforeReadFile) hook event as JSON on stdin; the flags and
the `.dshc` project file are those of `dshc hook claude-code`. Where the protocol cannot ask, a call the
policy would ask about is denied. Always exits 0: a problem is a deny.
"""


def _gemini(event: str, effect: str, reason: str, updated: dict | None) -> dict:
    if effect == "defer":  # no decision: Gemini CLI's own policy decides
        return {}
    effect, reason, updated = _no_ask(effect, reason, updated)
    answer: dict = {"decision": effect, "reason": reason}
    if updated is not None and effect == "allow":
        answer["hookSpecificOutput"] = {"tool_input": updated}
    return answer


def _codex(event: str, effect: str, reason: str, updated: dict | None) -> dict | None:
    if effect == "defer":  # no decision: Codex's own approval policy decides
        return None
    effect, reason, updated = _no_ask(effect, reason, updated)
    if effect == "allow":
        return (
            None
            if updated is None
            else {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "allow",
                    "updatedInput": updated,
                }
            }
        )
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def _cursor(event: str, effect: str, reason: str, updated: dict | None) -> dict:
    if effect == "defer":  # a Cursor hook has no way to leave a call undecided: asked instead
        effect = "ask"
    if updated is not None and effect != "deny":
        effect, reason = (
            "deny",
            (
                "dshc: deny: the policy runs commands in its sandbox, and a Cursor hook cannot "
                f"rewrite a command to run there; {reason}"
            ),
        )
    if event == "beforeReadFile":  # a permission only, and only allow or deny
        return {"permission": "allow" if effect == "allow" else "deny"}
    return {"permission": effect, "user_message": reason, "agent_message": reason}


def _no_ask(effect: str, reason: str, updated: dict | None) -> tuple[str, str, dict | None]:
    if effect != "ask":
        return effect, reason, updated
    return (
        "deny",
        (
            "dshc: deny: the policy asks a human about this call, and this agent's hook cannot ask: run it "
            f"yourself, or allow it in the policy; {reason}"
        ),
        None,
    )


def _same(payload: dict) -> dict:
    return payload


def _cursor_call(tool: str, field: str | None) -> Callable[[dict], dict]:
    """A Cursor event's fields as the call the Claude Code hook decides: `tool` with `field` as its input
    (None: the MCP tool the event names, its input parsed when Cursor sends it as JSON text)."""

    def call(payload: dict) -> dict:
        if field is None:
            name, tool_input = payload.get("tool_name"), payload.get("tool_input")
            if isinstance(tool_input, str):
                try:
                    tool_input = json_io.loads(tool_input)
                except ValueError:
                    tool_input = {"input": tool_input}
        else:
            name, tool_input = tool, {field: payload.get(field)}
        roots = payload.get("workspace_roots")
        root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) else None
        return {
            "tool_name": name,
            "tool_input": tool_input if isinstance(tool_input, dict) else {},
            "cwd": payload.get("cwd") if isinstance(payload.get("cwd"), str) else root,
            "session_id": payload.get("conversation_id"),
            "tool_use_id": payload.get("generation_id"),
            "workspace_root": root,
        }

    return call


# agent -> (its events before a call -> the call as the Claude Code hook reads it, its event after a call,
# the answer to a decision, the answer to any other event)
PROTOCOLS: dict[str, tuple[dict[str, Callable[[dict], dict]], str | None, Render, dict | None]] = {
    "gemini": ({"BeforeTool": _same}, "AfterTool", _gemini, {}),
    "codex": ({"PreToolUse": _same}, "PostToolUse", _codex, None),
    "cursor": (
        {
            "beforeShellExecution": _cursor_call("Shell", "command"),
            "beforeMCPExecution": _cursor_call("", None),
            "beforeReadFile": _cursor_call("Read", "file_path"),
        },
        None,
        _cursor,
        {},
    ),
}
