"""`dshc diff`: one edit reads as one change, with the responsible declaration on each side."""

from __future__ import annotations

import re
import shutil
from importlib import resources
from pathlib import Path

import pytest


@pytest.fixture
def shipped_tree(tmp_path) -> Path:
    root = tmp_path / "old"
    for package in ("presets", "policies"):
        shutil.copytree(
            Path(str(resources.files(f"dshc.{package}"))),
            root / package,
            ignore=shutil.ignore_patterns("__init__.py", "__pycache__"),
        )
    return root


def copy_with(tree: Path, target: Path, edit) -> Path:
    shutil.copytree(tree, target)
    for file in target.rglob("*.dsh"):
        file.write_text(edit(file.name, file.read_text()))
    return target


def test_enabling_fetch_in_standard_is_exactly_one_widening(cli, shipped_tree, tmp_path):
    new = copy_with(
        shipped_tree,
        tmp_path / "new",
        lambda name, text: (
            text.replace("mount tool-web { fetch = false", "mount tool-web { fetch = true")
            if name == "standard.dsh"
            else text
        ),
    )
    # one diff each way: --fail-on-widen changes only the exit code (a widening without it exits 0: the
    # small trees below)
    result = cli("diff", "--no-shipped", str(shipped_tree), str(new), "--json", "--fail-on-widen")
    assert result.code == 1
    data = result.json()
    (change,) = data["changes"]
    assert (change["kind"], change["tool"], change["widening"]) == ("added", "web_fetch", True)
    assert re.fullmatch(r".*old/presets/standard\.dsh:\d+:\d+", change["old"]["source"])
    assert "fetch = false" in change["old"]["reason"]
    assert re.fullmatch(r".*new/presets/standard\.dsh:\d+:\d+", change["new"]["source"])
    assert {c["preset"] for c in change["cells"]} == {"standard", "code", "cordis"}
    assert data["fingerprints_changed"] > 0
    assert cli("diff", "--no-shipped", str(new), str(shipped_tree), "--fail-on-widen").code == 0


def test_a_reformatted_copy_diffs_empty(cli, shipped_tree, tmp_path):
    def reformat(name, text):
        # layout only: string literals (a description may hold ", ") keep their text
        parts = re.split(r'("(?:[^"\\\n]|\\.)*")', text)
        parts[::2] = [
            re.sub(r"\n\s*\n", "\n", p).replace(", ", " ,   ").replace("  mount", "\tmount") for p in parts[::2]
        ]
        return "# moved around\n\n" + "".join(parts)

    new = copy_with(shipped_tree, tmp_path / "new", reformat)
    result = cli("diff", "--no-shipped", str(shipped_tree), str(new), "--json", "--fail-on-widen")
    assert result.code == 0
    data = result.json()
    assert data["changes"] == [] and data["fingerprints_changed"] == 0 and data["cells_compared"] > 100


def test_a_new_deny_is_a_narrowing_not_a_widening(cli, shipped_tree, tmp_path):
    new = copy_with(
        shipped_tree,
        tmp_path / "new",
        lambda name, text: text.replace("  sandbox workspace-write\n", "  sandbox workspace-write\n  deny glob\n"),
    )
    data = cli("diff", "--no-shipped", str(shipped_tree), str(new), "--json", "--fail-on-widen")
    assert data.code == 0
    changes = data.json()["changes"]
    # the label on the wire (host policy workspace-write), and the calls under `plan` and `guarded`, which extend it
    assert {(c["kind"], c["tool"], c["detail"], c["widening"], c["policy"]) for c in changes} == {
        ("policy", "glob", "allow → deny", False, None),
        ("decision", "glob", "allow → deny", False, "plan"),
        ("decision", "glob", "allow → deny", False, "guarded"),
    }


def test_two_contexts_of_the_same_sources(cli):
    data = cli("diff", "platform=linux", "platform=win32", "--json").json()
    kinds = {(c["kind"], c["tool"]) for c in data["changes"]}
    assert kinds == {("added", "pwsh"), ("removed", "bash")}


