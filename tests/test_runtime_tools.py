"""Local tool bodies: catalog coverage, file tools under each sandbox mode, one-shot and
persistent shells (process-tree kill, abort, per-owner state), jobs, todo, plan, goals,
ask-user and the structured unavailable errors."""

from __future__ import annotations

import ast
import json
import os
import sys
import threading
from importlib import resources
from pathlib import Path

import psutil
import pytest

from dshc.runtime import tools as runtime_tools
from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext, ToolError, render, resolve_path, unavailable_definitions
from dshc.runtime.tools import ask_user

from conftest import NO_OS_SANDBOX, wait_for


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def make_ctx(workspace, state):
    def make(sandbox="workspace-write", owner="agent-1", abort=None, **kwargs) -> ToolContext:
        kwargs.setdefault("sandbox_fallback", NO_OS_SANDBOX)
        return ToolContext(
            workspace=str(workspace),
            sandbox=sandbox,
            owner=owner,
            state=state,
            abort=abort or threading.Event(),
            **kwargs,
        )

    return make


@pytest.fixture
def call(make_ctx):
    def run(definition, args, **ctx_kwargs):
        return IMPLEMENTATIONS[definition](args, make_ctx(**ctx_kwargs))

    return run


def fails(code, fn, *args, **kwargs) -> ToolError:
    with pytest.raises(ToolError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, info.value.message
    return info.value


def dead(pid: int) -> bool:
    try:
        proc = psutil.Process(pid)
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def pids_from(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def group_members(pgid: int) -> list[int]:
    members = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid and not dead(proc.pid):
                members.append(proc.pid)
        except (ProcessLookupError, psutil.NoSuchProcess):
            pass
    return members


# ---------------------------------------------------------------- coverage


def catalog_definitions() -> set[str]:
    """The generated catalog's 52 definitions plus those of packages outside it (structured_output's
    child driver), which the runtime carries too."""
    root = resources.files("dshc.catalogs")
    outside = set(json.loads((root / "manifest.json").read_text()).get("outside_catalog", ()))
    found, beside = [], []
    for entry in (root / "packages").iterdir():
        if entry.name.endswith(".json"):
            tools = [tool["definition"] for tool in json.loads(entry.read_text())["tools"]]
            (beside if entry.name[: -len(".json")] in outside else found).extend(tools)
    assert len(found) == 52 and beside == ["subagent-in-process-driver/structured_output"]
    return set(found + beside)


def test_every_catalog_definition_has_a_body():
    definitions = catalog_definitions()
    assert len(definitions) == 53
    assert set(IMPLEMENTATIONS) == definitions
    assert unavailable_definitions() <= definitions


def test_tool_modules_import_only_stdlib_psutil_ptyprocess_and_re2():
    # re2: grep's linear-time engine, so a model-supplied pattern cannot hang the run
    allowed = set(sys.stdlib_module_names) | {"psutil", "ptyprocess", "re2"}
    package = Path(runtime_tools.__file__).parent
    for source in package.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                roots = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = [node.module.split(".")[0]]
            else:
                continue
            assert set(roots) <= allowed, f"{source.name} imports {roots}"


# ---------------------------------------------------------------- read / write / edit


def test_write_read_edit_round_trip(call, workspace, state):
    written = call("tool-fs/write", {"file_path": "notes/a.txt", "content": "alpha\nbeta\ngamma\n"})
    target = workspace / "notes" / "a.txt"
    assert written == {"path": str(target), "bytes": 17}
    assert render("tool-fs/write", {}, written) == f"wrote 17 bytes to {target}"

    read = call("tool-fs/read", {"file_path": str(target)})
    assert read == {"path": str(target), "content": "alpha\nbeta\ngamma", "lines": 3, "truncated": False}
    assert render("tool-fs/read", {"file_path": "notes/a.txt"}, read).splitlines()[1] == "     2\tbeta"

    edited = call("tool-fs/edit", {"file_path": "notes/a.txt", "old_string": "beta", "new_string": "BETA"})
    assert edited == {"path": str(target), "replacements": 1}
    assert target.read_text() == "alpha\nBETA\ngamma\n"
    # our own write counts as an observation: a second edit needs no re-read
    call("tool-fs/edit", {"file_path": "notes/a.txt", "old_string": "a", "new_string": "4", "replace_all": True})
    assert target.read_text() == "4lph4\nBETA\ng4mm4\n"
    assert len(state.observed) == 1


def test_read_window_and_default_limit(call, workspace):
    (workspace / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 2501)))
    whole = call("tool-fs/read", {"file_path": "long.txt"})
    assert whole["lines"] == 2000 and whole["truncated"]
    window = call("tool-fs/read", {"file_path": "long.txt", "offset": 10, "limit": 2})
    assert window["content"] == "line 10\nline 11"
    assert render("tool-fs/read", {"offset": 10}, window).startswith("    10\tline 10")


