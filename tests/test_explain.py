"""`dshc explain`: the first failing gate, the deciding declaration and one fix — pinned goldens."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

CASES = {
    "web_fetch-in-standard": (["web_fetch", "standard"], "registered"),
    "read_image-without-attachments": (["read_image", "standard", "--without", "attachments"], "registered"),
    "terminal_open-in-standard": (["terminal_open", "standard"], "registered"),
    "report-at-root": (["report", "standard"], "visible"),
    "bash-in-code-mode": (["bash", "code"], "projected"),
    "cordis_define-without-runner": (["cordis_define", "cordis", "--without", "cordis-runner"], "registered"),
    "pwsh-on-linux": (["pwsh", "standard", "--platform", "linux"], "registered"),
    "web_search-without-provider": (["web_search", "standard", "--without", "web-provider"], "ready"),
    "write-in-plan-mode": (["write", "standard", "--policy", "plan", "--plan"], "allowed"),
    "report-in-continuable-child": (["report", "standard", "--scope", "continuable-child"], None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_explain_json_golden(cli, data_regression, case):
    argv, failed_gate = CASES[case]
    result = cli("explain", *argv, "--host", "web", "--json")
    data = result.json()
    assert result.code == (0 if failed_gate is None else 1)
    assert data["failed_gate"] == failed_gate and data["available"] is (failed_gate is None)
    if failed_gate in ("registered", "visible", "projected", "allowed"):
        failing = next(g for g in data["gates"] if g["status"] == "fail")
        assert failing["source"] and failing["counterfactual"]
    data_regression.check(data)


@pytest.mark.parametrize("case", sorted(CASES))
def test_explain_text_golden(cli, file_regression, case):
    argv, _ = CASES[case]
    result = cli("explain", *argv, "--host", "web")
    file_regression.check(result.out, extension=".txt")


def test_a_name_not_in_the_catalog_exits_2_with_did_you_mean(cli):
    result = cli("explain", "web_fetc", "standard", "--json")
    assert result.code == 2
    (diag,) = result.json()["diagnostics"]
    assert diag["code"] == "DSH406" and diag["help"] == "did you mean `web_fetch`?"
    text = cli("explain", "web_fetc", "standard")
    assert text.code == 2 and "did you mean `web_fetch`?" in text.err and "Traceback" not in text.err


def _apply(argv: list[str], counterfactual: str) -> list[str]:
    """The explain arguments with a flag-shaped fix applied: `--with X` undoes `--without X`; others replace."""
    flag, value = counterfactual.split()[:2]
    out, skip = [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        same = arg == flag or (flag == "--with" and arg == "--without" and argv[i + 1] == value)
        if same:
            skip = True
            continue
        out.append(arg)
    if flag == "--with" and "--without" in argv and argv[argv.index("--without") + 1] == value:
        return out  # the service is back by not removing it
    return out + [flag, value]


# counterfactuals that describe an edit: (the text it says, the text it becomes) in presets/standard.dsh,
# and the context flags the same counterfactual names beside the edit
SOURCE_FIXES = {
    "set `fetch = true` in that mount": ("fetch = false", "fetch = true", []),
    "add `mount tool-terminal` to preset `standard` and run with `--with terminals`": (
        "  mount tool-fs\n",
        "  mount tool-fs\n  mount tool-terminal\n",
        ["--with", "terminals"],
    ),
}


def _edited_tree(tmp_path, before: str, after: str):
    for package in ("presets", "policies"):
        shutil.copytree(
            Path(str(resources.files(f"dshc.{package}"))),
            tmp_path / package,
            ignore=shutil.ignore_patterns("__init__.py", "__pycache__"),
        )
    standard = tmp_path / "presets" / "standard.dsh"
    assert before in standard.read_text()
    standard.write_text(standard.read_text().replace(before, after, 1))
    return tmp_path


FIXABLE = [case for case, (_, gate) in sorted(CASES.items()) if gate in ("registered", "visible", "projected", "ready")]


@pytest.mark.parametrize("case", FIXABLE)
def test_counterfactuals_really_make_the_gate_pass(cli, case, tmp_path):
    argv, gate = CASES[case]
    failing = next(g for g in cli("explain", *argv, "--json").json()["gates"] if g["status"] == "fail")
    assert failing["gate"] == gate
    if failing["counterfactual"] in SOURCE_FIXES:  # the fix is an edit of the sources: make it
        before, after, flags = SOURCE_FIXES[failing["counterfactual"]]
        argv = argv + flags + ["--no-shipped", "--load", str(_edited_tree(tmp_path, before, after))]
    else:
        argv = _apply(argv, failing["counterfactual"])
    fixed = cli("explain", *argv, "--json")
    gates = {g["gate"]: g["status"] for g in fixed.json()["gates"]}
    assert gates[gate] == "pass" and fixed.code == 0, (failing["counterfactual"], gates)


def test_explain_all_lists_every_catalog_tool_with_its_first_failing_gate(cli, program):
    data = cli("explain", "--all", "standard", "--json").json()
    rows = {row["tool"]: row for row in data["tools"]}
    # every distinct shipped name once (52 in the spec-baseline catalog, run_code among them, plus
    # structured_output from the child driver outside it)
    assert set(rows) == set(program.catalog.shipped_names) and len(rows) == 53
    assert rows["structured_output"]["failed_gate"] == "visible"
    available = sorted(name for name, row in rows.items() if row["available"])
    assert len(available) == 25
    assert rows["web_fetch"]["failed_gate"] == "registered"
    assert rows["run_code"]["failed_gate"] == "projected"
    assert rows["report"]["failed_gate"] == "visible"
