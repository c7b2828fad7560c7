"""`dshc hook claude-code` as Claude Code runs it: a process per call, hook JSON on stdin.

Every PreToolUse answer is checked against `dshc decide` run on the same mapped call (or, for
tools without a catalog mapping, against Program.decide, since `dshc decide` refuses unknown
names). PostToolUse results land in the event log, and `dshc replay` reads that log.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dshc.compiler import program_cache
from dshc.cli.hook import main as hook_main
from dshc.compiler.program import Program
from dshc.compiler.request import Request

DSHC = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()"]
POLICY = """\
policy team "Team rules" {
  sandbox workspace-write
  approval ask
  default ask
  allow read, glob, grep
  allow bash when args.command matches "git status *"
  ask bash when args.command matches "git push *"
  deny bash when args.command matches "rm -rf *"
  allow * when tool matches "mcp__github__get_*"
  deny * when tool matches "mcp__github__delete_*"
}
"""


@pytest.fixture(scope="module", autouse=True)
def private_cache(tmp_path_factory):
    """The hook's Program cache goes to a folder of the test's own (hook processes inherit it)."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield Path(os.environ["XDG_CACHE_HOME"])
    if saved is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    (root / "team.dsh").write_text(POLICY)
    (root / ".dshc").write_text('load = ["team.dsh"]\npolicy = "team"\nlog = "events.jsonl"\n')
    (root / "src").mkdir()
    return root


def _event(project: Path, tool: str, tool_input: dict, event="PreToolUse", cwd=None, **extra) -> dict:
    return {
        "session_id": "5b9a-test",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(cwd or project / "src"),
        "permission_mode": "default",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": f"toolu_{abs(hash((tool, str(tool_input))))}",
        **extra,
    }


