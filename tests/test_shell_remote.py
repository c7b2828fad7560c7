"""compiler/shell/ on commands run elsewhere or later: ssh's remote command line (catalogs/shell/
commands.json `remote_command`: read as `sh -c` reads it, so a deny of what it runs decides — ssh to
localhost runs it here), at / batch jobs and crontab tables (`interpreters` rows: their commands run
later, outside the command and its sandbox, so they are opaque but for listing), tmux's command
language (`harmless_subcommands` in wrappers.json) and hyperfine's command lines (`each_string`)."""

import pytest

from dshc.compiler.shell import command_segments


def runs(command):
    """argv of every segment that is not opaque, and the reasons of those that are."""
    found = command_segments(command)
    assert found is not None, command
    return [s.argv for s in found if not s.opaque], [s.reason for s in found if s.opaque]


@pytest.mark.parametrize(
    "command",
    [
        "ssh h rm x",
        "ssh -p 22 h rm x",
        "ssh -i k.pem -o StrictHostKeyChecking=no u@h rm x",
        "ssh -tt h 'rm x'",
        "ssh h 'cd /srv && rm x'",
        "ssh -- h rm x",
        "ssh -46 -l u h 'true; rm x'",
        "ssh h sudo rm x",
    ],
)
def test_the_remote_command_line_is_read(command):
    argv, opaque = runs(command)
    assert ("rm", "x") in argv and not opaque, (command, argv, opaque)


@pytest.mark.parametrize("command", ['ssh h "$CMD"', "ssh h $CMD", "ssh h rm *", "ssh -Z h rm x", 'ssh -p "$P" h ls'])
def test_what_the_remote_line_cannot_show_is_opaque(command):
    assert runs(command)[1], command


@pytest.mark.parametrize(
    "command, argv",
    [
        ("ssh h", [("ssh", "h")]),
        ("ssh -V", [("ssh", "-V")]),
        ("ssh h uptime", [("ssh", "h", "uptime"), ("uptime",)]),
    ],
)
def test_no_command_or_a_plain_one(command, argv):
    assert runs(command) == (argv, [])


def test_ssh_options_are_still_read_before_the_host():
    argv, opaque = runs("ssh -o ProxyCommand='rm x' h ls")
    assert ("rm", "x") in argv and ("ls",) in argv and not opaque


@pytest.mark.parametrize(
    "command",
    [
        "at now <<< 'rm x'",
        "at -f job.sh now",
        "batch <<< x",
        "at 10:00 tomorrow",
        "crontab f",
        "crontab -",
        "crontab -e",
        "echo x | crontab -u u -",
    ],
)
def test_jobs_and_tables_are_opaque(command):
    assert runs(command)[1], command


@pytest.mark.parametrize("command", ["at -l", "atq", "crontab -l", "crontab -r", "at -c 3"])
def test_listing_them_is_plain(command):
    assert not runs(command)[1], command


@pytest.mark.parametrize(
    "command",
    [
        "tmux new -d 'rm x'",
        "tmux new-session -s a",
        "tmux send-keys 'rm x' Enter",
        "tmux ls \\; new 'x'",
        "tmux ls ';' new x",
        "tmux -c 'rm x'",
        "tmux",
        "tmux run-shell 'rm x'",
        "tmux -L s source-file f",
        'tmux "$X"',
    ],
)
def test_tmux_that_runs_or_types_is_opaque(command):
    assert runs(command)[1], command


@pytest.mark.parametrize(
    "command",
    [
        "tmux ls",
        "tmux -L sock list-sessions",
        "tmux capture-pane -p -t a",
        "tmux kill-session -t a",
        "tmux has-session -t a",
    ],
)
def test_tmux_that_only_reads_or_stops_is_plain(command):
    assert not runs(command)[1], command


@pytest.mark.parametrize(
    "command",
    ["hyperfine 'rm x'", "hyperfine -w 3 ls 'rm x'", "hyperfine -p 'rm x' ls", "hyperfine --cleanup='rm x' ls"],
)
def test_hyperfine_reads_every_command_line(command):
    argv, opaque = runs(command)
    assert ("rm", "x") in argv and not opaque, (command, argv, opaque)


@pytest.mark.parametrize("command", ['hyperfine "$C"', "hyperfine -P n 1 3 'sleep {n}'", "hyperfine -S 'rm x' ls"])
def test_hyperfine_parameters_and_shells_are_opaque(command):
    assert runs(command)[1], command
