"""compiler/shell/ on interpreters (catalogs/shell/commands.json `interpreters`): code written in the
command or read from stdin is opaque, a program file is not. Bypass forms from public reports are in
the bypass corpus; here each rule of the analysis is held on its own, and over every data row."""

import json
import os

import pytest
from hypothesis import given, settings, strategies as st

from dshc.compiler import shell_data
from dshc.compiler.package_data import package_path
from dshc.compiler.shell import command_segments

ROWS = {
    name: row
    for name, row in json.loads(
        open(os.path.join(package_path("dshc.catalogs"), "shell", "commands.json"), encoding="utf-8").read()
    )["interpreters"].items()
}


def verdict(command):
    """("opaque", reason) | ("hazard", reason) | ("plain", "") for the command's first segment."""
    segs = command_segments(command)
    assert segs, command
    seg = segs[0]
    return ("opaque", seg.reason) if seg.opaque else ("hazard", seg.hazard) if seg.hazard else ("plain", "")


@pytest.mark.parametrize(
    "command, words",
    [
        ("python3 -c 'print(1)'", "Python code written in the command (`-c`)"),
        ("python3 -Bc 'x'", "(`-c`)"),  # a cluster: -B then -c
        ("python3 -c'x'", "(`-c`)"),  # attached
        ("python3 -I -W ignore -c x", "(`-c`)"),  # after flags and a valued option
        ("python3.11 -c x", "Python"),
        ("pypy3 -c x", "Python"),
        ("/usr/bin/python3 -c x", "Python"),
        ("python3.13t -c x", "Python"),
        ("python3.6m -c x", "Python"),
        ("mawk -W interactive 'BEGIN{system(1)}'", "awk"),
        (".venv/bin/python -c x", "Python"),
        ("node --eval='x'", "(`--eval`)"),
        ("node --eval x", "(`--eval`)"),
        ("node -p x", "(`-p`)"),
        ("node --require ./r.js -e x", "(`-e`)"),  # a valued option does not end the options
        ("nodejs -e x", "JavaScript"),
        ("perl -ne 'print' f", "(`-e`)"),
        ("perl -E x", "(`-E`)"),
        ("ruby -rjson -e x", "(`-e`)"),
        ("php -r x", "(`-r`)"),
        ("php -B x -R y", "PHP"),
        ("lua -e x", "Lua"),
        ("luajit -e x", "Lua"),
        ("Rscript -e x", "(`-e`)"),
        ("bun -e x", "JavaScript"),
        ("deno eval x", "`deno eval`"),
        ("bun exec 'rm x'", "`bun exec`"),
        ("awk 'BEGIN{system(\"x\")}'", "awk code"),
        ("gawk -e 'BEGIN{print | \"sh\"}'", "(`-e`)"),
        ('awk \'{f="system"; @f("x")}\'', "awk code"),
        ("mawk -F: '{print $1 | \"sh\"}' f", "(`program`)"),
    ],
)
def test_code_written_in_the_command_is_opaque(command, words):
    kind, reason = verdict(command)
    assert kind == "opaque" and words in reason, (command, reason)


@pytest.mark.parametrize(
    "command",
    [
        "python3",
        "python3 -",
        "python3 - x",
        "python3 -i x.py",
        "python3 -u",
        "perl",
        "ruby -w",
        "node",
        "node -i",
        "php",
        "php -a",
        "lua -",
        "deno",
        "tclsh",
        "wish",
        # a program file that is stdin, however spelled; shells too
        "python3 /dev/stdin",
        "python3 /dev//stdin x",
        "node ../../dev/stdin",
        "perl /dev/fd/0",
        "ruby /proc/self/fd/0",
        "php -f /dev/stdin",
        "awk -f /dev/fd/3 f",
        "gawk --file=/dev/stdin f",
        "bash /dev/stdin",
        "sh /proc/1/fd/0",
        "deno run -A -",
        "bun run -",
    ],
)
def test_code_read_from_stdin_is_opaque(command):
    kind, reason = verdict(command)
    assert kind == "opaque" and "stdin" in reason, (command, reason)


@pytest.mark.parametrize(
    "command, words",
    [
        ('python3 "$X" x', "expansion"),  # `$X` may be `-c`
        ("python3 $(echo -c) x", "expansion"),  # a substitution is one
        ("python3 --frobnicate x.py", "unrecognized"),  # it may take a value hiding a later -c
        ("node --frobnicate app.js", "unrecognized"),
        ("perl -0e 'x'", "may hold a code option"),
        ("perl -pie 's/a/b/' f", "may hold a code option"),
        ("perl -CSDe 'x'", "may hold a code option"),
        ("python3 -W", "missing"),
    ],
)
def test_what_may_hide_code_is_opaque(command, words):
    kind, reason = verdict(command)
    assert kind == "opaque" and words in reason, (command, reason)


