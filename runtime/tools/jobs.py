"""tool-jobs: list, read and kill the session's background jobs. In: a job id; out: the job's
status, exit code and captured output (the newest part when it overflowed)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .base import ToolContext, arg_bool, arg_int, arg_str, fail
from .procs import denial_line

WAIT_TIMEOUT_MS = 30000
MAX_WAIT_TIMEOUT_MS = 600000
_POLL_S = 0.05


def job_list(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"jobs": [job.snapshot() for job in ctx.state.jobs.list()]}


def job_output(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    job = ctx.state.jobs.get(arg_str(args, "job_id"))
    if arg_bool(args, "wait", False):
        limit_ms = min(arg_int(args, "timeout_ms", default=WAIT_TIMEOUT_MS, minimum=0), MAX_WAIT_TIMEOUT_MS)
        deadline = time.monotonic() + limit_ms / 1000.0
        # waiting only observes the job: an abort ends the wait, never the job
        while not job.done.wait(_POLL_S):
            if ctx.abort.is_set():
                raise fail("aborted")
            if time.monotonic() >= deadline:
                break
    return job.snapshot(with_output=True)


def job_kill(args: Mapping[str, Any], ctx: ToolContext) -> dict[str, Any]:
    job_id = arg_str(args, "job_id")
    killed = ctx.state.jobs.kill(job_id, arg_str(args, "reason", required=False))
    return {**ctx.state.jobs.get(job_id).snapshot(), "killed": killed}


def render_list(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    if not value["jobs"]:
        return "no background jobs"
    return "\n".join(_line(job) for job in value["jobs"])


def _line(job: Mapping[str, Any]) -> str:
    status = job["status"] if job["exit_code"] is None else f"{job['status']} (exit {job['exit_code']})"
    return f"{job['job_id']}  {status}  {job['command']}"


def render_output(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    parts = [_line(value)]
    if value["truncated"]:
        parts.append("[earlier output dropped; showing the newest part]")
    if value["output"]:
        parts.append(value["output"].rstrip("\n"))
    parts += [denial_line(event) for event in value.get("network_denied", ())]
    return "\n".join(parts)


def render_kill(args: Mapping[str, Any], value: Mapping[str, Any]) -> str:
    if value["killed"]:
        return f"killed {value['job_id']}"
    return f"{value['job_id']} was not running ({value['status']})"


BODIES = {"tool-jobs/job_list": job_list, "tool-jobs/job_output": job_output, "tool-jobs/job_kill": job_kill}
RENDERERS = {
    "tool-jobs/job_list": render_list,
    "tool-jobs/job_output": render_output,
    "tool-jobs/job_kill": render_kill,
}
