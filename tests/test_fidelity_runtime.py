"""Runtime behaviours pinned to the reference harness (issue 16 items 2, 3, 4, 9, 10; issue 17
item 4's truncation markers). Each test is named after the reference behaviour it pins."""

from __future__ import annotations

import json

import pytest

from dshc.compiler.request import Request
from dshc.runtime.scheduler import execution_class, groups
from dshc.runtime.types import ToolCall


@pytest.fixture(scope="module")
def standard_view(program):
    return program.view(Request(preset="standard", host="web"))


@pytest.mark.parametrize(
    "name, arguments",
    [
        ("read", {}),  # required file_path missing
        ("read", {"file_path": 7}),  # wrong type
        ("read", '{"file_path": '),  # text that is not JSON stays a raw string
        ("web_search", {"query": 1}),
        ("read", {"file_path": "a\0b"}),  # a NUL no tool can use
    ],
)
def test_a_concurrency_safe_tool_with_invalid_arguments_is_scheduled_exclusive(standard_view, name, arguments):
    call = ToolCall.from_model("c", name, arguments if isinstance(arguments, str) else json.dumps(arguments))
    assert execution_class(call, standard_view) == "exclusive"


def test_a_concurrency_safe_tool_with_valid_arguments_stays_parallel_and_invalid_ones_are_barriers(standard_view):
    calls = [
        ToolCall.from_model(i, "read", args)
        for i, args in (
            ("1", '{"file_path": "a"}'),
            ("2", '{"file_path": "b"}'),
            ("3", "{}"),
            ("4", '{"file_path": "c"}'),
        )
    ]
    assert execution_class(calls[0], standard_view) == "parallel"
    assert [[c.id for c in g] for g in groups(calls, standard_view)] == [["1", "2"], ["3"], ["4"]]


def _pipeline_ctx(**hooks):
    from test_runtime import make_ctx  # the runtime tests' tiny one-tool view

    return make_ctx(**hooks)


def test_an_unknown_tool_flows_through_pre_execute_fails_unknown_tool_at_dispatch_and_post_execute_still_runs():
    from dshc.runtime.pipeline import Pipeline
    from dshc.runtime.stages.post_execute import Accept

    seen_pre, seen_post = [], []

    def pre(call, entry):
        seen_pre.append((call.name, entry))

    def post(call, result):
        seen_post.append((call.name, result.error["code"]))
        return Accept(additional_contexts=("post ran",))

    ctx = _pipeline_ctx(pre_execute=(pre,), post_execute=(post,))
    outcome = Pipeline().run(ToolCall.from_model("u1", "no_such_tool", "{}"), ctx)
    assert seen_pre == [("no_such_tool", None)]
    assert seen_post == [("no_such_tool", "UNKNOWN_TOOL")]
    assert outcome.result.content == 'Error: unknown tool "no_such_tool"'
    assert outcome.result.error == {
        "name": "ToolNotFoundError",
        "message": 'unknown tool "no_such_tool"',
        "code": "UNKNOWN_TOOL",
    }
    assert outcome.contexts == ("post ran",)
    assert [r.stage for r in outcome.state.records][:2] == ["record-call", "pre-execute"]


def test_a_pre_execute_deny_of_an_unknown_tool_is_a_denial_not_unknown_tool():
    from dshc.runtime.pipeline import Pipeline
    from dshc.runtime.types import Deny

    ctx = _pipeline_ctx(pre_execute=(lambda call, entry: Deny("hook says no"),))
    result = Pipeline().run(ToolCall.from_model("u1", "no_such_tool", "{}"), ctx).result
    assert result.content == "Error: hook says no" and "code" not in result.error


def test_in_code_mode_a_direct_native_call_is_unknown_tool_with_the_run_code_route_before_policy():
    from dshc.runtime.pipeline import Pipeline
    from test_runtime import entry, view

    seen = []
    code_view = view(entry("run_code"), mode="code", sdk=(entry("echo"),))
    ctx = _pipeline_ctx(
        the_view=code_view,
        pre_execute=(lambda c, e: seen.append(c.name),),
        post_execute=(lambda c, r: seen.append("post"),),
    )
    result = Pipeline().run(ToolCall.from_model("c1", "echo", '{"x": 1}'), ctx).result
    assert result.content == (
        'Error: unknown tool "echo": only `run_code` is callable directly — '
        "call `echo` from inside a `run_code` program instead"
    )
    assert result.error["code"] == "UNKNOWN_TOOL" and seen == []  # neither policy nor post-execute ran
    ctx.signal.set()
    aborted = Pipeline().run(ToolCall.from_model("c2", "echo", '{"x": 1}'), ctx).result
    assert aborted.error["code"] == "ABORTED_BEFORE_DISPATCH"


