"""One tool call's effect, as every door renders it: a Program, a Request and a call in; a CallDecision out.

The call's gates first (a tool the request cannot run), then its arguments against the tool's parameter
schema (the runtime's own check, `runtime.arguments`), then the policy (`Program.decide`), then what the
sandbox will do with a file change it can judge before execution (`runtime.sandbox.files`). `decide`,
`dshc test`, the decision API, the runtime's pre-execute listener (MCP, `dshc run`) and the Claude Code
hook all call `decide_call`; none re-derives an effect.
"""

from __future__ import annotations

import os

from ..compiler.facts import SANDBOX_MODES
from ..compiler._base.frozen import record
from ..compiler.policy import Verdict
from ..runtime.arguments import ArgumentProblem, check

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from typing import Literal

    from ..compiler.program import Program
    from ..compiler.request import Request

# the file changes a sandbox judges on their path alone: definition -> the argument naming the file
CHANGED_FILE = {
    "tool-fs/write": "file_path",
    "tool-fs/edit": "file_path",
    "tool-str-replace-editor/str_replace_editor": "path",
}
ESCALATE = (
    'retry this exact operation once with `sandbox_permissions: "{mode}"` and a one-sentence '
    "`justification`; a human is asked to approve it"
)
ASKED = "a human is asked to approve it; approved, it runs in `{mode}` once"  # a tool without `sandbox_permissions`


@record
class FileSandbox:
    """How the executor confines a file change: its mode, the roots besides the workspace it may change,
    and files it keeps (what configures a hook); `source` is the policy's `sandbox` line, if it has one."""

    mode: str
    writable: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()
    source: object = None


@record
class SandboxVerdict:
    """Why the sandbox refuses a change in `mode`, and the narrowest mode that would run it (None: none)."""

    mode: str
    refuses: str
    why: str
    escalate_to: str | None
    source: object = None

    def to_json(self) -> dict:
        return {
            "mode": self.mode,
            "refuses": self.refuses,
            "why": self.why,
            "escalate_to": self.escalate_to,
            "source": str(self.source) if self.source else None,
        }


@record
class CallDecision:
    """The one effect (allow | ask | deny) of a call, why, and what decided it: `gate` names the stage that
    settled it (a gate, `arguments`, `allowed` for the policy, `sandbox`); `policy` is the policy's own
    decision (None where a gate or the arguments stopped the call first)."""

    effect: str
    reason: str
    gate: str
    deciding: tuple  # ((rule id, span or None), …)
    policy: Verdict | None = None
    invalid: ArgumentProblem | None = None
    sandbox: SandboxVerdict | None = None

    @property
    def policy_effect(self) -> str | None:
        return self.policy.effect if self.policy is not None else None

    def rules(self) -> list[dict]:
        return [{"rule": rule, "source": str(span) if span else None} for rule, span in self.deciding]

    def by_text(self) -> str:
        """`rule at path:line:col, …` — what every denial names."""
        return ", ".join(f"{rule} at {span}" if span else rule for rule, span in self.deciding) or "-"

    def text(self) -> str:
        """The reason with what decided it, as a denial or a question shows it anywhere."""
        return f"{self.reason} (decided by {self.by_text()})" if self.deciding else self.reason

    def to_json(self) -> dict:
        data: dict = {
            "decision": self.effect,
            "gate": self.gate,
            "reason": self.reason,
            "decided_by": self.rules(),
            "policy_effect": self.policy_effect,
        }
        if self.invalid is not None:
            data["invalid_arguments"] = invalid_json(self.invalid)
        if self.sandbox is not None:
            data["sandbox_verdict"] = self.sandbox.to_json()
        return data


def runtime_effect(effect: str) -> str:
    """What a call gets of a policy's decision: `conditional` (unresolved at call time) is a deny."""
    return "deny" if effect == "conditional" else effect


def invalid_json(found: ArgumentProblem) -> dict:
    return {
        "where": found.where,
        "schema_path": found.schema_path,
        "message": found.message,
        "did_you_mean": found.did_you_mean[1] if found.did_you_mean else None,
    }


def invalid_text(tool: str, found: ArgumentProblem, hint: bool = True) -> str:
    at = f" (schema `{found.schema_path}`)" if found.schema_path else ""
    return f"the arguments of `{tool}` do not fit its schema: {found}{at}" + (
        f"; {found.hint}" if hint and found.hint else ""
    )


def runtime_sandbox(program: Program, request: Request) -> FileSandbox:
    """dshc's own file tools: the policy's mode (workspace-write when it says none), inside the workspace
    only — their opens are relative to it; a policy's `writable` roots reach the processes it starts."""
    policy = program.composition(request).policy
    line = policy.sandbox if policy is not None else None
    return FileSandbox(line.text if line is not None else "workspace-write", (), (), getattr(line, "span", None))


