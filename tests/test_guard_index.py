"""Guards are found by their globs' literal parts (`policy/guard_index.py`): a call evaluates only those
its arguments may fire. What fires, and whether an earlier guard was undecided, must stay exactly what
trying every guard in source order gives — for the decision and for the runtime's guard stage — over
literal, prefix, suffix and other globs, path arguments in both forms (`..`, `~`, absolute), values
that are not text, absent arguments, shell commands and guards the index cannot key."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.program import Program
from dshc.compiler.request import Request
from conftest import examples, tool_index
from dsl_strategies import request_facts

GLOBS = [
    "*.env",
    "*.txt",
    "src/*",
    "/etc/*",
    "a.env",
    "*",
    "",
    "s?c/*",
    "*/../*",
    "*.e*v",
    "~/*",
    "src/",
    "**",
    "*passwd",
    "../*",
    "/ws/*",
    "/ws/src/*",
]
PARTS = [f'args.file_path matches "{glob}"' for glob in GLOBS] + [
    'args.content matches "x*"',
    'args.content matches "*y"',
    'platform == "linux"',
    "plan_mode",
    "flag beta",
    "args.file_path inside workspace",
    'not args.file_path matches "*.txt"',
    'args.file_path == "a.env"',
    'args.file_path matches "*.env" or plan_mode',
    "has args.content",
]
SHELL_PARTS = [
    'args.command matches "rm *"',
    'args.command matches "*passwd*"',
    'args.command matches "git push"',
    'args.command matches "git *"',
    'args.command matches "g?t *"',
    'args.command matches "* -rf *"',
    'args.command matches "*x"',
    'args.description matches "d*"',
    'platform == "linux"',
]


def _guard(number, tool, parts):
    return f"  guard g{number}: deny {tool}" + (" when " + " and ".join(parts) if parts else "")


def _policy(guards, rules, default):
    body = [_guard(i, tool, parts) for i, (tool, parts) in enumerate(guards)]
    return "policy gen {\n" + default + "\n".join(body + rules) + "\n}\n"


PATH_PARTS = [part for part in PARTS if "content" not in part]  # `read` has no `content`
FILE_GUARD = st.one_of(
    st.tuples(st.just("write"), st.lists(st.sampled_from(PARTS), max_size=3, unique=True)),
    st.tuples(st.sampled_from(["read", "write, read"]), st.lists(st.sampled_from(PATH_PARTS), max_size=3, unique=True)),
)
SHELL_GUARD = st.tuples(st.just("bash"), st.lists(st.sampled_from(SHELL_PARTS), max_size=2, unique=True))
RULES = st.lists(
    st.sampled_from(
        [
            '  allow write when args.file_path matches "src/*"',
            "  ask read",
            '  allow bash when args.command matches "git *"',
            "  deny write when plan_mode",
            '  allow read when args.file_path matches "*.txt"',
        ]
    ),
    max_size=3,
    unique=True,
)
POLICIES = st.builds(
    _policy,
    st.lists(st.one_of(FILE_GUARD, SHELL_GUARD), min_size=1, max_size=8),
    RULES,
    st.sampled_from(["", "  default allow\n", "  default deny\n"]),
)
PATHS = [
    "src/a.txt",
    "../x.env",
    "/etc/passwd",
    "a.env",
    "~/x.txt",
    "src/../../y.env",
    "src/",
    "",
    5,
    None,
    ["a"],
    "MISSING",
]
COMMANDS = [
    "rm -rf /",
    "git push",
    "cat /etc/passwd",
    "git status && rm x",
    "eval $X",
    "echo > a.env",
    "(",
    7,
    "git",
    "./rm -rf x",
    "rm $X",
    "sudo rm x",
    "find . -delete",
    "",
    "git  push",
]


def _file_args(path):
    return {"content": "xy"} if path == "MISSING" else {"file_path": path, "content": "xy"}


@settings(max_examples=examples(120), deadline=None)
@given(POLICIES, request_facts, st.sampled_from(["/ws", None]))
def test_indexed_guards_decide_like_trying_every_guard(policy, facts, workspace):
    program = Program.load(texts={"p.dsh": policy})
    request = Request(preset="standard", host="web", policy="gen", **facts)
    calls = [(tool, _file_args(path)) for tool in ("write", "read") for path in PATHS]
    calls += [("bash", {"command": command, "description": "d"}) for command in COMMANDS]
    calls += [("write", ["not", "a", "mapping"]), ("bash", {"description": "no command"})]
    for tool, args in calls:
        indexed = program.decide(request, tool, args, workspace=workspace)
        if isinstance(args, dict):
            plain = program.decide_unindexed(request, tool, args, workspace=workspace)
            assert (indexed.effect, set(indexed.deciding)) == (plain.effect, set(plain.deciding)), (tool, args)
        else:  # refused before any rule reads them
            assert (indexed.effect, indexed.deciding) == ("deny", ()), (tool, args)
        # the runtime's guard stage: the guards alone, an undecidable one firing
        stage = program.guard(request, tool, args, workspace=workspace)
        expected = _every_guard_stage(program, request, tool, args, workspace)
        assert (stage.deciding if stage else None) == expected, (tool, args)


def _every_guard_stage(program, request, tool, args, workspace):
    """What the guard stage answers when every guard is tried in order, as written: the index and the
    compiled conditions bypassed for every tool the call is decided as (a shell line's parts are other tools)."""
    from dshc.compiler.policy.core import holds
    from dshc.compiler.policy.guard_index import GuardIndex

    saved = GuardIndex.candidates, GuardIndex.holds
    GuardIndex.candidates = lambda self, _args: self.guards
    GuardIndex.holds = lambda self, guard, env: holds(guard, env)
    try:
        found = program.guard(request, tool, args, workspace=workspace)
    finally:
        GuardIndex.candidates, GuardIndex.holds = saved
    return found.deciding if found else None


def test_only_guards_a_path_may_match_are_candidates():
    from dshc.compiler.paths import CanonicalPath
    from dshc.compiler.policy.guard_index import GuardIndex

    text = (
        'policy gen {\n  guard env: deny write when args.file_path matches "*.env"\n'
        '  guard src: deny write when args.file_path matches "src/*" and plan_mode\n'
        "  guard any: deny write when plan_mode\n"
        '  guard odd: deny write when args.file_path matches "s?c/*.txt"\n'
        '  guard ws: deny write when args.file_path matches "/ws/*"\n}\n'
    )
    index = tool_index(text, "write")
    names = lambda args: [g.name.text for g in index.guard_index.candidates(args)]  # noqa: E731
    assert names({"file_path": "docs/a.md"}) == ["any"]
    assert names({"file_path": "src/a.env"}) == ["env", "src", "any"]
    assert names({"file_path": "src/a.txt"}) == ["src", "any", "odd"]
    assert names({"content": "x"}) == ["any"]  # absent: no glob on it can hold
    assert names({"file_path": 5}) == ["env", "src", "any", "odd", "ws"]  # not text: the guards' side decides
    assert names([1]) == ["env", "src", "any", "odd", "ws"]
    # a canonical path matches in either form: the text relative to the workspace or the absolute one
    assert names({"file_path": CanonicalPath("docs/a.md", "/ws/docs/a.md")}) == ["any", "ws"]
    assert names({"file_path": "docs/a.md"}) == ["any"]
    assert isinstance(GuardIndex([], False, "write").candidates({}), tuple)


def test_a_guard_on_a_shell_command_is_found_by_each_simple_commands_text():
    text = (
        'policy gen {\n  default allow\n  guard rm: deny bash when args.command matches "rm *"\n'
        '  guard git: deny bash when args.command matches "git *" and plan_mode\n}\n'
    )
    program = Program.load(texts={"p.dsh": text})
    request = Request(preset="standard", host="web", policy="gen")
    # one simple command at a time: the whole line does not start with `rm`, its second command does
    assert program.decide(request, "bash", {"command": "cd /tmp && rm -rf x"}).effect == "deny"
    assert program.decide(request, "bash", {"command": "cd /tmp && ls"}).effect == "allow"
    assert program.decide(request, "bash", {"command": "./rm -rf x"}).effect == "deny"  # by its basename

    from dshc.compiler.conditions import SegmentArg
    from dshc.compiler.shell import analyse

    index = tool_index(text, "bash")
    names = lambda command: [
        g.name.text
        for g in index.guard_index.candidates(  # noqa: E731
            {"command": SegmentArg(command, analyse(command).segments[0])}
        )
    ]
    assert names("ls -la") == [] and names("rm -rf x") == ["rm"] and names("git") == ["git"]  # `git *`: bare too
    assert names("rm $X") == ["rm", "git"]  # an expansion: what runs is not one text, every one is tried
    assert [g.name.text for g in index.guard_index.candidates({"command": "rm x"})] == ["rm", "git"]  # unsplit


# Deny rules for a shell program are commonly got around by spelling or wrapping it differently
# (anthropics/claude-code#92542: wrappers outside a fixed unwrap list; luisgf/infrabroker#371: sudo, su,
# doas, pkexec, runuser, source; agentscope-ai/agentscope#2501: `timeout`, `nice`, `stdbuf`, `exec`,
# `/bin/rm`). With the guards found by each simple command's text, every spelling the shell analysis
# resolves to `rm` must still meet a guard on `rm *`, as trying every guard does.
RM_SPELLINGS = [
    "rm -rf x",
    "\\rm -rf x",
    '"rm" -rf x',
    "r''m -rf x",
    "/bin/rm -rf x",
    "./rm -rf x",
    "command rm x",
    "env rm x",
    "env -i rm -rf x",
    "rm${IFS}-rf x",
    "sudo -u root rm -rf x",
    "/usr/bin/sudo rm -rf x",
    "doas rm -rf x",
    "pkexec rm -rf x",
    "runuser -u root -- rm -rf x",
    "su -c 'rm -rf x'",
    "script -c 'rm -rf x' /dev/null",
    "watch rm x",
    "timeout 5 rm -rf x",
    "nice -n 5 rm -rf x",
    "stdbuf -o0 rm -rf x",
    "exec rm x",
    "setsid rm x",
    "xargs rm < list",
    "find . -exec rm {} \\;",
    "bash -c 'rm -rf x'",
    "$(echo rm) -rf x",
    "  rm   -rf x",
    "rm\t-rf x",
    "(rm -rf x)",
    "{ rm -rf x; }",
    "ls; rm x",
    "true && rm x",
    "busybox rm x",
]


def test_a_command_guard_meets_every_spelling_of_its_program():
    text = 'policy gen {\n  default allow\n  guard rm: deny bash when args.command matches "rm *"\n}\n'
    program = Program.load(texts={"p.dsh": text})
    request = Request(preset="standard", host="web", policy="gen")
    for command in RM_SPELLINGS:
        indexed = program.decide(request, "bash", {"command": command})
        assert indexed.effect == "deny", command
        assert program.guard(request, "bash", {"command": command}) is not None, command  # the guard stage too
