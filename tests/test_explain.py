"""`dshc explain`: the first failing gate, the deciding declaration and one fix — pinned goldens."""
from __future__ import annotations

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


def test_counterfactuals_really_make_the_gate_pass(cli):
    assert cli("explain", "read_image", "standard", "--json").code == 0
    assert cli("explain", "pwsh", "standard", "--platform", "win32").code == 0
    assert cli("explain", "bash", "code", "--mode", "both").code == 0
    assert cli("explain", "report", "standard", "--scope", "continuable-child").code == 0


def test_explain_all_lists_every_catalog_tool_with_its_first_failing_gate(cli):
    data = cli("explain", "--all", "standard", "--json").json()
    rows = {row["tool"]: row for row in data["tools"]}
    assert len(rows) >= 52
    available = sorted(name for name, row in rows.items() if row["available"])
    assert len(available) == 25
    assert rows["web_fetch"]["failed_gate"] == "registered"
    assert rows["run_code"]["failed_gate"] == "projected"
    assert rows["report"]["failed_gate"] == "visible"
