"""`dshc hook claude-code`: a Claude Code hook process, one per tool call.

In: the hook's JSON on stdin (PreToolUse or PostToolUse). Out: for PreToolUse, the documented
answer `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": allow|ask|deny,
"permissionDecisionReason": …}}` on stdout, exit 0; for a Bash call under a policy that declares a
sandbox, also `updatedInput`: the same call, its command run inside that sandbox (`hook_sandbox`); a file
change Claude Code makes itself that the sandbox would refuse is asked about (`call_decision`).
It never crashes: any problem, including bad input, is a deny that says why. PostToolUse appends the result to the event log and prints nothing.
Imports stay inside functions: the process pays only for what this event needs.
"""

from __future__ import annotations

import sys

from ..common import json_io  # the json package imports `re` (~30M instructions) for nothing a hook needs

# permission modes in which Claude Code may run a hook's `ask` unprompted (anthropics/claude-code#89561: `auto`;
# #77212: `bypassPermissions` before 2.1.233) or cannot prompt (`dontAsk`): an ask there is a denial
UNPROMPTED_MODES = frozenset({"auto", "bypassPermissions", "dontAsk"})

USAGE = """usage: dshc hook claude-code [PRESET] [--config .dshc] [--load PATH]... [--no-shipped] [--preset P]
                            [--host H] [--platform P] [--scope S] [--policy P] [--log EVENTS.jsonl]
                            [--workspace DIR]

Reads one Claude Code hook event (PreToolUse or PostToolUse) as JSON on stdin. PreToolUse prints
the permission decision; PostToolUse appends the result to the event log. Flags override the
`.dshc` project file: the one of the project folder (--workspace, else $CLAUDE_PROJECT_DIR) or above it,
and a `.dshc` between the call's cwd and that folder denies the call; with neither, the folder of the
outermost `.dshc` from the call's cwd upward is the project folder. Always exits 0: a problem is a deny.
"""


def main(argv: list[str], stdin=None, stdout=None, stderr=None) -> int:
    if argv[:1] in (["gemini"], ["codex"], ["cursor"]):  # their own protocols, the same decisions
        return _other_agent(argv, stdin, stdout, stderr)
    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    event = "PreToolUse"
    if "-h" in argv or "--help" in argv:  # help wherever it is asked for, never a decision
        stdout.write(USAGE)
        return 0
    try:
        options = _options(argv)
        raw = stdin.read()
        try:
            payload = json_io.loads(raw)
        except ValueError as exc:
            raise _HookInputError(f"the hook input is not JSON ({exc.__class__.__name__}: {exc})") from None
        if not isinstance(payload, dict):
            raise _HookInputError("the hook input is not a JSON object")
        event = payload.get("hook_event_name") or "PreToolUse"
        if event == "PostToolUse":
            _post(options, payload)
            return 0
        if event != "PreToolUse":
            stderr.write(f"dshc hook: `{event}` is not handled; nothing to do\n")
            return 0
        effect, reason, updated = _pre(options, payload)
    except Exception as exc:  # noqa: BLE001 - the hook must answer; an unexpected problem denies
        if event == "PostToolUse":
            stderr.write(f"dshc hook: the result was not logged: {_describe(exc)}\n")
            return 0
        effect, reason, updated = "deny", f"dshc hook could not decide, so it denies: {_describe(exc)}", None
    if effect == "defer":  # no decision: Claude Code's own permission rules decide (`unmapped = "defer"`)
        stderr.write(reason + "\n")
        return 0
    answer: dict = {"hookEventName": "PreToolUse", "permissionDecision": effect, "permissionDecisionReason": reason}
    if updated is not None:  # the call as it must run: its command inside the policy's sandbox
        answer["updatedInput"] = updated
    stdout.write(json_io.dumps({"hookSpecificOutput": answer}, ensure_ascii=False) + "\n")
    stdout.flush()
    return 0


