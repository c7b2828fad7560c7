"""compiler/shell/ on wrappers (catalogs/shell/wrappers.json): every row runs what follows it, so a
deny of that command decides; runners that wrap only through a subcommand (`uv run`, `bundle exec`,
`npm exec`) are ordinary programs otherwise. Bypass forms from public reports are in the corpus."""

import json
import os

import pytest

from dshc.compiler.package_data import package_path
from dshc.compiler.shell import analyse, command_segments

from conftest import examples

with open(os.path.join(package_path("dshc.catalogs"), "shell", "wrappers.json"), encoding="utf-8") as _handle:
    ROWS = {name: row for name, row in json.load(_handle).items() if not name.startswith("$")}


def _sample(name, row) -> str:
    """The shortest command line that runs `rm x` through the row, as its syntax asks."""
    words = [name]
    if row.get("subcommands"):
        words.append(sorted(row["subcommands"])[0])
    words += ["p"] * row.get("positional", 0)
    if row.get("user_shell"):  # `su USER ARGS…`: the arguments are the user's shell's
        return " ".join(words + ["u", "-c", "'rm x'"])
    return " ".join(words + (["'rm x'"] if row.get("each_string") else ["rm", "x"]))  # hyperfine: a line a word


@pytest.mark.parametrize("name", sorted(ROWS))
def test_every_wrapper_runs_what_follows_it(name):
    found = command_segments(_sample(name, ROWS[name]))
    assert found is not None
    # either the wrapped `rm x` is a segment a deny meets (xargs appends its input), or the whole is opaque
    # (every deny applies)
    assert {("rm", "x"), ("rm", "x", "<input>")} & {s.argv for s in found} or any(s.opaque for s in found), (
        name,
        found,
    )


@pytest.mark.parametrize(
    "command",
    [
        "uv run rm x",
        "uv --directory . run --with requests rm x",
        "uv run --frozen -- rm x",
        "poetry -C . run rm x",
        "pipenv run rm x",
        "bundle exec rm x",
        "pnpm exec --filter a rm x",
        "npm exec rm x",
        "npm x -- rm x",
        "npm exec -w pkg rm x",
        "npx --yes rm x",
        "npx -p pkg rm x",
        "bunx rm x",
        "conda run -n base rm x",
        "direnv exec . rm x",
        "dotenvx run -f .env -- rm x",
        "op run -- rm x",
        "doppler run -c dev -- rm x",
        "aws-vault exec prod -- rm x",
        "run0 -u root rm x",
        "fakeroot -- rm x",
        "unbuffer -p rm x",
        "faketime 1d rm x",
        "sg users -c 'rm x'",
        "sg users rm x",
        "xvfb-run -a -s '-screen 0' rm x",
        "toybox rm x",
    ],
)
def test_a_runner_shows_the_command_it_runs(command):
    found = command_segments(command)
    assert found is not None and ("rm", "x") in [s.argv for s in found] and not any(s.opaque for s in found), found


@pytest.mark.parametrize(
    "command",
    [
        "uv pip install requests",
        "uv sync",
        "uv run",
        "poetry install",
        "npm test",
        "npm run build",
        "bundle install",
        "pnpm install",
        "conda install x",
        "direnv allow",
        "nix build",
        "op read op://x",
        "npx",
        "uv",
        "uv pip install run",  # the subcommand word later, as an operand
        "uv --no-such-option pip list",  # options are read only when the subcommand is there to wrap
    ],
)
def test_another_subcommand_is_an_ordinary_program(command):
    found = command_segments(command)
    assert found is not None and not any(s.opaque for s in found) and len(found) == 1, found


@pytest.mark.parametrize(
    "command",
    [
        "uv run --frobnicate rm x",  # an option not listed may take a value: not read past
        "pnpm exec -c 'rm x'",
        'npm exec --call "$C"',
        "nix develop -c rm x",
        "nix shell n#x -c rm x",
        "nix-shell -p a b --run 'rm x'",
        "run0",
        "fakeroot",
        "torsocks --shell",
    ],
)
def test_what_the_analysis_cannot_follow_is_opaque(command):
    found = command_segments(command)
    assert found is not None and any(s.opaque for s in found), found


