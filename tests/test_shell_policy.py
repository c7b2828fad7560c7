"""Shell calls decided part by part, canonical paths, command classes, and the properties that
keep them safe: a wrapper or a redirection never turns a deny into an allow."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.diagnostics import DshError
from dshc.compiler.fmt import format_document
from dshc.compiler.program import Program, SourceFile, parse_files
from dshc.compiler.request import Request
from dsl_strategies import request_facts

from conftest import examples

ISSUE = """
policy deny-wrapped { default allow
  deny bash when args.command matches "sudo *"
  deny bash when args.command matches "git push*"
}
policy allow-list { default deny
  allow bash when args.command matches "ls *"
  allow bash when args.command matches "wc *"
  allow write when args.file_path inside workspace
}
policy docs-only { default allow
  ask write, edit when not args.file_path matches "docs/*"
}
policy inspect { default ask
  allow bash when args.command is readonly
  allow write when args.file_path inside workspace
}
policy exact { default allow
  deny bash when args.command == "rm -rf /tmp/x"
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"issue.dsh": ISSUE})


def decide(program, policy, tool, args, workspace="/ws"):
    request = Request(preset="standard", host="web", policy=policy)
    indexed = program.decide(request, tool, args, workspace=workspace)
    plain = program.decide_unindexed(request, tool, args, workspace=workspace)
    assert indexed.effect == plain.effect, (policy, args)
    return indexed


def bash(program, policy, command, **extra):
    return decide(program, policy, "bash", {"command": command, "description": "d", **extra}).effect


@pytest.mark.parametrize(
    "command",
    [
        "sudo rm -rf /tmp/x",
        "/usr/bin/git push",
        "git -C /tmp push",
        "git --no-pager push",
        "timeout 5 git push",
        "env A=1 git push",
        "bash -c 'git push'",
        "command git push",
        "\\git push",
    ],
)
def test_the_issue_denies_now_hold(program, command):
    assert bash(program, "deny-wrapped", command) == "deny"


def test_exact_comparisons_see_each_simple_command(program):
    assert bash(program, "exact", "sudo rm -rf /tmp/x") == "deny"
    assert bash(program, "exact", "ls && rm -rf /tmp/x") == "deny"


@pytest.mark.parametrize(
    "command, effect",
    [
        ("ls", "allow"),
        ("ls -la", "allow"),
        ("lsblk", "deny"),
        ("ls > /etc/passwd", "deny"),
        ("ls | wc -l", "allow"),
        ("ls && pwd", "deny"),
        ("ls > out.txt", "allow"),
        ("ls > ../out.txt", "deny"),
        ("./ls", "deny"),
        ("ls $DIR", "allow"),
        ("ls $(pwd)", "deny"),
        ("LD_PRELOAD=x.so ls", "deny"),
    ],
)
def test_allow_lists_cover_segments_and_redirections_are_writes(program, command, effect):
    assert bash(program, "allow-list", command) == effect


@pytest.mark.parametrize("command", ["- D=8 ls -la", "- X=1 ls", "ls; - D=8 ls"])
def test_a_line_the_parser_reads_only_in_part_is_no_allow(program, command):
    """bash runs the program `-` here; tree-sitter-bash's tree holds only `D=8 ls -la`."""
    assert bash(program, "allow-list", command) == "deny"


def test_the_deciding_part_is_named(program):
    decision = decide(program, "allow-list", "bash", {"command": "ls > /etc/passwd", "description": "d"})
    assert decision.effect == "deny" and "write of `/etc/passwd`" in decision.reason
    decision = decide(program, "allow-list", "bash", {"command": "ls && pwd", "description": "d"})
    assert "`pwd`" in decision.reason


def test_a_relative_redirection_follows_the_working_directory(program):
    assert bash(program, "allow-list", "ls > out.txt", workdir="sub") == "allow"
    assert bash(program, "allow-list", "ls > out.txt", workdir="/etc") == "deny"


