"""`structured_output`, the result channel of workflow and ralph children (reference: a successful
call ends the child's turn, then a guard denies every later call). Driven through the real
pipeline: in-process over `cli.host.session`, and through `dshc run` with a calls file."""

from __future__ import annotations

import json

import pytest

from dshc.cli.host import session
from dshc.compiler.request import Request
from dshc.runtime.code.node_runtime import missing_runtime
from dshc.runtime.events import read_log
from dshc.runtime.scheduler import run_batch
from dshc.runtime.tools import IMPLEMENTATIONS
from dshc.runtime.tools.base import ToolContext, ToolError
from dshc.runtime.types import MAX_ARGUMENT_DEPTH, ArgumentsTooDeep, ToolCall

SCHEMA = {
    "type": "object",
    "required": ["answer"],
    "additionalProperties": False,
    "properties": {"answer": {"type": "integer"}, "notes": {"type": "array", "items": {"type": "string"}}},
}
CHILD = Request(host="web", scope="workflow-child")
TURN_CONCLUDED = "TURN_CONCLUDED"


@pytest.fixture
def child(program, tmp_path):
    """A workflow child's session; `child(schema)` opens it, `.call(name, args)` runs one call."""
    opened = []

    class Child:
        def __init__(self, schema):
            self.log_path = str(tmp_path / "events.jsonl")
            self.ctx, self.state = session(program, CHILD, str(tmp_path), self.log_path, output_schema=schema)
            self.count = 0
            opened.append(self)

        def batch(self, *calls):
            made = []
            for name, args in calls:
                self.count += 1
                made.append(ToolCall.from_model(f"c{self.count}", name, json.dumps(args)))
            outcomes, _ = run_batch(made, self.ctx)
            return [o.result for o in outcomes]

        def call(self, name, args):
            return self.batch((name, args))[0]

        def records(self, type_):
            return [r for r in read_log(self.log_path).records if r["type"] == type_]

    yield Child
    for opened_child in opened:
        opened_child.state.close()
        opened_child.ctx.log.close()


def _concluded(result) -> bool:
    return (
        result.is_error
        and result.error.get("code") == TURN_CONCLUDED
        and "structured_output" in result.content
        and "turn" in result.content
    )


# --- attacks first: nothing runs after the result ---------------------------------------------------
def test_after_a_successful_structured_output_every_later_call_is_denied_before_it_runs(child, tmp_path):
    c = child(SCHEMA)
    first = c.call("structured_output", {"answer": 42})
    assert not first.is_error and first.value == {"answer": 42}
    marker = tmp_path / "ran"
    later = [
        c.call("structured_output", {"answer": 7}),  # a second result cannot replace the first
        c.call("bash", {"command": f"touch {marker}"}),  # a process never starts
        c.call("write", {"file_path": str(tmp_path / "w.txt"), "content": "x"}),
        c.call("todo_write", {"todos": [{"content": "x", "status": "pending"}]}),
        c.call("no_such_tool", {}),
    ]  # an unknown name is denied, not dispatched
    assert all(_concluded(r) for r in later), [r.to_json() for r in later]
    assert not marker.exists() and not (tmp_path / "w.txt").exists()
    assert c.state.final_output == {"answer": 42} and c.state.todos == []
    # the denial is decided before the policy or a human is consulted, and says who decided
    decisions = [r for r in c.records("tool/decision") if r["callId"] != "c1"]
    assert len(decisions) == 5 and all(r["decision"] == "deny" for r in decisions)
    assert all(r["decidedBy"][0][0] == "structured_output" for r in decisions)


def test_calls_later_in_the_same_batch_are_denied_too(child):
    c = child(None)
    results = c.batch(("structured_output", {"done": True}), ("read", {"file_path": "x"}), ("read", {"file_path": "y"}))
    assert not results[0].is_error and all(_concluded(r) for r in results[1:])


def test_a_result_invalid_against_the_output_schema_is_refused_and_the_turn_goes_on(child):
    c = child(SCHEMA)
    for bad in ({"answer": "forty-two"}, {}, {"answer": 1, "extra": True}, {"answer": 1, "notes": [3]}):
        refused = c.call("structured_output", bad)
        assert refused.is_error and refused.error["code"] == "INVALID_ARGS", refused.to_json()
        assert "output schema" in refused.content
    assert c.state.final_output is None
    assert not c.call("todo_write", {"todos": []}).is_error  # the model may go on working
    assert not c.call("structured_output", {"answer": 1, "notes": ["ok"]}).is_error  # and retry
    assert c.state.final_output == {"answer": 1, "notes": ["ok"]}


def test_without_an_output_schema_any_json_object_is_accepted_and_nothing_else(child):
    c = child(None)
    for not_an_object in ("text", [1, 2], 3):
        refused = c.call("structured_output", not_an_object)
        assert refused.is_error and refused.error["code"] == "INVALID_ARGS"
    assert c.state.final_output is None
    assert not c.call("structured_output", {"anything": {"goes": [1, None]}}).is_error