def _other_agent(argv: list[str], stdin, stdout, stderr) -> int:
    """`dshc hook gemini|codex|cursor`: the decision of `_pre` through that agent's protocol (`hook_agents`)."""
    from .hook_agents import PROTOCOLS, USAGE as AGENTS_USAGE

    stdin, stdout, stderr = stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr
    if "-h" in argv or "--help" in argv:
        stdout.write(AGENTS_USAGE)
        return 0
    before, after, render, nothing = PROTOCOLS[argv[0]]
    event, answer = next(iter(before)), nothing  # unreadable input is answered as the first event would be
    try:
        options = _options(["claude-code", *argv[1:]])  # the same flags; the agent is this one
        options.agent = argv[0]
        try:
            payload = json_io.loads(stdin.read())
        except ValueError as exc:
            raise _HookInputError(f"the hook input is not JSON ({exc.__class__.__name__}: {exc})") from None
        if not isinstance(payload, dict):
            raise _HookInputError("the hook input is not a JSON object")
        event = payload.get("hook_event_name") or event
        if event == after:
            _post(options, payload)
        elif event not in before:
            stderr.write(f"dshc hook: `{event}` is not handled; nothing to do\n")
        else:
            call = before[event](payload)
            # the project folder the agent names (Cursor's workspace root), as CLAUDE_PROJECT_DIR for Claude Code
            options.workspace = options.workspace or call.pop("workspace_root", None)
            answer = render(event, *_pre(options, call))
    except Exception as exc:  # noqa: BLE001 - the hook must answer; an unexpected problem denies
        if event in before:
            answer = render(event, "deny", f"dshc hook could not decide, so it denies: {_describe(exc)}", None)
        else:
            stderr.write(f"dshc hook: the result was not logged: {_describe(exc)}\n")
    if answer is not None:
        stdout.write(json_io.dumps(answer, ensure_ascii=False) + "\n")
        stdout.flush()
    return 0


class _HookInputError(ValueError):
    pass


def _describe(exc: BaseException) -> str:
    from ..compiler.diagnostics import DshError

    if isinstance(exc, ModuleNotFoundError):  # a module of an optional extra (a PostgreSQL log): name the extra
        from .extras import translated

        exc = translated(exc, "hook")
    if isinstance(exc, DshError):
        from ..compiler.render import human

        return human(exc.diagnostics).strip().splitlines()[0]
    return str(exc) if isinstance(exc, (_HookInputError, ValueError)) else f"{exc.__class__.__name__}: {exc}"


DEFAULT_POLICY = "guarded"  # policies/guarded.dsh
VALUE_FLAGS = ("--preset", "--host", "--platform", "--scope", "--policy", "--log", "--workspace")


def _options(argv: list[str]):
    if argv == ["claude-code"]:  # as agents' settings spawn it: nothing to parse, so no argparse (~3 ms) to load
        from types import SimpleNamespace

        return SimpleNamespace(
            agent="claude-code", config=None, load=[], no_shipped=False, **{flag[2:]: None for flag in VALUE_FLAGS}
        )
    return _parsed_options(argv)


def _parsed_options(argv: list[str]):
    import argparse

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise _HookInputError(f"bad hook command line: {message}")

    from .help_format import HelpFormatter
    from .preset_argument import add_preset, one_preset

    p = Parser(prog="dshc hook", add_help=False, formatter_class=HelpFormatter)
    p.add_argument("agent", choices=["claude-code"])
    add_preset(p)
    p.add_argument("--config", help="the .dshc project file (default: the project folder's)")
    p.add_argument("--load", action="append", default=[])
    p.add_argument("--no-shipped", action="store_true")
    for flag in (f for f in VALUE_FLAGS if f != "--preset"):  # --preset: add_preset's
        p.add_argument(flag)
    return one_preset(p.parse_args(argv))


