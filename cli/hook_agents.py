"""`dshc hook gemini` and `dshc hook codex`: other agents' hook protocols, the Claude Code hook's decisions.

In: the agent's hook JSON on stdin. Out: the decision as that agent's protocol takes it, on stdout, exit 0.
The decision is `dshc hook claude-code`'s (`hook._pre`: the same project file, rules, sandbox and guards)
through the agent's tool mapping in catalogs/agents/. Neither protocol can ask a human, so an `ask` is a deny
that says so; any problem is a deny that says why.
- Gemini CLI (geminicli.com/docs/hooks/reference): BeforeTool → `{"decision": allow|deny, "reason"}`, a
  sandboxed shell command as `hookSpecificOutput.tool_input` (merged over the call's arguments); AfterTool
  logs the result and answers `{}`.
- Codex (openai/codex codex-rs/hooks): PreToolUse → a deny as `hookSpecificOutput.permissionDecision`; Codex
  runs a call whose hook answers `ask`, or `allow` without `updatedInput`, as if no hook had answered, so an
  allow prints nothing (Codex's own approval policy applies) unless it rewrites the command into the sandbox.
  PostToolUse logs the result and prints nothing.
"""
from __future__ import annotations

import sys

from ..compiler import json_io

USAGE = """usage: dshc hook gemini|codex [PRESET] [--config .dshc] [--load PATH]... [--no-shipped] [--preset P]
                             [--host H] [--platform P] [--scope S] [--policy P] [--log EVENTS.jsonl]
                             [--workspace DIR]

Reads one Gemini CLI (BeforeTool, AfterTool) or Codex (PreToolUse, PostToolUse) hook event as JSON on
stdin; the flags and the `.dshc` project file are those of `dshc hook claude-code`. A call the policy
would ask about is denied: neither hook protocol can ask. Always exits 0: a problem is a deny.
"""


def _gemini(effect: str, reason: str, updated: dict | None) -> dict:
    answer = {"decision": effect, "reason": reason}
    if updated is not None and effect == "allow":
        answer["hookSpecificOutput"] = {"tool_input": updated}
    return answer


def _codex(effect: str, reason: str, updated: dict | None) -> dict | None:
    if effect == "allow":
        return None if updated is None else {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": updated}}
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


# agent -> (its event before a call, its event after one, the answer to a decision, the answer to the rest)
PROTOCOLS = {
    "gemini": ("BeforeTool", "AfterTool", _gemini, {}),
    "codex": ("PreToolUse", "PostToolUse", _codex, None),
}


def main(argv: list[str], stdin=None, stdout=None, stderr=None) -> int:
    from . import hook
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    if "-h" in argv or "--help" in argv:
        stdout.write(USAGE)
        return 0
    before, after, render, nothing = PROTOCOLS[argv[0]]
    event, answer = before, nothing
    try:
        options = hook._options(["claude-code", *argv[1:]])  # the same flags; the agent is this one
        options.agent = argv[0]
        try:
            payload = json_io.loads(stdin.read())
        except ValueError as exc:
            raise hook._HookInputError(f"the hook input is not JSON ({exc.__class__.__name__}: {exc})") from None
        if not isinstance(payload, dict):
            raise hook._HookInputError("the hook input is not a JSON object")
        event = payload.get("hook_event_name") or before
        if event == after:
            hook._post(options, payload)
        elif event != before:
            stderr.write(f"dshc hook: `{event}` is not handled; nothing to do\n")
        else:
            answer = render(*_no_ask(*hook._pre(options, payload)))
    except Exception as exc:  # noqa: BLE001 - the hook must answer; an unexpected problem denies
        if event == before:
            answer = render("deny", f"dshc hook could not decide, so it denies: {hook._describe(exc)}", None)
        else:
            stderr.write(f"dshc hook: the result was not logged: {hook._describe(exc)}\n")
    if answer is not None:
        stdout.write(json_io.dumps(answer, ensure_ascii=False) + "\n")
        stdout.flush()
    return 0


def _no_ask(effect: str, reason: str, updated: dict | None) -> tuple[str, str, dict | None]:
    if effect != "ask":
        return effect, reason, updated
    return "deny", ("dshc: deny: the policy asks a human about this call, and this agent's hook cannot ask: run it "
                    f"yourself, or allow it in the policy; {reason}"), None