def decide_call(
    program: Program,
    request: Request,
    tool: str,
    args,
    workspace: str | None,
    *,
    gates: bool = True,
    include_guards: bool = True,
    sandbox: FileSandbox | None | Literal[True] = True,
    agent_fields: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
    shell_cwd: str | None = None,
) -> CallDecision:
    """The call's one effect. `gates=False`: an agent that composes its tools itself (the hook), so only the
    arguments, the rules and the sandbox apply. `sandbox`: how file changes are confined (True: as dshc's
    runtime confines them; None: not at all). `agent_fields`: for another agent's call translated to a catalog
    call, (the fields its input filled, the required ones it must send): only those are checked, the rest
    being the translation's own words (None: every argument, every required field). `shell_cwd`: where the
    persistent shell that will run the command is now (its `cd`s outlive a call): its relative paths are there."""
    if gates:
        stop = program.gate_stop(request, tool)
        if stop is not None:
            return CallDecision("deny", stop.reason, stop.gate, tuple(stop.deciding))
    found = argument_problem(program, request, tool, args, agent_fields)
    if found is not None:
        return CallDecision("deny", invalid_text(tool, found), "arguments", (), invalid=found)
    if shell_cwd is not None and isinstance(args, dict):  # a relative path is where the shell is (`split`)
        args = {**args, "workdir": shell_cwd}
    decision = program.decide(request, tool, args, workspace, include_guards, gates=gates)
    effect = runtime_effect(decision.effect)
    reason = decision.reason
    if effect != "allow" and program.reads_session(request):
        from ..compiler.session import session_note  # names the earlier call a session test rests on

        reason += session_note(
            program.composition(request).policy,
            decision.deciding,
            request.session,
            lambda: _reach(program, request, tool, args),
        )
    result = CallDecision(effect, reason, decision.gate, tuple(decision.deciding), decision)
    if effect == "deny" or sandbox is None:
        return result
    confined = runtime_sandbox(program, request) if sandbox is True else sandbox
    verdict = escalation_verdict(args, confined) or sandbox_verdict(program, request, tool, args, workspace, confined)
    if verdict is None:
        return result
    composition = program.composition(request)
    never = composition.approval == "never"
    # the retry the reference's tools hint at, for a tool of dshc's that takes it (another agent's asks its user)
    takes = agent_fields is None and "sandbox_permissions" in (program.parameters(request, tool) or {}).get(
        "properties", {}
    )
    hint = (
        "no sandbox mode would run it"
        if verdict.escalate_to is None
        else (ESCALATE if takes else ASKED).format(mode=verdict.escalate_to)
    )
    lead = f"the `{verdict.mode}` sandbox refuses {verdict.refuses} ({verdict.why})"
    if verdict.refuses == ESCALATION:  # the call asked for it itself: no retry to hint at
        hint = ASKED.format(mode=verdict.escalate_to)
        lead = f"the call asks to leave the policy's `{verdict.mode}` sandbox ({verdict.why})"
    line = (
        (f"{composition.policy.name}/sandbox" if composition.policy else "sandbox") + f" {verdict.mode}",
        verdict.source,
    )
    if never or verdict.escalate_to is None:
        why = "approval is `never`, so no escalation can run it" if never else hint
        return CallDecision("deny", f"{lead}; {why}", "sandbox", (line,), decision, sandbox=verdict)
    rules = result.deciding if effect == "ask" else ()
    return CallDecision(
        "ask",
        f"{lead}; {hint}" + (f"; the rules alone said: {decision.reason}" if effect == "ask" else ""),
        "sandbox",
        (*rules, line),
        decision,
        sandbox=verdict,
    )


ESCALATION = "this call in its own mode"  # `SandboxVerdict.refuses` of an escalation the call asks for
# how other agents ask to leave the sandbox (Claude Code's `dangerouslyDisableSandbox`, the reference's retry)
ESCALATION_MODES = {"require_escalated": "danger-full-access"}


def escalation_verdict(args, confined: FileSandbox) -> SandboxVerdict | None:
    """A call that asks for a wider sandbox mode than the policy's (`sandbox_permissions`) is its own decision,
    never inherited from an allow: it asks a human, who grants that mode to this call once (anthropics/
    claude-code#13583, #34315: a retry outside the sandbox ran without a prompt). None when it asks nothing
    wider."""
    wanted = args.get("sandbox_permissions") if isinstance(args, dict) else None
    wanted = ESCALATION_MODES.get(wanted, wanted) if isinstance(wanted, str) else None
    if (
        wanted not in SANDBOX_MODES
        or confined.mode not in SANDBOX_MODES
        or SANDBOX_MODES.index(wanted) <= SANDBOX_MODES.index(confined.mode)
    ):
        return None
    why = args.get("justification")
    why = f"`{wanted}`, because: {why}" if isinstance(why, str) and why.strip() else f"`{wanted}`, giving no reason"
    return SandboxVerdict(confined.mode, ESCALATION, why, wanted, confined.source)


