"""`dshc hook gemini`: a Gemini CLI hook process, one per tool call (geminicli.com/docs/hooks/reference).

In: the hook's JSON on stdin (BeforeTool or AfterTool). Out: for BeforeTool `{"decision": allow|deny,
"reason": …}` on stdout, exit 0, decided as `dshc hook claude-code` decides (the same rules, project file and
sandbox, through catalogs/agents/gemini.json); a shell command the policy's sandbox must confine comes back as
`hookSpecificOutput.tool_input`, which Gemini CLI merges over the call's arguments. Gemini CLI hooks cannot
ask a human, so an `ask` is a deny that says so. AfterTool logs the result and answers `{}`.
"""
from __future__ import annotations

import sys

from ..compiler import json_io

USAGE = """usage: dshc hook gemini [PRESET] [--config .dshc] [--load PATH]... [--no-shipped] [--preset P]
                       [--host H] [--platform P] [--scope S] [--policy P] [--log EVENTS.jsonl] [--workspace DIR]

Reads one Gemini CLI hook event (BeforeTool or AfterTool) as JSON on stdin; the flags and the `.dshc`
project file are those of `dshc hook claude-code`. BeforeTool prints the decision; a call the policy
would ask about is denied (a Gemini CLI hook cannot ask). Always exits 0: a problem is a deny.
"""


def main(argv: list[str], stdin=None, stdout=None, stderr=None) -> int:
    from . import hook
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    if "-h" in argv or "--help" in argv:
        stdout.write(USAGE)
        return 0
    event, answer = "BeforeTool", {}
    try:
        options = hook._options(["claude-code", *argv[1:]])  # the same flags; the agent is this one
        options.agent = "gemini"
        try:
            payload = json_io.loads(stdin.read())
        except ValueError as exc:
            raise hook._HookInputError(f"the hook input is not JSON ({exc.__class__.__name__}: {exc})") from None
        if not isinstance(payload, dict):
            raise hook._HookInputError("the hook input is not a JSON object")
        event = payload.get("hook_event_name") or "BeforeTool"
        if event == "AfterTool":
            hook._post(options, payload)
        elif event != "BeforeTool":
            stderr.write(f"dshc hook: `{event}` is not handled; nothing to do\n")
        else:
            answer = _answer(*hook._pre(options, payload))
    except Exception as exc:  # noqa: BLE001 - the hook must answer; an unexpected problem denies
        if event == "BeforeTool":
            answer = _answer("deny", f"dshc hook could not decide, so it denies: {hook._describe(exc)}", None)
        else:
            stderr.write(f"dshc hook: the result was not logged: {hook._describe(exc)}\n")
    stdout.write(json_io.dumps(answer, ensure_ascii=False) + "\n")
    stdout.flush()
    return 0


def _answer(effect: str, reason: str, updated: dict | None) -> dict:
    if effect == "ask":
        effect, reason = "deny", ("dshc: deny: the policy asks a human about this call, and a Gemini CLI hook cannot "
                                  f"ask: run it yourself, or allow it in the policy; {reason}")
    answer = {"decision": effect, "reason": reason}
    if updated is not None and effect == "allow":  # the call as it must run: its command inside the sandbox
        answer["hookSpecificOutput"] = {"tool_input": updated}
    return answer