def test_read_before_write_rules(call, workspace):
    target = workspace / "seen.txt"
    target.write_text("one\n")
    fails("FS_NOT_OBSERVED", call, "tool-fs/write", {"file_path": "seen.txt", "content": "x"})
    fails("FS_NOT_OBSERVED", call, "tool-fs/edit", {"file_path": "seen.txt", "old_string": "one", "new_string": "1"})
    call("tool-fs/read", {"file_path": "seen.txt"})
    target.write_text("changed behind our back\n")
    fails("FS_STALE_VERSION", call, "tool-fs/write", {"file_path": "seen.txt", "content": "x"})
    fails(
        "FS_STALE_VERSION", call, "tool-fs/edit", {"file_path": "seen.txt", "old_string": "changed", "new_string": "c"}
    )
    assert target.read_text() == "changed behind our back\n"
    call("tool-fs/read", {"file_path": "seen.txt"})
    call("tool-fs/write", {"file_path": "seen.txt", "content": "fresh\n"})
    assert target.read_text() == "fresh\n"


def test_missing_files_and_bad_edits(call, workspace):
    fails("FS_NOT_FOUND", call, "tool-fs/read", {"file_path": "nope.txt"})
    fails("FS_NOT_FOUND", call, "tool-fs/edit", {"file_path": "nope.txt", "old_string": "a", "new_string": "b"})
    (workspace / "twice.txt").write_text("x x\n")
    call("tool-fs/read", {"file_path": "twice.txt"})
    err = fails(
        "FS_AMBIGUOUS_EDIT", call, "tool-fs/edit", {"file_path": "twice.txt", "old_string": "x", "new_string": "y"}
    )
    assert "2 times" in err.message
    err = fails(
        "FS_EDIT_NOT_FOUND", call, "tool-fs/edit", {"file_path": "twice.txt", "old_string": "z", "new_string": "y"}
    )
    assert "not found" in err.message
    fails(None, call, "tool-fs/read_image", {"file_path": "twice.txt"})


# ---------------------------------------------------------------- sandbox


def escape_routes(workspace: Path, outside: Path) -> dict[str, str]:
    (workspace / "link").symlink_to(outside, target_is_directory=True)
    (workspace / "dangling").symlink_to(outside / "made-through-link.txt")
    return {
        "absolute": str(outside / "abs.txt"),
        "dotdot": "../outside/dotdot.txt",
        "dir-symlink": "link/via-dir.txt",
        "file-symlink": "dangling",
    }


@pytest.mark.parametrize("route", ["absolute", "dotdot", "dir-symlink", "file-symlink"])
def test_writes_outside_the_workspace(route, call, workspace, outside):
    path = escape_routes(workspace, outside)[route]
    err = fails("FS_SANDBOX_DENIED", call, "tool-fs/write", {"file_path": path, "content": "x"})
    assert err.message.startswith("[sandbox: file access denied under workspace-write mode]")
    assert "outside the workspace" in err.message
    fails(
        "FS_SANDBOX_DENIED",
        call,
        "tool-str-replace-editor/str_replace_editor",
        {"command": "create", "path": path, "file_text": "x"},
    )
    assert list(outside.iterdir()) == []

    written = call("tool-fs/write", {"file_path": path, "content": "x"}, sandbox="danger-full-access")
    assert written["path"].startswith(str(outside))
    assert Path(written["path"]).read_text() == "x"