def _setup(options, payload: dict):
    """Project file + flags → (project, program, request, workspace, log path)."""
    from ..compiler import program_cache
    from ..compiler.catalog_overlay import overlaid_catalog
    from ..compiler.request import Request

    project = _project(options, payload)
    # the same sources every call: a cached Program skips parse and resolve
    program = program_cache.load(
        [*project.load, *options.load], shipped=not options.no_shipped, catalog=overlaid_catalog(project.catalog)
    )
    fields = {
        key: getattr(options, key) or getattr(project, key) for key in ("preset", "host", "platform", "scope", "policy")
    }
    if project.path is None and fields["policy"] is None and not options.no_shipped:
        fields["policy"] = DEFAULT_POLICY  # no project file and no --policy: the shipped protective default
    # Claude Code's plan mode is dshc's: it may change decisions, never the tools listed; every mode is also a
    # flag (`flag permission-mode-acceptEdits`), so an imported `defaultMode` follows the session's mode
    from ..compiler.interop.agents import mode_flags

    mode = payload.get("permission_mode")
    request = Request(**{k: v for k, v in fields.items() if v is not None}, plan=mode == "plan", flags=mode_flags(mode))
    workspace = options.workspace or project.root
    return project, program, request, workspace, _log_path(options, project, payload)


def _log_path(options, project, payload: dict) -> str | None:
    """`--log`, else the project file's `log`, else the project's log in the user's state folder, outside
    the workspace (`log_target.project_log`); None for `off`. `{session}` in a given name is the agent's
    session id."""
    from ..compiler.project import LOG_OFF

    log = options.log or project.log
    if log == LOG_OFF:
        return None
    if not log:
        from .log_target import project_log

        return project_log(project.root)
    return log.replace("{session}", _safe(payload.get("session_id"))) if "{session}" in log else log


def _project(options, payload: dict):
    """The project file this hook trusts: `--config`, else the one of the project folder it serves (`--workspace`,
    else the folder Claude Code names in CLAUDE_PROJECT_DIR; with neither, the folder of the outermost `.dshc`
    from the call's cwd up), refusing a `.dshc` below that folder."""
    import os
    from ..compiler.project import locate

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    return locate(options.config, cwd, options.workspace or os.environ.get("CLAUDE_PROJECT_DIR") or None)


def _safe(text) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in str(text or "unknown"))[:80]


def _pre(options, payload: dict) -> tuple[str, str, dict | None]:
    from ..compiler.interop.agents import map_call
    from ..compiler.policy import stricter

    name = payload.get("tool_name")
    if not isinstance(name, str) or not name:
        raise _HookInputError("the hook input has no `tool_name`")
    tool_input = payload.get("tool_input")
    if tool_input is not None and not isinstance(tool_input, dict):
        raise _HookInputError("`tool_input` is not a JSON object")
    project, program, request, workspace, log = _setup(options, payload)
    if program.reads_session(request):  # the policy tests what this session did: its records in the log
        from .session_log import session_of_log

        request = request.model_copy(update={"session": session_of_log(log, _log_session(payload), workspace)})
    calls = map_call(options.agent, name, tool_input or {}, payload.get("cwd") or workspace)
    keep = (*_configuration(project, workspace), *_log_files(log))  # what configures the hook, and its log
    sandbox = _file_sandbox(program, request, keep)
    worst = None
    for call in calls:
        effect, reason, decided = decide_call(
            program, request, name, call, tool_input or {}, workspace, project.unmapped, sandbox, options.agent
        )
        if worst is None or stricter(effect, worst[0]):
            worst = (effect, reason, decided, call)
    if worst is None:  # never: `map_call` gives every call at least one (an unmapped one, a tool of None)
        raise ValueError(f"`{name}` maps to no call")
    effect, reason, decided, call = worst
    updated = None
    if effect != "deny":
        effect, reason = _changes_policy(
            options.agent,
            name,
            calls,
            tool_input or {},
            payload.get("cwd") or workspace,
            _policy_files(project, options),
            effect,
            reason,
        )
    if effect != "deny":
        effect, reason, updated = _confined(
            options.agent,
            program,
            request,
            name,
            tool_input or {},
            workspace,
            effect,
            reason,
            keep,
            _escalated(effect, call, sandbox),
        )
        effect, reason = _searches(
            options.agent,
            program,
            request,
            name,
            tool_input or {},
            payload.get("cwd") or workspace,
            workspace,
            effect,
            reason,
        )
    mode = payload.get("permission_mode")
    if effect in ("ask", "defer") and mode in UNPROMPTED_MODES:  # the agent would run it unasked
        effect, reason = (
            "deny",
            (
                f"dshc: deny: in permission mode `{mode}` Claude Code may run an `ask` without "
                f"prompting, so it is denied; {reason}"
            ),
        )
    if log:
        _log_pre(log, program, request, workspace, payload, name, call, effect, reason, decided)
    return effect, reason, updated


