"""Every unit of a shell line seen, or the line unknown: the walk records the bytes it read, and a last
pass over the tree's leaves finds any text it did not (a node type it has no case for, text tree-sitter-bash
hangs somewhere unexpected). Such a line never satisfies an allow and meets every deny, and the reason names
the text. Forms from tree-sitter-bash#233 (words after a redirection parsed as its destination), #305/#334
(text after a heredoc operator), #213, #346, gotgenes/pi-packages#742 (control-flow bodies, declarations,
test commands) and anthropics/claude-code#48518 (a pipe after a heredoc), and every construct of the grammar
that can stand in a command list."""

from __future__ import annotations

import pytest

from dshc.compiler.program import Program
from dshc.compiler.shell import analyse, walk
from conftest import bash_effect

POLICIES = """policy deny_rm "Allow by default; rm, forced removal of the root and .env reads denied" {
  default allow
  deny bash when args.command matches "rm *"
  deny bash when args.command matches "rm -rf /*"
  deny read when args.file_path matches "*.env"
}

policy allow_echo "Deny by default; echo and cat allowed" {
  default deny
  allow bash when args.command matches "echo *"
  allow bash when args.command matches "cat *"
  allow read when args.file_path inside workspace
  allow write when args.file_path inside workspace
}
"""

NOT_ANALYSED = "is not analysed"


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"units.dsh": POLICIES})


def unread(command: str) -> str:
    """The reason of the segment that reports unread text, or "" when the walk read every unit."""
    found = analyse(command)
    assert found is not None, command
    return next((s.reason for s in found.segments if s.opaque and NOT_ANALYSED in s.reason), "")


def argvs(command: str) -> set[tuple[str, ...]]:
    found = analyse(command)
    assert found is not None, command
    return {s.argv for s in found.segments}


# Words after a redirection's target are the command's arguments in bash (`rm > /dev/null -rf /` runs
# `rm -rf /`); tree-sitter-bash 0.25 hangs them under the redirection as more destinations
# (tree-sitter/tree-sitter-bash#233), where no reading of the command sees them.
WORDS_AFTER_A_REDIRECTION = [
    ("deny_rm", "rm > /dev/null -rf /"),
    ("deny_rm", "rm 2>/dev/null -rf /"),
    ("deny_rm", "cat 2>/dev/null x.env"),
    ("deny_rm", "cat < /dev/null x.env"),
    ("allow_echo", "echo > /dev/null hi"),
]


@pytest.mark.parametrize(("policy", "command"), WORDS_AFTER_A_REDIRECTION)
def test_words_after_a_redirection_target_leave_the_line_unknown(program, policy, command):
    reason = unread(command)
    assert reason and "byte" in reason
    # the unread words are named: the author sees which text the rules could not read
    assert command.split()[-1] in reason
    assert bash_effect(program, policy, command) == "deny"


def test_the_reason_names_the_offset_and_the_text():
    assert unread("rm > /dev/null -rf /") == "text at byte 15 is not analysed: `-rf /`"


@pytest.mark.parametrize(
    "command",
    [
        "cat <<EOF -n\nx\nEOF",  # a word after the delimiter: an argument of cat, hung under the heredoc
        "a[$(rm x)]=1 echo hi",  # a subscript in a prefix assignment: its substitution is not followed
    ],
)
def test_text_hung_where_no_reading_looks_is_reported(command):
    assert unread(command)