def _run(args: list[str], stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run(DSHC + args, input=stdin, capture_output=True, text=True, timeout=120)


def _in_process(args: list[str], stdin: str) -> subprocess.CompletedProcess:
    out, err = io.StringIO(), io.StringIO()
    code = hook_main(args[1:], io.StringIO(stdin), out, err)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def _answer(done: subprocess.CompletedProcess):
    assert done.returncode == 0, done.stderr  # Claude Code reads only exit 0 answers as JSON
    answer = json.loads(done.stdout) if done.stdout.strip() else None
    if answer is not None:
        output = answer["hookSpecificOutput"]
        assert output["hookEventName"] == "PreToolUse"
        assert output["permissionDecision"] in ("allow", "ask", "deny")
        assert isinstance(output["permissionDecisionReason"], str) and output["permissionDecisionReason"]
    return answer, done


def _hook(payload, *flags, run=_in_process):
    stdin = payload if isinstance(payload, str) else json.dumps(payload)
    return _answer(run(["hook", "claude-code", *flags], stdin))


def _decide_cli(cli, project: Path, tool: str, args: dict):
    return cli(
        "decide",
        tool,
        "--args",
        json.dumps(args),
        "--load",
        str(project / "team.dsh"),
        "--policy",
        "team",
        "--workspace",
        str(project),
        "--json",
    )


def _fill(value, project: Path):
    return {k: v.replace("{root}", str(project)) if isinstance(v, str) else v for k, v in value.items()}


MAPPED = [  # (Claude Code tool, its input, catalog tool, catalog args, expected)
    (
        "Bash",
        {"command": "git status", "description": "Show status"},
        "bash",
        {"command": "git status", "description": "Show status"},
        "allow",
    ),
    # Claude Code's Bash may leave out `description`, which dshc's own `bash` requires (the hook checks the fields
    # that name the command or the file)
    (
        "Bash",
        {"command": "git push origin main"},
        "bash",
        {"command": "git push origin main", "description": "d"},
        "ask",
    ),
    ("Bash", {"command": "rm -rf build"}, "bash", {"command": "rm -rf build", "description": "d"}, "deny"),
    ("Read", {"file_path": "notes.md"}, "read", {"file_path": "{root}/src/notes.md"}, "allow"),
    (
        "Write",
        {"file_path": "{root}/src/a.py", "content": "x = 1\n"},
        "write",
        {"file_path": "{root}/src/a.py", "content": "x = 1\n"},
        "ask",
    ),
]


UNMAPPED = [
    ("mcp__github__get_issue", "allow"),
    ("mcp__github__delete_repo", "deny"),
    ("mcp__slack__post", "ask"),
    ("BrandNewTool", "ask"),
]
MALFORMED = ["", "{not json"]


# the cases that run as real processes (the others go through the same entry point in-process)
AS_PROCESS = {
    ("mapped", 1),
    ("mapped", 2),
    ("unmapped", "mcp__github__delete_repo"),
    ("unmapped", "BrandNewTool"),
    ("malformed", "{not json"),
}  # and ("mapped", 0), the allow, run by the module probe below


@pytest.fixture(scope="module")
def processes(project):
    """Each case's hook answer. The real-process cases are separate `dshc hook claude-code` processes, as
    Claude Code spawns them, run side by side to keep the suite's wall time down."""
    jobs = {
        ("mapped", i): json.dumps(_event(project, tool, _fill(tool_input, project)))
        for i, (tool, tool_input, *_) in enumerate(MAPPED)
    }
    jobs |= {("unmapped", tool): json.dumps(_event(project, tool, {"owner": "o", "repo": "r"})) for tool, _ in UNMAPPED}
    jobs |= {("malformed", text): text for text in MALFORMED}
    program_cache.load([project / "team.dsh"])  # warm, as after a session's first call: the processes read it back
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            key: pool.submit(_run if key in AS_PROCESS else _in_process, ["hook", "claude-code"], stdin)
            for key, stdin in jobs.items()
            if key != ("mapped", 0)
        }
        probe = pool.submit(
            subprocess.run,
            [sys.executable, "-c", MODULES_PROBE],
            input=jobs[("mapped", 0)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        results = {key: future.result() for key, future in futures.items()}
    # the probe is the `dshc` entry point in a process of its own; its first line is the hook's answer
    done = probe.result()
    answer, _, loaded = done.stdout.partition("\n")
    results[("mapped", 0)] = subprocess.CompletedProcess(done.args, done.returncode, answer + "\n", done.stderr)
    results["modules"] = loaded.strip()
    return results


# what a PreToolUse call loads: of the runtime only its event-log modules (records, their framing, and the
# PostgreSQL sink's module, which loads psycopg only for a DSN), its argument check and, for a shell call under a policy that
# declares a sandbox (this one does), the sandbox's planner; no templates, no command modules
MODULES_PROBE = """
import sys
from dshc.cli.entry import run  # the entry point short of ending the process
run(["hook", "claude-code"])
print([m for m in sys.modules if m.startswith(("dshc.runtime", "dshc.cli.commands", "jinja2"))
       and m not in ("dshc.runtime", "dshc.runtime.events", "dshc.runtime.log_format", "dshc.runtime.pg_log",
                     "dshc.runtime.state_files", "dshc.runtime.log_chain", "dshc.runtime.arguments")
       and not m.startswith("dshc.runtime.sandbox")])
"""


def test_pretooluse_loads_no_runtime_and_no_cli_commands(processes):
    assert processes["modules"] == "[]"


@pytest.mark.parametrize("index", range(len(MAPPED)), ids=lambda i: f"{MAPPED[i][0]}-{MAPPED[i][4]}")
def test_pretooluse_equals_dshc_decide(project, processes, cli, index):
    tool, tool_input, catalog_tool, catalog_args, expected = MAPPED[index]
    answer, _ = _answer(processes[("mapped", index)])
    decided = _decide_cli(cli, project, catalog_tool, _fill(catalog_args, project))
    assert decided.code in (0, 1), decided.err
    output = answer["hookSpecificOutput"]
    assert output["permissionDecision"] == decided.json()["decision"] == expected
    rule = decided.json()["rules"][0]
    assert f"{rule['rule']} at {rule['source']}" in output["permissionDecisionReason"]  # the rule and file:line


@pytest.mark.parametrize("tool, expected", UNMAPPED)
def test_unmapped_and_mcp_tools_follow_the_rules_that_name_them(project, processes, cli, tool, expected):
    answer, _ = _answer(processes[("unmapped", tool)])
    output = answer["hookSpecificOutput"]
    # the policy's word alone: dshc's own gates (registered, visible, …) deny a tool it does not compose
    library = Program.load([project / "team.dsh"]).decide(
        Request(policy="team"), tool, {"owner": "o", "repo": "r"}, str(project), gates=False
    )
    assert output["permissionDecision"] == library.effect == expected
    assert "no catalog mapping" in output["permissionDecisionReason"]
    refused = _decide_cli(cli, project, tool, {})  # `dshc decide` only takes catalog tools
    assert refused.code == 2 and "DSH406" in refused.out


def test_an_unmapped_tool_is_not_let_through_by_a_permissive_default(tmp_path):
    (tmp_path / "open.dsh").write_text('policy open "Open" {\n  approval ask\n  default allow\n}\n')
    (tmp_path / ".dshc").write_text('load = ["open.dsh"]\npolicy = "open"\nunmapped = "deny"\n')
    answer, _ = _hook(_event(tmp_path, "BrandNewTool", {}, cwd=tmp_path))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    answer, _ = _hook(_event(tmp_path, "Bash", {"command": "make"}, cwd=tmp_path))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "allow"


@pytest.mark.parametrize("stdin", MALFORMED)
def test_malformed_stdin_makes_the_process_deny_with_a_reason(processes, stdin):
    answer, done = _answer(processes[("malformed", stdin)])
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "dshc hook could not decide" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "stdin",
    [
        "[1, 2]",
        json.dumps({"hook_event_name": "PreToolUse"}),
        json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": "ls"}),
    ],
)
def test_malformed_payloads_deny_with_a_reason(stdin):
    answer, done = _hook(stdin)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "dshc hook could not decide" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert "Traceback" not in done.stderr


def test_broken_project_files_deny_and_say_where(tmp_path):
    (tmp_path / "bad.dsh").write_text("policy bad {\n  allow bash when args.command matches\n}\n")
    (tmp_path / ".dshc").write_text('load = ["bad.dsh"]\npolicy = "bad"\n')
    answer, _ = _hook(_event(tmp_path, "Bash", {"command": "ls"}, cwd=tmp_path))
    reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny" and re.search(r"bad\.dsh:\d+:\d+", reason)
    (tmp_path / ".dshc").write_text('polciy = "bad"\n')
    answer, _ = _hook(_event(tmp_path, "Bash", {"command": "ls"}, cwd=tmp_path))
    assert "unknown key(s) polciy" in answer["hookSpecificOutput"]["permissionDecisionReason"]


def test_posttooluse_results_make_a_log_that_replay_reads(project, cli):
    log = project / "events.jsonl"
    log.unlink(missing_ok=True)
    calls = [("Bash", {"command": "git status"}), ("Read", {"file_path": str(project / "src" / "a.py")})]
    for tool, tool_input in calls:
        pre = _event(project, tool, tool_input)
        answer, _ = _hook(pre)
        assert answer["hookSpecificOutput"]["permissionDecision"] == "allow"
        post = {**pre, "hook_event_name": "PostToolUse", "tool_response": {"stdout": "ok", "is_error": False}}
        answer, done = _hook(post)
        assert answer is None and done.stdout == ""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["type"] for r in records] == [
        "request/header",
        "tool/call",
        "tool/decision",
        "tool/result",
        "request/header",
        "tool/call",
        "tool/decision",
        "tool/result",
    ]
    assert records[3]["callId"] == records[1]["callId"] and records[3]["name"] == "bash"
    # PreToolUse and PostToolUse are separate processes, yet write as one session
    assert len({r["session"] for r in records}) == 1
    replay = cli("replay", str(log), "--policy", "read-only", "--load", str(project / "team.dsh"), "--json")
    assert replay.code in (0, 1), replay.err
    data = replay.json()
    assert data["calls"] == 2 and data["torn_tail"] is False