def _configuration(project, workspace: str) -> tuple[str, ...]:
    """What decides what the next call gets: the project file, the declarations it loads, and Claude Code's
    project folder (the settings that register the hook, its hook scripts, commands and agents), made if
    missing: a settings file created there would be read as one."""
    import os

    return tuple(path for path in (project.path, *project.load, os.path.join(workspace, ".claude") + "/") if path)


def _policy_files(project, options) -> tuple[str, ...]:
    """What decides this hook's policy besides its flags: the project file, the declarations it and the flags
    load, the catalog overlays it adds."""
    return tuple(path for path in (project.path, *project.load, *options.load, *project.catalog) if path)


def _changes_policy(
    agent: str, name: str, calls, tool_input: dict, cwd: str, files: tuple[str, ...], effect: str, reason: str
) -> tuple[str, str]:
    """(effect, reason) for a call that would change what decides this hook's policy: a `.dshc` anywhere (one
    below the project folder is refused when read, one at it is the project file) or a file the project loads.
    A Write, an Edit, or a shell line naming such a file as one it writes is denied, under any policy: an agent
    that chose its own policy would need no other escape."""
    import os
    from ..compiler.interop.agents import load_mapping
    from ..compiler.project import FILE_NAME

    tool = load_mapping(agent).tools.get(name)
    if tool is None:
        return effect, reason
    if tool.family == "edit":
        paths = [call.args.get("file_path") for call in calls]
    elif tool.family == "shell" and isinstance(tool_input.get("command"), str):
        paths = _written_by(tool_input["command"], (FILE_NAME, *(os.path.basename(f.rstrip("/")) for f in files)))
    else:
        return effect, reason
    kept = [os.path.realpath(path) for path in files]
    for path in paths:
        if not isinstance(path, str) or not path:
            continue
        path = os.path.join(cwd, os.path.expanduser(path))
        real = os.path.realpath(path)
        if FILE_NAME in (os.path.basename(path).lower(), os.path.basename(real).lower()) or any(
            real == each or real.startswith(each.rstrip("/") + "/") for each in kept
        ):
            return "deny", (
                f"dshc: deny: `{os.path.normpath(path)}` decides this hook's policy (a `.dshc` project "
                "file, or a file the project loads), and the agent may not change what decides its own "
                f"policy: edit it yourself; the rules alone said: {reason}"
            )
    return effect, reason


def _written_by(command: str, names: tuple[str, ...]) -> list[str]:
    """The files a shell line names as ones it writes, when its text holds one of `names` at all (the analysis
    is skipped for every other line)."""
    if not any(each and each in command for each in names):
        return []
    from ..compiler.shell import analyse

    found = analyse(command)
    return [access.path for access in found.files if access.kind == "write"] if found is not None else []


def _log_files(log: str | None) -> tuple[str, ...]:
    """The event log's own files, kept from the commands it records (a DSN's spool is in the private cache)."""
    if not log:
        return ()
    from ..runtime.pg_log import is_dsn
    from ..runtime.state_files import kept_paths

    return () if is_dsn(log) else kept_paths(log)


def _escalated(effect: str, call, sandbox) -> str | None:
    """The wider mode the call asks for (`dangerouslyDisableSandbox`), when its answer asks a human: their
    approval is what grants it, so the line they approve runs in it."""
    if effect != "ask" or sandbox is None or call.tool is None:
        return None
    from .call_decision import escalation_verdict

    verdict = escalation_verdict(call.args, sandbox)
    return verdict.escalate_to if verdict is not None else None


