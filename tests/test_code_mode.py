"""Code mode that runs: `run_code` programs in a sandboxed Node worker whose `tools.*` calls
re-enter the full pipeline. Through `dshc run --preset code` where the shipped tools serve,
through a session context with stand-in tools where timing or hostile names are the point."""

from __future__ import annotations

import json
import os
import threading
import time

import psutil
import pytest

from dshc.compiler.view import ToolEntry, ToolView
from dshc.runtime.code.channel import FrameError, FrameReader, encode
from dshc.runtime.code.node_runtime import missing_runtime
from dshc.runtime.context import PipelineContext
from dshc.runtime.deadline import deadline_wrapper
from dshc.runtime.events import EventLog, read_log
from dshc.runtime.pipeline import Pipeline
from dshc.runtime.scheduler import run_batch
from dshc.runtime.tools import ToolState, render
from dshc.runtime.tools.base import ToolContext
from dshc.runtime.tools.code import CodeRuntime
from dshc.runtime.types import Allow, Deny, ToolCall, thaw

from conftest import NO_OS_SANDBOX, wait_for

MISSING = missing_runtime()
needs_node = pytest.mark.skipif(MISSING is not None, reason=f"run_code cannot run here: no {MISSING}")


# --- through the CLI, with the shipped code preset ---------------------------------------------
def run_programs(cli, tmp_path, programs: dict[str, str], *extra: str, mode=("--preset", "code")):
    """Each program as one run_code call; returns ({id: result}, the event log's records)."""
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        "".join(
            json.dumps({"id": i, "name": "run_code", "arguments": {"code": code, "description": i}}) + "\n"
            for i, code in programs.items()
        )
    )
    log = tmp_path / "events.jsonl"
    flags = ("--policy", "read-only") if "--policy" not in extra else ()
    result = cli(
        "run",
        str(calls),
        *mode,
        "--host",
        "web",
        "--workspace",
        str(tmp_path),
        "--log",
        str(log),
        "--json",
        *flags,
        *extra,
    )
    assert result.code in (0, 1), result.err
    results = {r["id"]: r for r in map(json.loads, result.out.splitlines())}
    return results, list(read_log(str(log)).records)


def error_class(result) -> str:
    assert result["isError"] and result["error"]["code"] == "CODE_RUN_FAILED", result
    return result["error"]["message"].split(":", 1)[0]


