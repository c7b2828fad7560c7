"""The runtime pipeline: one test per stage contract and per error code, order, abort, the log."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from dshc.compiler.view import ToolEntry, ToolView
from dshc.runtime.context import PipelineContext
from dshc.runtime.events import EventLog, calls_without_results, read_log
from dshc.runtime.pipeline import Pipeline
from dshc.runtime.scheduler import groups, run_batch
from dshc.runtime.stages import DEFAULT_STAGES
from dshc.runtime.stages.execute import metrics_wrapper, retry_wrapper, timeout_wrapper
from dshc.runtime.stages.post_execute import Accept, Block
from dshc.runtime.types import Abstain, Allow, Ask, Deny, ToolCall

from conftest import NO_OS_SANDBOX, wait_for

SCHEMA = json.dumps(
    {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"], "additionalProperties": False}
)


def entry(name, execution="exclusive"):
    return ToolEntry(name, "test", f"test/{name}", execution, SCHEMA, name, "allow", "ready")


def view(*entries, mode="native", sdk=None):
    return ToolView(None, "test", "linux", "root", mode, None, tuple(entries), sdk)


def make_ctx(entries=(entry("echo"),), impls=None, **hooks):
    impls = impls if impls is not None else {"test/echo": lambda args, tctx: {"x": args["x"]}}
    return PipelineContext(
        view=hooks.pop("the_view", None) or view(*entries),
        log=EventLog(hooks.pop("log", None)),
        implementations=impls,
        tool_context=lambda sig: sig,
        render=lambda d, a, v: json.dumps(v, sort_keys=True),
        **hooks,
    )


def run(ctx, name="echo", args='{"x": 1}', **call):
    return Pipeline().run(ToolCall.from_model(call.pop("id", "c1"), name, args, **call), ctx)


def test_default_stages_are_the_ten_of_the_spec_in_order():
    assert [name for name, _ in DEFAULT_STAGES] == [
        "record-call",
        "pre-execute",
        "approval",
        "guards",
        "execute",
        "post-execute",
        "normalize",
        "finalize-content",
        "emit-result",
        "record-result",
    ]


def test_the_call_is_recorded_before_anything_runs():
    seen = []
    ctx = make_ctx(impls={"test/echo": lambda args, tctx: seen.append(list(ctx.log.records)) or {"x": 1}})
    run(ctx)
    assert [r["type"] for r in seen[0]] == ["tool/call"]
    assert [r["type"] for r in ctx.log.records] == ["tool/call", "tool/result"]
    assert all(r["fingerprint"] == ctx.view.fingerprint for r in ctx.log.records)


def test_arguments_are_materialised_once_and_frozen():
    call = ToolCall.from_model("c", "echo", '{"x": 1, "deep": {"list": [1, 2]}}')
    with pytest.raises(TypeError):
        call.arguments["x"] = 2
    with pytest.raises(TypeError):
        call.arguments["deep"]["list"] = []
    assert ToolCall.from_model("c", "echo", "").arguments == {}
    assert ToolCall.from_model("c", "echo", "{oops").arguments == "{oops"
    assert (
        ToolCall.from_model("c", "echo", '{"big": 123456789012345678901234567890}').arguments["big"]
        == 123456789012345678901234567890
    )


@pytest.mark.parametrize("decision, effect", [(Allow(), False), (Deny("no"), True), (None, False)])
def test_pre_execute_waterfall(decision, effect):
    result = run(make_ctx(pre_execute=(lambda call, e: decision,))).result
    assert result.is_error is effect
    if effect:
        assert result.content == "Error: no" and "code" not in result.error  # denials carry no code


@pytest.mark.parametrize(
    "outcome, allowed",
    [("allowed-once", True), ("rejected", False), ("cancelled", False), ("unavailable", False), ("bogus", False)],
)
def test_approval_only_allowed_once_passes(outcome, allowed):
    ctx = make_ctx(pre_execute=(lambda call, e: Ask("needs a human"),), approver=lambda call, reason: outcome)
    result = run(ctx).result
    assert result.is_error is not allowed


def test_ask_without_a_channel_is_a_denial():
    result = run(make_ctx(pre_execute=(lambda call, e: Ask("needs a human"),))).result
    assert result.is_error and "no approval channel" in result.content


def test_guards_deny_or_abstain_and_run_only_after_allow():
    calls = []

    def guard(call, e):
        calls.append(call.id)
        return Deny("guarded")

    assert run(make_ctx(guards=(lambda c, e: Abstain(),))).result.is_error is False
    assert run(make_ctx(guards=(guard,))).result.content == "Error: guarded"
    run(make_ctx(pre_execute=(lambda c, e: Deny("no"),), guards=(guard,)))
    assert calls == ["c1"]  # the denied call never reached the guard
    assert run(make_ctx(guards=(lambda c, e: 1 / 0,))).result.is_error  # a broken guard fails closed


def test_invalid_arguments_are_invalid_args():
    result = run(make_ctx(), args='{"x": "not a number"}').result
    assert result.error["code"] == "INVALID_ARGS"


def test_output_that_is_not_a_json_object_is_invalid_tool_output():
    result = run(make_ctx(impls={"test/echo": lambda a, t: ["not", "an", "object"]})).result
    assert result.error["code"] == "INVALID_TOOL_OUTPUT"


def test_a_throwing_tool_is_an_error_result_not_the_end_of_the_turn():
    result = run(make_ctx(impls={"test/echo": lambda a, t: 1 / 0})).result
    assert result.is_error and result.error["name"] == "ZeroDivisionError"


def test_unknown_tools_are_unknown_tool():
    result = run(make_ctx(), name="nope").result
    assert result.error["code"] == "UNKNOWN_TOOL"


def test_code_mode_collapse_answers_before_pre_execute():
    seen = []
    code_view = view(entry("run_code"), mode="code", sdk=(entry("echo"),))
    ctx = make_ctx(the_view=code_view, pre_execute=(lambda c, e: seen.append(c.name),))
    result = run(ctx).result
    assert result.error["code"] == "UNKNOWN_TOOL" and "run_code" in result.content
    assert seen == []  # policy never saw the collapsed call
    nested = run(make_ctx(the_view=code_view), parent="outer").result
    assert nested.is_error is False  # a dispatch from inside run_code reaches the tool


def test_execute_wrappers_may_only_swap_the_signal_and_timeouts_are_tool_timeout():
    def slow(args, signal):
        signal.wait(5)
        return {"x": 1}

    result = run(make_ctx(impls={"test/echo": slow}, execute_wrappers=(timeout_wrapper(0.05),))).result
    assert result.error["code"] == "TOOL_TIMEOUT"


def test_retry_and_metrics_wrappers():
    attempts = []

    def flaky(args, signal):
        attempts.append(1)
        if len(attempts) < 3:
            raise type("Flaky", (Exception,), {"code": "TOOL_TIMEOUT"})("slow")
        return {"x": len(attempts)}

    sink = {}
    outcome = run(make_ctx(impls={"test/echo": flaky}, execute_wrappers=(metrics_wrapper(sink), retry_wrapper(3))))
    assert outcome.result.value == {"x": 3} and len(attempts) == 3
    assert sink["c1"]["error"] is None and sink["c1"]["seconds"] >= 0
    attempts.clear()
    failed = run(make_ctx(impls={"test/echo": flaky}, execute_wrappers=(retry_wrapper(2),)))
    assert failed.result.error["code"] == "TOOL_TIMEOUT" and len(attempts) == 2


def test_a_wrapper_cannot_hide_the_callers_abort():
    seen = []

    def body(args, signal):
        seen.append(signal.is_set())
        return {"x": 1}

    from dshc.runtime.signals import Signal

    def swap(call, signal, proceed):
        return proceed(Signal())  # a fresh signal that is never set

    ctx = make_ctx(impls={"test/echo": body}, execute_wrappers=(swap,))
    outcome = Pipeline().run(ToolCall.from_model("c1", "echo", '{"x": 1}'), ctx)
    assert seen == [False] and outcome.result.is_error is False
    ctx.signal.set()
    state = Pipeline().before_dispatch(ToolCall.from_model("c2", "echo", '{"x": 1}'), ctx)
    from dataclasses import replace

    ctx.signal = type(ctx.signal)()  # dispatch with a clear signal, then abort from inside the swapped one
    fused = []

    def body_checks(args, signal):
        ctx.signal.set()
        fused.append(signal.is_set())
        return {"x": 1}

    ctx.implementations = {"test/echo": body_checks}
    Pipeline().dispatch(replace(state), ctx)
    assert fused == [True]  # the caller's abort reached the body through the swapped signal


def test_post_execute_accept_block_and_illegal_combinations():
    def accept_content(call, result):
        return Accept(content="replaced", additional_contexts=("note",))

    outcome = run(make_ctx(post_execute=(accept_content,)))
    assert outcome.result.content == "replaced" and outcome.contexts == ("note",)
    outcome = run(make_ctx(post_execute=(lambda c, r: Accept(value={"x": 9}),)))
    assert outcome.result.value == {"x": 9} and outcome.result.content == '{"x": 9}'
    outcome = run(make_ctx(post_execute=(lambda c, r: Block("try again", ("why",)),)))
    assert outcome.result.is_error and outcome.result.content == "try again" and outcome.contexts == ("why",)
    assert run(make_ctx(post_execute=(lambda c, r: Accept(content="a", value={"x": 1}),))).result.is_error
    denied = run(
        make_ctx(pre_execute=(lambda c, e: Deny("no"),), post_execute=(lambda c, r: Accept(content="seen by post"),))
    )
    assert denied.result.content == "seen by post"  # denials still pass post-execute


def test_finalize_content_runs_exactly_once_on_every_outcome():
    counts = []

    def finalize(args, content):
        counts.append(content)
        return content + " (final)"

    ok = run(make_ctx(finalizers={"test/echo": finalize}))
    denied = run(make_ctx(finalizers={"test/echo": finalize}, pre_execute=(lambda c, e: Deny("no"),)))
    assert ok.result.content.endswith("(final)") and denied.result.content == "Error: no (final)"
    assert len(counts) == 2


def test_observers_cannot_change_results_and_their_failures_are_contained():
    def observer(call, result):
        raise RuntimeError("observer bug")

    outcome = run(make_ctx(observers=(observer,)))
    assert outcome.result.is_error is False
    assert any("observer failed" in r.note for r in outcome.state.records)


def test_results_commit_in_model_order_with_parallel_runs_and_barriers():
    second_done = threading.Event()

    def first(args, signal):  # waits for its later sibling: completes out of order, deterministically
        assert second_done.wait(5)
        return {"x": 1}

    def second(args, signal):
        second_done.set()
        return {"x": 2}

    entries = (entry("a", "parallel"), entry("b", "parallel"), entry("c"))
    ctx = make_ctx(
        entries,
        {"test/a": first, "test/b": second, "test/c": lambda a, s: {"x": 3}},
        post_execute=(lambda c, r: Accept(additional_contexts=(f"ctx-{c.id}",)),),
    )
    calls = [ToolCall.from_model(i, n, '{"x": 0}') for i, n in (("1", "a"), ("2", "b"), ("3", "c"), ("4", "a"))]
    second_done_before = [len(g) for g in groups(calls, ctx.view)]
    assert second_done_before == [2, 1, 1]  # a+b overlap, c is a barrier, the last a runs after it
    second_done.clear()
    calls[3] = ToolCall.from_model("4", "b", '{"x": 0}')
    outcomes, contexts = run_batch(calls, ctx)
    assert [o.result.call_id for o in outcomes] == ["1", "2", "3", "4"]
    assert contexts == ("ctx-1", "ctx-2", "ctx-3", "ctx-4")  # FIFO in model order
    committed = [r["callId"] for r in ctx.log.records if r["type"] == "tool/result"]
    assert committed == ["1", "2", "3", "4"]


def test_a_pool_of_one_is_serial():
    active, peak = [0], [0]
    lock = threading.Lock()

    def body(args, signal):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.01)
        with lock:
            active[0] -= 1
        return {"x": 1}

    ctx = make_ctx((entry("p", "parallel"),), {"test/p": body})
    run_batch([ToolCall.from_model(str(i), "p", '{"x": 1}') for i in range(4)], ctx, pool_size=1)
    assert peak[0] == 1


def test_abort_before_dispatch_and_after_a_successful_start():
    ctx = make_ctx()
    ctx.signal.set()
    outcomes, _ = run_batch([ToolCall.from_model("1", "echo", '{"x": 1}')], ctx)
    assert outcomes[0].result.error["code"] == "ABORTED_BEFORE_DISPATCH"
    assert [r["type"] for r in ctx.log.records] == ["tool/call", "tool/result"]

    late = make_ctx(impls={"test/echo": lambda a, s: late.signal.set() or {"x": 1}})
    assert run(late).result.error["code"] == "ABORTED"
    failing = make_ctx(impls={"test/echo": lambda a, s: failing.signal.set() or 1 / 0})
    assert run(failing).result.error["name"] == "ZeroDivisionError"  # errors are kept, not replaced


def test_the_runtime_never_imports_the_parser():
    probe = (
        "import sys, dshc.runtime.pipeline, dshc.runtime.scheduler, dshc.runtime.tools, dshc.runtime.events\n"
        "bad = [m for m in sys.modules if m == 'lark' or m.startswith('lark.') or m.startswith('dshc.compiler')]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.skipif(NO_OS_SANDBOX, reason="no OS sandbox here: the shell call fails closed before the kill")
def test_killing_dshc_run_mid_call_leaves_a_parseable_log(tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "slow", "name": "bash", "arguments": {"command": "sleep 30", "description": "wait"}}) + "\n"
    )
    log = tmp_path / "events.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from dshc.cli.main import entry; entry()",
            "run",
            str(calls),
            "--workspace",
            str(tmp_path),
            "--log",
            str(log),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    from crash_trials import end_processes, marked_processes

    wait_for(lambda: log.exists() and b'"tool/decision"' in log.read_bytes(), "the call's decision in the log")
    wait_for(lambda: marked_processes(log), "the call's shell to start")  # mid-call: its command is running
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    read = read_log(str(log))
    assert not read.torn_tail
    assert [r["type"] for r in read.records] == ["request/header", "tool/call", "tool/decision"]
    (pending,) = list(calls_without_results(read.records))
    assert pending["callId"] == "slow"
    end_processes(marked_processes(log))  # only the processes this run started, by pid


def test_sandbox_denies_escapes_under_workspace_write(cli, tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "link").symlink_to(tmp_path)
    (tmp_path / "secret.txt").write_text("s")
    calls = tmp_path / "calls.jsonl"
    lines = [
        {"id": "r1", "name": "read", "arguments": {"file_path": "../secret.txt"}},
        {"id": "r2", "name": "read", "arguments": {"file_path": "link/secret.txt"}},
        {"id": "w1", "name": "write", "arguments": {"file_path": "../x.txt", "content": "x"}},
        {"id": "w2", "name": "write", "arguments": {"file_path": "link/x.txt", "content": "x"}},
        {"id": "ok", "name": "write", "arguments": {"file_path": "inside.txt", "content": "x"}},
    ]
    calls.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    # an escape asks as an escalation before it runs (only an approval runs it): refused here
    result = cli("run", str(calls), "--workspace", str(workspace), "--approve", "never", "--json")
    rows = {row["id"]: row for row in map(json.loads, result.out.splitlines())}
    for call_id in ("r1", "r2", "w1", "w2"):
        assert rows[call_id]["isError"], call_id
        assert rows[call_id]["error"].get("code") == "FS_SANDBOX_DENIED" or "workspace" in rows[call_id]["content"]
    assert rows["ok"]["isError"] is False
    assert not (tmp_path / "x.txt").exists()


def test_plan_policy_denies_write_while_planning_and_the_view_is_unchanged(cli, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        json.dumps({"id": "w", "name": "write", "arguments": {"file_path": "a.txt", "content": "x"}}) + "\n"
    )
    planning = cli("run", str(calls), "--workspace", str(tmp_path), "--policy", "plan", "--plan", "--json")
    row = json.loads(planning.out.splitlines()[0])
    assert row["isError"] and "guard `planning`" in row["content"] and not (tmp_path / "a.txt").exists()
    assert row["decided_by"][0]["rule"] == "plan/guard:planning"
    plan_view = cli("compile", "standard", "--policy", "plan", "--plan", "--json").json()
    normal_view = cli("compile", "standard", "--policy", "plan", "--json").json()
    assert plan_view["fingerprint"] == normal_view["fingerprint"]
    assert [t["name"] for t in plan_view["tools"]] == [t["name"] for t in normal_view["tools"]]


def test_replay_reports_nothing_under_the_same_policy_and_exactly_the_new_denials(cli, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {"id": "1", "name": "read", "arguments": {"file_path": "a.txt"}},
                {"id": "2", "name": "write", "arguments": {"file_path": "b.txt", "content": "x"}},
                {"id": "3", "name": "bash", "arguments": {"command": "ls", "description": "list"}},
                {"id": "4", "name": "edit", "arguments": {"file_path": "b.txt", "old_string": "x", "new_string": "y"}},
            ]
        )
        + "\n"
    )
    log = tmp_path / "events.jsonl"
    cli("run", str(calls), "--workspace", str(tmp_path), "--log", str(log), "--json")
    same = cli("replay", str(log), "--policy", "workspace-write", "--json")
    assert same.code == 0 and same.json()["changes"] == []
    stricter = cli("replay", str(log), "--policy", "read-only", "--json")
    assert stricter.code == 1
    assert {(c["callId"], c["after"]) for c in stricter.json()["changes"]} == {("2", "deny"), ("4", "deny")}
