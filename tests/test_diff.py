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
        shutil.copytree(Path(str(resources.files(f"dshc.{package}"))), root / package,
                        ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    return root


def copy_with(tree: Path, target: Path, edit) -> Path:
    shutil.copytree(tree, target)
    for file in target.rglob("*.dsh"):
        file.write_text(edit(file.name, file.read_text()))
    return target


def test_enabling_fetch_in_standard_is_exactly_one_widening(cli, shipped_tree, tmp_path):
    new = copy_with(shipped_tree, tmp_path / "new", lambda name, text: text.replace(
        "mount tool-web { fetch = false", "mount tool-web { fetch = true") if name == "standard.dsh" else text)
    result = cli("diff", str(shipped_tree), str(new), "--json")
    assert result.code == 0
    data = result.json()
    (change,) = data["changes"]
    assert (change["kind"], change["tool"], change["widening"]) == ("added", "web_fetch", True)
    assert re.fullmatch(r".*old/presets/standard\.dsh:\d+:\d+", change["old"]["source"])
    assert "fetch = false" in change["old"]["reason"]
    assert re.fullmatch(r".*new/presets/standard\.dsh:\d+:\d+", change["new"]["source"])
    assert {c["preset"] for c in change["cells"]} == {"standard", "code", "cordis"}
    assert data["fingerprints_changed"] > 0
    assert cli("diff", str(shipped_tree), str(new), "--fail-on-widen").code == 1
    assert cli("diff", str(new), str(shipped_tree), "--fail-on-widen").code == 0


def test_a_reformatted_copy_diffs_empty(cli, shipped_tree, tmp_path):
    def reformat(name, text):
        text = re.sub(r"\n\s*\n", "\n", text).replace(", ", " ,   ").replace("  mount", "\tmount")
        return "# moved around\n\n" + text
    new = copy_with(shipped_tree, tmp_path / "new", reformat)
    result = cli("diff", str(shipped_tree), str(new), "--json", "--fail-on-widen")
    assert result.code == 0
    data = result.json()
    assert data["changes"] == [] and data["fingerprints_changed"] == 0 and data["cells_compared"] > 100


def test_a_new_deny_is_a_narrowing_not_a_widening(cli, shipped_tree, tmp_path):
    new = copy_with(shipped_tree, tmp_path / "new", lambda name, text: text.replace(
        "  sandbox workspace-write\n", "  sandbox workspace-write\n  deny glob\n"))
    data = cli("diff", str(shipped_tree), str(new), "--json", "--fail-on-widen")
    assert data.code == 0
    changes = data.json()["changes"]
    assert {(c["kind"], c["tool"], c["detail"], c["widening"]) for c in changes} == {
        ("policy", "glob", "allow → deny", False)}


def test_two_contexts_of_the_same_sources(cli):
    data = cli("diff", "platform=linux", "platform=win32", "--json").json()
    kinds = {(c["kind"], c["tool"]) for c in data["changes"]}
    assert kinds == {("added", "pwsh"), ("removed", "bash")}


def test_bad_context_is_a_usage_error(cli):
    result = cli("diff", "platfrom=linux", "platform=win32")
    assert result.code == 2 and "Traceback" not in result.err
