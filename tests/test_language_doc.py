"""docs/language.md stays in step with the language: every grammar keyword and fact is there,
every `dsh` example checks clean, and its test-file example passes against those examples."""

from __future__ import annotations

import json
import re
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from dshc.compiler.diagnostics import CODES
from dshc.compiler.facts import REQUEST_FACTS

DOC = (Path(__file__).parent.parent / "docs" / "language.md").read_text(encoding="utf-8")
GRAMMAR = resources.files("dshc.compiler").joinpath("grammar.lark").read_text(encoding="utf-8")
EXAMPLES = re.findall(r"```dsh\n(.*?)```", DOC, re.S)
TOML_EXAMPLES = re.findall(r"```toml\n(.*?)```", DOC, re.S)
# what the doc shows as code: `spans` and the dsh examples
CODE_WORDS = set(re.findall(r"[A-Za-z_=!-]+", " ".join(re.findall(r"`([^`\n]+)`", DOC) + EXAMPLES)))


def grammar_keywords() -> set[str]:
    rules = "\n".join(line for line in GRAMMAR.splitlines() if not line.lstrip().startswith("//"))
    literals = set(re.findall(r'"([^"\s]+)"', rules))
    return {word for word in literals if re.fullmatch(r"[a-z]+", word)} | {"==", "!="}


def test_the_grammar_has_the_keywords_this_test_expects():
    # a guard against the extraction silently finding nothing
    assert {"preset", "mount", "guard", "matches", "outside", "commands", "except", "fallback"} <= grammar_keywords()


@pytest.mark.parametrize("keyword", sorted(grammar_keywords()))
def test_every_grammar_keyword_is_documented(keyword):
    assert keyword in CODE_WORDS, f"`{keyword}` (grammar.lark) is not shown in docs/language.md"


@pytest.mark.parametrize("fact", sorted(REQUEST_FACTS))
def test_every_fact_is_documented(fact):
    assert f"| `{fact}` |" in DOC


def test_every_diagnostic_code_the_doc_names_exists():
    named = set(re.findall(r"DSH\d{3}", DOC))
    assert named and named <= set(CODES)


def test_the_doc_has_examples():
    # tests/test_docs_site.py checks every `dsh` example of the docs pages, this one's included
    assert len(EXAMPLES) >= 6


def test_the_test_file_example_passes_against_the_examples(cli, tmp_path):
    (toml,) = TOML_EXAMPLES
    preset, scope, policy = (
        next(e for e in EXAMPLES if e.lstrip().startswith(("#", kind)) and f"{kind} " in e)
        for kind in ("preset reviewer", "scope reviewer-child", "policy careful")
    )
    # the policy first, so the rule ids (`careful/deny@11`) are the lines shown in the doc
    (tmp_path / "reviewer.dsh").write_text(policy + preset + scope)
    (tmp_path / "reviewer.test.toml").write_text(toml)
    result = cli("test", str(tmp_path))
    assert result.code == 0, result.out + result.err
    assert "3 passed, 0 failed" in result.out


@pytest.mark.parametrize("page", ["README.md", "docs/index.md"])
def test_the_tour_runs_as_written(cli, tmp_path, page):
    text = (Path(__file__).parent.parent / page).read_text(encoding="utf-8")
    section = text[text.index("## A five-minute tour") :]
    section = section[: section.index("\n## ", 1)]
    declarations = next(b for b in re.findall(r"```\n(.*?)```", section, re.S) if b.startswith("# A code reviewer"))
    first, more, project = re.findall(r"```toml\n(.*?)```", section, re.S)
    team = tmp_path / "team"
    team.mkdir()
    (team / "reviewer.dsh").write_text(declarations)
    (team / "reviewer.test.toml").write_text(first)
    before = cli("test", str(team), "--coverage", "--json")
    assert before.code == 0 and before.json()["passed"] == 3
    assert [i["id"] for i in before.json()["coverage"]["uncovered"]] == ["review-only/guard:no-secrets"]
    (team / "reviewer.test.toml").write_text(first + "\n" + more)
    after = cli("test", str(team), "--coverage", "--json").json()
    assert after["passed"] == 4 and after["coverage"]["uncovered"] == [] and after["coverage"]["items"] == 12
    load = ("--load", str(team / "reviewer.dsh"))
    for tool, extra, gate in (("web_fetch", (), "registered"), ("write", ("--scope", "review-child"), "visible")):
        shown = cli("explain", tool, "reviewer", *extra, *load, "--json")
        assert shown.code == 1 and shown.json()["failed_gate"] == gate
        assert f"`{tool}` is not available: gate `{gate}` fails" in section
    for tool, args, effect in (
        ("bash", {"command": "git log --oneline | head", "description": "history"}, "allow"),
        ("read", {"file_path": "config/prod.env"}, "deny"),
    ):
        decided = cli(
            "decide",
            tool,
            "--args",
            json.dumps(args),
            "reviewer",
            "--policy",
            "review-only",
            *load,
            "--workspace",
            str(tmp_path),
            "--json",
        )
        assert decided.json()["decision"] == effect and f"$ dshc decide {tool} --args '{json.dumps(args)}'" in section
    assert tomllib.loads(project)["load"] == ["team/reviewer.dsh"]