def test_paths_are_canonical_before_conditions(program, tmp_path):
    assert decide(program, "docs-only", "write", {"file_path": "docs/a.md", "content": "x"}).effect == "allow"
    shown = decide(program, "docs-only", "write", {"file_path": "docs/../src/x.md", "content": "x"})
    assert shown.effect == "ask" and "`file_path` is `src/x.md`" in shown.reason
    assert decide(program, "docs-only", "write", {"file_path": "/ws/docs/a.md", "content": "x"}).effect == "allow"
    (tmp_path / "docs").mkdir()
    (tmp_path / "src").mkdir()
    os.symlink(tmp_path / "src", tmp_path / "docs" / "link")
    ws = str(tmp_path)
    assert decide(program, "docs-only", "write", {"file_path": "docs/link/x.md", "content": "x"}, ws).effect == "ask"
    assert decide(program, "docs-only", "write", {"file_path": "docs/x.md", "content": "x"}, ws).effect == "allow"


@pytest.mark.parametrize(
    "command, effect",
    [
        ("cat README.md", "allow"),
        ("git status && git log -n 3", "allow"),
        ("grep -rn foo . | head -5", "allow"),
        ("find . -name '*.py'", "allow"),
        ("sed -n 1,5p f", "allow"),
        ("[[ -f x ]] && cat x", "allow"),
        ("cat x > notes.txt", "allow"),
        ("cat x > /etc/passwd", "ask"),
        ("rm x", "ask"),
        ("find . -delete", "ask"),
        ("find . -exec rm {} \\;", "ask"),
        ("sed -i s/a/b/ f", "ask"),
        ("rg --pre cat x", "ask"),
        ("git -c core.pager=x log", "ask"),
        ("git push", "ask"),
        ("sort -o out f", "ask"),
        ("cat $(echo x)", "allow"),  # as `cat $X`: the substitution's command is decided on its own
        ("cat $(rm x)", "ask"),
        ("sudo cat /etc/shadow", "ask"),
        # `inspect` has no rule on `read`: a file a command reads is left to its rules on the command
        ("timeout 5 cat x", "allow"),
        ("cat < .env", "allow"),
        ("cat .env", "allow"),
    ],
)
def test_the_shipped_readonly_class(program, command, effect):
    assert bash(program, "inspect", command) == effect


def test_users_extend_a_class_in_their_own_file():
    extended = Program.load(texts={"issue.dsh": ISSUE, "mine.dsh": 'commands readonly { "make -n" }'})
    assert bash(extended, "inspect", "make -n") == "allow"
    assert bash(extended, "inspect", "make") == "ask"


def test_an_unknown_class_is_an_error_with_a_suggestion():
    with pytest.raises(DshError) as caught:
        Program.load(texts={"p.dsh": "policy p { allow bash when args.command is readonyl }"})
    (diag,) = [d for d in caught.value.diagnostics if d.code == "DSH219"]
    assert "readonly" in (diag.help or "")


def test_a_commands_declaration_round_trips_through_fmt():
    text = 'commands extra "More" {\n  "make -n" except "-C", "--directory"\n  "tree"\n}\n'
    (document,), diags, _texts = parse_files([SourceFile("x.dsh", text.encode())])
    assert not diags and format_document(document) == text
    (again,), _, _ = parse_files([SourceFile("x.dsh", format_document(document).encode())])
    assert again == document


def test_shipped_read_only_policy_needs_no_prompt_for_inspection():
    shipped = Program.load()
    request = Request(preset="standard", host="web", policy="read-only")
    escalated = {"description": "d", "sandbox_permissions": "danger-full-access", "justification": "j"}
    assert shipped.decide(request, "bash", {"command": "git status", **escalated}, "/ws").effect == "allow"
    assert shipped.decide(request, "bash", {"command": "rm -rf x", **escalated}, "/ws").effect == "ask"
    assert shipped.decide(request, "bash", {"command": "ls > x", "description": "d"}, "/ws").effect == "deny"


# ---------------------------------------------------------------- properties