def test_dshc_run_answers_an_unknown_tool_unknown_tool_through_the_shipped_policy(cli, tmp_path):
    calls = tmp_path / "calls.jsonl"
    calls.write_text(json.dumps({"id": "u", "name": "no_such_tool", "arguments": {}}) + "\n")
    done = cli(
        "run",
        str(calls),
        "--workspace",
        str(tmp_path),
        "--policy",
        "workspace-write",
        "--log",
        str(tmp_path / "ev.jsonl"),
        "--json",
    )
    row = json.loads(done.out.splitlines()[0])
    assert row["error"] == {
        "code": "UNKNOWN_TOOL",
        "name": "ToolNotFoundError",
        "message": 'unknown tool "no_such_tool"',
    }
    types = [json.loads(line)["type"] for line in (tmp_path / "ev.jsonl").read_text().splitlines()]
    assert types[-2:] == ["tool/call", "tool/result"]


def _run_rows(cli, tmp_path, calls, *flags):
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(call) + "\n" for call in calls))
    log = tmp_path / "events.jsonl"
    done = cli("run", str(path), "--log", str(log), "--json", *flags)
    rows = {row["id"]: row for row in map(json.loads, done.out.splitlines())}
    return rows, [json.loads(line) for line in log.read_text().splitlines()]


def test_a_write_outside_the_workspace_asks_as_an_escalation_and_is_refused_with_the_hint_unless_approved(
    cli, tmp_path
):
    # the reference refuses it at execution with a hint to escalate (the tool bodies still do, below); dshc
    # says so before it runs, the effect `decide`, the decision API and the hook give: an ask whose approval
    # runs it escalated
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    workspace.mkdir()
    outside.mkdir()
    plain = {"id": "w1", "name": "write", "arguments": {"file_path": str(outside / "a.txt"), "content": "x"}}
    escalated = {
        "id": "w2",
        "name": "write",
        "arguments": {
            "file_path": str(outside / "b.txt"),
            "content": "x",
            "sandbox_permissions": "danger-full-access",
            "justification": "the file belongs next to the workspace",
        },
    }
    rows, events = _run_rows(
        cli,
        tmp_path,
        [plain, escalated],
        "--workspace",
        str(workspace),
        "--policy",
        "workspace-write",
        "--approve",
        "never",
    )
    refused = rows["w1"]
    assert refused["isError"] and not (outside / "a.txt").exists()
    assert "the `workspace-write` sandbox refuses writes outside the workspace" in refused["content"]
    assert "sandbox_permissions" in refused["content"] and "justification" in refused["content"]
    decisions = {e["callId"]: e["decision"] for e in events if e["type"] == "tool/decision"}
    assert decisions == {"w1": "ask", "w2": "ask"}
    assert rows["w2"]["isError"] and "code" not in rows["w2"]["error"] and not (outside / "b.txt").exists()

    again = tmp_path / "again"
    again.mkdir()  # a log of its own: a run resumes the calls its log already answered
    rows, _ = _run_rows(
        cli,
        again,
        [plain, escalated],
        "--workspace",
        str(workspace),
        "--policy",
        "workspace-write",
        "--approve",
        "once",
    )
    assert rows["w1"]["isError"] is False and (outside / "a.txt").read_text() == "x"
    assert rows["w2"]["isError"] is False and (outside / "b.txt").read_text() == "x"


def test_an_edit_outside_the_workspace_carries_the_hint_and_str_replace_editor_refuses_without_one(
    workspace, outside, state
):
    from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext, ToolError
    import threading

    ctx = ToolContext(
        workspace=str(workspace), sandbox="workspace-write", owner="t", state=state, abort=threading.Event()
    )
    (outside / "b.txt").write_text("old")
    with pytest.raises(ToolError) as edit:
        IMPLEMENTATIONS["tool-fs/edit"](
            {"file_path": str(outside / "b.txt"), "old_string": "old", "new_string": "new"}, ctx
        )
    with pytest.raises(ToolError) as editor:
        IMPLEMENTATIONS["tool-str-replace-editor/str_replace_editor"](
            {"command": "create", "path": str(outside / "c.txt"), "file_text": "x"}, ctx
        )
    assert edit.value.code == editor.value.code == "FS_SANDBOX_DENIED"
    assert "escalation available" in edit.value.message and "escalation" not in editor.value.message
    assert (outside / "b.txt").read_text() == "old" and not (outside / "c.txt").exists()