def _confined(
    agent: str,
    program,
    request,
    name: str,
    tool_input: dict,
    workspace: str,
    effect: str,
    reason: str,
    keep: tuple[str, ...] = (),
    mode: str | None = None,
):
    """(effect, reason, updated input) for a call the policy lets run: a shell command of a policy that
    declares a sandbox runs in it (`hook_sandbox`), with the files that configure the hook read-only
    (`keep`), and where no sandbox can be had here it is denied. `mode`: a wider mode the call asked for, which
    the human who answers the ask grants (danger-full-access: the command as written)."""
    from ..compiler.interop.agents import load_mapping

    tool = load_mapping(agent).tools.get(name)
    command = tool_input.get("command")
    if tool is None or tool.family != "shell" or not isinstance(command, str):
        return effect, reason, None
    from .hook_sandbox import declares_sandbox, network_text, sandboxed_command

    policy = program.composition(request).policy
    if not declares_sandbox(policy):  # the common hook: no sandbox runtime to load
        return effect, reason, None
    from ..compiler.user_cache import UntrustedCache
    from ..runtime.sandbox import SandboxUnavailable

    if mode == "danger-full-access":
        return effect, f"{reason}; approved, it runs outside the sandbox", None
    try:
        found = sandboxed_command(policy, command, workspace, keep, mode)
    except SandboxUnavailable as exc:
        return "deny", f"dshc: deny: the policy's `sandbox {exc.mode}` cannot be kept here ({exc.missing})", None
    except (OSError, UntrustedCache) as exc:
        return (
            "deny",
            f"dshc: deny: no private temp folder for the policy's `sandbox {policy.sandbox.text}` ({exc})",
            None,
        )
    if found is None:
        return effect, reason, None
    line, mechanism = found
    where = (
        f"approved, it runs in `sandbox {mode}`" if mode else f"runs in the policy's `sandbox {policy.sandbox.text}`"
    )
    return effect, f"{reason}; {where} ({mechanism}, {network_text(policy)})", {**tool_input, "command": line}


def _file_sandbox(program, request, keep: tuple[str, ...]):
    """How the policy's sandbox judges a file change the agent makes itself (Write, Edit, a patch): what a
    confined process could not change — anything under `sandbox read-only`, outside the workspace and the
    writable roots, what runs code later, what configures the hook (`keep`) — is asked about as a wider
    change (a denial where approval is `never`). None when the policy declares no sandbox."""
    from .hook_sandbox import declares_sandbox

    policy = program.composition(request).policy
    if not declares_sandbox(policy):
        return None
    from .call_decision import FileSandbox
    from .host import sandbox_settings

    return FileSandbox(policy.sandbox.text, sandbox_settings(policy)["writable_roots"], keep, policy.sandbox.span)


