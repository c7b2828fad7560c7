"""compiler/shell/ on variable names bash evaluates: an array subscript in a name is arithmetic, and
arithmetic runs the `$(…)` it meets, in the name or in a variable's value (Vidar Holen, "Bash's white
collar eval"; reproduced with bash 5.2). `read 'a[$(rm x)]'`, `printf -v 'a[$(rm x)]' 1`,
`declare "$x"`, `test -v 'a[…]'` and `a[$i]=1` ran what a deny-list forbids, and `read` and `test`
were read-only to an allow-list. catalogs/shell/commands.json `variable_names` names the builtins and
options that take variable names; a name that is an expansion or a pattern, or holds a subscript other
than a number, is opaque, as `(( … ))` is. Bypass forms are in the bypass corpus."""

import pytest

from dshc.compiler.shell import command_segments
from dshc.compiler.shell_data import knowledge

NAMED = knowledge().variable_names
# `[ … ]` is parsed as a test expression, every `-v` in which is opaque (`expression`): `[` is here for
# `command [ …`
BUILTINS = sorted(set(NAMED) - {"["})
CODE_NAMES = ["'a[$(rm x)]'", "'a[`rm x`]'", "'a[j]'", "'a[1+j]'", '"$v"', "$v", "'a'[$i]", "a*", "'a[1]=$(rm x)]'"]
PLAIN_NAMES = ["a", "a_1", "'a[0]'", "'a[1+2]'"]


def opaque_reasons(command):
    found = command_segments(command)
    assert found is not None, command
    return [s.reason for s in found if s.opaque]


def _command(builtin, options, name):
    if builtin in ("test", "["):
        return f"{builtin} -v {name}" + (" ]" if builtin == "[" else "")
    if "*" in options:
        return f"{builtin} {name}"
    return f"{builtin} {min(options)} {name} x"


@pytest.mark.parametrize("builtin", BUILTINS)
@pytest.mark.parametrize("name", CODE_NAMES)
def test_a_name_that_may_run_code_is_opaque(builtin, name):
    command = _command(builtin, NAMED[builtin], name)
    assert opaque_reasons(command), command


@pytest.mark.parametrize("builtin", BUILTINS)
@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_a_plain_name_is_not(builtin, name):
    command = _command(builtin, NAMED[builtin], name)
    assert not opaque_reasons(command), command


@pytest.mark.parametrize(
    "command",
    [
        "command read 'a[$(rm x)]'",
        "builtin printf -v 'a[$(rm x)]' 1",
        "command declare 'a[j]=1'",
        "command test -v 'a[j]'",
        "command [ -v 'a[j]' ]",
        "read -$v",
        "read -r -a 'a[$(rm x)]'",
        "printf -v'a[$(rm x)]' 1",
    ],
)
def test_through_a_wrapper_or_in_another_spelling(command):
    assert opaque_reasons(command), command


@pytest.mark.parametrize(
    "command",
    [
        "a[$i]=1",
        "a[i]=1",
        "a[i+1]+=(x)",
        "declare a[j]=1",
        "export 'a[$(rm x)]=1'",
        'local -a "$n"',
        "f() { local 'l[j]=1'; }",
        "declare 'PATH=/tmp'",
        "read PATH",
        "printf -v LD_PRELOAD %s x",
    ],
)
def test_an_assignment_bash_evaluates_or_one_that_changes_what_runs_is_opaque(command):
    assert opaque_reasons(command), command


@pytest.mark.parametrize(
    "command",
    [
        "a[0]=1",
        "a[10]=2; a[1+2]=3",
        "declare -a arr=(1 2 3)",
        "export X=1",
        "read -p 'Continue [y/n]? ' ans",
        "read -r line < f",
        "unset x y",
        "test -v PATH",
        "unset PATH",
        'local x="$y"',
        "printf '%s' 'a[$(x)]'",
    ],
)
def test_plain_names_and_values_are_not(command):
    assert not opaque_reasons(command), command


def test_a_name_is_read_once():
    # the substitution in a declaration's quoted name is not walked twice
    found = command_segments('declare "$(echo a)"')
    assert [s.argv for s in found].count(("echo", "a")) == 1


def test_a_declaration_is_one_opaque_segment_however_many_names_run_code():
    assert len(opaque_reasons("declare 'a[j]=1' 'b[k]=2' \"$c\"")) == 1