@needs_node
def test_a_program_reads_a_file_and_returns_a_value_through_the_full_pipeline(cli, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    results, records = run_programs(
        cli,
        tmp_path,
        {
            "c1": """
        const seen: any = await tools.read({ file_path: "notes.txt" });
        console.log("read", typeof seen);
        return { lines: JSON.stringify(seen).includes("beta") ? 2 : 0 };""",
            "nothing": "console.log('no value')",
        },
    )
    assert results["c1"]["isError"] is False
    assert results["c1"]["value"] == {"value": {"lines": 2}, "logs": ["read object"]}
    assert results["nothing"]["value"] == {"logs": ["no value"]}  # no `value` key at all
    nested = [r for r in records if r.get("callId") == "c1:code:1"]
    assert [r["type"] for r in nested] == [
        "tool/code-dispatch-start",
        "tool/call",
        "tool/decision",
        "tool/result",
        "tool/code-dispatch",
    ]
    assert nested[1]["parent"] == "c1" and nested[1]["name"] == "read"
    assert nested[0]["parent"] == nested[-1]["parent"] == "c1" and nested[-1]["outcome"] == "ok"
    worker = next(r for r in records if r["type"] == "tool/code-worker")
    assert worker["sandbox"] == ("landlock+netns" if not NO_OS_SANDBOX else worker["sandbox"])
    assert not psutil.pid_exists(worker["pid"]) or psutil.Process(worker["pid"]).status() == psutil.STATUS_ZOMBIE


@needs_node
def test_a_nested_write_denied_by_policy_is_a_rejected_binding_and_a_logged_denial(cli, tmp_path):
    results, records = run_programs(
        cli,
        tmp_path,
        {
            "caught": """try { await tools.write({ file_path: "out.txt", content: "x" }); return "wrote"; }
                     catch (e) { return { message: e.message, name: e.name, tool: e.tool }; }""",
            "uncaught": """await tools.write({ file_path: "out.txt", content: "x" }); return "wrote";""",
        },
    )
    assert results["caught"]["value"]["value"] == {
        "message": "rule `deny` matched (decided by read-only/deny@9 at policies/permissions.dsh:9:3)",
        "name": "ToolError",
        "tool": "write",
    }
    assert error_class(results["uncaught"]) == "exception" and "rule `deny` matched" in results["uncaught"]["content"]
    assert not (tmp_path / "out.txt").exists()
    for parent in ("caught", "uncaught"):
        decision = next(r for r in records if r["type"] == "tool/decision" and r["callId"] == f"{parent}:code:1")
        assert decision["decision"] == "deny" and decision["decidedBy"][0][0].startswith("read-only/deny")
        call = next(r for r in records if r["type"] == "tool/call" and r["callId"] == f"{parent}:code:1")
        assert call["parent"] == parent
        link = next(r for r in records if r["type"] == "tool/code-dispatch" and r["callId"] == f"{parent}:code:1")
        assert (link["parent"], link["outcome"]) == (parent, "denied")


@needs_node
def test_error_classes_exception_timeout_invalid_output_output_limit(cli, tmp_path):
    results, _ = run_programs(
        cli,
        tmp_path,
        {
            "ok": "console.log('one'); console.warn({ two: 2 }); return [1, 'a', null]",
            "throws": "console.log('before'); throw new RangeError('out of range')",
            "syntax": "const x: = ;",
            "bigint": "return 10n",
            "huge": "return 'x'.repeat(200000)",
            "spins": "console.log('spinning'); while (true) {}",
        },
        "--timeout",
        "3",
    )
    assert results["ok"]["value"] == {"value": [1, "a", None], "logs": ["one", '{"two":2}']}
    assert error_class(results["throws"]) == "exception" and "RangeError: out of range" in results["throws"]["content"]
    assert "before" in results["throws"]["content"]  # the logs survive a failure
    assert error_class(results["syntax"]) == "exception" and "SyntaxError" in results["syntax"]["content"]
    assert error_class(results["bigint"]) == "invalid-output"
    assert error_class(results["huge"]) == "output-limit"
    assert error_class(results["spins"]) == "timeout" and "spinning" in results["spins"]["content"]


PROBES = {
    "require": "require('fs').readdirSync('/')",
    "process": "process.env",
    "fetch": "await fetch('http://127.0.0.1:9/')",
    "import": "await import('fs')",
    "global-climb": "this.constructor.constructor('return process')()",
    "binding-climb": "tools.read.constructor.constructor('return process')()",
    "eval": "eval('1 + 1')",
}


@needs_node
def test_the_program_has_no_fs_process_network_or_host_realm_of_its_own(cli, tmp_path):
    probes = "".join(
        f"try {{ out[{json.dumps(k)}] = String({v}) }} catch (e) {{ out[{json.dumps(k)}] = String(e) }}\n"
        for k, v in PROBES.items()
    )
    results, records = run_programs(
        cli,
        tmp_path,
        {
            "probes": "const out: Record<string, string> = {};\n" + probes + "return out;",
            "uncaught": "return require('fs')",
            "globals": "return Object.getOwnPropertyNames(globalThis).filter(n => /^(require|process|fetch|Buffer|module"
            "|setTimeout)$/.test(n))",
        },
    )
    refused = results["probes"]["value"]["value"]
    for name, words in (
        ("require", "ReferenceError: require is not defined"),
        ("process", "ReferenceError: process is not defined"),
        ("fetch", "ReferenceError: fetch is not defined"),
        ("import", "import() is not available"),
        ("global-climb", "EvalError"),
        ("binding-climb", "EvalError"),
        ("eval", "EvalError"),
    ):
        assert words in refused[name], (name, refused[name])
    assert (
        error_class(results["uncaught"]) == "exception" and "require is not defined" in results["uncaught"]["content"]
    )
    assert results["globals"]["value"]["value"] == []
    assert not [r for r in records if r["type"] == "tool/call" and r.get("parent")]  # nothing reached a tool


@needs_node
def test_replay_re_decides_nested_calls(cli, tmp_path):
    _, records = run_programs(
        cli,
        tmp_path,
        {"c1": "try { await tools.write({ file_path: 'a.txt', content: 'x' }) } catch (e) { return e.message }"},
        mode=("--preset", "standard", "--mode", "code"),
    )
    assert records[0]["tools"] == ["run_code"]
    replayed = cli("replay", str(tmp_path / "events.jsonl"), "--policy", "workspace-write", "--json")
    changes = replayed.json()["changes"]
    assert [(c["callId"], c["name"], c["before"], c["after"]) for c in changes] == [
        ("c1:code:1", "write", "deny", "allow")
    ]


def test_a_code_mode_native_call_is_still_unknown_tool_and_a_calls_file_cannot_forge_a_parent(cli, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"id": "x", "name": "read", "arguments": {"file_path": "a"}, "parent": "x"}) + "\n")
    result = cli("run", str(calls), "--preset", "code", "--host", "web", "--workspace", str(tmp_path), "--json")
    out = json.loads(result.out)
    assert out["error"]["code"] == "UNKNOWN_TOOL" and "run_code" in out["content"]


