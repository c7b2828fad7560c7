"""`dshc verify`: exhaustive narrowing / monotonicity / no-widening checks, with witnesses."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path


from dshc.compiler import verify as verify_module
from dshc.compiler.policy import Decision
from dshc.compiler.program import Program
from dshc.compiler.verify import verify

LEAKY = """policy leaky "Denies the root, forgets its children" {
  default allow
  deny write when scope == "root"
}
"""


PROVED = ("read-only", "workspace-write", "danger-full-access", "plan")  # few enough patterns for exact classes


def test_every_shipped_policy_is_proved(cli):
    result = cli("verify", *(f"--policy={name}" for name in PROVED), "--json")
    data = result.json()
    assert result.code == 0
    assert data["proved"] is True and data["exact"] is True and data["violations"] == []
    assert data["cells"] > 500


# the library's lighter sets, in the suite's time budget; `dshc verify --policy guarded` (every set, ~1 min on 2
# cores) holds too, and tests/test_guarded.py decides guarded's attack and everyday tables
SAMPLED = ("guard-network", "guard-exec-from-network", "guard-env-poisoning", "guard-destructive")


def test_guarded_and_its_library_hold_on_a_sample(cli):
    # hundreds of patterns: one witness per pattern and seeded recombinations, not every class (no proof)
    result = cli("verify", *(f"--policy={name}" for name in SAMPLED), "--json")
    data = result.json()
    assert result.code == 0 and data["violations"] == [] and data["exact"] is False
    assert any("patterns on one argument" in note for note in data["notes"])


def test_a_planted_narrowing_violation_exits_1_with_a_witness(cli, tmp_path):
    """Read from the text report, which prints each violation's property and its witness as JSON (one proof;
    the tests above read the `--json` report)."""
    planted = tmp_path / "leaky.dsh"
    planted.write_text(LEAKY)
    text = cli("verify", str(planted), "--policy", "leaky")
    assert text.code == 1 and "VIOLATION [narrowing]" in text.out and "witness:" in text.out
    lines = text.out.splitlines()
    assert lines[0].startswith("VIOLATION [narrowing] ") and lines[1].startswith("  witness: ")
    witness = json.loads(lines[1].removeprefix("  witness: "))
    assert witness["tool"] == "write" and witness["scope"] in ("child", "continuable-child")
    assert witness["policy"] == "leaky" and "arguments" in witness


def test_a_guard_that_allows_is_caught(monkeypatch):
    """Mutation test: break every guard so that firing allows instead of denying."""
    real = verify_module.decide

    def broken(policy, approval, source, name, tool, env, **options):
        decision = real(policy, approval, source, name, tool, env, **options)
        if decision.effect == "deny" and any("/guard:" in rule for rule, _ in decision.deciding):
            return Decision("allow", "a broken guard", decision.deciding)
        return decision

    monkeypatch.setattr(verify_module, "decide", broken)
    report = verify(Program.load(), policy_names=["plan"])
    assert report.violations, "verify must catch a guard that widens"
    violation = report.violations[0]
    assert violation.property == "monotonicity" and "guard `planning`" in violation.message
    assert violation.witness["plan"] is True


def _tree(tmp_path: Path, name: str, edit=None) -> Path:
    root = tmp_path / name
    for package in ("presets", "policies"):
        shutil.copytree(
            Path(str(resources.files(f"dshc.{package}"))),
            root / package,
            ignore=shutil.ignore_patterns("__init__.py", "__pycache__"),
        )
    if edit:
        for file in root.rglob("*.dsh"):
            file.write_text(edit(file.read_text()))
    return root


def test_against_old_catches_an_ask_that_became_an_allow(cli, tmp_path):
    old = _tree(tmp_path, "old")
    new = _tree(
        tmp_path,
        "new",
        lambda text: text.replace(
            "  ask pwsh, write, edit when has args.sandbox_permissions\n",
            "  ask pwsh when has args.sandbox_permissions\n",
        ),
    )
    same = cli("verify", str(old), "--no-shipped", "--against", str(old), "--policy", "workspace-write", "--json")
    assert same.code == 0
    result = cli("verify", str(new), "--no-shipped", "--against", str(old), "--policy", "workspace-write", "--json")
    assert result.code == 1
    violations = [v for v in result.json()["violations"] if v["property"] == "against"]
    at_root = next(v for v in violations if v["witness"]["scope"] == "root")
    assert at_root["message"].endswith("ask → allow")
    assert at_root["witness"]["tool"] in ("write", "edit")
    assert "sandbox_permissions" in at_root["witness"]["arguments"]


def test_shell_patterns_are_split_exactly(tmp_path):
    text = """policy shell "Shell rules" {
  default allow
  deny bash when args.command matches "rm *"
  ask bash when args.command matches "git push*"
}
"""
    report = verify(Program.load(texts={"shell.dsh": text}), policy_names=["shell"])
    assert report.exact and not report.violations
    # a pattern naming options also meets them spelled otherwise (`rm -fr x`): glob classes do not split
    # that, so the report samples it and claims no proof
    report = verify(Program.load(texts={"shell.dsh": text.replace('"rm *"', '"rm -rf *"')}), policy_names=["shell"])
    assert not report.exact and not report.violations