TREE = {"$defs": {"node": {"type": "object", "properties": {"a": {"$ref": "#/$defs/node"}}}}, "$ref": "#/$defs/node"}


def _nested(levels: int) -> dict:
    deep = inner = {}
    for _ in range(levels - 1):  # built without recursion
        inner["a"] = {}
        inner = inner["a"]
    return deep


def test_deep_results_against_a_recursive_schema_are_checked_or_refused_never_a_crash(child, state, tmp_path):
    c = child(TREE)
    too_deep = c.call("structured_output", _nested(65))  # past the policy's cap: refused before any rule reads it
    assert too_deep.is_error and "deeper than 64 levels" in too_deep.content and c.state.final_output is None
    assert not c.call("structured_output", _nested(64)).is_error
    # an in-process caller handing the body a result deeper than jsonschema can walk: refused, the turn goes on
    body = IMPLEMENTATIONS["subagent-in-process-driver/structured_output"]
    tctx = ToolContext(
        workspace=str(tmp_path),
        sandbox="workspace-write",
        owner="workflow-child",
        state=state,
        abort=None,
        output_schema=TREE,
    )
    with pytest.raises(ToolError, match="too deep to check") as refused:
        body(_nested(400), tctx)
    assert refused.value.code == "INVALID_ARGS" and state.final_output is None


def test_1000_deep_arguments_are_a_clear_error_not_a_crash():
    text = '{"a": ' * 1000 + "1" + "}" * 1000
    with pytest.raises(ArgumentsTooDeep, match=f"deeper than {MAX_ARGUMENT_DEPTH}"):
        ToolCall.from_model("c1", "structured_output", text)
    with pytest.raises(ArgumentsTooDeep):  # a Python caller's object
        ToolCall.from_model("c1", "structured_output", _nested(1000))


def test_two_racing_results_keep_only_the_first(state, tmp_path):
    body = IMPLEMENTATIONS["subagent-in-process-driver/structured_output"]
    tctx = ToolContext(
        workspace=str(tmp_path),
        sandbox="workspace-write",
        owner="workflow-child",
        state=state,
        abort=None,
        output_schema=None,
    )
    assert body({"n": 1}, tctx) == {"n": 1}
    with pytest.raises(ToolError, match="turn ended") as second:  # both passed pre-execute (overlapping
        body({"n": 2}, tctx)  # nested run_code calls): the body decides
    assert second.value.code is None and state.final_output == {"n": 1}  # tools raise only the reference's codes


def test_the_log_holds_the_result_and_each_later_denial(child):
    c = child(SCHEMA)
    c.call("structured_output", {"answer": 3})
    c.call("read", {"file_path": "x"})
    results = {r["callId"]: r for r in c.records("tool/result")}
    assert results["c1"]["isError"] is False and results["c1"]["value"] == {"answer": 3}
    assert results["c2"]["isError"] is True and results["c2"]["error"]["code"] == TURN_CONCLUDED


# --- gate 5 and the command line ---------------------------------------------------------------------
def test_gate_5_marks_structured_output_ready_now_the_runtime_has_its_body(program):
    assert "subagent-in-process-driver/structured_output" in IMPLEMENTATIONS
    for scope in ("workflow-child", "ralph-child"):
        assert program.view(Request(host="web", scope=scope)).entry("structured_output").ready == "ready"


def _write_calls(path, *calls):
    path.write_text("".join(json.dumps({"id": i, "name": n, "arguments": a}) + "\n" for i, n, a in calls))
    return str(path)