def _tool_ctx(workspace, state, **fields):
    import threading
    from dshc.runtime.tools import ToolContext

    return ToolContext(
        workspace=str(workspace), sandbox="workspace-write", owner="t", state=state, abort=threading.Event(), **fields
    )


def _plan_error(ctx, plan):
    from dshc.runtime.tools import IMPLEMENTATIONS, ToolError

    with pytest.raises(ToolError) as caught:
        IMPLEMENTATIONS["plan-mode/exit_plan_mode"]({"plan": plan}, ctx)
    assert caught.value.code is None  # plain errors, as the reference raises them
    return caught.value.message


PLAN = "# Rename the module\n\n1. move it\n2. fix imports\n"


def test_exit_plan_mode_outside_plan_mode_is_an_error_saying_it_is_only_available_in_plan_mode(workspace, state):
    reviewed = []
    ctx = _tool_ctx(workspace, state, review_plan=lambda plan: reviewed.append(plan) or "approved")
    assert _plan_error(ctx, PLAN) == "exit_plan_mode is only available in plan mode"
    assert reviewed == []


@pytest.mark.parametrize(
    "plan",
    ["", "   ", "no heading at all", "## a second-level heading first", "#NoSpace", "intro line\n# heading later"],
)
def test_exit_plan_mode_needs_a_plan_starting_with_a_heading(workspace, state, plan):
    state.plan_mode = True
    ctx = _tool_ctx(workspace, state, review_plan=lambda plan: "approved")
    assert "starting with a # heading" in _plan_error(ctx, plan)
    assert state.plan_mode is True


def test_exit_plan_mode_without_a_user_questions_channel_is_an_error(workspace, state):
    state.plan_mode = True
    for ctx in (
        _tool_ctx(workspace, state),
        _tool_ctx(workspace, state, review_plan=lambda plan: "unavailable"),
        _tool_ctx(workspace, state, review_plan=lambda plan: 1 / 0),
    ):
        assert _plan_error(ctx, PLAN).startswith("no user-questions channel is available to review the plan")
    assert state.plan_mode is True


def test_exit_plan_mode_leaves_plan_mode_only_on_an_explicit_approval(workspace, state):
    from dshc.runtime.tools import IMPLEMENTATIONS

    state.plan_mode = True
    for answer in ("rejected", "cancelled", "yes", None):
        ctx = _tool_ctx(workspace, state, review_plan=lambda plan, answer=answer: answer)
        assert _plan_error(ctx, PLAN).startswith("The user chose to keep planning")
        assert state.plan_mode is True
    seen = []
    ctx = _tool_ctx(workspace, state, review_plan=lambda plan: seen.append(plan) or "approved")
    assert IMPLEMENTATIONS["plan-mode/exit_plan_mode"]({"plan": PLAN}, ctx) == {"approved": True}
    assert seen == [PLAN] and state.plan_mode is False


@pytest.mark.parametrize("approve, approved", [("never", False), ("once", True), (None, False)])
def test_dshc_run_never_approves_exit_plan_mode_under_approve_never(cli, tmp_path, approve, approved):
    flags = ["--workspace", str(tmp_path), "--policy", "plan", "--plan"] + (["--approve", approve] if approve else [])
    rows, _ = _run_rows(cli, tmp_path, [{"id": "x", "name": "exit_plan_mode", "arguments": {"plan": PLAN}}], *flags)
    assert rows["x"]["isError"] is (not approved)
    if approve is None:  # the test has no terminal: there is no one to review the plan
        assert "no user-questions channel" in rows["x"]["content"]
    elif not approved:
        assert "keep planning" in rows["x"]["content"]


def _tool_error(definition, args, ctx):
    from dshc.runtime.tools import IMPLEMENTATIONS, ToolError

    with pytest.raises(ToolError) as caught:
        IMPLEMENTATIONS[definition](args, ctx)
    return caught.value