def test_options_before_the_subcommand_count():
    # `poetry -C DIR run …` changes directory like `env -C DIR …`: a relative file after it is the file
    # of that name in any directory (a file pattern)
    for command in ("poetry -C d run cat > f", "env -C d cat > f"):
        found = analyse(command)
        assert [f.path for f in found.files if f.pattern] == ["**f"], (command, found)


# ---------------------------------------------------------------- decisions: a runner is deny-only

from hypothesis import given, settings, strategies as st  # noqa: E402

from dshc.compiler.program import Program  # noqa: E402
from dshc.compiler.request import Request  # noqa: E402


def decide(policy: str, command: str, unindexed: bool = False):
    program = Program.load(texts={"p.dsh": policy})
    request = Request(preset="standard", host="web", policy="p")
    how = program.decide_unindexed if unindexed else program.decide
    return how(request, "bash", {"command": command, "description": "d"}, workspace="/ws")


ALLOW_LIST = """policy p "allow-list" {
  default deny
  allow bash when args.command matches "uv run *"
  allow bash when args.command matches "npx *"
  allow bash when args.command matches "sudo *"
  deny bash when args.command matches "rm *"
  ask bash when args.command matches "git push *"
}
"""


@pytest.mark.parametrize(
    "command, effect",
    [
        ("uv run pytest -q", "allow"),  # an allow of the runner's line covers what it runs
        ("npx prisma migrate", "allow"),
        ("npx --yes tsc --noEmit", "allow"),
        ("uv run rm -rf x", "deny"),
        ("npx rm x", "deny"),  # a deny of what it runs decides
        ("uv run git push origin", "ask"),
        ("uv run sudo rm x", "deny"),
        ("sudo ls", "deny"),  # a wrapper that is not a runner still needs an allow of both
        ("uv run ls > /etc/x", "deny"),  # a file it writes is decided as a write, runner or not
        ("uv run ls && foo", "deny"),
        ("foo; uv run ls", "deny"),  # only what the runner runs is deny-only
    ],
)
def test_a_runner_is_transparent_to_denies_and_covered_by_its_own_allow(command, effect):
    assert decide(ALLOW_LIST, command).effect == effect, command
    assert decide(ALLOW_LIST, command, unindexed=True).effect == effect, command


RUNNERS = [
    "uv run {}",
    "npx {}",
    "poetry run {}",
    "bundle exec {}",
    "npm exec -- {}",
    "conda run -n b {}",
    "uv run sudo {}",
    "sudo uv run {}",
    "uv run bash -c '{}'",
]
BASE = ["ls", "rm -rf /tmp/x", "git push origin", "cat .env", "make test", "echo $(id)", "find . -delete"]
PATTERNS = ["ls *", "rm *", "git push*", "make *", "sudo *", "*", "uv run *", "npx *", "uv *", "bash *"]
RULE = st.builds(
    lambda effect, pattern: f'  {effect} bash when args.command matches "{pattern}"',
    st.sampled_from(["allow", "ask", "deny"]),
    st.sampled_from(PATTERNS),
)
POLICIES = st.builds(
    lambda rules, default: 'policy p "g" {\n' + default + "\n".join(rules) + "\n}\n",
    st.lists(RULE, max_size=4),
    st.sampled_from(["", "  default allow\n", "  default deny\n"]),
)
RANK = {"allow": 0, "conditional": 1, "ask": 2, "deny": 3}


@settings(max_examples=examples(80), deadline=None)
@given(POLICIES, st.sampled_from(BASE), st.sampled_from(RUNNERS))
def test_a_runner_keeps_every_deny_and_ask_a_rule_gives_what_it_runs(policy, command, runner):
    alone, run = decide(policy, command), decide(policy, runner.format(command))
    if alone.matched and alone.effect in ("ask", "deny"):
        assert RANK[run.effect] >= RANK[alone.effect], (command, runner, alone.effect, run.effect)
    # the index and the reference evaluator agree
    plain = decide(policy, runner.format(command), unindexed=True)
    assert (run.effect, set(run.deciding)) == (plain.effect, set(plain.deciding)), (command, runner)


