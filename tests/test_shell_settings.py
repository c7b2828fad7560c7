"""compiler/shell/ on values a program runs as a command line: environment prefixes (`PAGER=…`,
catalogs/shell/commands.json `env_command_names`), options (`commands`: `tar --to-command`) and
settings (`git -c`, `ssh -o`: `config_commands`, `config_harmless`). The line is read as `sh -c`
reads it; a setting not known to be harmless, code in another language (`opaque`: `make --eval`)
and a program file that is stdin (`program_files`) are opaque. Bypass forms from public reports
are in the bypass corpus."""

import pytest

from dshc.compiler.shell import command_segments


def segments(command):
    found = command_segments(command)
    assert found is not None, command
    return found


def runs(command):
    """argv of every segment that is not opaque, and the reasons of those that are."""
    found = segments(command)
    return [s.argv for s in found if not s.opaque], [s.reason for s in found if s.opaque]


@pytest.mark.parametrize(
    "command",
    [
        "PAGER='rm x' git log",
        "GIT_PAGER='rm x' git log",
        "EDITOR='rm x' git commit",
        "GIT_SSH_COMMAND='rm x' git fetch",
        "env PAGER='rm x' git log",
        "env -i PAGER='rm x' git log",
        "LESSOPEN='|rm x' less f",
        "CC='rm x' make",
        "git -c core.pager='rm x' log",
        "git -ccore.pager='rm x' log",
        "git -c Core.Pager='rm x' log",
        "git -c diff.tool.command='rm x' diff",
        "git -c credential.helper='!rm x' fetch",
        "git -C . -c core.sshCommand='rm x' fetch",
        "git -c pager.log='rm x' log",
        "tar -xf a --to-command='rm x'",
        "tar -xvI 'rm x' -f a",
        "tar --use-compress-program 'rm x' -xf a",
        "rg --pre='rm x' y .",
        "sort --compress-prog='rm x' f",
        "man -P 'rm x' ls",
        "npx -c 'rm x'",
        "npm exec --call 'rm x'",
        "zip z f -TT 'rm x'",
        "rsync -avze 'rm x' a b:",
        "git rebase -x 'rm x' HEAD~1",
        "git fetch --upload-pack='rm x' o",
        "ssh -o ProxyCommand='rm x' h",
        "ssh -o 'proxycommand rm x' h",
        "ssh -oLocalCommand='rm x' h",
    ],
)
def test_a_command_line_in_a_variable_or_setting_is_read_as_one(command):
    argv, opaque = runs(command)
    assert ("rm", "x") in argv and not opaque, (command, argv, opaque)


@pytest.mark.parametrize(
    "command, words",
    [
        ('PAGER="$X" git log', "expansion"),
        ("PAGER=$(echo rm) git log", "expansion"),
        ("git --config-env=core.pager=X log", "from the environment"),
        ("git -c alias.x='!rm x' x", "may change what runs"),
        ("git -c alias.p=push p", "may change what runs"),
        ("git -c core.hooksPath=/tmp/h commit", "may change what runs"),
        ("git -c include.path=/tmp/c log", "may change"),
        ("git -c x.y=z status", "may change what runs"),  # a key no list names
        ('git -c "$K" log', "expansion"),
        ('tar -xf a --to-command="$C"', "expansion"),
        ("make --eval='$(shell x)'", "cannot read"),
        ("make -sE x", "cannot read"),
        ("make --ev=x", "cannot read"),  # abbreviated, as getopt_long reads it
        ("tar -cf a x --checkpoint-action=exec=x", "cannot read"),
        ("make -f /dev/stdin", "stdin"),
        ("make -f-", "stdin"),
        (
            "tar -xf a --to-command=sh",
            "stdin",
        ),  # each file's content is sh's program ("make --file=/dev/fd/0", "stdin"), ("ssh -o 'Match exec x' h", "may change"),
    ],
)
def test_what_the_rules_cannot_read_is_opaque(command, words):
    _, opaque = runs(command)
    assert opaque and any(words in reason for reason in opaque), (command, opaque)