def argument_problem(program: Program, request: Request, tool: str, args, agent_fields=None) -> ArgumentProblem | None:
    """The first way the call's arguments miss the tool's schema, or None (also for a tool no catalog
    defines: only rules naming it can decide it)."""
    schema = program.parameters(request, tool)
    if schema is None:
        return None
    if agent_fields is not None and isinstance(args, dict):
        filled, required = agent_fields
        schema, args = _requiring(schema, required), {key: value for key, value in args.items() if key in filled}
    return check(schema, args)


def _requiring(schema: dict, required: tuple[str, ...]) -> dict:
    """The schema with its root's `required` narrowed to `required` (a new object: the schema is shared)."""
    narrowed = {key: value for key, value in schema.items() if key != "required"}
    kept = [key for key in schema.get("required", ()) if key in required]
    if kept:
        narrowed["required"] = kept
    return narrowed


def sandbox_verdict(
    program: Program, request: Request, tool: str, args, workspace: str | None, confined: FileSandbox
) -> SandboxVerdict | None:
    """What the sandbox does with a file change before it runs: None when it lets the change through
    (or the call changes no file it can name)."""
    definition = program.listed_definition(request, tool) if program.parameters(request, tool) else None
    if definition is None:
        definition = next((d.definition for d in program.catalog.definitions.values() if d.name == tool), None)
    field = CHANGED_FILE.get(definition or "")
    if field is None or definition is None or not isinstance(args, dict) or workspace is None:
        return None
    if definition.endswith("/str_replace_editor") and args.get("command") == "view":
        return None  # a read: the editor's view changes nothing
    path = args.get(field)
    if path is None:
        return None  # the call names no file: the tool refuses it itself
    if not isinstance(path, str) or not path.strip() or "\x00" in path:  # as the file tools refuse it
        return SandboxVerdict(
            confined.mode, "a file it cannot judge", f"the file path `{path!r}` names no file", None, confined.source
        )
    return file_verdict(confined, workspace, path)


def file_verdict(confined: FileSandbox, workspace: str, path: str) -> SandboxVerdict | None:
    from ..runtime.sandbox.files import change_refused, within

    real_workspace = os.path.realpath(workspace)
    why = _refused(confined, real_workspace, path)
    if why is None:
        return None
    real = os.path.realpath(os.path.join(real_workspace, os.path.expanduser(path)))
    if confined.mode == "read-only":
        refuses = "every file change"
    elif not any(within(real, root) for root in (real_workspace, *_roots(confined))):
        refuses = "writes outside the workspace"
    else:
        refuses = "changes to what runs code later, configures this hook or holds its event log"
    wider = SANDBOX_MODES[SANDBOX_MODES.index(confined.mode) + 1 :] if confined.mode in SANDBOX_MODES else ()
    escalate_to = next(
        (
            mode
            for mode in wider
            if change_refused(mode, real_workspace, path, _roots(confined)) is None
            and (mode == "danger-full-access" or not _kept(confined, real))
        ),
        None,
    )
    return SandboxVerdict(confined.mode, refuses, why, escalate_to, confined.source)


def _roots(confined: FileSandbox) -> tuple[str, ...]:
    return tuple(os.path.realpath(os.path.expanduser(root)) for root in confined.writable)


def _kept(confined: FileSandbox, real: str) -> bool:
    from ..runtime.sandbox.files import within

    return any(within(real, os.path.realpath(path)) for path in confined.keep)


def _refused(confined: FileSandbox, workspace: str, path: str) -> str | None:
    from ..runtime.sandbox.files import change_refused

    refused = change_refused(confined.mode, workspace, path, _roots(confined))
    if refused is not None:
        return refused
    real = os.path.realpath(os.path.join(workspace, os.path.expanduser(path)))
    return f"`{real}` configures this hook or holds its event log" if _kept(confined, real) else None


def _reach(program: Program, request: Request, tool: str, args):
    """Whether the call may reach the network and why (`call.network`), for its reason."""
    from ..compiler.call_network import call_reach
    from ..compiler.policy.core import is_shell

    found = program.gate_context(request).tool_for(tool)
    return call_reach(found.risk if found is not None else None, is_shell(found), args)
