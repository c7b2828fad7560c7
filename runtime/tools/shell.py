"""One-shot shells (tool-bash, tool-pwsh): every call is a new process in its own session.
In: a command line; out: exit code and capped output, or a background job id."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .base import ToolContext, arg_bool, arg_str, fail, invalid
from .procs import ProcessRun, denial_line
from .sandbox import confinement, process_env, process_errors, resolve_path, workspace_root

DEFAULT_TIMEOUT_S = 120.0
PARTIAL_OUTPUT_CHARS = 2000


def shell_env() -> dict[str, str]:
    env = dict(os.environ)
    # no pager may wait for a keypress on a closed stdin
    env.update(PAGER="cat", GIT_PAGER="cat")
    return env


def timeout_for(args: Mapping[str, Any], ctx: ToolContext) -> float:
    """The tighter of the call's `timeoutMs` and the pipeline's body timeout; 120 s if neither."""
    limits = []
    value = args.get("timeoutMs")
    if value is not None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
            raise invalid("`timeoutMs` must be a positive number of milliseconds")
        limits.append(value / 1000.0)
    if ctx.timeout_s is not None and ctx.timeout_s > 0:
        limits.append(float(ctx.timeout_s))
    return min(limits) if limits else DEFAULT_TIMEOUT_S


def working_dir(args: Mapping[str, Any], ctx: ToolContext) -> str:
    # `workdir` resolves inside the workspace unless danger-full-access; the process itself
    # is confined by the OS sandbox (see runtime/sandbox)
    given = arg_str(args, "workdir", required=False)
    if given is None:
        return workspace_root(ctx)
    real = resolve_path(ctx, given, write=False)
    if not os.path.exists(real):
        raise fail("fs-not-found", path=given)
    if not os.path.isdir(real):
        raise fail("fs-not-directory", path=given)
    return real


def seconds(value: float) -> str:
    return f"{value:g} s"


def run_one_shot(argv: Sequence[str], args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    command = arg_str(args, "command")
    cwd = working_dir(args, ctx)
    conf = confinement(ctx)
    env = process_env(ctx, shell_env())
    if arg_bool(args, "run_in_background", False):
        with process_errors(argv[0]):
            job = ctx.state.jobs.start(
                argv,
                cwd=cwd,
                command=command,
                description=args.get("description") or "",
                max_chars=ctx.max_output_chars,
                env=env,
                confinement=conf,
            )
        return {"job_id": job.job_id}
    limit = timeout_for(args, ctx)
    with process_errors(argv[0]):
        run = ProcessRun(argv, cwd=cwd, max_chars=ctx.max_output_chars, env=env, confinement=conf)
    deadline = time.monotonic() + limit

    def stop() -> str | None:
        if ctx.abort.is_set():
            return "aborted"
        return "timeout" if time.monotonic() >= deadline else None

    reason = run.pump(stop)
    ctx.network_denied.extend(run.network_denied)
    if reason == "aborted":
        raise fail("aborted")
    if reason == "timeout":
        so_far = run.output.text[-PARTIAL_OUTPUT_CHARS:]
        raise fail("timeout", seconds=seconds(limit), partial=f"; output so far:\n{so_far}" if so_far.strip() else "")
    value = {"exit_code": run.exit_code, "output": run.output.text, "truncated": run.output.truncated}
    return {**value, "network_denied": run.network_denied} if run.network_denied else value


def bash(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return run_one_shot(["/bin/bash", "-c", arg_str(args, "command")], args, ctx)


def pwsh_executable() -> str | None:
    return shutil.which("pwsh")


def pwsh(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    executable = pwsh_executable()
    if executable is None:
        raise fail("provider-unavailable", tool="pwsh", provider="PowerShell (`pwsh`) on PATH")
    argv = [executable, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", arg_str(args, "command")]
    return run_one_shot(argv, args, ctx)


def render(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    if "job_id" in value:
        return f"started background job {value['job_id']}; use job_output to read it"
    output = value["output"]
    parts = [output.rstrip("\n")] if output.strip() else []
    if value["truncated"]:
        parts.append(f"[output truncated after {len(output)} characters]")
    parts += [denial_line(event) for event in value.get("network_denied", ())]
    parts.append(f"[exit {value['exit_code']}]")
    return "\n".join(parts)


BODIES = {"tool-bash/bash": bash, "tool-pwsh/pwsh": pwsh}
RENDERERS = {"tool-bash/bash": render, "tool-pwsh/pwsh": render}
