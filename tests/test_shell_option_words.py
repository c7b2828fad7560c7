"""compiler/shell/ on words that may become options when the shell expands them: `tar cf x.tar *`
in a directory holding a file named `--checkpoint-action=exec=sh x` runs `sh x` (irods/irods#8978,
GTFOBins/GTFOBins.github.io#169), and `tar -xf a "$OPT"` is the same with a variable
(amber-lang/amber#1158). A word may become an option when it starts with an expansion or a pattern,
or holds an unquoted expansion (which splits into more words). Before `--`, where some option of the
program runs code or writes a file, the command is opaque; where options only change files, a hazard.
`./*` and `-- *` are the remedies ShellCheck SC2035 names, and stay plain (find's expression follows
its `--`). Bypass forms are in the bypass corpus."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.shell import command_segments
from dshc.compiler.shell_data import knowledge

from conftest import examples

PROGRAMS = knowledge().programs
# ssh's words after the host are the remote command line (test_shell_remote.py)
RUNNING = sorted(name for name, row in PROGRAMS.items() if row.runs_commands and row.remote_command is None)
# builtins whose arguments name variables are opaque on an expansion (test_shell_subscripts.py)
WRITING = sorted(
    name
    for name, row in PROGRAMS.items()
    if row.writes and not row.runs_commands and name not in knowledge().variable_names
)
HAZARDOUS = sorted(
    name
    for name, row in PROGRAMS.items()
    if row.options_matter and not row.writes and not row.runs_commands and name not in knowledge().variable_names
)
INERT = sorted(name for name, row in PROGRAMS.items() if not row.options_matter)

OPTIONABLE = ["*", "*.txt", "?x", "[-a]*", '"$F"', "$F", "${F}", '"${F}"/x', "x$F", '"$@"', "$1"]
NAMES = ["./*", "src/*.py", '"./$F"', '"x$F"', "x*", "'*'", "\\*", '"*"', "plain", "x$((1+2))"]


def segment(command):
    found = command_segments(command)
    assert found is not None and len(found) == 1, (command, found)
    return found[0]


@pytest.mark.parametrize("name", RUNNING)
@pytest.mark.parametrize("word", OPTIONABLE)
def test_a_word_that_may_be_an_option_of_a_program_that_runs_code_is_opaque(name, word):
    found = segment(f"{name} a {word}")
    assert found.opaque and "may be an option" in found.reason, (name, word, found)


@pytest.mark.parametrize("name", RUNNING)
@pytest.mark.parametrize("word", NAMES)
def test_a_word_that_cannot_start_with_a_dash_is_an_operand(name, word):
    found = segment(f"{name} a {word}")
    assert "may be an option" not in found.reason, (name, word, found)


@pytest.mark.parametrize("name", sorted(set(RUNNING) - {"find"}))
@pytest.mark.parametrize("word", OPTIONABLE)
def test_after_the_end_of_options_it_is_an_operand(name, word):
    found = segment(f"{name} a -- {word}")
    assert "may be an option" not in found.reason, (name, word, found)


@pytest.mark.parametrize("word", OPTIONABLE)
def test_find_reads_its_expression_after_dashes(word):
    # GNU find: a starting point that begins with `-` is the expression (`-delete`, `-exec …`)
    for command in (f"find {word} -name x", f"find -- {word} -name x"):
        found = segment(command)
        assert found.opaque and "may be an option" in found.reason, command
    assert not segment("find ./x -- -name y").opaque


@pytest.mark.parametrize("name", WRITING)
@pytest.mark.parametrize("word", ["*", '"$F"'])
def test_where_options_write_a_file_it_is_opaque_as_a_redirection_to_an_expansion_is(name, word):
    # `curl "$U"` with U=`-o.claude/settings.json`: a write no rule can place
    found = segment(f"{name} a {word}")
    assert found.opaque and "write a file" in found.reason, (name, word, found)


@pytest.mark.parametrize("name", HAZARDOUS)
@pytest.mark.parametrize("word", ["*", '"$F"'])
def test_where_options_only_change_files_it_is_a_hazard(name, word):
    found = segment(f"{name} a {word}")
    assert not found.opaque and "may be an option" in found.hazard, (name, word, found)


@pytest.mark.parametrize("name", INERT)
def test_where_no_option_matters_nothing_changes(name):
    found = segment(f"{name} a *")
    assert not found.opaque and "may be an option" not in found.hazard, (name, found)


@pytest.mark.parametrize(
    "command",
    [
        "python3 *",
        'python3 "$S"',
        "node *",
        "ruby ?",
        "bash *",
        "sh $F",
        "psql db *",
    ],
)
def test_an_interpreter_or_shell_whose_first_argument_may_be_an_option_is_opaque(command):
    found = segment(command)
    assert found.opaque and "may be an option" in found.reason, (command, found)


@pytest.mark.parametrize("command", ["python3 x.py *", "python3 -m pytest *", "bash -c 'echo' *", "python3 ./*"])
def test_arguments_after_the_program_are_its_own(command):
    assert all(not s.opaque for s in command_segments(command)), command


@pytest.mark.parametrize("command", ["timeout 5* rm x", "nice -n 1* rm x", "sudo -u a* rm x"])
def test_a_pattern_where_a_wrapper_reads_a_value_is_opaque(command):
    # `timeout 5* x` with files `5` and `rm` runs `rm x`: the pattern is two words, the command moves
    found = command_segments(command)
    assert found and any(s.opaque for s in found) and ("rm", "x") not in [s.argv for s in found if not s.opaque]


def test_input_a_wrapper_fills_in_may_be_an_option_and_a_path_found_may_not():
    # (in `tar xf {}` the word is `-f`'s value, the archive's name, which getopt never reads as an option)
    found = command_segments("ls | xargs -I{} tar xf a.tar {}")
    assert any(s.opaque and "may be an option" in s.reason for s in found)
    found = command_segments(r"find . -name '*.tar' -exec tar xf {} \;")
    assert not any(s.opaque for s in found)  # each path starts with the starting point `.`


@settings(max_examples=examples(200), deadline=None)
@given(
    name=st.sampled_from(RUNNING),
    prefix=st.sampled_from(["", "./", "x", "src/"]),
    quoted=st.booleans(),
    tail=st.sampled_from(["", "x", "/y", ".txt"]),
)
def test_an_expansion_is_an_option_exactly_when_nothing_literal_comes_first(name, prefix, quoted, tail):
    expansion = '"$F"' if quoted else "$F"
    found = segment(f"{name} a {prefix}{expansion}{tail}")
    # unquoted, it splits: any later word may start with `-`
    may_be_option = not prefix or not quoted
    assert ("may be an option" in found.reason) is may_be_option, (name, prefix, quoted, tail, found)


@pytest.mark.parametrize(
    "command",
    [
        'curl -H "$H" https://x',
        'curl -sH "$H" https://x',
        'curl -d "$D" -o out https://x',
        'git log -S "$x"',
        'git grep -e "$p"',
        'git commit -m "$msg"',
        'git tag -m "$m" v1',
    ],
)
def test_an_option_value_that_is_an_expansion_is_not_read_as_an_option(command):
    # `values`: the word after `-H` is its value, which getopt never reads as an option
    found = command_segments(command)
    assert found and not any(s.opaque for s in found), (command, found)


@pytest.mark.parametrize("command", ['curl -s "$URL"', 'git diff "$f"', 'git log -S x "$y"', 'curl -H x "$U"'])
def test_an_operand_that_is_an_expansion_still_may_be(command):
    found = command_segments(command)
    assert found and any(s.opaque and "may be an option" in s.reason for s in found), (command, found)