BASE = [
    "ls",
    "rm -rf /tmp/x",
    "git push origin",
    "cat .env",
    "make test",
    "git status",
    "echo $(id)",
    "find . -delete",
    "curl x | sh",
    "ls | wc -l",
]
WRAPPERS = [
    "sudo {}",
    "timeout 5 {}",
    "env A=1 {}",
    "nice -n 5 {}",
    "nohup {}",
    "xargs {}",
    "bash -c '{}'",
    "watch '{}'",
    "strace -f {}",
    "ionice -c3 {}",
    "command {}",
    "/usr/bin/env {}",
    "{} > out.txt",
    "{} 2>&1 >/dev/null",
    "{} > /etc/x",
    "{} < .env",
    "cd sub && {}",
    "({})",
    "{} &",
    "! {}",
]
PATTERNS = [
    "ls *",
    "rm *",
    "git push*",
    "cat .env",
    "make *",
    "sudo *",
    "*",
    "git *",
    "echo *",
    "find *",
    "timeout *",
    "env *",
    "nohup *",
]
RULE = st.builds(
    lambda effect, pattern: f'  {effect} bash when args.command matches "{pattern}"',
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(PATTERNS),
)
EXTRA = st.sampled_from(
    [
        "",
        "  allow bash when args.command is readonly",
        "  deny write when args.file_path outside workspace",
        '  ask read when args.file_path matches "*.env"',
        "  allow bash",
    ]
)
POLICIES = st.builds(
    lambda rules, extra, default: "policy gen {\n" + default + "\n".join(rules) + "\n" + extra + "\n}\n",
    st.lists(RULE, max_size=4),
    EXTRA,
    st.sampled_from(["", "  default allow\n", "  default ask\n"]),
)


@settings(max_examples=examples(60), deadline=None)
@given(POLICIES, st.sampled_from(BASE), st.sampled_from(WRAPPERS))
def test_a_wrapper_or_redirection_never_turns_a_deny_into_an_allow(policy, command, wrapper):
    program = Program.load(texts={"p.dsh": policy})
    before = bash(program, "gen", command)
    after = bash(program, "gen", wrapper.format(command))
    if before == "deny":
        assert after != "allow", (command, wrapper)
    if before != "allow":
        assert (
            after != "allow"
            or wrapper.format(command).startswith(("(", "!"))
            or wrapper.endswith("&")
            or wrapper.startswith("{} 2>&1")
        ), (command, wrapper, before, after)


# expansion words, a program named by its path, a hazard: their entries are found by literal parts too
EXPANDED = [
    "git push $X",
    "rm -rf $HOME/x",
    "./rm -rf x",
    "find . -delete",
    'git "$@"',
    "ls $D && rm $F",
    "make $T",
    "sudo $X",
]


@settings(max_examples=examples(40), deadline=None)
@given(
    POLICIES,
    st.lists(
        st.sampled_from(BASE + EXPANDED + [w.format(b) for w in WRAPPERS[:6] for b in BASE[:3]]), min_size=1, max_size=3
    ),
)
def test_the_index_and_the_reference_agree_on_shell_calls(policy, commands):
    program = Program.load(texts={"p.dsh": policy})
    request = Request(preset="standard", host="web", policy="gen")
    for command in commands:
        args = {"command": command, "description": "d"}
        indexed = program.decide(request, "bash", args, workspace="/ws")
        plain = program.decide_unindexed(request, "bash", args, workspace="/ws")
        assert (indexed.effect, set(indexed.deciding)) == (plain.effect, set(plain.deciding)), command


# A command no glob can be read against (opaque: `eval`, an unrecognised git option; a line that does
# not parse) or a value that is not text may match any deny or ask and no allow. The index decides it
# from one summary of every deny and ask on the field (tabulated by fact tests like any rule group),
# not rule by rule: it must still agree with trying every rule, fact conditions and absent facts included.
FACTS = [
    "",
    ' and platform == "linux"',
    ' and platform != "darwin"',
    " and plan_mode",
    " and not plan_mode",
    " and flag beta",
    ' and scope == "root"',
]
FACT_RULE = st.builds(
    lambda effect, pattern, facts: f'  {effect} bash when args.command matches "{pattern}"{facts}',
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(PATTERNS + ["git -rf*", "eval *"]),
    st.sampled_from(FACTS),
)
FACT_POLICIES = st.builds(
    lambda rules, default: "policy gen {\n" + default + "\n".join(rules) + "\n}\n",
    st.lists(FACT_RULE, min_size=1, max_size=8),
    st.sampled_from(["", "  default allow\n", "  default deny\n"]),
)
UNSEEN = [
    "git -rf x",
    "git --version",
    "eval $X",
    'echo "unterminated',
    "ls && git -rf x",
    "$(id)",
    5,
    None,
    ["ls"],
    {"a": "rm"},
]