@pytest.mark.parametrize(
    "command",
    [
        "python3 x.py",
        "python3 x.py -c config.yml",
        "python3 -m pytest -q -k foo",
        "python3 -u -W ignore x.py",
        "python3 -m json.tool f.json",
        "python3 --version",
        "python3 -V",
        "node app.js -e production",
        "node --max-old-space-size=4096 app.js",
        "node --version",
        "nodejs app.js",
        "perl x.pl",
        "perl -v",
        "perl -MO=Deparse x.pl",
        "ruby x.rb --e",
        "php x.php",
        "php -f x.php",
        "php -v",
        "lua x.lua",
        "deno run x.ts",
        "bun run dev",
        "bun install",
        "bun",
        "Rscript x.R",
        "Rscript",
        "tclsh x.tcl",
        "awk '{print $1}' f",
        "awk -F: '{print $1}' /etc/passwd",
        "awk -f prog.awk f",
        "gawk -v n=1 'NR==n' f",
        "awk 'NR == 1 && $2 ~ /x/' f",
        "python3x -c x",
        "python3-config -c x",  # not an interpreter's name (no version after it)
        "python3 stdin.py",
        "python3 dev/stdin.py",
        "python3 x.py /dev/stdin",
        # (`deno run x.ts -` is refused: deno's run options are not read, so any `-` after `run` counts)
    ],
)
def test_a_program_file_module_or_plain_awk_is_not_opaque(command):
    assert verdict(command) == ("plain", ""), command


@pytest.mark.parametrize(
    "command, words",
    [
        ("awk '{print > \"out\"}' f", "may write a file"),
        ("perl -i -pe 's/a/b/' f", None),
        ("perl -i.bak x.pl f", "`perl -i` writes files"),
        ("ruby -i x.rb f", "`ruby -i`"),
        ("gawk -l ext 'BEGIN{}'", "`gawk -l` writes files or loads code"),
        ("luajit -b x.lua out", "`luajit -b`"),
        ("php -z ext.so x.php", "`php -z`"),
    ],
)
def test_options_that_write_files_or_load_code_are_hazards(command, words):
    kind, reason = verdict(command)
    if words is None:  # code beside the hazard: opaque wins
        assert kind == "opaque", (command, reason)
    else:
        assert kind == "hazard" and words in reason, (command, reason)


def test_a_wrapped_interpreter_is_read_as_itself():
    for command in (
        "env python3 -c x",
        "timeout 5 node -e x",
        "xargs perl -e x",
        "sudo -u a ruby -e x",
        "busybox awk 'BEGIN{system(\"x\")}'",
        "find . -exec python3 -c x \\;",
        "bash -c 'python3 -c x'",
    ):
        assert any(s.opaque for s in command_segments(command)), command
    assert not any(s.opaque for s in command_segments("env python3 x.py"))


@pytest.mark.parametrize(
    "command, kind",
    [
        ("sed -n '1e id' f", "opaque"),
        ("sed 's/.*/id/e' f", "opaque"),
        ("sed 'e id' f", "opaque"),
        ("sed '1d;e id' f", "opaque"),
        ("sed --expression='1e id' f", "opaque"),
        ("sed 's/a/b/w out' f", "hazard"),
        ("sed '1r /tmp/x' f", "hazard"),
        ("sed '1r /etc/x' f", "opaque"),  # any `e` counts
        ("sed 's/a/b/;s/c/d/' f", "plain"),
        ("sed -n '1,5p;8p' f", "plain"),
        ("sed -n '$p' f", "plain"),
        ("sed 's/e/E/g' f", "plain"),
    ],
)
def test_sed_scripts_that_may_run_a_command_are_opaque(command, kind):
    assert verdict(command)[0] == kind, (command, verdict(command))


def test_interpreter_rows_are_made_on_first_use_by_name_alias_and_version():
    data = shell_data.knowledge()
    for name, row in ROWS.items():
        made = shell_data._interpreter(row)
        for each in (name, *row.get("aliases", ())):
            assert data.interpreter(each) == made
            if each.isalpha():  # `sqlite3`, `vim.basic` carry more than a name
                assert data.interpreter(each + "3.11") == made
    assert data.interpreter("pythonx") is None and data.interpreter("3") is None and data.interpreter("x1") is None
    assert data.interpreter("python3.11.4") == data.interpreter("python")


# every row, every code option, in each spelling getopt reads: the data is held, not a list of examples
_SPELLINGS = st.sampled_from(["{opt} CODE", "{opt}CODE", "{opt}=CODE", "-{flag}{short} CODE"])


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(ROWS)), st.data())
def test_every_code_option_of_every_row_is_opaque_in_every_spelling(name, data):
    row = ROWS[name]
    if not row.get("code"):
        return
    option = data.draw(st.sampled_from(row["code"]))
    spelling = data.draw(_SPELLINGS)
    short = len(option) == 2
    if short == spelling.endswith("=CODE") or (not short and spelling.startswith("-{flag}")):
        spelling = "{opt} CODE"  # `=` is a long option's, clusters a short one's
    flag = data.draw(st.sampled_from(row.get("flags") or "")) if row.get("flags") else ""
    if spelling.startswith("-{flag}") and not flag:
        spelling = "{opt} CODE"
    code = "'system(1) | x\n.shell x \\! y'"  # found by every row's `unsafe_code` (awk, psql, mysql, sqlite3)
    command = f"{name} " + spelling.format(opt=option, flag=flag, short=option[1:]).replace("CODE", code)
    kind, reason = verdict(command)
    assert kind == "opaque", (command, reason)