def test_reads_outside_the_workspace_and_home(call, workspace, outside, monkeypatch):
    (outside / "secret.txt").write_text("s\n")
    fails("FS_SANDBOX_DENIED", call, "tool-fs/read", {"file_path": str(outside / "secret.txt")})
    monkeypatch.setenv("HOME", str(outside))
    fails("FS_SANDBOX_DENIED", call, "tool-fs/read", {"file_path": "~/secret.txt"})
    assert call("tool-fs/read", {"file_path": "~/secret.txt"}, sandbox="danger-full-access")["content"] == "s"
    fails("FS_SANDBOX_DENIED", call, "tool-fs-search/glob", {"pattern": "*", "path": str(outside)})
    fails("FS_SANDBOX_DENIED", call, "tool-fs-search/grep", {"pattern": "s", "path": "../outside"})
    fails("FS_SANDBOX_DENIED", call, "tool-bash/bash", {"command": "pwd", "description": "d", "workdir": str(outside)})


def test_read_only_refuses_every_write(call, make_ctx, workspace):
    (workspace / "f.txt").write_text("a\n")
    assert call("tool-fs/read", {"file_path": "f.txt"}, sandbox="read-only")["content"] == "a"
    editor = "tool-str-replace-editor/str_replace_editor"
    attempts = [
        ("tool-fs/write", {"file_path": "f.txt", "content": "b"}),
        ("tool-fs/write", {"file_path": "new.txt", "content": "b"}),
        ("tool-fs/edit", {"file_path": "f.txt", "old_string": "a", "new_string": "b"}),
        (editor, {"command": "create", "path": "new.txt", "file_text": "b"}),
        (editor, {"command": "str_replace", "path": "f.txt", "old_str": "a", "new_str": "b"}),
        (editor, {"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "b"}),
    ]
    for definition, args in attempts:
        err = fails("FS_SANDBOX_DENIED", call, definition, args, sandbox="read-only")
        assert err.message.startswith("[sandbox: file access denied under read-only mode]")
    assert (workspace / "f.txt").read_text() == "a\n" and not (workspace / "new.txt").exists()
    assert resolve_path(make_ctx(sandbox="read-only"), "f.txt", write=False) == str(workspace / "f.txt")
    fails("SANDBOX_UNAVAILABLE", resolve_path, make_ctx(sandbox="bogus"), "f.txt", False)


# ---------------------------------------------------------------- glob / grep


def test_glob_orders_newest_first_and_caps(call, workspace):
    (workspace / "sub").mkdir()
    for name, mtime in [("a.py", 1000), ("sub/b.py", 3000), ("sub/c.txt", 2000), ("z.py", 2000)]:
        (workspace / name).write_text("")
        os.utime(workspace / name, (mtime, mtime))
    assert call("tool-fs-search/glob", {"pattern": "**/*.py"}) == {
        "paths": ["sub/b.py", "z.py", "a.py"],
        "truncated": False,
    }
    assert call("tool-fs-search/glob", {"pattern": "*.txt", "path": "sub"})["paths"] == ["sub/c.txt"]
    many = workspace / "many"
    many.mkdir()
    for n in range(120):
        (many / f"f{n:03}.log").write_text("")
    capped = call("tool-fs-search/glob", {"pattern": "many/*.log"})
    assert len(capped["paths"]) == 100 and capped["truncated"]


def test_grep_matches_skips_binary_and_caps(call, workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "m.py").write_text("import os\nx = 1\nimport sys\n")
    (workspace / "src" / "n.txt").write_text("import nothing\n")
    (workspace / "blob.bin").write_bytes(b"\x00\x01import binary\n")
    got = call("tool-fs-search/grep", {"pattern": r"^import \w+", "include": "*.py"})
    assert got == {
        "matches": [
            {"path": "src/m.py", "line": 1, "text": "import os"},
            {"path": "src/m.py", "line": 3, "text": "import sys"},
        ],
        "truncated": False,
    }
    everywhere = call("tool-fs-search/grep", {"pattern": "import"})
    assert {m["path"] for m in everywhere["matches"]} == {"src/m.py", "src/n.txt"}
    (workspace / "big.txt").write_text("hit\n" * 300)
    capped = call("tool-fs-search/grep", {"pattern": "hit", "path": "big.txt"})
    assert len(capped["matches"]) == 250 and capped["truncated"]
    fails("INVALID_ARGS", call, "tool-fs-search/grep", {"pattern": "("})


# ---------------------------------------------------------------- str_replace_editor


def test_str_replace_editor_commands(call, workspace):
    editor = "tool-str-replace-editor/str_replace_editor"
    created = call(editor, {"command": "create", "path": "e.txt", "file_text": "one\ntwo\n"})
    assert created["created"] and (workspace / "e.txt").read_text() == "one\ntwo\n"
    (workspace / "other.txt").write_text("x\n")
    fails("FS_NOT_OBSERVED", call, editor, {"command": "create", "path": "other.txt", "file_text": "y"})
    fails("FS_NOT_OBSERVED", call, editor, {"command": "str_replace", "path": "other.txt", "old_str": "x"})
    view = call(editor, {"command": "view", "path": "other.txt"})
    assert render(editor, {}, view) == "     1\tx"
    call(editor, {"command": "str_replace", "path": "other.txt", "old_str": "x", "new_str": "y"})
    assert (workspace / "other.txt").read_text() == "y\n"
    call(editor, {"command": "insert", "path": "e.txt", "insert_line": 1, "new_str": "one and a half"})
    assert (workspace / "e.txt").read_text() == "one\none and a half\ntwo\n"
    call(editor, {"command": "str_replace", "path": "e.txt", "old_str": "two", "new_str": "one"})
    fails(
        "FS_AMBIGUOUS_EDIT", call, editor, {"command": "str_replace", "path": "e.txt", "old_str": "one", "new_str": "1"}
    )
    window = call(editor, {"command": "view", "path": "e.txt", "view_range": [2, -1]})
    assert window["content"] == "one and a half\none" and window["start_line"] == 2
    listing = call(editor, {"command": "view", "path": "."})
    assert listing["kind"] == "directory" and "e.txt" in listing["entries"]


# ---------------------------------------------------------------- one-shot bash


def bash(command, **extra):
    return {"command": command, "description": "test", **extra}


def test_one_shot_bash_starts_fresh_every_call(call, workspace):
    first = call("tool-bash/bash", bash("cd / && pwd; export LEAK=1; echo oops >&2; exit 3"))
    assert first == {"exit_code": 3, "output": "/\noops\n", "truncated": False}
    assert render("tool-bash/bash", {}, first) == "/\noops\n[exit 3]"
    second = call("tool-bash/bash", bash('pwd; echo "[${LEAK:-}]"'))
    assert second["output"] == f"{os.path.realpath(workspace)}\n[]\n"
    (workspace / "sub").mkdir()
    assert call("tool-bash/bash", bash("pwd", workdir="sub"))["output"].strip().endswith("/ws/sub")


def test_one_shot_bash_caps_output(call):
    got = call("tool-bash/bash", bash("head -c 5000 /dev/zero | tr '\\0' a; echo"), max_output_chars=100)
    assert got["output"] == "a" * 100 and got["truncated"] and got["exit_code"] == 0
    assert "[output truncated after 100 characters]" in render("tool-bash/bash", {}, got)


def test_one_shot_bash_timeout_kills_the_whole_tree(call, workspace):
    pids = workspace / "pids"
    command = (
        "echo $$ >> pids; sleep 30 & echo $! >> pids; "
        "bash -c 'sleep 30 & echo $! >> pids; wait' & echo $! >> pids; sleep 30; wait"
    )
    err = fails("TOOL_TIMEOUT", call, "tool-bash/bash", bash(command, timeoutMs=1000))
    assert "timed out after 1 s" in err.message
    recorded = pids_from(pids)
    # the only timing assumption in this file: bash records four pids within the 1 s limit
    assert len(recorded) == 4
    assert all(dead(pid) for pid in recorded)
    assert group_members(recorded[0]) == []


def test_one_shot_bash_abort_kills_the_tree(make_ctx, workspace):
    abort = threading.Event()
    ctx = make_ctx(abort=abort)
    outcome: dict = {}

    def run():
        try:
            IMPLEMENTATIONS["tool-bash/bash"](bash("sleep 30 & echo $! >> pids; echo $$ >> pids; wait"), ctx)
        except ToolError as exc:
            outcome["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    wait_for(lambda: len(pids_from(workspace / "pids")) == 2, "both pids written")
    abort.set()
    worker.join(10)
    assert not worker.is_alive()
    assert outcome["error"].code == "ABORTED"
    assert all(dead(pid) for pid in pids_from(workspace / "pids"))


def test_stragglers_do_not_outlive_a_one_shot_call(call, workspace):
    got = call("tool-bash/bash", bash("sleep 30 & echo $! > pid; echo started"))
    assert got["output"] == "started\n"
    wait_for(lambda: dead(pids_from(workspace / "pid")[0]), "the straggler to be gone")


# ---------------------------------------------------------------- background jobs


def test_background_job_output_and_kill(call, workspace, state):
    started = call("tool-bash/bash", bash("echo first; sleep 0.2; echo second", run_in_background=True))
    assert started == {"job_id": "job-1"}
    done = call("tool-jobs/job_output", {"job_id": "job-1", "wait": True, "timeout_ms": 10000})
    assert done["status"] == "exited" and done["exit_code"] == 0 and done["output"] == "first\nsecond\n"

    call("tool-bash/bash", bash("echo $$ > pid; exec sleep 30", run_in_background=True))
    wait_for(lambda: pids_from(workspace / "pid"), "the background command's pid")
    peek = call("tool-jobs/job_output", {"job_id": "job-2"})
    assert peek["status"] == "running" and peek["exit_code"] is None
    killed = call("tool-jobs/job_kill", {"job_id": "job-2", "reason": "test over"})
    assert killed["killed"] and killed["status"] == "killed" and killed["kill_reason"] == "test over"
    assert dead(pids_from(workspace / "pid")[0])
    assert call("tool-jobs/job_kill", {"job_id": "job-2"})["killed"] is False
    listed = call("tool-jobs/job_list", {})
    assert [(j["job_id"], j["status"]) for j in listed["jobs"]] == [("job-1", "exited"), ("job-2", "killed")]
    fails(None, call, "tool-jobs/job_output", {"job_id": "job-9"})
    fails(None, call, "tool-jobs/job_kill", {"job_id": "job-9"})


def test_closing_the_state_kills_running_jobs(call, workspace, state):
    call("tool-bash/bash", bash("echo $$ > pid; exec sleep 30", run_in_background=True))
    wait_for(lambda: pids_from(workspace / "pid"), "the background command's pid")
    state.close()
    state.close()
    assert dead(pids_from(workspace / "pid")[0])
    assert state.jobs.get("job-1").status == "killed"


# ---------------------------------------------------------------- persistent bash


PTY_BASH = "tool-bash-persistent/bash"


def test_persistent_bash_keeps_state_per_owner(call, workspace, state):
    (workspace / "sub").mkdir()
    first = call(PTY_BASH, {"command": "cd sub; export X=1"})
    assert first == {"output": "", "exit_code": 0, "truncated": False}
    second = call(PTY_BASH, {"command": "pwd; echo $X; false"})
    assert second["output"] == f"{os.path.realpath(workspace)}/sub\n1\n" and second["exit_code"] == 1
    other = call(PTY_BASH, {"command": 'pwd; echo "[${X:-}]"'}, owner="agent-2")
    assert other["output"] == f"{os.path.realpath(workspace)}\n[]\n"
    assert set(state.shells) == {"agent-1", "agent-2"}
    assert state.shells["agent-1"].pid != state.shells["agent-2"].pid
    multi = call(PTY_BASH, {"command": "for i in 1 2; do\n  echo $i\ndone\ncat <<EOF\nhere\nEOF"})
    assert multi["output"] == "1\n2\nhere\n"
    broken = call(PTY_BASH, {"command": "if then"})
    assert broken["exit_code"] == 2 and "syntax error" in broken["output"]
    assert render(PTY_BASH, {}, second).endswith("[exit 1]")


def test_persistent_bash_timeout_interrupts_and_keeps_the_shell(call, state):
    call(PTY_BASH, {"command": "export KEEP=yes"})
    shell = state.shells["agent-1"]
    fails("TOOL_TIMEOUT", call, PTY_BASH, {"command": "sleep 30"}, timeout_s=0.5)
    assert state.shells["agent-1"] is shell
    assert call(PTY_BASH, {"command": "echo $KEEP"})["output"] == "yes\n"


def test_persistent_bash_abort_and_exit(call, state):
    abort = threading.Event()
    abort.set()
    fails("ABORTED", call, PTY_BASH, {"command": "sleep 30"}, abort=abort)
    pid = state.shells["agent-1"].pid
    gone = call(PTY_BASH, {"command": "exit 4"})
    assert gone["exit_code"] == 4 and gone["shell_exited"]
    assert "agent-1" not in state.shells and dead(pid)
    assert call(PTY_BASH, {"command": "echo again"})["output"] == "again\n"


def test_closing_the_state_kills_persistent_shells(call, workspace, state):
    call(PTY_BASH, {"command": "sleep 30 & echo $! > pid"})
    shell_pid = state.shells["agent-1"].pid
    state.close()
    assert state.shells == {}
    assert dead(shell_pid) and dead(pids_from(workspace / "pid")[0])


# ---------------------------------------------------------------- todo, plan, goals, ask-user


def test_todo_write_replaces_the_list(call, state):
    first = call(
        "tool-todo/todo_write",
        {"todos": [{"content": "a", "status": "pending"}, {"content": "b", "status": "in_progress"}]},
    )
    assert first["todos"][1] == {"content": "b", "status": "in_progress"}
    second = call("tool-todo/todo_write", {"todos": ({"content": "c", "status": "completed"},)})
    assert state.todos == [{"content": "c", "status": "completed"}] == second["todos"]
    assert render("tool-todo/todo_write", {}, second) == "[x] c"
    fails("INVALID_ARGS", call, "tool-todo/todo_write", {"todos": [{"content": "d", "status": "done"}]})


def test_goal_revisions_and_transitions(call):
    assert call("tool-goal/get_goal", {}) == {"goal": None}
    goal = call("tool-goal/create_goal", {"objective": "ship it", "max_goal_rounds": 3})["goal"]
    assert (goal["goal_id"], goal["revision"], goal["status"]) == ("goal-1", 1, "active")
    fails("GOAL_ALREADY_EXISTS", call, "tool-goal/create_goal", {"objective": "another"})
    paused = call("tool-goal/update_goal", {"goal_id": "goal-1", "revision": 1, "action": "pause"})["goal"]
    assert (paused["status"], paused["revision"]) == ("paused", 2)
    err = fails(
        "GOAL_STALE_REVISION", call, "tool-goal/update_goal", {"goal_id": "goal-1", "revision": 1, "action": "resume"}
    )
    assert "stale" in err.message
    fails(
        "GOAL_INVALID_TRANSITION",
        call,
        "tool-goal/update_goal",
        {"goal_id": "goal-1", "revision": 2, "action": "pause"},
    )
    fails(
        "GOAL_TOOL_INVALID_UPDATE",
        call,
        "tool-goal/update_goal",
        {"goal_id": "goal-1", "revision": 2, "action": "blocked"},
    )
    blocked = call(
        "tool-goal/update_goal",
        {"goal_id": "goal-1", "revision": 2, "action": "blocked", "blocked_reason": "waiting on review"},
    )["goal"]
    assert blocked["status"] == "blocked"
    edited = call(
        "tool-goal/update_goal", {"goal_id": "goal-1", "revision": 3, "action": "edit", "objective": "ship it well"}
    )["goal"]
    assert edited["objective"] == "ship it well" and edited["status"] == "blocked"
    call("tool-goal/update_goal", {"goal_id": "goal-1", "revision": 4, "action": "complete"})
    assert call("tool-goal/get_goal", {})["goal"]["status"] == "completed"
    fails(
        "GOAL_INVALID_TRANSITION",
        call,
        "tool-goal/update_goal",
        {"goal_id": "goal-1", "revision": 5, "action": "resume"},
    )
    fails("GOAL_NOT_FOUND", call, "tool-goal/update_goal", {"goal_id": "goal-7", "revision": 1, "action": "pause"})
    assert call("tool-goal/create_goal", {"objective": "next"})["goal"]["goal_id"] == "goal-2"


QUESTIONS = {
    "questions": [
        {"id": "color", "question": "Which color?", "options": [{"label": "red"}, {"label": "blue"}]},
        {"id": "why", "question": "Why?"},
    ]
}


def test_ask_user_needs_a_terminal(call):
    fails("NO_PROVIDER", call, "tool-ask-user/ask_user_question", QUESTIONS)


def test_ask_user_reads_answers_from_the_terminal(call, monkeypatch):
    class FakeTerminal:
        replies = iter(["2", "because"])
        prompts: list[str] = []

        def ask(self, prompt):
            self.prompts.append(prompt)
            return next(self.replies)

        def close(self):
            pass

    monkeypatch.setattr(ask_user, "open_terminal", FakeTerminal)
    got = call("tool-ask-user/ask_user_question", QUESTIONS, interactive=True)
    assert got == {"answers": {"color": "blue", "why": "because"}}
    assert "  2. blue" in FakeTerminal.prompts[0]


# ---------------------------------------------------------------- unavailable providers

UNAVAILABLE = [
    ("tool-lsp/lsp", "LSP_UNAVAILABLE", "LspError"),
    ("tool-session-query/session_search", "SESSION_QUERY_SEARCH_DISABLED", "SessionQueryError"),
    ("tool-session-query/session_event_search", "SESSION_QUERY_SEARCH_DISABLED", "SessionQueryError"),
    ("tool-session-query/session_trace", "SESSION_QUERY_TOOL_FAILED", "SessionQueryError"),
    ("tool-session-query/session_event_read", "SESSION_QUERY_TOOL_FAILED", "SessionQueryError"),
    ("tool-session-query/session_event_trace", "SESSION_QUERY_TOOL_FAILED", "SessionQueryError"),
    ("tool-subagent/subagent", None, "Error"),
    ("tool-subagent-control/send_message", None, "Error"),
    ("tool-subagent-control/interrupt_agent", None, "Error"),
    ("tool-subagent-control/list_agents", None, "Error"),
    ("tool-subagent-report/report", None, "Error"),
    ("tool-workflow/workflow", None, "Error"),
    ("tool-ralph/ralph", None, "Error"),
    ("tool-cordis/cordis_run", None, "Error"),
    ("schedule/schedule_list", None, "Error"),
    ("tool-terminal/terminal_open", None, "Error"),
    ("tool-skill/skill", None, "SkillError"),
    ("tools/run_code", "CODE_RUN_FAILED", "CodeRunError"),
]


@pytest.mark.parametrize("definition,code,name", UNAVAILABLE)
def test_unavailable_families(definition, code, name, call):
    err = fails(code, call, definition, {})
    assert err.name == name
    assert "not available on this host: no " in err.message or "disabled on this host: no " in err.message
    assert definition in unavailable_definitions()


def test_every_unavailable_definition_raises_and_real_ones_are_not_listed():
    unavailable = unavailable_definitions()
    assert {d for d, _, _ in UNAVAILABLE} <= unavailable
    assert not unavailable & {"tool-fs/read", "tool-bash/bash", "tool-bash-persistent/bash", "tool-jobs/job_list"}
    assert len([d for d in unavailable if d.startswith(("tool-cordis/", "tool-terminal/", "schedule/"))]) == 16


def test_generic_render_is_sorted_json():
    assert render("tool-cordis/cordis_inspect_list", {}, {"b": 1, "a": [2]}) == '{"a": [2], "b": 1}'


def test_a_shell_sync_waits_for_the_sentinels_whole_line():
    """The sentinel's line end can arrive in a later read than the sentinel (a loaded host): the sync
    must wait for it, or it stays pending and leads the next command's output (`\\nagain\\n`)."""
    import codecs
    from types import SimpleNamespace

    from dshc.runtime.tools.persistent_shell import PersistentShell

    read_end, write_end = os.pipe()
    line_end = threading.Timer(0.3, os.write, (write_end, b"\r\n"))  # the line end, a read later
    try:
        shell = PersistentShell.__new__(PersistentShell)
        shell.proc, shell._decoder = SimpleNamespace(fd=read_end), codecs.getincrementaldecoder("utf-8")()
        os.write(write_end, b"noise\r\n__DSHC_SYNC_tok")
        line_end.start()
        shell._await_sync("tok", 10.0)
        line_end.join()  # had the sync not waited for the line end, it would lead the next read
        os.write(write_end, b"again\r\n")
        assert shell._read(1.0) == "again\r\n"  # nothing of the sentinel's line left before it
    finally:
        line_end.cancel()
        os.close(read_end)
        os.close(write_end)