@pytest.mark.parametrize(
    "command, argv",
    [
        ("PAGER=cat git log", [("git", "log"), ("cat",)]),
        ("git -c core.pager=cat log", None),
        ("git -c user.name=x commit -m m", None),
        ("git -c COLOR.UI=never status", None),
        ("git -c init.defaultBranch=main init", None),
        ("git log -c", None),  # after the subcommand -c is log's own flag
        ("FOO='rm x' git log", [("git", "log")]),  # not a variable a program runs
        ("tar -I zstd -xf a", [("tar", "-I", "zstd", "-xf", "a"), ("zstd",)]),
        ("make -f Makefile.dev", None),
        ("ssh -o 'StrictHostKeyChecking no' h", None),
        ("ssh -o ProxyJump=b h", None),
        ("rsync -av a b", None),
    ],
)
def test_harmless_settings_and_plain_values_stay_plain(command, argv):
    found, opaque = runs(command)
    assert not opaque and ("rm", "x") not in found, (command, found, opaque)
    if argv is not None:
        assert sorted(found) == sorted(argv)


def test_a_setting_keeps_the_hazard_an_allow_cannot_cover():
    git = [s for s in segments("git -c core.pager=cat log") if s.argv[:1] == ("git",)]
    assert git and all(s.hazard for s in git if "-c" in s.argv)


def _rows():
    import json
    import os

    from dshc.compiler.package_data import package_path

    with open(os.path.join(package_path("dshc.catalogs"), "shell", "commands.json"), encoding="utf-8") as handle:
        return json.load(handle)["programs"]


@pytest.mark.parametrize(
    "name, option", [(name, option) for name, row in sorted(_rows().items()) for option in row.get("commands", ())]
)
def test_every_command_option_of_every_row_is_read_as_a_command_line(name, option):
    # each spelling getopt reads: the value as the next word, and attached (`--opt=V`, `-oV`); git's own
    # options come before its subcommand, these after it: a subcommand no list names (an alias) takes them all
    program = "git my-alias" if name == "git" else name
    spellings = [f"{program} {option} 'rm x' f"]
    if option.startswith("--") or len(option) == 2:
        spellings.append(f"{program} {option}='rm x' f" if option.startswith("--") else f"{program} {option}'rm x' f")
    for command in spellings:
        argv, opaque = runs(command)
        assert ("rm", "x") in argv and not opaque, (command, argv, opaque)


@pytest.mark.parametrize(
    "name, option", [(name, option) for name, row in sorted(_rows().items()) for option in row.get("opaque", ())]
)
def test_every_opaque_option_of_every_row_is_opaque(name, option):
    _, opaque = runs(f"{name} {option}=x f")
    assert opaque, (name, option)


_KNOWN = __import__("dshc.compiler.shell_data", fromlist=["knowledge"]).knowledge()
CODE_VARIABLES = sorted(_KNOWN.env_code_names) + [prefix + "0" for prefix in _KNOWN.env_code_prefixes]


@pytest.mark.parametrize("variable", CODE_VARIABLES)
@pytest.mark.parametrize(
    "form",
    ["{v}=x true", "env {v}=x true", "env -i {v}=x true", "export {v}=x; true", "{v}=x; true", "declare {v}=x; true"],
)
def test_a_variable_holding_code_or_options_is_opaque_however_it_is_set(variable, form):
    # `TAR_OPTIONS='--to-command=rm x' tar xf a`, `LUA_INIT='os.execute(…)' lua s.lua`, `PS4='$(rm x)' bash -xc :`
    _, opaque = runs(form.format(v=variable))
    assert opaque, (variable, form)


@pytest.mark.parametrize("variable", sorted(_KNOWN.env_command_names))
def test_every_command_line_variable_is_read_as_a_command_line(variable):
    argv, opaque = runs(f"{variable}='rm x' true")
    assert ("rm", "x") in argv and not opaque, (variable, argv, opaque)


def test_a_harmless_variable_stays_plain():
    assert runs("LANG=C sort f") == ([("sort", "f")], [])
    assert runs("GOOS=linux go build") == ([("go", "build")], [])


def test_no_variable_is_both_a_command_line_and_unread_code():
    assert not _KNOWN.env_code_names & _KNOWN.env_command_names