def test_bad_context_is_a_usage_error(cli):
    result = cli("diff", "platfrom=linux", "platform=win32")
    assert result.code == 2 and "Traceback" not in result.err


# --- diff compares decisions, not labels (issue 10.5) -------------------------------------------
SMALL = """
host box "A small host" {
  platforms linux
  provides shell, fs, subprocess, sandbox, approval
  roster default mini
  policy guarded
}
scope root "The root agent" {
}
preset mini "Shell and files" {
  mount tool-bash
  mount tool-fs
}
policy guarded "The host's policy" {
  default allow
  deny bash when args.command matches "rm *"
  ask bash when has args.sandbox_permissions
}
policy strict "Another policy" {
  default ask
  deny bash when args.command matches "git push*"
  allow bash when args.command matches "git *"
}
"""


def small_tree(tmp_path, name: str, text: str) -> Path:
    (tmp_path / name).mkdir()
    (tmp_path / name / "all.dsh").write_text(text)
    return tmp_path / name


@pytest.mark.parametrize(
    "policy, rule, command",
    [
        ("guarded", '  deny bash when args.command matches "rm *"\n', "rm"),  # the host's policy: the label stays
        ("strict", '  deny bash when args.command matches "git push*"\n', "git push"),  # a policy no cell names
    ],
)
def test_removing_a_deny_rule_is_a_widening_with_a_witness_call(cli, tmp_path, policy, rule, command):
    old = small_tree(tmp_path, "old", SMALL)
    new = small_tree(tmp_path, "new", SMALL.replace(rule, ""))
    result = cli("diff", "--no-shipped", str(old), str(new), "--json", "--fail-on-widen")
    assert result.code == 1
    (change,) = result.json()["changes"]  # no label changed: only the decisions tell
    assert (change["kind"], change["tool"], change["widening"], change["policy"]) == ("decision", "bash", True, policy)
    assert change["detail"].startswith("deny → ") and change["witness"]["command"].startswith(command)
    assert change["old"]["source"] == f"{old / 'all.dsh'}:{SMALL[: SMALL.index(rule)].count(chr(10)) + 1}:3"
    back = cli("diff", "--no-shipped", str(new), str(old), "--json", "--fail-on-widen")
    assert back.code == 0 and [c["widening"] for c in back.json()["changes"]] == [False]
    plain = cli("diff", "--no-shipped", str(old), str(new))
    assert plain.code == 0  # a widening fails the diff only with --fail-on-widen
    text = plain.out
    assert text.startswith("WIDENS decision") and f'"command": "{change["witness"]["command"]}"' in text


def test_policy_contexts_show_each_widening_with_a_witness(cli):
    wider = cli("diff", "policy=read-only", "policy=workspace-write", "--json", "--fail-on-widen")
    assert wider.code == 1
    found = {c["tool"]: c for c in wider.json()["changes"] if c["widening"]}
    # bash too: a command whose text does not say what it runs (`echo x | sh`) may write any file, which
    # read-only's `deny write` refuses without an escalation
    assert set(found) == {"write", "edit", "bash"}
    for change in found.values():
        assert change["kind"] == "decision" and change["detail"] == "deny → allow"
        # workspace-write has no path rule for writes (the sandbox refuses outside ones at execution),
        # so any write without an escalation witnesses the widening
        assert "sandbox_permissions" not in change["witness"]
    narrower = cli("diff", "policy=workspace-write", "policy=read-only", "--fail-on-widen")
    assert narrower.code == 0 and "WIDENS" not in narrower.out and "allow → deny" in narrower.out


@pytest.mark.parametrize("context", ["preset=nope", "policy=nope", "scope=nope", "host=nope", "with=nope"])
def test_an_unknown_name_in_a_context_exits_2(cli, context):
    result = cli("diff", context, "platform=linux", "--json")
    assert result.code == 2 and result.json()["diagnostics"][0]["message"].endswith("`nope`")
    assert cli("diff", "platform=linux", context).code == 2