def test_read_image_without_an_image_capable_model_is_a_plain_error_with_no_code(workspace, state):
    (workspace / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    error = _tool_error("tool-fs/read_image", {"file_path": "a.png"}, _tool_ctx(workspace, state))
    assert error.code is None and error.message.startswith('cannot read "a.png" as an image')


def _provider(pid, usable=True, search=None):
    from dshc.runtime.tools.web import WebProvider

    return WebProvider(pid, usable, search=search)


@pytest.mark.parametrize(
    "configured, registered, code",
    [
        (None, {}, "WEB_PROVIDER_UNAVAILABLE"),
        (None, {"a": False}, "WEB_PROVIDER_UNAVAILABLE"),  # registered, none usable
        ("exa", {}, "WEB_PROVIDER_CONFIGURED_MISSING"),
        ("exa", {"exa": False}, "WEB_PROVIDER_CONFIGURED_UNAVAILABLE"),
        (None, {"a": True, "b": True}, "WEB_PROVIDER_AMBIGUOUS"),  # several usable, none configured
    ],
)
def test_web_tools_fail_with_the_web_provider_code_that_says_why_no_provider_could_answer(
    workspace, state, monkeypatch, configured, registered, code
):
    from dshc.runtime.tools import web

    monkeypatch.setattr(web, "PROVIDERS", {pid: _provider(pid, usable) for pid, usable in registered.items()})
    for definition in ("tool-web/web_search", "tool-web/web_fetch"):
        error = _tool_error(
            definition,
            {"query": "q", "url": "https://example.org"},
            _tool_ctx(workspace, state, web_provider=configured),
        )
        assert (error.code, error.name) == (code, "WebError")


def test_a_failing_web_provider_is_web_provider_error_and_a_working_one_answers(workspace, state, monkeypatch):
    from dshc.runtime.tools import web

    def broken(args, ctx):
        raise ConnectionError("socket closed")

    monkeypatch.setattr(
        web,
        "PROVIDERS",
        {
            "good": _provider("good", search=lambda args, ctx: {"results": ["r"]}),
            "bad": _provider("bad", search=broken),
        },
    )
    error = _tool_error("tool-web/web_search", {"query": "q"}, _tool_ctx(workspace, state, web_provider="bad"))
    assert error.code == "WEB_PROVIDER_ERROR" and "socket closed" in error.message
    ctx = _tool_ctx(workspace, state, web_provider="good")
    assert web.BODIES["tool-web/web_search"]({"query": "q"}, ctx) == {"results": ["r"]}


FS_CODES = [  # (what the file tools are asked to do, the reference's FsError code)
    ("tool-fs/read", {"file_path": "missing.txt"}, "FS_NOT_FOUND"),
    ("tool-fs/read", {"file_path": "sub"}, "FS_NOT_REGULAR_FILE"),
    ("tool-fs-search/glob", {"pattern": "*", "path": "f.txt"}, "FS_NOT_DIRECTORY"),
    ("tool-fs/write", {"file_path": "f.txt", "content": "x"}, "FS_NOT_OBSERVED"),
    ("tool-fs/edit", {"file_path": "f.txt", "old_string": "zzz", "new_string": "y"}, "FS_EDIT_NOT_FOUND"),
    ("tool-fs/edit", {"file_path": "f.txt", "old_string": "a", "new_string": "b"}, "FS_AMBIGUOUS_EDIT"),
    ("tool-fs/write", {"file_path": "/etc/dshc-never.txt", "content": "x"}, "FS_SANDBOX_DENIED"),
    ("tool-fs/edit", {"file_path": "f.txt", "old_string": "a", "new_string": "a"}, None),  # plain, as the reference
]


@pytest.mark.parametrize("definition, args, code", FS_CODES)
def test_file_tools_fail_with_the_reference_fs_error_codes(workspace, state, definition, args, code):
    from dshc.runtime.tools import IMPLEMENTATIONS

    (workspace / "sub").mkdir()
    (workspace / "f.txt").write_text("a a\n")
    ctx = _tool_ctx(workspace, state)
    if definition == "tool-fs/edit":
        IMPLEMENTATIONS["tool-fs/read"]({"file_path": "f.txt"}, ctx)
    assert _tool_error(definition, args, ctx).code == code


def test_every_code_a_tool_can_raise_is_one_the_reference_defines():
    from dshc.runtime.tools.base import ERRORS

    reference = {
        "INVALID_ARGS",
        "ABORTED",
        "TOOL_TIMEOUT",
        "SANDBOX_UNAVAILABLE",
        "CODE_RUN_FAILED",
        "NO_PROVIDER",
        "LSP_UNAVAILABLE",
        "SESSION_QUERY_SEARCH_DISABLED",
        "SESSION_QUERY_TOOL_FAILED",
        "WEB_PROVIDER_CONFIGURED_MISSING",
        "WEB_PROVIDER_CONFIGURED_UNAVAILABLE",
        "WEB_PROVIDER_UNAVAILABLE",
        "WEB_PROVIDER_AMBIGUOUS",
        "WEB_PROVIDER_ERROR",
        "FS_NOT_FOUND",
        "FS_NOT_DIRECTORY",
        "FS_NOT_TEXT",
        "FS_NOT_REGULAR_FILE",
        "FS_TOO_LARGE",
        "FS_PERMISSION_DENIED",
        "FS_SANDBOX_DENIED",
        "FS_IO_ERROR",
        "FS_STALE_VERSION",
        "FS_NOT_OBSERVED",
        "FS_AMBIGUOUS_EDIT",
        "FS_EDIT_NOT_FOUND",
        "FS_ABORTED",
        "GOAL_NOT_FOUND",
        "GOAL_ALREADY_EXISTS",
        "GOAL_STALE_REVISION",
        "GOAL_INVALID_TRANSITION",
        "GOAL_INVALID_OBJECTIVE",
        "GOAL_TOOL_INVALID_UPDATE",
    }
    used = {code for code, _, _ in ERRORS.values() if code is not None}
    assert used <= reference, used - reference


def test_edit_of_a_file_past_the_whole_file_limit_is_fs_too_large_and_changes_nothing(workspace, state, monkeypatch):
    from dshc.runtime.tools import IMPLEMENTATIONS, fs

    monkeypatch.setattr(fs, "WHOLE_FILE_MAX_BYTES", 1000)
    (workspace / "big.txt").write_text("a" * 1500)
    ctx = _tool_ctx(workspace, state)
    IMPLEMENTATIONS["tool-fs/read"]({"file_path": "big.txt"}, ctx)  # read streams: no limit applies
    error = _tool_error(
        "tool-fs/edit", {"file_path": "big.txt", "old_string": "a", "new_string": "b", "replace_all": True}, ctx
    )
    assert (
        error.code == "FS_TOO_LARGE"
        and error.message == 'cannot read "big.txt": 1500 bytes exceeds the 1000-byte limit'
    )
    view = _tool_error(
        "tool-str-replace-editor/str_replace_editor", {"command": "view", "path": str(workspace / "big.txt")}, ctx
    )
    assert view.code == "FS_TOO_LARGE" and (workspace / "big.txt").read_text() == "a" * 1500


# ------------------------------------------------- issue 17.4: every truncation carries a marker


def _rendered(definition, args, ctx):
    from dshc.runtime.tools import IMPLEMENTATIONS, render

    value = IMPLEMENTATIONS[definition](args, ctx)
    return value, render(definition, args, value)


def test_read_marks_each_cut_line_and_a_window_the_file_continues_past(workspace, state):
    from dshc.runtime.tools import fs

    (workspace / "f.txt").write_text("short\n" + "x" * (fs.MAX_LINE_CHARS + 10) + "\nthird\nfourth\n")
    value, text = _rendered("tool-fs/read", {"file_path": "f.txt", "limit": 3}, _tool_ctx(workspace, state))
    assert value["cut_lines"] == [2] and value["next_offset"] == 4 and value["truncated"]
    lines = text.split("\n")
    assert lines[1].endswith("x" * fs.MAX_LINE_CHARS + " [… line cut at 2000 characters]")
    assert not lines[0].endswith("]") and lines[-1].endswith("read on with offset=4]")
    whole, text = _rendered("tool-fs/read", {"file_path": "f.txt", "offset": 3}, _tool_ctx(workspace, state))
    assert not whole["truncated"] and "[" not in text  # nothing cut, nothing marked


def test_grep_marks_cut_lines_the_match_cap_and_files_too_large_to_search(workspace, state, monkeypatch):
    from dshc.runtime.tools import search

    monkeypatch.setattr(search, "GREP_MAX_FILE_BYTES", 10_000)
    (workspace / "long.txt").write_text("needle " + "y" * 600 + "\n")
    (workspace / "huge.txt").write_text("needle\n" * 2000)
    (workspace / "many.txt").write_text("needle\n" * (search.GREP_MAX_MATCHES + 5))
    value, text = _rendered("tool-fs-search/grep", {"pattern": "needle"}, _tool_ctx(workspace, state))
    assert value["truncated"] and value["not_searched"] == ["huge.txt"]
    assert "long.txt:1:needle " + "y" * 493 + " [… line cut at 500 characters]" in text
    assert f"[stopped after {search.GREP_MAX_MATCHES} matches; narrow the pattern or the path]" in text
    assert text.endswith("[not searched, larger than 0 MiB: huge.txt]")


def test_glob_and_editor_listing_and_view_mark_what_they_leave_out(workspace, state):
    from dshc.runtime.tools import editor, search

    for index in range(max(search.GLOB_MAX_RESULTS, editor.DIRECTORY_MAX_ENTRIES) + 1):
        (workspace / f"f{index:04d}.txt").write_text("z" * 40 + "\n")
    ctx = _tool_ctx(workspace, state, max_output_chars=50)
    _, text = _rendered("tool-fs-search/glob", {"pattern": "*.txt"}, ctx)
    assert text.endswith("most recently modified matches are shown; narrow the pattern]")
    listing, text = _rendered(
        "tool-str-replace-editor/str_replace_editor", {"command": "view", "path": str(workspace)}, ctx
    )
    assert listing["truncated"] and text.endswith("[listing cut short]")
    (workspace / "long.txt").write_text("line\n" * 100)
    view, text = _rendered(
        "tool-str-replace-editor/str_replace_editor", {"command": "view", "path": str(workspace / "long.txt")}, ctx
    )
    assert view["truncated"] and text.endswith("[output cut short; view a smaller range]")


@pytest.mark.parametrize(
    "definition, value, marker",
    [
        (
            "tool-bash/bash",
            {"output": "a" * 10, "exit_code": 0, "truncated": True},
            "[output truncated after 10 characters]",
        ),
        (
            "tool-bash-persistent/bash",
            {"output": "a" * 10, "exit_code": 0, "truncated": True},
            "[output truncated after 10 characters]",
        ),
        (
            "tool-jobs/job_output",
            {
                "job_id": "job-1",
                "command": "c",
                "status": "running",
                "exit_code": None,
                "output": "tail",
                "truncated": True,
            },
            "[earlier output dropped; showing the newest part]",
        ),
    ],
)
def test_shell_and_job_output_cut_at_the_output_limit_says_so(definition, value, marker):
    from dshc.runtime.tools import render

    assert marker in render(definition, {}, value)


def _write_plan_write(cli, tmp_path):
    """In plan mode: a write, an approved exit_plan_mode, the same write again."""
    write = {"name": "write", "arguments": {"file_path": "a.txt", "content": "x"}}
    calls = [
        {"id": "w1", **write},
        {"id": "x", "name": "exit_plan_mode", "arguments": {"plan": PLAN}},
        {"id": "w2", **write},
    ]
    return _run_rows(
        cli, tmp_path, calls, "--workspace", str(tmp_path), "--policy", "plan", "--plan", "--approve", "once"
    )


def test_an_approved_exit_plan_mode_lets_the_calls_after_it_change_files(cli, tmp_path):
    rows, _ = _write_plan_write(cli, tmp_path)
    assert rows["w1"]["isError"] and "guard `planning`" in rows["w1"]["content"]
    assert rows["x"]["isError"] is False and rows["w2"]["isError"] is False
    assert (tmp_path / "a.txt").read_text() == "x"


def test_replay_decides_the_calls_after_an_approved_exit_plan_mode_out_of_plan_mode(cli, tmp_path):
    """Replaying a run under its own policy changes nothing: the calls after the approval ran out of plan mode."""
    _, events = _write_plan_write(cli, tmp_path)
    assert {e.get("callId") for e in events if e["type"] == "tool/decision"} >= {"w2"}
    same = cli("replay", str(tmp_path / "events.jsonl"), "--policy", "plan", "--json")
    assert same.code == 0 and same.json()["changes"] == [], same.out
    # the planning guard still applies to the call before the approval: a policy without it changes only w1
    looser = cli("replay", str(tmp_path / "events.jsonl"), "--policy", "workspace-write", "--json").json()
    assert {c["callId"] for c in looser["changes"]} <= {"w1"}