@pytest.mark.parametrize(
    ("command", "units"),
    [
        # tree-sitter-bash#305 and #334: the rest of the line hangs under the heredoc node
        ("cat <<'EOF' && rm -rf ~\nx\nEOF", {("cat",), ("rm", "-rf", "~")}),
        ("cat <<'EOF' | sh\nx\nEOF", {("cat",), ("sh",)}),
        ("cat <<'EOF' > f.txt\nx\nEOF", {("cat",)}),
        # anthropics/claude-code#48518: a pipe target after a heredoc that is the first argument
        ("cat <<'EOF' | some-script\nx\nEOF", {("cat",), ("some-script",)}),
        ("cat <<EOF\n$(rm x)\nEOF", {("cat",), ("rm", "x")}),
        ("git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"", {("cat",)}),
        # gotgenes/pi-packages#742: bodies, declarations, test commands
        ("local x=$(rm y)", {("rm", "y")}),
        ("declare x=$(rm y)", {("rm", "y")}),
        ("export X=$(rm y)", {("rm", "y")}),
        ("x=$(rm y)", {("rm", "y")}),
        ("a=1 b=2", set()),
        ("unset $(rm y)", {("rm", "y")}),
        ("[[ $(rm y) ]]", {("rm", "y")}),
        ("[ -f x ] && echo y", {("echo", "y")}),
        ("[[ -f x ]] && echo y", {("echo", "y")}),
        ("if rm a; then rm b; elif rm c; then :; else rm d; fi", {("rm", "a"), ("rm", "b"), ("rm", "c"), ("rm", "d")}),
        ("while rm a; do rm b; done", {("rm", "a"), ("rm", "b")}),
        ("until rm a; do rm b; done", {("rm", "a"), ("rm", "b")}),
        ("for f in a b; do rm $f; done", {("rm", "$f")}),
        ("for f in $(rm a); do :; done", {("rm", "a"), (":",)}),
        ("select x in a b; do rm $x; done", {("rm", "$x")}),
        ("case $(rm a) in x) rm b;; esac", {("rm", "a"), ("rm", "b")}),
        ("case x in a) echo a;& b) echo b;;& c) echo c;; esac", {("echo", "a"), ("echo", "b"), ("echo", "c")}),
        ("case x in $(rm a)) :;; esac", {("rm", "a"), (":",)}),
        ("f() { rm x; }", {("function", "f"), ("rm", "x")}),
        ("function f { rm x; } > log", {("function", "f"), ("rm", "x")}),
        ("cat <(rm x)", {("cat", "<(rm x)"), ("rm", "x")}),
        ("echo hi > >(rm x)", {("echo", "hi"), ("rm", "x")}),
        ("! rm x", {("rm", "x")}),
        ("(rm x)", {("rm", "x")}),
        ("{ rm x; } > f", {("rm", "x")}),
        ("time -p rm x", {("time", "-p", "rm", "x"), ("rm", "x")}),
        ("coproc rm x", {("coproc", "rm", "x"), ("rm", "x")}),
        ("rm x &", {("rm", "x")}),
        ("rm x |& cat", {("rm", "x"), ("cat",)}),
        ("echo $((1 + 2))", {("echo", "$((1 + 2))")}),
        ("echo `rm x`", {("echo", "`rm x`"), ("rm", "x")}),
        ("echo ${x:-$(rm y)}", {("echo", "${x:-$(rm y)}"), ("rm", "y")}),
        ("echo hi # rm x", {("echo", "hi")}),
        ("cat <<< $(rm x)", {("cat",), ("rm", "x")}),
        ("cmd <<<string arg", {("cmd", "arg")}),  # tree-sitter-bash#213, read right by 0.25
        ("<<<string cmd arg", {("cmd", "arg")}),
        ("echo 'a b' \"c $(rm x) d\"", {("echo", "a b", "c $(rm x) d"), ("rm", "x")}),
    ],
)
def test_every_construct_of_a_command_list_is_read_and_its_units_seen(command, units):
    assert unread(command) == ""
    assert units <= argvs(command)


@pytest.mark.parametrize(
    "command",
    [
        "((x = y + 1))",
        "for ((i = 0; i < 3; i++)); do rm x; done",
        "coproc N { rm x; }",
        "f() { rm x; }",
    ],
)
def test_a_construct_read_as_opaque_is_read_and_stays_opaque(command):
    found = analyse(command)
    assert found is not None and unread(command) == ""
    assert any(s.opaque for s in found.segments)


def test_the_body_of_a_c_style_for_is_walked():
    assert ("rm", "x") in argvs("for ((i = 0; i < 3; i++)); do rm x; done")


@pytest.mark.parametrize(
    "command",
    [
        "cat <<'EOF'; echo done\nhello\nEOF",  # tree-sitter-bash#346
        "cat <<'EOF' 2>&1 | tail -5\nhello\nEOF",  # tree-sitter-bash#346
        "git commit -F - <<'EOF'\nmsg\nEOF",  # gotgenes/pi-packages#941: the `-` is in no token
    ],
)
def test_a_line_the_parser_misreads_is_not_analysed(command):
    assert analyse(command) is None


@pytest.mark.parametrize(
    ("kind", "command", "units"),
    [
        ("while_statement", "while true; do rm x; done", {("true",), ("rm", "x")}),
        ("case_item", "case x in a) rm y;; esac", {("rm", "y")}),
        ("do_group", "for f in a; do rm x; done", {("rm", "x")}),
        ("negated_command", "! rm x", {("rm", "x")}),
    ],
)
def test_a_node_type_the_walk_has_no_case_for_makes_the_line_unknown(monkeypatch, kind, command, units):
    """The check is on the tree, not a list of forms: a construct the walk forgot is caught by it."""
    assert unread(command) == ""
    monkeypatch.setattr(walk, "_STATEMENTS", walk._STATEMENTS - {kind})
    assert unread(command)


def test_unread_text_meets_every_deny_and_no_allow(program):
    assert bash_effect(program, "allow_echo", "echo > /dev/null hi") == "deny"
    assert bash_effect(program, "allow_echo", "echo hi > /dev/null") == "allow"
    assert bash_effect(program, "deny_rm", "cat > /dev/null a b") == "deny"
    assert bash_effect(program, "deny_rm", "cat a b > /dev/null") == "allow"


def test_a_nested_shell_line_is_checked_too():
    assert unread("sh -c 'rm > /dev/null -rf /'")
    assert unread("sh -c 'rm -rf / > /dev/null'") == ""


# a line holding each named node type of the grammar, in a place a command list can hold it
SAMPLES = {
    "ansi_c_string": "echo $'x'",
    "arithmetic_expansion": "echo $((1 + 2))",
    "array": "a=(1 2)",
    "binary_expression": "((x + 1))",
    "brace_expression": "echo {1..3}",
    "c_style_for_statement": "for ((i = 0; i < 3; i++)); do echo $i; done",
    "case_item": "case x in a) echo a;; esac",
    "case_statement": "case x in a) echo a;; esac",
    "command": "ls",
    "command_name": "ls",
    "command_substitution": "echo $(ls)",
    "comment": "ls # c",
    "compound_statement": "{ ls; }",
    "concatenation": "echo a$b",
    "declaration_command": "declare x=1",
    "do_group": "while true; do ls; done",
    "elif_clause": "if a; then b; elif c; then d; fi",
    "else_clause": "if a; then b; else c; fi",
    "expansion": "echo ${x}",
    "extglob_pattern": "case x in a|b) echo;; esac",
    "file_descriptor": "ls 2> f",
    "file_redirect": "ls > f",
    "for_statement": "for x in a b; do echo $x; done",
    "function_definition": "f() { ls; }",
    "heredoc_body": "cat <<EOF\nx\nEOF",
    "heredoc_content": "cat <<EOF\na $x\nEOF",
    "heredoc_end": "cat <<EOF\nx\nEOF",
    "heredoc_redirect": "cat <<EOF\nx\nEOF",
    "heredoc_start": "cat <<EOF\nx\nEOF",
    "herestring_redirect": "cat <<< x",
    "if_statement": "if a; then b; fi",
    "list": "a && b",
    "negated_command": "! ls",
    "number": "echo 1",
    "parenthesized_expression": "(((1 + 2) * 3))",
    "pipeline": "a | b",
    "postfix_expression": "((i++))",
    "process_substitution": "cat <(ls)",
    "program": "ls",
    "raw_string": "echo 'x'",
    "redirected_statement": "ls > f",
    "regex": "[[ a =~ ^b ]]",
    "simple_expansion": "echo $x",
    "special_variable_name": "echo $?",
    "string": 'echo "x"',
    "string_content": 'echo "x"',
    "subscript": "echo ${a[1]}",
    "subshell": "(ls)",
    "ternary_expression": "((x ? 1 : 2))",
    "test_command": "[ -f x ]",
    "test_operator": "[ -f x ]",
    "translated_string": 'x=$"y"',
    "unary_expression": "[[ -f x ]]",
    "unset_command": "unset x",
    "variable_assignment": "x=1",
    "variable_assignments": "a=1 b=2",
    "variable_name": "x=1",
    "while_statement": "while true; do ls; done",
    "word": "ls",
}


def _kinds(node) -> set[str]:
    return {node.type}.union(*(_kinds(child) for child in node.children))


def test_every_named_node_type_of_the_grammar_has_a_sample():
    """A grammar with a node type this table lacks (a newer tree-sitter-bash) fails here: its sample is added
    and the walk shown to read it, or to report it unread."""
    language = walk._parser().language
    kinds = {
        language.node_kind_for_id(i)
        for i in range(language.node_kind_count)
        if language.node_kind_is_named(i) and language.node_kind_is_visible(i)
    }
    assert kinds == set(SAMPLES)


@pytest.mark.parametrize(("kind", "command"), sorted(SAMPLES.items()))
def test_each_node_type_is_read(kind, command):
    assert kind in _kinds(walk._parser().parse(command.encode()).root_node)
    assert unread(command) == ""


def test_a_heredoc_body_line_with_text_before_an_expansion_is_read(program):
    """tree-sitter-bash gives a heredoc body's text around an expansion no token of its own: that text is the
    body's, not text the parser skipped (the line was refused as unparseable)."""
    command = "cat > config.yml <<EOF\nname: $NAME\nEOF"
    assert argvs(command) == {("cat",)} and unread(command) == ""
    assert bash_effect(program, "allow_echo", command) == "allow"
    assert bash_effect(program, "deny_rm", "cat <<EOF\nx $(rm -rf y)\nEOF") == "deny"
    assert ("rm", "-rf", "y") in argvs("cat <<EOF\nx $(rm -rf y)\nEOF")