def test_dshc_run_in_a_workflow_child_ends_the_turn_at_the_result(cli, tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    calls = _write_calls(
        tmp_path / "calls.jsonl",
        ("1", "structured_output", {"answer": "no"}),
        ("2", "todo_write", {"todos": []}),
        ("3", "structured_output", {"answer": 5}),
        ("4", "bash", {"command": "true"}),
        ("5", "nope", {}),
    )
    log = tmp_path / "events.jsonl"
    run = cli(
        "run",
        calls,
        "--host",
        "web",
        "--scope",
        "workflow-child",
        "--output-schema",
        str(schema),
        "--workspace",
        str(tmp_path),
        "--log",
        str(log),
        "--json",
    )
    rows = {row["id"]: row for row in map(json.loads, run.out.splitlines())}
    assert run.code == 1 and run.err == ""
    assert rows["1"]["error"]["code"] == "INVALID_ARGS" and not rows["2"]["isError"]
    assert not rows["3"]["isError"] and rows["3"]["value"] == {"answer": 5}
    assert rows["4"]["error"]["code"] == rows["5"]["error"]["code"] == TURN_CONCLUDED
    logged = {r["callId"]: r for r in read_log(str(log)).records if r["type"] == "tool/result"}
    assert logged["3"]["value"] == {"answer": 5}


def test_dshc_serve_lists_the_output_schema_as_the_parameters_and_enforces_it(tmp_path):
    """A real MCP client over stdio: the child sees the schema it must fill, a wrong result is refused and
    the turn goes on, a right one ends it."""
    import sys

    import anyio
    from mcp import Client, StdioServerParameters

    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    argv = [
        sys.executable,
        "-c",
        "from dshc.cli.entry import entry; entry()",
        "serve",
        "--host",
        "web",
        "--scope",
        "workflow-child",
        "--output-schema",
        str(schema),
        "--workspace",
        str(tmp_path),
    ]
    text = lambda result: "".join(getattr(b, "text", "") for b in result.content)  # noqa: E731

    async def main():
        async with Client(StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(tmp_path))) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert listed["structured_output"].input_schema == SCHEMA
            assert listed["todo_write"].input_schema != SCHEMA  # only the result channel takes the schema
            wrong = await client.call_tool("structured_output", {"answer": "forty-two"})
            assert wrong.is_error and "does not match the output schema" in text(wrong)
            right = await client.call_tool("structured_output", {"answer": 42})
            assert not right.is_error, text(right)
            after = await client.call_tool("todo_write", {"todos": []})
            assert after.is_error and "structured_output" in text(after) and "turn" in text(after), text(after)

    anyio.run(main)


def test_dshc_serve_refuses_an_unusable_output_schema_before_serving(cli, tmp_path):
    schema = tmp_path / "schema.json"
    schema.write_text('{"type": 5}')
    served = cli("serve", "--host", "web", "--scope", "workflow-child", "--output-schema", str(schema))
    assert served.code == 2 and "not a valid JSON Schema" in served.err and "Traceback" not in served.err


@pytest.mark.parametrize(
    "content, why",
    [("{not json", "not JSON"), ('{"type": 5}', "not a valid JSON Schema"), ("[1]", "not a valid JSON Schema")],
)
def test_dshc_run_refuses_an_unusable_output_schema_file(cli, tmp_path, content, why):
    schema = tmp_path / "schema.json"
    schema.write_text(content)
    calls = _write_calls(tmp_path / "calls.jsonl", ("1", "structured_output", {}))
    run = cli("run", calls, "--host", "web", "--scope", "workflow-child", "--output-schema", str(schema))
    assert run.code == 2 and why in run.err and "Traceback" not in run.err and run.out == ""


def test_dshc_run_reports_a_1000_deep_calls_line_as_a_diagnostic(cli, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        '{"id": "1", "name": "structured_output", "arguments": {"ok": 1}}\n'
        '{"id": "2", "name": "structured_output", "arguments": ' + '{"a": ' * 1000 + "1" + "}" * 1001 + "\n"
    )
    run = cli("run", str(calls), "--host", "web", "--scope", "workflow-child", "--json")
    assert run.code == 2 and "Traceback" not in run.err and "internal error" not in run.err
    [diagnostic] = run.json()["diagnostics"]
    assert diagnostic["code"] == "DSH405" and diagnostic["line"] == 2 and "deeper than" in diagnostic["message"]


@pytest.mark.skipif(missing_runtime() is not None, reason=f"run_code cannot run here: no {missing_runtime()}")
def test_in_code_mode_a_nested_result_ends_the_turn_for_nested_and_later_calls(cli, tmp_path):
    program = """
        await tools.structured_output({ answer: 9 });
        let after = "ran";
        try { await tools.read({ file_path: "notes.txt" }); } catch (e) { after = String(e); }
        return { after };"""
    (tmp_path / "notes.txt").write_text("secret\n")
    calls = _write_calls(
        tmp_path / "calls.jsonl",
        ("p", "run_code", {"code": program, "description": "deliver"}),
        ("q", "run_code", {"code": "return 1;", "description": "later"}),
    )
    log = tmp_path / "events.jsonl"
    run = cli(
        "run",
        calls,
        "--host",
        "web",
        "--scope",
        "workflow-child",
        "--mode",
        "code",
        "--policy",
        "read-only",
        "--workspace",
        str(tmp_path),
        "--log",
        str(log),
        "--json",
    )
    rows = {row["id"]: row for row in map(json.loads, run.out.splitlines())}
    assert "turn ended" in rows["p"]["value"]["value"]["after"], rows["p"]
    assert rows["q"]["error"]["code"] == TURN_CONCLUDED
    nested = {
        r["name"]: r
        for r in read_log(str(log)).records
        if r["type"] == "tool/result" and r["callId"] != "p" and r["callId"] != "q"
    }
    assert nested["structured_output"]["value"] == {"answer": 9}
    assert nested["read"]["error"]["code"] == TURN_CONCLUDED and "secret" not in json.dumps(nested["read"])
