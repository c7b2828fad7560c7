"""`dshc check`: every lint found with its code and line:col; shipped files check clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from markers import parse_markers

FIXTURES = Path(__file__).parent / "fixtures" / "lint"


def expected_markers(path: Path) -> set[tuple[str, int, int]]:
    return {m.where for m in parse_markers(path.read_text())}


@pytest.mark.parametrize("name, exit_code", [("warnings.dsh", 1), ("errors.dsh", 2)])
def test_check_finds_each_lint_with_code_and_position(cli, name, exit_code):
    path = FIXTURES / name
    result = cli("check", str(path), "--json")
    assert result.code == exit_code
    found = {(d["code"], d["line"], d["col"]) for d in result.json()["diagnostics"]}
    assert found == expected_markers(path)


def test_shipped_declarations_check_clean(cli):
    result = cli("check")
    assert (result.code, result.out) == (0, "no findings\n")


def test_check_text_shows_position_and_caret(cli):
    result = cli("check", str(FIXTURES / "warnings.dsh"))
    assert f"{FIXTURES / 'warnings.dsh'}:13:3: warning[DSH307]" in result.out
    assert "^^^^" in result.out


def test_codes_lists_the_registry(cli):
    result = cli("codes")
    assert result.code == 0
    lines = result.out.splitlines()
    assert any(line.startswith("DSH201  error") for line in lines)
    assert any(line.startswith("DSH302  warning") for line in lines)
    assert len(lines) == len({line.split()[0] for line in lines})