@pytest.mark.parametrize(
    "command",
    [
        "valgrind --leak-check=full rm x",
        "valgrind -q rm x",
        "perf stat -e cycles rm x",
        "perf record -g -- rm x",
        "entr rm x",
        "gdbserver :1 rm x",
        "proot -w /tmp rm x",
        "cgexec -g cpu:x rm x",
        "setpriv --reuid=1000 rm x",
        "chpst -u nobody rm x",
        "daemonize -c /tmp rm x",
        "flatpak-spawn --host rm x",
        "distrobox-host-exec rm x",
        "docker exec -it app rm x",
        "kubectl exec -it pod -- rm x",
        "kubectl exec pod -c web -- rm x",
        "podman exec app rm x",
        "kubectl exec pod -c web rm x",
        "flock f -c 'rm x'",
        "flock -w 1 f -c 'rm x'",
    ],
)
def test_debuggers_profilers_and_container_runners_show_the_command(command):
    found = command_segments(command)
    assert found is not None and ("rm", "x") in [s.argv for s in found] and not any(s.opaque for s in found), found


@pytest.mark.parametrize(
    "command",
    [
        "coreutils --coreutils-prog=rm x",
        "screen -dm rm x",
        "screen -ls",
        "bwrap --ro-bind / / rm x",
        "entr -s 'rm x'",
        "entr /_ x",
        "proot -q 'rm x' ls",
        "gdbserver --wrapper env -- :1 ls",
        "flatpak-spawn --env=LD_PRELOAD=x ls",
        "perf stat -c rm x",
        "valgrind --unknown-option rm x",
    ],
)
def test_what_their_options_hide_is_opaque(command):
    found = command_segments(command)
    assert found and any(s.opaque for s in found), (command, found)


@pytest.mark.parametrize("command", ["docker ps", "kubectl get pods", "perf list", "podman images"])
def test_their_other_subcommands_are_ordinary_programs(command):
    (found,) = command_segments(command)
    assert not found.opaque and found.wraps is None


@pytest.mark.parametrize(
    "command",
    [
        "su root -c 'rm x'",
        "su - root -c 'rm x'",
        "su -l root --command='rm x'",
        "su - -c 'rm x'",
        "su -c 'rm x' root",
        "su -- root -c 'rm x'",
        "su root -- -c 'rm x'",
        "runuser root -c 'rm x'",
        "runuser -u root -- rm x",
        "runuser -u root rm x",
        "runuser -u root -- sh -c 'rm x'",
        "su root -- -h -c 'rm x'",  # after `--`, `-h` is the shell's (bash -h), not su's --help
    ],
)
def test_su_reads_options_anywhere_and_hands_its_shell_the_rest(command):
    # util-linux su(1): options may follow the user, and the arguments after it are the shell's
    found = command_segments(command)
    assert found and ("rm", "x") in [s.argv for s in found] and not any(s.opaque for s in found), (command, found)


@pytest.mark.parametrize(
    "command", ["su root", "su", "su - root", 'su "$U" -c ls', 'su root -c "$C"', "runuser -u root"]
)
def test_su_with_nothing_to_run_or_an_expansion_is_opaque(command):
    found = command_segments(command)
    assert found and any(s.opaque for s in found), (command, found)


@pytest.mark.parametrize("command", ["su --version", "su -V", "runuser --help"])
def test_su_version_and_help_run_nothing(command):
    found = command_segments(command)
    assert found and not any(s.opaque for s in found) and len(found) == 1, (command, found)


@pytest.mark.parametrize(
    "command",
    [
        "cmake -E env FOO=1 rm x",
        "cmake -E chdir /tmp rm x",
        "cmake -E time rm x",
        "cmake -E rm x",
        "yarn exec rm x",
        "yarn --cwd web exec rm x",
        "yarn dlx rm x",
        "pnpm dlx rm x",
        "meson devenv -C build rm x",
    ],
)
def test_cmake_e_and_more_runners_show_the_command(command):
    # cmake(1) -E env / chdir / time run a command, and `cmake -E rm` is cmake's own rm (as `busybox rm` is)
    found = command_segments(command)
    assert found is not None and ("rm", "x") in [s.argv for s in found] and not any(s.opaque for s in found), found


@pytest.mark.parametrize("command", ["cmake -S . -B build", "cmake --build build", "yarn install", "meson setup b"])
def test_their_other_uses_are_ordinary_programs_too(command):
    (found,) = command_segments(command)
    assert not found.opaque and found.wraps is None, found
