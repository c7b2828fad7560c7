"""Brace expansion (`mkdir -p src/{a,b}`, `cp f{,.bak}`, `echo {1..3}`) of an unquoted word of plain characters is
done as bash does it, and the command read with the words it becomes: `echo {a,b}` is `echo a b`, and
`sudo {curl,x}` runs `curl x`, which a deny of curl meets. A form bash would keep literal or whose meaning is not
certain (`{a}`, a step, leading zeros), and more than MAX_BRACE_WORDS words, leave the command opaque. Held to
bash itself on generated words."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.program import Program
from dshc.compiler.shell import analyse
from dshc.compiler.shell.braces import MAX_BRACE_WORDS, _brace_words
from conftest import bash_effect

POLICIES = """policy deny_some "Allow by default; rm, curl, force pushes, .env reads and .claude writes denied" {
  default allow
  deny bash when args.command matches "rm *"
  deny bash when args.command matches "curl *"
  deny bash when args.command matches "rm -rf /*"
  deny bash when args.command matches "git push --force *"
  deny read when args.file_path matches "*.env"
  deny write when args.file_path matches ".claude/*"
}

policy allow_some "Deny by default; echo, ls, mkdir and cp in the workspace" {
  default deny
  allow bash when args.command matches "echo *"
  allow bash when args.command matches "ls *"
  allow bash when args.command matches "mkdir *"
  allow bash when args.command matches "cp *"
  allow read when args.file_path inside workspace and not args.file_path matches "*.env"
  allow write when args.file_path inside workspace and not args.file_path matches ".claude/*"
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"braces.dsh": POLICIES})


@pytest.mark.parametrize(
    ("policy", "command"),
    [
        ("deny_some", "sudo {curl,https://example.com}"),  # the program's name made by the expansion
        ("deny_some", "{rm,-rf,/}"),  # (tree-sitter-bash reads a leading `{` as a group: it does not parse)
        ("deny_some", "x=1; {rm,-rf,x}"),
        ("deny_some", "sudo {rm,-rf,x}"),
        ("deny_some", "timeout 5 {rm,-rf,x}"),
        ("deny_some", "rm -{r,f} /"),  # options made by it, read by rm's grammar
        ("deny_some", "git push {--force,origin}"),
        ("deny_some", "cat {a,x}.env"),  # a file it names
        ("deny_some", "cp /tmp/x .claude/{settings.json,a}"),
        ("deny_some", "echo hi > {a,.claude/x}"),  # a redirection bash refuses as ambiguous
        ("deny_some", "echo $({rm,-rf,x})"),
        ("allow_some", "echo {a..z}{a..z}{a..z}"),  # 17,576 words: past the bound
        ("allow_some", "echo {1..100000}"),
        ("allow_some", "echo {1..9..2}"),  # a step: not expanded
        ("allow_some", "echo {a,$(date)}"),  # anything but plain characters: not expanded
        ("allow_some", "mkdir -p ~/{a,b}"),  # outside the workspace
        ("allow_some", "cp {x.env,y}"),
    ],
)
def test_an_attack_through_brace_expansion_is_refused(program, policy, command):
    assert bash_effect(program, policy, command) != "allow"


@pytest.mark.parametrize(
    "command",
    [
        "echo {a,b}",
        "mkdir -p src/{components,utils}/{a,b}",
        "cp main.py{,.bak}",
        "ls *.{py,md}",
        "echo {1..5} {a..c} {3..1}",
        "echo {rm,-rf,/}",  # echo prints the words
    ],
)
def test_a_brace_expansion_of_allowed_words_is_allowed(program, command):
    assert bash_effect(program, "allow_some", command) == "allow"


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("echo {a,b}", ("echo", "a", "b")),
        ("echo x{a,b}y{c,d}", ("echo", "xayc", "xayd", "xbyc", "xbyd")),
        ("echo {a,{b,c}}", ("echo", "a", "b", "c")),
        ("echo {,x}", ("echo", "x")),
        ("echo f{,.bak}", ("echo", "f", "f.bak")),
        ("echo {-1..1}", ("echo", "-1", "0", "1")),
        ("echo {c..a}", ("echo", "c", "b", "a")),
        ("c{a,u}rl x", ("carl", "curl", "x")),  # bash runs `carl`
        ("sudo {curl,x}", ("curl", "x")),
    ],
)
def test_a_command_is_read_with_the_words_bash_makes(command, argv):
    found = analyse(command)
    assert found is not None
    assert argv in {s.argv for s in found.segments if not s.opaque}


@pytest.mark.parametrize("word", ["{a}", "a{b}c{d,e}", "{01..3}", "{1..5..2}", "{Z..a}", "a}{b,c}", "{a,b"])
def test_a_form_bash_reads_otherwise_is_not_expanded(word):
    assert _brace_words(word) is None


def test_the_words_are_read_as_written_out():
    for braced, plain in [("ls *.{py,md} ~+/{a,b}", "ls *.py *.md ~+/a ~+/b"), ("sudo {cat,x.env}", "sudo cat x.env")]:
        assert analyse(braced) == analyse(plain)


_PIECES = st.lists(st.sampled_from(["a", "x.py", "-", "/", "{", "}", ",", "1..3", "c..a", "", "*"]), max_size=8)
_ATOMS = st.sampled_from(["a", "b", "x.py", "-f", "/", "", "*"])
_SEQUENCES = st.sampled_from(["{1..3}", "{3..1}", "{a..c}", "{-1..1}", "{a}", "{01..2}", "{1..4..2}", "{Z..a}"])
# words built of brace groups (alternatives, sequences, literal forms), nested, and of loose pieces
_WORDS = st.one_of(
    _PIECES.map("".join),
    st.recursive(
        _ATOMS,
        lambda inner: st.lists(
            st.one_of(
                inner, _SEQUENCES, st.lists(inner, min_size=2, max_size=3).map(lambda xs: "{" + ",".join(xs) + "}")
            ),
            min_size=1,
            max_size=3,
        ).map("".join),
        max_leaves=8,
    ),
)


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
@settings(max_examples=50, deadline=None)
@given(_WORDS)
def test_the_expansion_is_bash_s(word):
    words = _brace_words(word)
    if words is None or not word:
        return  # not expanded: the command is opaque
    script = f"set -f; printf '%s\\0' {word}"
    out = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, check=True).stdout
    expected = [w for w in out.decode().split("\0")[:-1]]
    if not words:
        expected = [w for w in expected if w]  # `printf` with no argument prints its format once
    assert [w.text for w in words] == expected, word
    assert len(words) <= MAX_BRACE_WORDS
