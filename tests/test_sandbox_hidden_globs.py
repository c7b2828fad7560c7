"""A read deny written as a glob (`*.env`, `*.pem`) names no path to mount over, so a process read what it
named: `python3 x.py` printed a `.env` that `deny read … "*.env"` keeps from every call that names it. The
files such a glob matches are now found when each command starts, in the workspace, and hidden as a literal
path is (an empty file in their place). The search is bounded: past its limit the command is refused, saying
why, rather than run with some of them readable.

Reports: martymcenroe/AssemblyZero#693 (`Read(.env)` denied, a command printed the key from `.dev.vars`),
GSA-TTS/agentic-coding-quickstart#178 (a read denylist of globs, `*.pem`, `**/.env`, walked around by
commands), anthropics/claude-code#57525. Real processes."""

from __future__ import annotations

import os

import pytest

from dshc.compiler.policy.protected import hidden_globs, matching_files
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime import sandbox

PROBE = sandbox.probe()
needs_namespaces = pytest.mark.skipif(
    PROBE.landlock_abi < 1 or not PROBE.network_namespace, reason="needs Landlock and unprivileged user namespaces"
)

POLICY = """
policy env "No secrets read" extends workspace-write {
  default allow
  deny read when args.file_path matches "*.env"
  ask read when args.file_path matches "*.pem" or args.file_path matches "secrets/**"
  deny read when args.file_path matches ".envrc"
  deny read when args.file_path matches "*.key" and plan_mode
  deny read when args.file_path matches "*.log" or args.file_path matches "*.txt" and plan_mode
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICY})


def test_only_globs_a_rule_alone_decides_are_searched_for(program):
    policy = program.composition(Request(host="web", policy="env")).policy
    # `secrets/**` beside a glob is searched for with it (alone, like `.envrc`, it is a path `hidden_paths` mounts); `… and
    # plan_mode` is not the glob alone, nor is an `or` holding such a test
    assert hidden_globs(policy) == ("*.env", "*.pem", "secrets/**")


@pytest.fixture
def tree(workspace):
    (workspace / ".env").write_text("KEY=root-secret\n")
    (workspace / "config").mkdir()
    (workspace / "config" / ".env").write_text("KEY=nested-secret\n")
    (workspace / "config" / "app.toml").write_text("name = 'app'\n")
    (workspace / "tls").mkdir()
    (workspace / "tls" / "server.pem").write_text("pem-secret\n")
    (workspace / ".git" / "objects" / "ab").mkdir(parents=True)
    (workspace / ".git" / "x.env").write_text("KEY=planted-in-git\n")  # searched: a search reads it
    (workspace / ".git" / "objects" / "ab" / "cd.env").write_text("")  # the object store is not searched
    outside = workspace.parent / "outside"  # reached through links: `grep -R`, a build, follow them
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "prod.env").write_text("KEY=linked-secret\n")
    (outside / "notes.txt").write_text("linked notes\n")
    os.symlink(outside, workspace / "linked")
    os.symlink(outside / "deep" / "prod.env", workspace / "config" / "settings")  # a linked file, by its target's name
    return workspace


def test_the_files_a_glob_matches_are_found_in_the_workspace(tree):
    found, complete = matching_files(str(tree), ("*.env", "*.pem"))
    # a match is its real path, what a mount hides: the linked folder's file once, however many names reach it
    assert complete and sorted(found) == sorted(
        [
            f"{tree}/.env",
            f"{tree}/config/.env",
            f"{tree}/tls/server.pem",
            f"{tree.parent}/outside/deep/prod.env",
            f"{tree}/.git/x.env",
        ]
    )
    # a glob is read against the workspace-relative form as a call's path is (the absolute one too)
    assert matching_files(str(tree), ("tls/*.pem",)) == ((f"{tree}/tls/server.pem",), True)
    # `config/settings` is read by that name: its target is hidden
    assert sorted(matching_files(str(tree), (f"{tree}/config/*",))[0]) == sorted(
        [f"{tree}/config/.env", f"{tree}/config/app.toml", f"{tree.parent}/outside/deep/prod.env"]
    )


def test_the_search_says_when_it_stopped_short(tree):
    for index in range(40):
        (tree / f"f{index}.txt").write_text("")
    found, complete = matching_files(str(tree), ("*.env",), limit=20)
    assert not complete


@needs_namespaces
def test_a_program_finds_the_files_a_glob_denies_empty(run_bash, tree):
    (tree / "x.py").write_text(
        "for p in ('.env', 'config/.env', 'tls/server.pem', 'config/app.toml'):\n    print(p, repr(open(p).read()))\n"
    )
    output = run_bash("python3 x.py", hidden_found=lambda root: matching_files(root, ("*.env", "*.pem")))
    for secret in ("root-secret", "nested-secret", "pem-secret"):
        assert secret not in output, output
    assert "config/app.toml \"name = 'app'\\n\"" in output, output
    # what a link reaches outside the workspace is hidden at its real path: `grep -R` follows links
    output = run_bash(
        "grep -R KEY . ; cat linked/deep/prod.env config/settings; cat linked/notes.txt",
        hidden_found=lambda root: matching_files(root, ("*.env",)),
    )
    assert "secret" not in output and "linked notes" in output, output


@needs_namespaces
def test_a_search_that_stopped_short_refuses_the_command(run_bash, tree):
    from dshc.runtime.tools.base import ToolError

    with pytest.raises(ToolError) as refused:
        run_bash("cat .env", hidden_found=lambda root: (("/x",), False))
    assert "could not all be found" in str(refused.value.message)


def test_a_session_and_decide_carry_the_globs(program, tree):
    from dshc.cli.host import describe_sandbox, sandbox_text, session

    ctx, state = session(program, Request(preset="standard", policy="env"), str(tree))
    try:
        found, complete = ctx.tool_context(ctx.signal).hidden_found(str(tree))
    finally:
        state.close()
        ctx.log.close()
    assert complete and f"{tree}/config/.env" in found
    described = describe_sandbox(program, Request(host="web", policy="env"), "bash")
    assert described["unreadable_matching"] == ["*.env", "*.pem", "secrets/**"]
    assert "files matching *.env, *.pem, secrets/** (found when a command starts)" in sandbox_text(described)


@needs_namespaces
def test_claude_code_bash_through_the_hook_finds_them_hidden(tmp_path, through_hook, monkeypatch):
    project = tmp_path / "proj"
    (project / "config").mkdir(parents=True)
    (project / "config" / ".env").write_text("KEY=nested-secret\n")
    (project / "x.py").write_text("print(repr(open('config/.env').read()))\n")
    (project / "p.dsh").write_text(POLICY)
    (project / ".dshc").write_text('load = ["p.dsh"]\npolicy = "env"\n')
    answer, ran = through_hook(project, "python3 x.py; echo ran")
    assert answer["permissionDecision"] == "allow" and "updatedInput" in answer, answer
    assert "ran" in ran.stdout and "nested-secret" not in ran.stdout + ran.stderr, (ran.stdout, ran.stderr)
    # past the search's limit the call is denied, saying why, rather than run with some of them readable
    monkeypatch.setattr("dshc.compiler.policy.protected.SEARCH_LIMIT", 1)
    from dshc.cli.hook_sandbox import sandboxed_command
    from dshc.runtime.sandbox import SandboxUnavailable

    policy = Program.load(texts={"p.dsh": POLICY}).composition(Request(host="web", policy="env")).policy
    with pytest.raises(SandboxUnavailable, match="read rules name"):
        sandboxed_command(policy, "true", str(project))


def test_code_modes_worker_is_confined_with_them_too(tree, state, monkeypatch):
    # a program reaches files through tools, but Node's `vm` is no security boundary
    import threading
    from dshc.runtime.tools import ToolContext, code

    started = []
    monkeypatch.setattr(code, "Worker", lambda conf, heap_mb, root, tmpdir: started.append(conf))
    ctx = ToolContext(
        workspace=str(tree),
        sandbox="workspace-write",
        owner="agent-1",
        state=state,
        abort=threading.Event(),
        hidden_roots=("tls/",),
        hidden_found=lambda root: matching_files(root, ("*.env",)),
    )
    code._start(ctx, 64)
    assert started[0].mode == "read-only" and not started[0].network
    assert set(started[0].hidden) == {
        f"{tree}/tls/",
        f"{tree}/.env",
        f"{tree}/config/.env",
        f"{tree.parent}/outside/deep/prod.env",
        f"{tree}/.git/x.env",
        f"{tree}/.git/objects/",
    }  # a folder git cannot read: its store, hidden too


GLOBS = ["*", "*.env", "*.ENV", "*e?v", "conf*/.env", "*/.env", ".env", "*config/app.toml", "tls/*", "*.pem*"]


@pytest.mark.parametrize("pattern", GLOBS)
def test_the_search_finds_exactly_what_the_glob_matches(tree, pattern):
    from dshc.compiler.globs import glob_match

    # every file a command reaches, through links too, by its name there or its real path; given as the real path
    expected = sorted(
        {
            os.path.realpath(os.path.join(folder, name))
            for folder, dirs, names in os.walk(tree, followlinks=True)
            if not dirs.__setitem__(
                slice(None), [d for d in dirs if not os.path.join(folder, d).endswith(".git/objects")]
            )
            for name in names
            if glob_match(pattern, os.path.relpath(os.path.join(folder, name), tree))
            or glob_match(pattern, os.path.join(folder, name))
            or glob_match(pattern, os.path.realpath(os.path.join(folder, name)))
        }
    )
    assert sorted(matching_files(str(tree), (pattern,))[0]) == expected


def test_a_linked_cycle_is_searched_once(tree):
    os.symlink(tree, tree / "config" / "loop")
    os.symlink(tree / "linked", tree / "again")  # two links to one folder
    found, complete = matching_files(str(tree), ("*.env",))
    assert complete and len(found) == len(set(found)) == 4 and f"{tree.parent}/outside/deep/prod.env" in found
