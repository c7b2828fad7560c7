"""The enforcement map (`dshc verify --enforcement`): which layer holds each deny for the processes an agent
starts — the OS, dshc's file tools and the lines that name a file, or a command's text — with a witness call
for each gap, on every sandbox mechanism; and `dshc check`'s DSH317 on a text deny the sandbox could hold.

Reports: anthropics/claude-code#45200, #32226 (file-tool rules and the Bash sandbox disagree)."""

from __future__ import annotations

import json

import pytest

from dshc.compiler.enforcement import FILE_TOOLS, OS, RULES, WORKSPACE, enforcement_map
from dshc.compiler.program import Program

POLICY = """
policy team {
  default allow
  sandbox workspace-write
  writable "~/.cache/pip"
  guard no-secrets: deny read when args.file_path matches "*.env"
  deny read when args.file_path matches "~/.ssh/**"
  deny write when args.file_path matches "protected/*"
  deny write when args.file_path matches "*.lock"
  deny write when args.file_path matches "~/.kube/config*"
  ask read when args.file_path matches "secrets/**" and plan_mode
  deny bash when args.command matches "curl *"
  deny bash when args.command matches "rm -rf *"
}

policy online extends team {
  network allow
}

policy bare {
  default allow
  deny read when args.file_path matches "~/.ssh/**"
  deny bash when args.command matches "curl *"
}
"""


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICY})


def _layers(program, policy, mechanism="landlock+mounts") -> dict:
    return {row.rule: (row.layer, row.witness) for row in enforcement_map(program.resolved.policies[policy], mechanism)}


def test_each_deny_is_placed_in_the_layer_that_holds_it(program):
    rows = _layers(program, "team")
    assert rows["team/guard:no-secrets"][0] == WORKSPACE and "/elsewhere/x.env" in rows["team/guard:no-secrets"][1]
    assert rows["team/deny@7"] == (OS, "")  # ~/.ssh: a mount wherever it is
    assert rows["team/deny@8"] == (OS, "")  # protected/: a read-only mount
    assert rows["team/deny@9"][0] == FILE_TOOLS and "x.lock" in rows["team/deny@9"][1]  # a glob with no folder
    assert rows["team/deny@10"] == (OS, "")  # under ~/.kube, which no write root reaches: Landlock
    assert rows["team/ask@11"][0] == FILE_TOOLS  # `and plan_mode`: no mount can hold a condition
    assert rows["team/deny@12"] == (OS, "")  # curl with the network off: the namespace holds what it is for
    assert rows["team/deny@13"][0] == RULES and "`python3 x.py`" in rows["team/deny@13"][1]
    assert rows["team/writable"][0] == OS and rows["team/network"][0] == OS


def test_with_the_network_on_a_network_programs_text_is_the_rules_alone(program):
    rows = _layers(program, "online")
    assert rows["online/deny@12"][0] == RULES and "curl *" in rows["online/deny@12"][1]
    assert "online/network" not in rows


def test_without_a_sandbox_nothing_is_the_oss(program):
    rows = _layers(program, "bare")
    assert rows["bare/deny@22"][0] == FILE_TOOLS and rows["bare/deny@23"][0] == RULES


@pytest.mark.parametrize(
    "mechanism, mounts",
    [("landlock+mounts", True), ("bwrap", True), ("seatbelt", True), ("landlock", False), ("none", False)],
)
def test_every_mechanism_row(program, mechanism, mounts):
    rows = {row.rule: row for row in enforcement_map(program.resolved.policies["team"], mechanism)}
    hidden = rows["team/deny@7"]
    # what needs a mount or a network namespace the host cannot make is still the OS's: the command is refused
    assert hidden.layer == OS and ("refused" in hidden.how) is not mounts, hidden.how
    assert ("refused" in rows["team/network"].how) is not mounts