def test_a_host_without_node_refuses_at_gate_5_or_answers_code_run_failed(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("DSHC_NODE", str(tmp_path / "no-such-node"))
    results, _ = run_programs(cli, tmp_path, {"c1": "return 1"})
    assert "gate `ready` fails" in results["c1"]["content"] and "Node.js" in results["c1"]["content"]
    # told a worker is there when none is, the call still fails closed, naming what is missing
    results, _ = run_programs(cli, tmp_path, {"c2": "return 1"}, "--with", "code-worker")
    assert results["c2"]["error"]["code"] == "CODE_RUN_FAILED" and "Node.js" in results["c2"]["content"]


# --- through a session context with stand-in tools ---------------------------------------------
SCHEMA = json.dumps({"type": "object"})


def entry(name: str, execution: str = "exclusive") -> ToolEntry:
    return ToolEntry(name, "test", f"test/{name}", execution, SCHEMA, name, "allow", "ready")


class Session:
    """A code-mode context: run_code on the wire, `sdk` behind it, each stand-in tool a body."""

    def __init__(self, tmp_path, sdk, bodies, *, max_parallel=10, heap_mb=256, timeout_s=20.0, pre_execute=()):
        self.state = ToolState()
        self.signal_seen: list = []
        run_code = ToolEntry("run_code", "tools", "tools/run_code", "exclusive", SCHEMA, "run_code", "allow", "ready")
        view = ToolView(None, "test", "linux", "root", "code", None, (run_code,), tuple(sdk))
        workspace = str(tmp_path)

        def tool_context(signal):
            return ToolContext(
                workspace=workspace,
                sandbox="workspace-write",
                owner="root",
                state=self.state,
                abort=signal,
                timeout_s=timeout_s,
                sandbox_fallback=NO_OS_SANDBOX,
            )

        self.ctx = PipelineContext(
            view=view,
            log=EventLog(None),
            implementations=dict(bodies),
            tool_context=tool_context,
            render=render,
            pre_execute=tuple(pre_execute),
            execute_wrappers=(deadline_wrapper(timeout_s),),
            timeout_s=timeout_s,
        )
        self.runtime = CodeRuntime(self.ctx, max_parallel=max_parallel, heap_mb=heap_mb).install()

    def run(self, code: str, call_id: str = "p"):
        call = ToolCall.from_model(call_id, "run_code", {"code": code, "description": "test"})
        outcomes, _ = run_batch([call], self.ctx)
        return outcomes[0].result

    def records(self, type_: str):
        return [r for r in self.ctx.log.records if r["type"] == type_]

    def close(self):
        self.state.close()


@pytest.fixture
def session(tmp_path):
    made = []

    def make(*args, **kwargs):
        made.append(Session(tmp_path, *args, **kwargs))
        return made[-1]

    yield make
    for s in made:
        s.close()


def echo(args, tctx):
    return {"echo": args}


HOSTILE_NAMES = (
    "__proto__",
    "constructor",
    "hasOwnProperty",
    "toString",
    "then",
    "valueOf",
    "__defineGetter__",
    "prototype",
    "toJSON",
    "length",
    "0",
    "",
    "a b",
    "ünï",
    "'); process.exit(1); ('",
)


@needs_node
def test_hostile_binding_names_are_plain_own_names_on_a_null_prototype(session):
    s = session([entry(n) for n in HOSTILE_NAMES], {f"test/{n}": echo for n in HOSTILE_NAMES})
    result = s.run(f"""
        const calls = [];
        for (const name of {json.dumps(HOSTILE_NAMES)}) calls.push((await tools[name]({{ via: name }})).echo.via);
        return {{ calls, proto: Object.getPrototypeOf(tools), keys: Object.keys(tools).length,
                 isPrototypeOf: typeof tools.isPrototypeOf, frozen: Object.isFrozen(tools) }};""")
    assert result.is_error is False, result.content
    assert thaw(result.value)["value"] == {
        "calls": list(HOSTILE_NAMES),
        "proto": None,
        "keys": len(HOSTILE_NAMES),
        "isPrototypeOf": "undefined",
        "frozen": True,
    }
    assert [r["name"] for r in s.records("tool/call") if r["parent"] == "p"] == list(HOSTILE_NAMES)


@needs_node
def test_no_prototype_walk_reaches_a_tool_and_run_code_cannot_call_itself(session):
    s = session([entry("echo")], {"test/echo": echo})
    result = s.run("return [typeof tools.toString, typeof tools.run_code, 'constructor' in tools]")
    assert thaw(result.value)["value"] == ["undefined", "undefined", False]
    # a frame naming a tool outside the SDK (run_code itself) is resolved against the SDK only
    s.runtime._live.add("forged")
    from dshc.runtime.code.dispatch import NestedDispatch

    answers = []
    dispatch = NestedDispatch(s.ctx, Pipeline(), "forged", 2, lambda n, r: answers.append(r))
    dispatch.submit(1, "run_code", {"code": "return 1", "description": "again"})
    wait_for(lambda: answers, "the forged call's answer")
    dispatch.close(1.0)
    assert answers[0].error["code"] == "UNKNOWN_TOOL"


def test_a_nested_call_whose_parent_is_not_a_running_run_code_is_unknown_tool(session):
    s = session([entry("echo")], {"test/echo": echo})
    forged = ToolCall.from_model("f", "echo", {}, parent="p")
    result = Pipeline().run(forged, s.ctx).result
    assert result.error["code"] == "UNKNOWN_TOOL" and "not a running `run_code` call" in result.content


@needs_node
def test_parallel_safe_calls_overlap_up_to_the_knob_and_exclusive_ones_run_alone(session):
    lock = threading.Lock()
    running: list[str] = []
    peaks = {"parallel": 0, "overlap_with_exclusive": 0}
    started = {"p": 0, "x": 0}
    full = threading.Barrier(3, timeout=30)  # the first three parallel calls run together: the pool reaches the knob

    def body(kind):
        def run(args, tctx):
            with lock:
                running.append(kind)
                started[kind] += 1
                first_three = kind == "p" and started["p"] <= 3
                peaks["parallel"] = max(peaks["parallel"], running.count("p"))
                if "x" in running and len(running) > 1:
                    peaks["overlap_with_exclusive"] += 1
            if first_three:
                full.wait()
            time.sleep(0.3)  # each call stays a while: one started past the knob, or beside `slow_x`, is seen
            with lock:
                running.remove(kind)
            return {"kind": kind}

        return run

    s = session(
        [entry("slow_p", "parallel"), entry("slow_x")],
        {"test/slow_p": body("p"), "test/slow_x": body("x")},
        max_parallel=3,
    )
    result = s.run("""
        const all = [];
        for (let i = 0; i < 7; i++) all.push(tools.slow_p({ i }));
        all.push(tools.slow_x({}));
        for (let i = 0; i < 3; i++) all.push(tools.slow_p({ i }));
        return (await Promise.all(all)).map(r => r.kind).join("");""")
    assert result.value["value"] == "pppppppxppp"
    assert peaks == {"parallel": 3, "overlap_with_exclusive": 0}
    starts = [r["callId"] for r in s.records("tool/code-dispatch-start")]
    assert starts == [f"p:code:{n}" for n in range(1, 12)]  # started in submission order


@needs_node
def test_nested_calls_pass_the_pre_execute_policy_with_their_parent(session):
    seen = []

    def policy(call, entry_):
        seen.append((call.id, call.parent))
        return Deny("no echo today") if call.arguments.get("n") == 2 else Allow()

    s = session([entry("echo")], {"test/echo": echo}, pre_execute=(policy,))
    result = s.run("""const out = [];
        for (const n of [1, 2]) { try { out.push((await tools.echo({ n })).echo.n) } catch (e) { out.push(e.message) } }
        return out;""")
    assert thaw(result.value)["value"] == [1, "no echo today"]
    assert ("p", None) in seen and ("p:code:1", "p") in seen and ("p:code:2", "p") in seen


@needs_node
def test_a_worker_that_dies_is_worker_exit(session):
    s = session([], {}, heap_mb=16)
    result = s.run("const hoard = []; while (true) hoard.push(new Array(100000).fill(hoard.length));")
    assert result.error["code"] == "CODE_RUN_FAILED" and result.error["message"].startswith("worker-exit:")


@needs_node
def test_abort_mid_program_kills_the_worker_and_records_in_flight_nested_calls_as_aborted(session, monkeypatch):
    from dshc.runtime.code.dispatch import NestedDispatch

    started = threading.Semaphore(0)
    submitted = []
    submit = NestedDispatch.submit

    def counted(self, number, name, arguments):
        submit(self, number, name, arguments)
        submitted.append(number)

    monkeypatch.setattr(NestedDispatch, "submit", counted)

    woke: list[bool] = []  # each wait's end: True when the abort ended it, False when its 20 s ran out

    def waits(args, tctx):
        started.release()
        woke.append(tctx.abort.wait(20))
        return {"finished": True}

    def abort_once_both_wait():
        try:
            if started.acquire(timeout=20) and started.acquire(timeout=20):
                wait_for(lambda: len(submitted) == 3, "`later` to be queued behind the two waits", 20)
        finally:
            s.ctx.signal.set()

    s = session([entry("wait", "parallel"), entry("later")], {"test/wait": waits, "test/later": echo})
    threading.Thread(target=abort_once_both_wait, daemon=True).start()
    result = s.run("await Promise.all([tools.wait({}), tools.wait({}), tools.later({})]); return 'done'")
    wait_for(lambda: len(woke) == 2, "both waits to end", 30)
    assert woke == [True, True]  # the abort, not a timeout, ended them
    assert result.error["code"] == "CODE_RUN_FAILED" and result.error["message"].startswith("abort:")
    links = {r["callId"]: r["outcome"] for r in s.records("tool/code-dispatch")}
    assert links == {"p:code:1": "aborted", "p:code:2": "aborted", "p:code:3": "aborted"}
    nested = {r["callId"]: r["error"]["code"] for r in s.records("tool/result") if r["callId"] != "p"}
    assert nested == {"p:code:1": "ABORTED", "p:code:2": "ABORTED", "p:code:3": "ABORTED_BEFORE_DISPATCH"}
    worker = s.records("tool/code-worker")[0]["pid"]
    assert not psutil.pid_exists(worker) or psutil.Process(worker).status() == psutil.STATUS_ZOMBIE


@needs_node
@pytest.mark.skipif(NO_OS_SANDBOX, reason="this host has no OS sandbox to put the worker in")
def test_the_worker_runs_without_network_and_with_nodes_permission_model(session):
    namespaces = {}

    def look(args, tctx):
        worker = psutil.Process(s.records("tool/code-worker")[0]["pid"])
        node = next(p for p in worker.children(recursive=True) if "runner.js" in " ".join(p.cmdline()))
        namespaces["worker"] = os.readlink(f"/proc/{node.pid}/ns/net")
        namespaces["ours"] = os.readlink("/proc/self/ns/net")
        namespaces["cmdline"] = node.cmdline()
        return {}

    s = session([entry("look")], {"test/look": look})
    assert s.run("await tools.look({}); return 1").value["value"] == 1
    assert namespaces["worker"] != namespaces["ours"]  # its own, empty network namespace
    assert "--experimental-permission" in namespaces["cmdline"]
    assert not any(
        flag.startswith(("--allow-fs-write", "--allow-child-process", "--allow-worker"))
        for flag in namespaces["cmdline"]
    )
    assert s.records("tool/code-worker")[0]["sandbox"] == "landlock+netns"


def test_frames_are_length_prefixed_json_and_bad_ones_are_named():
    reader = FrameReader(max_bytes=64)
    data = encode({"type": "log", "text": "é"}) + encode({"type": "done", "ok": True})
    assert reader.feed(data[:3]) == [] and len(reader.feed(data[3:])) == 2
    with pytest.raises(FrameError) as big:
        FrameReader(max_bytes=8).feed(encode({"type": "log", "text": "x" * 20}))
    assert big.value.kind == "output-limit"
    with pytest.raises(FrameError) as bad:
        FrameReader().feed(b"\x00\x00\x00\x02{x")
    assert bad.value.kind == "invalid-output"
    deep = b'{"type": "call", "args": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"  # a program's value, nested deep
    with pytest.raises(FrameError) as nested:
        FrameReader(max_bytes=1 << 20).feed(len(deep).to_bytes(4, "big") + deep)
    assert nested.value.kind == "invalid-output" and "too deep" in str(nested.value)


def _runs(proc: psutil.Process, command: str) -> bool:
    try:
        return command in " ".join(proc.cmdline())
    except psutil.Error:
        return False


@needs_node
def test_a_stopped_run_kills_the_worker_and_marks_the_nested_call_in_flight(program, tmp_path):
    from crash_trials import marked_processes
    from dshc.cli.run_calls import RunOptions, RunStop, run_calls
    from dshc.compiler.request import Request
    from dshc.runtime.calls_file import read_calls

    calls = tmp_path / "calls.jsonl"
    code = "await tools.bash({ command: 'sleep 30', description: 'wait' }); return 1"
    calls.write_text(json.dumps({"id": "c1", "name": "run_code", "arguments": {"code": code, "description": "d"}}))
    log = tmp_path / "events.jsonl"
    stop = RunStop()

    def stop_when_bash_runs():
        try:
            wait_for(
                lambda: log.exists() and any(_runs(proc, "sleep 30") for proc in marked_processes(log)),
                "the nested bash call's command to start",
                20,
            )
        finally:
            stop.request(15)

    threading.Thread(target=stop_when_bash_runs, daemon=True).start()
    request = Request(host="web", preset="code", policy="danger-full-access")
    report = run_calls(
        program,
        request,
        read_calls(str(calls)),
        RunOptions(str(tmp_path), str(log), None, 20.0),
        lambda results, contexts: None,
        stop,
    )
    assert report.stopped_by == 15 and report.interrupted == [("c1", "run_code")]  # only the model's call
    records = list(read_log(str(log)).records)
    marked = {r["callId"]: r.get("parent") for r in records if r["type"] == "tool/interrupted"}
    assert marked == {"c1": None, "c1:code:1": "c1"}
    worker = next(r for r in records if r["type"] == "tool/code-worker")["pid"]
    deadline = time.monotonic() + 5
    while (
        psutil.pid_exists(worker)
        and psutil.Process(worker).status() != psutil.STATUS_ZOMBIE
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    assert not psutil.pid_exists(worker) or psutil.Process(worker).status() == psutil.STATUS_ZOMBIE


@needs_node
def test_nested_additional_contexts_are_deferred_onto_the_outer_result_in_submission_order(session):
    from dshc.runtime.stages.post_execute import Accept

    def note(call, result):
        return Accept(additional_contexts=(f"seen {call.arguments.get('n')}",)) if call.parent else None

    s = session([entry("echo", "parallel")], {"test/echo": echo}, pre_execute=(), max_parallel=4)
    s.ctx.post_execute = (note,)
    call = ToolCall.from_model(
        "p", "run_code", {"code": "await Promise.all([1, 2, 3].map(n => tools.echo({ n })))", "description": "contexts"}
    )
    outcomes, contexts = run_batch([call], s.ctx)
    assert outcomes[0].result.is_error is False
    assert contexts == ("seen 1", "seen 2", "seen 3")


def test_the_nested_pool_size_is_the_mounted_max_parallel_sub_calls_knob(program):
    from dshc.cli.host import max_parallel_sub_calls
    from dshc.compiler.program import Program
    from dshc.compiler.request import Request

    narrow = Program.load(
        texts={"narrow.dsh": "preset narrow extends code {\n  mount tools { maxParallelSubCalls = 2 }\n}\n"}
    )
    assert max_parallel_sub_calls(narrow, Request(host="web", preset="narrow")) == 2
    assert max_parallel_sub_calls(program, Request(host="web", preset="code")) == 10  # the catalog default