def test_claude_code_plan_mode_is_dshc_plan_mode(tmp_path, cli):
    (tmp_path / ".dshc").write_text('policy = "plan"\n')
    payload = _event(tmp_path, "Write", {"file_path": str(tmp_path / "a.md"), "content": "x"}, cwd=tmp_path)
    acting, _ = _hook(payload)
    planning, _ = _hook({**payload, "permission_mode": "plan"})
    assert acting["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert planning["hookSpecificOutput"]["permissionDecision"] == "deny"
    decided = cli(
        "decide",
        "write",
        "--args",
        json.dumps({"file_path": str(tmp_path / "a.md"), "content": "x"}),
        "--policy",
        "plan",
        "--plan",
        "--workspace",
        str(tmp_path),
        "--json",
    )
    assert decided.json()["decision"] == "deny"


def test_the_bare_command_line_reads_as_argparse_reads_it():
    """`dshc hook claude-code` (how agents' settings spawn it) skips argparse: the options must be
    exactly argparse's for that command line, and any other command line still goes through it."""
    from dshc.cli import hook

    assert vars(hook._options(["claude-code"])) == vars(hook._parsed_options(["claude-code"]))
    assert hook._options(["claude-code", "--host", "web"]).host == "web"
    with pytest.raises(ValueError, match="bad hook command line"):
        hook._options(["claude-code", "--unknown"])


@pytest.mark.parametrize(
    "mode,expected",
    [
        ("default", "ask"),
        ("plan", "ask"),
        ("acceptEdits", "ask"),
        ("auto", "deny"),
        ("bypassPermissions", "deny"),
        ("dontAsk", "deny"),
    ],
)
def test_an_ask_is_a_denial_where_claude_code_may_not_prompt(project, mode, expected):
    # anthropics/claude-code#89561: in `auto` a hook's ask ran the call unprompted (#77212: bypassPermissions)
    event = _event(project, "Bash", {"command": "git push origin main"}, permission_mode=mode)
    answer = _hook(event)[0]["hookSpecificOutput"]
    assert answer["permissionDecision"] == expected, answer
    if expected == "deny":
        assert f"in permission mode `{mode}`" in answer["permissionDecisionReason"]
    allowed = _event(project, "Bash", {"command": "git status"}, permission_mode=mode)
    assert _hook(allowed)[0]["hookSpecificOutput"]["permissionDecision"] == "allow"


def test_an_unmapped_tool_can_be_left_to_the_agents_own_rules(tmp_path):
    # `unmapped = "defer"`: no decision, so Claude Code's own permission rules decide; a rule naming the tool,
    # and a mapped tool, are decided as ever, and a mode that runs what it is not asked about gets a deny
    (tmp_path / "open.dsh").write_text(
        'policy open "Open" {\n  approval ask\n  default allow\n  deny * when tool matches "mcp__db__drop"\n}\n'
    )
    (tmp_path / ".dshc").write_text('load = ["open.dsh"]\npolicy = "open"\nunmapped = "defer"\n')
    answer, done = _hook(_event(tmp_path, "BrandNewTool", {}, cwd=tmp_path))
    assert answer is None and done.returncode == 0 and "dshc: defer:" in done.stderr, done.stdout
    answer, _ = _hook(_event(tmp_path, "mcp__db__drop", {}, cwd=tmp_path))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    answer, _ = _hook(_event(tmp_path, "Bash", {"command": "make"}, cwd=tmp_path))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "allow"
    answer, _ = _hook(_event(tmp_path, "BrandNewTool", {}, cwd=tmp_path, permission_mode="bypassPermissions"))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
