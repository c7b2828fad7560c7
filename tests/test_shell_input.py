"""compiler/shell/ on commands whose words come from input: xargs and parallel (catalogs/shell/
wrappers.json `replaces`, `placeholders`, `appends`) and find's `-exec … {}`. A word holding a
replacement string is unknown; input appended to a command that its arguments can make run code
is opaque. Bypass forms from public reports are in the bypass corpus."""

import pytest

from dshc.compiler.shell import command_segments


def opaque(command):
    found = command_segments(command)
    assert found is not None, command
    return [s.reason for s in found if s.opaque]


@pytest.mark.parametrize(
    "command",
    [
        "xargs -I{} sh -c '{}'",
        "xargs -I % bash -c '%'",
        "xargs -i sh -c '{}'",
        "xargs -ifoo sh -c foo",
        "xargs --replace sh -c '{}'",
        "xargs --replace=@ sh -c 'echo @'",
        "xargs -I{} sh -c 'echo {}'",
        "xargs -I{} {} x",
        "xargs -I{} env {} x",
        "find . -exec sh -c '{}' \\;",
        "find . -exec sh -c 'cat {}' \\;",
        "find . -exec {} \\;",
        "find . -execdir {} +",
        "parallel",
        "parallel {}",
        "parallel ::: 'rm x'",
        "parallel sh -c {}",
        "parallel 'echo {.}'",
        # no replacement string: input becomes the command's arguments
        "xargs find .",
        "xargs env",
        "xargs sudo",
        "xargs sh",
        "xargs python3",
        "xargs tar -xf a",
        "xargs git log",
        'xargs "$P"',
        "parallel env",
        "xargs -0 xargs",
    ],
)
def test_words_from_input_that_may_be_code_are_opaque(command):
    assert opaque(command), command


@pytest.mark.parametrize(
    "command, argv",
    [
        ("xargs -I{} echo {}", ("echo", "{}")),
        ("xargs -I{} cat {}", ("cat", "{}")),
        ("xargs rm", ("rm", "<input>")),
        ("xargs wc -l", ("wc", "-l", "<input>")),
        ("xargs grep -l x", ("grep", "-l", "x", "<input>")),
        ("xargs", ("echo",)),
        ("find . -exec cat {} \\;", ("cat", "{}")),
        ("find . -exec grep -l x {} +", ("grep", "-l", "x", "{}")),
        ("xargs -I{} sh -c 'echo hi'", ("echo", "hi")),  # no replacement in the string: it is read
    ],
)
def test_words_from_input_as_arguments_are_data(command, argv):
    found = command_segments(command)
    assert found is not None and not opaque(command), (command, found)
    assert argv in [s.argv for s in found], (command, found)


@pytest.mark.parametrize(
    "command, kind",
    [
        ("echo .claude/settings.json | xargs cp /tmp/x", "write"),  # copied over whatever file the input names
        ("xargs -a list.txt cp /tmp/x", "write"),
        ("xargs -0 rm -f", "write"),
        ("find . -type f | xargs cat", "read"),
        ("ls | xargs grep -l x", "read"),
    ],
)
def test_input_appended_as_arguments_is_a_file_no_rule_can_name(command, kind):
    from dshc.compiler.file_pattern import ANY
    from dshc.compiler.shell import analyse

    found = analyse(command)
    assert any(f.kind == kind and ANY in f.pattern for f in found.files), found
    assert not any(ANY in f.pattern for f in analyse("echo a | xargs -I{} echo {}").files)
