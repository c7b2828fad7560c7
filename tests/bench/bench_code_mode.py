"""What a run_code program costs: the worker's start, and each nested call against the same
call made directly through the pipeline (issue 22).

Run from a clone (after `npm ci` in runtime/code/node):  python tests/bench/bench_code_mode.py
Builds a code-mode context with one stand-in tool, then prints (fastest of REPEATS runs):
  - an empty program (`return 1`): the worker's start under the process sandbox;
  - a program making N sequential nested calls, minus the empty program, per call;
  - the same call made directly through the ten-stage pipeline, per call;
and the ratio nested / direct per call. Targets (met / not met):
  - the nested-call overhead ratio is at most 50 (a frame each way plus a thread hand-off
    around the same pipeline, not a process per call);
  - an empty program ends within 2 s (start-up is paid once per program, not per call).
"""

from __future__ import annotations

import json
import sys
import tempfile

from dshc.compiler.view import ToolEntry, ToolView
from dshc.runtime.context import PipelineContext
from dshc.runtime.events import EventLog
from dshc.runtime.pipeline import Pipeline
from dshc.runtime.sandbox import Confinement, missing
from dshc.runtime.scheduler import run_batch
from dshc.runtime.tools import ToolState, render
from dshc.runtime.tools.base import ToolContext
from dshc.runtime.tools.code import CodeRuntime
from dshc.runtime.types import ToolCall

import timing  # tests/bench/timing.py, beside this script

REPEATS = 5
NESTED = 200
SCHEMA = json.dumps({"type": "object"})


def context(workspace: str, state: ToolState) -> PipelineContext:
    entry = ToolEntry("echo", "test", "test/echo", "exclusive", SCHEMA, "echo", "allow", "ready")
    run_code = ToolEntry("run_code", "tools", "tools/run_code", "exclusive", SCHEMA, "run_code", "allow", "ready")
    view = ToolView(None, "bench", "linux", "root", "code", None, (run_code,), (entry,))
    bare = missing(Confinement("read-only", workspace, workspace)) is not None

    def tool_context(signal):
        return ToolContext(
            workspace=workspace,
            sandbox="workspace-write",
            owner="root",
            state=state,
            abort=signal,
            timeout_s=60.0,
            sandbox_fallback=bare,
        )

    ctx = PipelineContext(
        view=view,
        log=EventLog(None),
        implementations={"test/echo": lambda a, t: {"echo": a}},
        tool_context=tool_context,
        render=render,
    )
    CodeRuntime(ctx).install()
    return ctx


def fastest(fn) -> float:
    return timing.fastest(fn, REPEATS)


def program(ctx, code: str):
    def run():
        call = ToolCall.from_model("p", "run_code", {"code": code, "description": "bench"})
        result = run_batch([call], ctx)[0][0].result
        assert not result.is_error, result.content

    return run


def main() -> int:
    state = ToolState()
    try:
        ctx = context(tempfile.mkdtemp(prefix="dshc-bench-"), state)
        empty = fastest(program(ctx, "return 1"))
        loop = fastest(program(ctx, f"for (let i = 0; i < {NESTED}; i++) await tools.echo({{ i }}); return 1"))
        nested_ctx = PipelineContext(**{**ctx.__dict__, "live_parent": None})
        direct = (
            fastest(
                lambda: [
                    Pipeline().run(ToolCall.from_model(f"d{i}", "echo", {"i": i}, parent="p"), nested_ctx)
                    for i in range(NESTED)
                ]
            )
            / NESTED
        )
    finally:
        state.close()
    nested = max(0.0, loop - empty) / NESTED
    ratio = nested / direct
    print(f"empty program (worker start, sandboxed): {empty * 1000:.1f} ms")
    print(f"nested call: {nested * 1e6:.0f} us; direct pipeline call: {direct * 1e6:.0f} us; ratio {ratio:.1f}")
    targets = [("nested-call overhead ratio <= 50", ratio <= 50), ("empty program <= 2 s", empty <= 2.0)]
    for name, met in targets:
        print(f"{name}: {'met' if met else 'not met'}")
    return 0 if all(met for _, met in targets) else 1


if __name__ == "__main__":
    sys.exit(main())
