"""The bypass corpus (tests/fixtures/bypass/corpus.json): calls from public reports and peer test
suites, each with its source and the verdict under a stated policy. 0 bypasses; every
over-refusal is listed in the corpus with its reason (`ideal` + `why`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dshc.compiler.program import Program
from dshc.compiler.request import Request

CORPUS = json.loads((Path(__file__).parent / "fixtures" / "bypass" / "corpus.json").read_text(encoding="utf-8"))
CASES = CORPUS["cases"]
WORKSPACE = "/ws"


def _expand(value):
    """`{"$repeat": …}` builds the long commands that test the input limits without storing them."""
    if isinstance(value, dict) and "$repeat" in value:
        r = value["$repeat"]
        return r["prefix"] + r["join"].join([r["unit"]] * r["count"]) + r["suffix"]
    return value


def _args(case) -> dict:
    return {key: _expand(value) for key, value in case["args"].items()}


def _label(case) -> str:
    text = str(_args(case).get("command", _args(case).get("file_path")))
    return f"{case['policy']}:{case['tool']}:{text[:60]}"


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"corpus.dsh": CORPUS["policies"]})


_EFFECTS: dict[tuple[int, int], str] = {}  # (program, case) → effect: the whole-corpus check reuses each case's


def _decide(program, case) -> str:
    key = (id(program), id(case))
    if key not in _EFFECTS:
        request = Request(preset="standard", host="web", policy=case["policy"])
        _EFFECTS[key] = program.decide(request, case["tool"], _args(case), workspace=WORKSPACE).effect
    return _EFFECTS[key]


@pytest.mark.parametrize("case", CASES, ids=[f"{i}" for i in range(len(CASES))])
def test_each_case_gets_its_verdict(program, case):
    assert _decide(program, case) == case["expect"], _label(case)


def test_the_corpus_is_large_sourced_and_has_no_bypass(program):
    assert len(CASES) >= 200
    assert all(case["source"] for case in CASES)
    # at least 200 cite a public report or a peer project's tests, not only this project's own issues
    assert sum(not case["source"].startswith("dshc issue") for case in CASES) >= 200
    bypasses = [_label(c) for c in CASES if _decide(program, c) == "allow" and c.get("ideal", c["expect"]) != "allow"]
    assert bypasses == []


def test_every_over_refusal_is_justified():
    refused = [c for c in CASES if c.get("ideal") == "allow"]
    assert refused and all(c["expect"] != "allow" and len(c["why"]) > 20 for c in refused)