# ---------------------------------------------------------------- database clients


@pytest.mark.parametrize(
    "command, kind",
    [
        ("psql -c 'select 1'", "plain"),
        ("psql app -c 'select 1'", "plain"),  # options may follow the database
        ("psql -c '\\! rm x'", "opaque"),
        ("psql app -c '\\o | rm x'", "opaque"),
        ("psql -c '\\set x `id`'", "opaque"),
        ("psql -c \"COPY t TO PROGRAM 'rm x'\"", "opaque"),
        ("psql app", "opaque"),
        ("psql -f - app", "opaque"),
        ("psql -f m.sql app", "plain"),
        ("psql -l", "plain"),
        ("psql \"$DB\" -c 'select 1'", "opaque"),
        ("psql -o /tmp/out -c 'select 1'", "hazard"),
        ("mysql -u root -pS3cret app -e 'show tables'", "plain"),  # `-p`'s attached value is the password, whole
        ("mysql -e 'system rm x'", "opaque"),
        ("mysql -e 'PAGER rm'", "opaque"),
        ("mariadb app", "opaque"),
        ("sqlite3 db 'select a || b from t'", "plain"),
        ("sqlite3 db .tables '.schema t'", "plain"),
        ("sqlite3 -header -csv db 'select 1'", "plain"),
        ("sqlite3 db '.shell rm x'", "opaque"),
        ("sqlite3 db '.sh rm x'", "opaque"),  # an abbreviated dot-command is not in the harmless list
        ("sqlite3 db 'select 1;' '.system rm x'", "opaque"),
        ("sqlite3 -cmd '.shell rm x' db", "opaque"),
        ("sqlite3 --cmd '.once |rm x' db 'select 1'", "opaque"),
        ("sqlite3 db \"select load_extension('x')\"", "opaque"),
        ("sqlite3 db", "opaque"),
        ('sqlite3 db "$SQL"', "opaque"),
    ],
)
def test_database_clients_read_their_own_shell_escapes(command, kind):
    assert verdict(command)[0] == kind, (command, verdict(command))


@pytest.mark.parametrize(
    "command, kind",
    [
        ("vim -c ':!rm x' f", "opaque"),
        ("vi f", "opaque"),
        ("nvim --headless +q", "opaque"),
        ("ex f", "opaque"),
        ("ed f", "opaque"),
        ("gdb -batch -ex bt ./a.out", "opaque"),
        ("emacs --batch --eval '(x)'", "opaque"),
        ("vim --version", "plain"),
        ("gdb --version", "plain"),
        ("emacs --help", "plain"),
    ],
)
def test_editors_and_debuggers_are_opaque_but_for_a_version_query(command, kind):
    assert verdict(command)[0] == kind, (command, verdict(command))


@pytest.mark.parametrize(
    "command, words",
    [
        ("R --no-save -e 'system(\"x\")'", "R code"),
        ("R -d 'rm x'", "R code"),
        ("R CMD rm x", "`R CMD`"),
        ("R --no-save", "reads R"),
        ("R --interactive -f s.R", "reads R"),
        ("julia -e x", "Julia code"),
        ("julia --print=x", "Julia code"),
        ("julia -L setup.jl", "reads its Julia"),
        ("julia -i s.jl", "reads Julia"),
        ("julia -", "reads its Julia"),
        ("osascript -e x", "AppleScript code"),
        ("osascript", "reads its AppleScript"),
        ("osascript -", "reads its"),
        ("expect -c 'spawn x'", "expect) code"),
        ("expect -i", "reads Tcl"),
        ("expect", "reads its Tcl"),
        ("mongosh --eval x", "mongosh) code"),
        ("mongosh db", "reads JavaScript (mongosh) commands"),
        ("mongosh --shell -f seed.js", "`mongosh --shell` reads"),
        ("pwsh -c 'rm x'", "unrecognized"),
        ("powershell -Command x", "unrecognized"),
        ("pwsh -", "reads PowerShell"),
        ("pwsh s.ps1", "reads PowerShell"),
        ("bun x rm x", "`bun x`"),
        ("mongosh db x.js", "reads JavaScript (mongosh) commands"),
    ],
)
def test_r_julia_osascript_expect_and_mongosh_run_code_given_in_the_command(command, words):
    # GTFOBins R, julia, expect; Apple TN2065 (`do shell script`); mongosh loads Node's child_process
    kind, reason = verdict(command)
    assert kind == "opaque" and words in reason, (command, reason)


@pytest.mark.parametrize(
    "command",
    [
        "R --version",
        "R --no-save -f analysis.R",
        "julia --project=. -t 4 s.jl",
        "osascript notify.scpt",
        "expect -f deploy.exp",
        "mongosh --version",
        "mongosh --quiet -f seed.js",
        "pwsh --version",
    ],
)
def test_their_program_files_and_version_queries_are_plain(command):
    assert verdict(command)[0] == "plain", (command, verdict(command))