@pytest.mark.parametrize(
    "variable",
    [
        "LUA_INIT_5_4",
        "GIT_CONFIG_KEY_3",
        "GIT_CONFIG_VALUE_3",
        "TAR_OPTIONS",
        "PERL5OPT",
        "NODE_OPTIONS",
        "GOFLAGS",
        "BASH_ENV",
        "PS4",
    ],
)
def test_the_manuals_code_variables_are_named(variable):
    # named here, not read from the data: a row dropped from commands.json fails this
    assert _KNOWN.env_code(variable) and runs(f"{variable}=x true")[1]


GIT = _rows()["git"]


@pytest.mark.parametrize(
    "subcommand, option",
    [(sub, option) for sub, own in sorted(GIT["subcommands"].items()) for option in own.get("commands", ())],
)
def test_each_git_subcommand_reads_its_own_command_options(subcommand, option):
    argv, opaque = runs(f"git {subcommand} {option} 'rm x' f")
    assert ("rm", "x") in argv and not opaque, (subcommand, option, argv, opaque)


@pytest.mark.parametrize("subcommand", GIT["plain_subcommands"])
def test_a_plain_git_subcommand_reads_no_value_as_a_command_line(subcommand):
    # `git cherry-pick -x abc`, `git add -u .`, `git status -u`: flags there, not `--upload-pack`
    for option in ("-x", "-u", "-O"):
        argv, opaque = runs(f"git {subcommand} {option} 'rm x' f")
        assert ("rm", "x") not in argv and not opaque, (subcommand, option, argv, opaque)


@pytest.mark.parametrize(
    "command",
    [
        "git submodule foreach 'rm x'",
        "git submodule foreach --recursive rm x",
        "git submodule --quiet foreach 'rm x'",
        "git -C r submodule foreach rm x",
        "git bisect run rm x",
        "git bisect run sh -c 'rm x'",
    ],
)
def test_what_git_runs_after_foreach_or_run_is_a_command_line(command):
    argv, opaque = runs(command)
    assert ("rm", "x") in argv and not opaque, (command, argv, opaque)


@pytest.mark.parametrize(
    "command",
    [
        'git submodule foreach "$C"',
        "git bisect run $CMD",
        "git submodule foreach rm *",
        "git submodule $C",
        "git bisect $C",
    ],
)  # $C may be `foreach rm x`
def test_an_expansion_there_is_opaque(command):
    assert runs(command)[1], command


def _key(glob):
    return glob.replace("*", "x")


@pytest.mark.parametrize("key", [_key(glob) for glob in GIT["config_commands"]])
@pytest.mark.parametrize(
    "form",
    [
        "git config {k} 'rm x'",
        "git config --global {k} 'rm x'",
        "git config set {k} 'rm x'",
        "git -C r config --add {k} 'rm x'",
        "git config -f cfg {k} 'rm x'",
    ],
)
def test_git_config_reads_a_command_line_it_persists(key, form):
    # git-config(1): the next git command runs it (core.fsmonitor from `git status`, an alias, a filter)
    argv, opaque = runs(form.format(k=key))
    assert ("rm", "x") in argv and not opaque, (key, form, argv, opaque)


@pytest.mark.parametrize(
    "command",
    [
        "git config alias.st '!rm x'",
        "git config core.hooksPath h",
        "git config a.b c",
        "git config include.path f",
        'git config "$K" v',
        "git config --rename-section a b",
        "git config rename-section a alias",
    ],
)
def test_git_config_of_a_key_not_known_harmless_is_opaque(command):
    assert runs(command)[1], command


@pytest.mark.parametrize(
    "command",
    [
        "git config user.name 'A B'",
        "git config --global init.defaultBranch main",
        "git config --get core.pager",
        "git config core.pager",
        "git config -l",
        "git config --list --show-origin",
        "git config --unset alias.st",
        "git config get alias.st",
        "git config --get-regexp 'alias.*'",
        "git config core.pager less",
    ],
)
def test_git_config_that_reads_or_sets_a_harmless_key_is_plain(command):
    assert not runs(command)[1], command


def test_git_config_renaming_a_section_is_opaque_whatever_its_names():
    # `git config user.x.st '!rm x'` is a harmless key, until `--rename-section user.x alias` makes it an alias
    assert runs("git config --rename-section user.x alias")[1]
    assert runs("git config rename-section user.x alias")[1]


def test_git_config_of_a_key_that_is_an_expansion_says_so():
    assert any("expansion" in reason for reason in runs('git config "$K" v')[1])
