"""The docs site builds with `mkdocs build --strict` (a broken link or a page missing from the nav
fails), its diagnostics page is the code registry, its `dsh` examples check clean, and the
decision tables of the shell page are what dshc decides."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dshc.compiler.diagnostics import iter_codes
from dshc.compiler.program import Program
from dshc.compiler.request import Request

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
RANGES = (
    ("1", "syntax: a file that does not read or parse"),
    ("2", "names: something named does not exist"),
    ("3", "semantics and lint: the declarations mean something questionable"),
    ("4", "the request: a context, a call or a command's own arguments"),
    ("5", "the catalog: packages, tools and upstream MCP servers"),
)


def diagnostics_page() -> str:
    """docs/diagnostics.md as the registry (compiler/diagnostics.py CODES) makes it."""
    lines = [
        "# Diagnostics",
        "",
        "Every problem dshc reports carries a stable code. `dshc codes` prints this list; `--json` output",
        "carries the code in each diagnostic's `code` field, and a `.dsh` file's problems point at",
        "`path:line:col`. An error makes the input unusable (exit 2); a warning is reported and the",
        "command goes on (`dshc check` exits 1 when it finds any).",
        "",
        "This page is generated from the registry in `compiler/diagnostics.py`; `tests/test_docs_site.py`",
        "fails when the two differ (`pytest tests/test_docs_site.py --force-regen` rewrites it).",
        "",
    ]
    codes = list(iter_codes())
    for digit, title in RANGES:
        lines += [f"## DSH{digit}xx — {title}", "", "| code | severity | meaning |", "|---|---|---|"]
        lines += [
            f"| `{code}` | {severity} | {summary.replace('|', '&#124;')} |"
            for code, severity, summary in codes
            if code[3] == digit
        ]
        lines.append("")
    return "\n".join(lines)


def test_the_diagnostics_page_is_the_registry(file_regression):
    assert {code[3] for code, _, _ in iter_codes()} == {digit for digit, _ in RANGES}
    file_regression.check(diagnostics_page(), fullpath=DOCS / "diagnostics.md")


def test_the_site_builds_strictly(tmp_path):
    # no `-q`: quiet mode drops the warnings that strict mode counts
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    for page in PAGES:
        if page.name != "index.md":
            assert (tmp_path / "site" / page.stem / "index.html").is_file(), f"{page.name} was not built"


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [page.name for page in PAGES if f" {page.name}" not in nav] == []


@pytest.mark.parametrize("page", [p for p in PAGES if "```dsh" in p.read_text(encoding="utf-8")], ids=lambda p: p.name)
def test_every_dsh_example_checks_clean(cli, tmp_path, page):
    examples = re.findall(r"```dsh\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    paths = []
    for index, example in enumerate(examples):
        paths.append(tmp_path / f"example{index}.dsh")
        paths[-1].write_text(example)
    result = cli("check", *map(str, paths), "--json")
    errors = [d for d in result.json()["diagnostics"] if d["severity"] == "error"]
    assert result.code in (0, 1) and not errors, errors


def shell_rows() -> list[tuple[str, str, str]]:
    """(command, policy, effect) of every `| command | policy | effect | why |` table of docs/shell.md."""
    rows, in_table = [], False
    for line in (DOCS / "shell.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| command | policy | effect |"):
            in_table = True
        elif not line.startswith("|"):
            in_table = False
        elif in_table and not line.startswith("|---"):
            command, policy, effect = (cell.strip() for cell in line.strip("|").split(" | ")[:3])
            rows.append((command.strip("`").replace("\\|", "|"), policy.strip("`"), effect))  # GitHub's `\|`
    return rows


SHELL_ROWS = shell_rows()


def test_the_shell_page_has_decision_tables():
    assert len(SHELL_ROWS) >= 40 and {effect for _, _, effect in SHELL_ROWS} == {"allow", "deny"}


@pytest.fixture(scope="module")
def shell_program():
    text = (DOCS / "shell.md").read_text(encoding="utf-8")
    return Program.load(texts={"docs/shell.md": "\n".join(re.findall(r"```dsh\n(.*?)```", text, re.S))})


@pytest.mark.parametrize(("command", "policy", "effect"), SHELL_ROWS, ids=[row[0] for row in SHELL_ROWS])
def test_the_shell_page_says_what_dshc_decides(shell_program, tmp_path, command, policy, effect):
    request = Request(preset="standard", host="web", policy=policy)
    decision = shell_program.decide(request, "bash", {"command": command, "description": "d"}, workspace=str(tmp_path))
    assert decision.effect == effect, decision.reason


def test_the_python_api_page_runs_as_written():
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "python-api.md").read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "docs/python-api.md", "exec"), {"__name__": "docs_example"})


def test_the_readme_links_to_files_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert any(target.startswith("docs/") for target in targets)
    assert [target for target in targets if "://" not in target and not (ROOT / target).exists()] == []