def test_verify_enforcement_prints_the_map_and_fails_on_a_required_gap(cli, tmp_path):
    path = tmp_path / "p.dsh"
    path.write_text(POLICY)
    done = cli(
        "verify",
        "--enforcement",
        "--load",
        str(path),
        "--no-shipped",
        "--policy",
        "team",
        "--mechanism",
        "landlock+mounts",
    )
    assert (
        done.code == 0
        and "team/deny@13: command text `rm -rf *`" in done.out
        and "not stopped: `python3 x.py`" in done.out
    ), done.out
    required = cli(
        "verify",
        "--enforcement",
        "--load",
        str(path),
        "--no-shipped",
        "--policy",
        "team",
        "--mechanism",
        "landlock+mounts",
        "--require",
        "team/deny@13",
        "--require",
        "team/deny@8",
        "--json",
    )
    data = json.loads(required.out)
    assert required.code == 1 and [gap["rule"] for gap in data["gaps"]] == ["team/deny@13"]
    held = cli(
        "verify",
        "--enforcement",
        "--load",
        str(path),
        "--no-shipped",
        "--policy",
        "team",
        "--mechanism",
        "landlock+mounts",
        "--require",
        "team/deny@8",
    )
    assert held.code == 0
    unknown = cli("verify", "--enforcement", "--load", str(path), "--no-shipped", "--require", "team/deny@99")
    assert unknown.code == 2 and "names no row" in unknown.err and "Traceback" not in unknown.err


def test_verify_enforcement_on_the_shipped_policies(cli):
    done = cli("verify", "--enforcement", "--policy", "guarded", "--mechanism", "landlock+mounts", "--json")
    rows = {row["rule"]: row for row in json.loads(done.out)["policies"]["guarded"]}
    assert done.code == 0 and rows["guarded/guard:ssh-keys"]["layer"] == OS
    assert rows["guarded/guard:dotenv"]["layer"] == WORKSPACE


def test_check_points_at_a_text_deny_the_sandbox_could_hold(cli, tmp_path):
    path = tmp_path / "p.dsh"
    path.write_text(
        "policy web {\n  default allow\n  sandbox workspace-write\n  network allow\n"
        '  deny bash when args.command matches "curl *"\n'
        '  deny bash when args.command matches "*.env*"\n'
        '  deny bash when args.command matches "rm -rf *"\n}\n'
    )
    done = cli("check", str(path), "--json")
    found = [(d["code"], d["line"]) for d in json.loads(done.out)["diagnostics"]]
    assert found == [("DSH317", 5), ("DSH317", 6)], done.out


def test_explain_of_a_process_tool_says_what_holds_the_policy(cli, tmp_path):
    path = tmp_path / "p.dsh"
    path.write_text(POLICY)
    done = cli("explain", "bash", "standard", "--load", str(path), "--policy", "team", "--json")
    rows = {row["rule"]: row for row in json.loads(done.out)["enforcement"]}
    assert rows["team/deny@13"]["layer"] == RULES and rows["team/deny@13"]["witness"]
    text = cli("explain", "bash", "standard", "--load", str(path), "--policy", "team").out
    assert "team/deny@13 (command text `rm -rf *`): not stopped:" in text and "dshc verify --enforcement" in text
    # a tool that starts no process has no map
    assert "enforcement" not in json.loads(
        cli("explain", "read", "standard", "--load", str(path), "--policy", "team", "--json").out
    )


@pytest.mark.parametrize("mechanism, layer", [("landlock+mounts", OS), ("bwrap", RULES), ("landlock", RULES)])
def test_a_host_list_is_the_oss_only_where_a_proxy_can_be_its_way_out(mechanism, layer):
    program = Program.load(
        texts={
            "p.dsh": "policy npm extends workspace-write {\n"
            '  network allow "registry.npmjs.org"\n'
            "  ask bash when not args.command is readonly\n}\n"
        }
    )
    rows = {row.rule: row for row in enforcement_map(program.resolved.policies["npm"], mechanism)}
    assert rows["npm/network"].layer == layer and "listed hosts" in rows["npm/network"].how
    assert rows["npm/network"].concerns == "the network: registry.npmjs.org"
    assert layer == OS or "every command is refused" in rows["npm/network"].how
    assert "npm/ask@3" not in rows  # a rule on what is *not* named: no other spelling walks around it