def _agent_fields(agent: str, name: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(the catalog arguments the agent's input fills, those it must send: the ones naming the command or the
    file — its other fields are the agent's own and may be left out); None for a tool with no mapping."""
    from ..compiler.interop.agents import load_mapping

    spec = load_mapping(agent).tools.get(name)
    if spec is None:
        return None
    filled = (*spec.args.values(), *spec.paths)
    return filled, (*spec.paths, *spec.urls, *(("command",) if "command" in spec.args.values() else ()))


def _searches(
    agent: str, program, request, name: str, tool_input: dict, cwd: str, workspace: str, effect: str, reason: str
) -> tuple[str, str]:
    """(effect, reason) for a search over a folder (Claude Code's Grep): the files below it the policy keeps
    from being read decide it too (`hook_search`)."""
    from ..compiler.interop.agents import load_mapping

    tool = load_mapping(agent).tools.get(name)
    if tool is None or tool.tool != "grep":
        return effect, reason
    from .hook_search import search_refusal

    refused = search_refusal(program, request, tool_input, cwd, workspace)  # an ask or a deny: never wider
    return (effect, reason) if refused is None else refused


def decide_mapped(program, request, tool: str, args: dict, workspace: str, sandbox=None, agent_fields=None):
    """The one call decision (`call_decision`) for another agent's call, without dshc's own gates (that agent
    composes its tools itself); `conditional` is a deny there (fail closed)."""
    from .call_decision import decide_call as decide

    return decide(program, request, tool, args, workspace, gates=False, sandbox=sandbox, agent_fields=agent_fields)


def decide_call(
    program,
    request,
    agent_name: str,
    call,
    tool_input: dict,
    workspace: str,
    unmapped: str = "ask",
    sandbox=None,
    agent: str = "claude-code",
):
    """(effect, reason, deciding rules) for one mapped call, as the hook answers it; `sandbox`: how the policy's
    sandbox judges a file change (`_file_sandbox`), None when it declares none."""
    if call.tool is not None:
        decided = decide_mapped(
            program, request, call.tool, call.args, workspace, sandbox, _agent_fields(agent, agent_name)
        )
        effect = decided.effect
        note = f"`{agent_name}` decided as `{call.tool}`"
    else:
        # no catalog counterpart (MCP tools, new agent tools): only rules naming it, else the default,
        # and a default of allow is not enough to let an unknown tool through
        decided = decide_mapped(program, request, agent_name, tool_input, workspace)
        effect = decided.effect
        note = f"`{agent_name}` has no catalog mapping"
        if effect == "allow" and decided.reason.startswith("no rule matched"):
            effect = unmapped
            note += f"; no rule names it, so it is `{unmapped}` (the project's `unmapped` setting)"
    reason = f"dshc: {effect}: {decided.reason} ({note}); decided by {decided.by_text()}"
    return effect, reason, [[rid, str(span) if span else None] for rid, span in decided.deciding]


def _log_pre(path, program, request, workspace, payload, agent_name, call, effect, reason, decided) -> None:
    import os
    import time
    from .log_target import open_log

    log = open_log(path, session=_log_session(payload))
    try:
        fingerprint = None
        try:
            fingerprint = program.view(request).fingerprint
        except Exception:  # noqa: BLE001 - a view that cannot be built leaves the record without a fingerprint
            pass
        # every hook process is a writer of its own; a header per call keeps each call's context
        # beside it, whichever agent session or process wrote the records before it
        log.append(
            "request/header",
            reason="claude-code hook",
            fingerprint=fingerprint,
            tools=[],
            context=request.model_dump(mode="json"),
            workspace=os.path.abspath(workspace),
            sessionId=payload.get("session_id"),
        )
        call_id = str(payload.get("tool_use_id") or f"hook-{os.getpid()}-{time.time_ns()}")
        name = call.tool or agent_name
        log.append(
            "tool/call",
            callId=call_id,
            name=name,
            arguments=call.args if call.tool else (payload.get("tool_input") or {}),
            parent=None,
            agentTool=agent_name,
            fingerprint=fingerprint,
        )
        facts = {}
        if effect != "deny" and program.reads_session(request):  # what it reads, so the next calls need not find it
            from .session_log import FACTS, call_reads

            facts[FACTS] = call_reads(name, call.args if call.tool else (payload.get("tool_input") or {}))
        log.append(
            "tool/decision",
            callId=call_id,
            name=name,
            decision=effect,
            reason=reason,
            decidedBy=decided,
            fingerprint=fingerprint,
            **facts,
        )
    finally:
        log.close()


def _log_session(payload: dict) -> str:
    """The agent's session id as the log's writer session, so PreToolUse and PostToolUse records pair."""
    return "claude-code-" + _safe(payload.get("session_id"))


def _post(options, payload: dict) -> None:
    from ..compiler.interop.agents import map_call

    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    project = _project(options, payload)
    path = _log_path(options, project, payload)
    if not path:
        return
    from .log_target import open_log

    name = str(payload.get("tool_name") or "")
    calls = map_call(options.agent, name, payload.get("tool_input") or {}, cwd) if name else []
    mapped = calls[0].tool if calls and calls[0].tool else name
    response = payload.get("tool_response")
    failed = isinstance(response, dict) and (response.get("is_error") is True or response.get("success") is False)
    log = open_log(path, session=_log_session(payload))
    try:
        log.append(
            "tool/result",
            callId=str(payload.get("tool_use_id") or ""),
            name=mapped,
            isError=failed,
            content=response,
            value=None,
            error=None,
            decision="allow",
            decidedBy=[],
            agentTool=name,
            fingerprint=None,
        )
    finally:
        log.close()