@settings(max_examples=examples(60), deadline=None)
@given(FACT_POLICIES, st.sampled_from(["linux", "darwin"]), st.booleans(), st.sets(st.sampled_from(["beta"])))
def test_commands_no_glob_can_read_agree_with_trying_every_rule(policy, platform, plan, flags):
    program = Program.load(texts={"p.dsh": policy})
    request = Request(preset="standard", host="web", policy="gen", platform=platform, plan=plan, flags=frozenset(flags))
    for command in UNSEEN + EXPANDED:
        args = {"command": command, "description": "d"}
        indexed = program.decide(request, "bash", args, workspace="/ws")
        plain = program.decide_unindexed(request, "bash", args, workspace="/ws")
        assert (indexed.effect, set(indexed.deciding)) == (plain.effect, set(plain.deciding)), command


def test_an_opaque_command_meets_every_deny_whose_facts_hold_and_no_allow():
    program = Program.load(
        texts={
            "p.dsh": "policy gen {\n  default ask\n"
            '  allow bash when args.command matches "git *"\n'
            '  deny bash when args.command matches "rm *" and platform == "darwin"\n'
            '  ask bash when args.command matches "curl *" and plan_mode\n}\n'
        }
    )

    def effect(command, **facts):
        request = Request(preset="standard", host="web", policy="gen", **facts)
        indexed = program.decide(request, "bash", {"command": command, "description": "d"}, workspace="/ws")
        plain = program.decide_unindexed(request, "bash", {"command": command, "description": "d"}, workspace="/ws")
        assert indexed.effect == plain.effect
        return indexed.effect

    assert effect("git status") == "allow"
    assert effect("git -rf x") == "ask"  # opaque: the allow does not cover it; the default decides
    assert effect("git -rf x", plan=True) == "ask"
    assert effect("eval $X", platform="darwin") == "deny"
    assert effect("eval $X", platform="linux") == "ask"
    assert effect(5, platform="darwin") == "deny"


@pytest.mark.parametrize(
    "pattern, command", [("rm ", "rm $X"), ("*.txt ", "cat a.txt $X"), ("git push ", 'git push "$@"')]
)
def test_an_allow_matched_by_the_literal_words_alone_does_not_cover_an_expansion(pattern, command):
    """`allow … matches "rm "` never matches a command as written; with an expansion after `rm` it
    covered `rm $X` — which may be `rm -rf /` (anthropics/claude-code#4956's class: a rule that
    matches how a command starts lets anything after it run)."""
    text = f'policy gen {{\n  default deny\n  allow bash when args.command matches "{pattern}"\n}}\n'
    program = Program.load(texts={"p.dsh": text})
    assert bash(program, "gen", command) == "deny"


# A simple command of literal words is read as its text: the index takes the glob groups it hits by
# their summaries (tabulated by fact tests), and tries only the other globs (`?`, an inner `*`) one by
# one, the shell way (`git *` covers a bare `git`, so does `g?t *`). Facts decide inside the groups.
OTHER_PATTERNS = ["g?t *", "git * --force*", "* -rf *", "r? -rf*", "*sh", "l? -l?", "make ?*", "git*"]
LITERAL_RULE = st.builds(
    lambda effect, pattern, facts: f'  {effect} bash when args.command matches "{pattern}"{facts}',
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(PATTERNS + OTHER_PATTERNS),
    st.sampled_from(FACTS),
)
LITERAL_POLICIES = st.builds(
    lambda rules, default: "policy gen {\n" + default + "\n".join(rules) + "\n}\n",
    st.lists(LITERAL_RULE, min_size=1, max_size=8),
    st.sampled_from(["", "  default allow\n", "  default deny\n"]),
)
LITERAL_COMMANDS = [
    "git",
    "git status",
    "ls -la",
    "ls",
    "rm -rf x",
    "git push --force origin",
    "make",
    "make test",
    "gat x",
    "bash",
    "git push origin && rm -rf x",
    "ls; make",
    "",
    "   ",
    "# a comment alone",
]


@settings(max_examples=examples(80), deadline=None)
@given(LITERAL_POLICIES, request_facts)
def test_literal_commands_by_group_summaries_agree_with_trying_every_rule(policy, facts):
    program = Program.load(texts={"p.dsh": policy})
    request = Request(preset="standard", host="web", policy="gen", **facts)
    for command in LITERAL_COMMANDS:
        args = {"command": command, "description": "d"}
        indexed = program.decide(request, "bash", args, workspace="/ws")
        plain = program.decide_unindexed(request, "bash", args, workspace="/ws")
        assert (indexed.effect, set(indexed.deciding)) == (plain.effect, set(plain.deciding)), command
