"""Every per-request cache is bounded: LRU order, a configurable size, and no growth from invented names."""

from __future__ import annotations

import pytest

from dshc.compiler.lru import LRU, MISSING, default_size
from dshc.compiler.policy import fact_tables
from dshc.compiler.policy.index import NAME_CACHE
from dshc.compiler.program import Program
from dshc.compiler.request import Request


def test_least_recently_used_goes_first():
    cache = LRU(2)
    cache.get("a", lambda: 1)
    cache.get("b", lambda: 2)
    assert cache.get("a", lambda: 99) == 1  # a hit: "a" is now the most recent
    cache.get("c", lambda: 3)
    assert "a" in cache and "c" in cache and "b" not in cache and len(cache) == 2
    assert cache.find("b") is MISSING


def test_a_failed_make_remembers_nothing():
    cache = LRU(4)
    with pytest.raises(ZeroDivisionError):
        cache.get("x", lambda: 1 / 0)
    assert "x" not in cache and cache.get("x", lambda: 5) == 5


def test_size_comes_from_the_environment_when_not_given(monkeypatch):
    monkeypatch.setenv("DSHC_CACHE_SIZE", "7")
    assert LRU().size == default_size() == 7
    for bad in ("0", "-3", "many", ""):
        monkeypatch.setenv("DSHC_CACHE_SIZE", bad)
        assert LRU().size == 1024
    with pytest.raises(ValueError):
        LRU(0)


def test_a_program_keeps_at_most_cache_size_contexts_and_answers_the_same(program):
    small = Program(program.resolved, program.sources, cache_size=3)
    requests = [Request(host="web", flags=[f"f{i}"], policy="workspace-write") for i in range(10)]
    for request in requests + requests[:2]:
        assert small.view(request).canonical_json() == program.view(request).canonical_json()
        assert small.decide(request, "bash", {"command": "ls"}, "/w") == program.decide(
            request, "bash", {"command": "ls"}, "/w"
        )
    for cache in (small._views, small._deciders, small._compositions):
        assert len(cache) == 3


def test_invented_tool_names_do_not_grow_a_request_without_bound(program):
    request = Request(host="web", policy="workspace-write")
    for index in range(3000):
        program.decide(request, f"mcp__x__tool{index}", {}, "/w", gates=False)
    decider, tools, _ = program._deciders.find(request)
    assert len(tools) <= tools.size and len(decider.compiled._tools) <= decider.compiled._tools.size
    assert len(decider.compiled._last) <= decider.compiled._tools.size


def test_invented_names_a_rule_covers_do_not_grow_the_request_memo_without_bound(monkeypatch):
    """Names no rule covers take the policy's unmatched decision and leave nothing behind; these
    are covered by a pattern, so each is remembered per request — up to the bound."""
    monkeypatch.setattr(fact_tables, "TABLE_LIMIT", 0)  # no rules tabulated: each decision is remembered
    covering = Program.load(
        texts={"p.dsh": 'policy p "Asks about web tools" {\n  ask web_* when scope == "root"\n  default allow\n}\n'}
    )
    request = Request(policy="p")
    for index in range(3000):
        assert covering.decide(request, f"web_invented{index}", {}, "/w", gates=False).effect == "ask"
    decider, _, _ = covering._deciders.find(request)
    assert 0 < len(decider._facts) <= NAME_CACHE < 3000


def test_shared_row_outcomes_follow_each_contexts_services(program):
    """Composed rows are shared between contexts with the same services, never across different ones."""
    full, narrow = Request(host="web"), Request(host="web", without_services=["attachments"])
    for _ in range(2):
        assert "read_image" in program.view(Request(host="web", flags=["a"])).names
        assert (
            "read_image" not in program.view(Request(host="web", flags=["b"], without_services=["attachments"])).names
        )
    assert set(program.view(full).names) - set(program.view(narrow).names) == {"read_image"}


FLAGGED = """
preset flagged "Rows that depend on a flag and a platform" {
  mount tool-fs
  mount tool-web when flag web_on
  mount tool-bash when platform == "linux"
}
"""


def test_shared_preset_rows_follow_the_flags_and_facts_their_conditions_read():
    """A preset's rows are shared by contexts that differ in what no row reads (scope, policy, other
    flags), never across a flag or a fact a row's condition names, nor across two programs."""
    program = Program.load(texts={"flagged.dsh": FLAGGED})

    def names(**context):
        return set(program.view(Request(host="web", preset="flagged", **context)).names)

    base = names()
    for _ in range(2):  # the second round reads the shared rows
        assert "web_fetch" in names(flags=["web_on"]) and "web_fetch" not in names(flags=["other"])
        assert "web_fetch" in names(flags=["web_on", "other"], policy="read-only")
        assert "bash" in names(platform="linux") and "bash" not in names(platform="darwin")
        assert names(flags=["unread"], scope="child") - {"report"} == base - {"report"}
    other = Program.load(texts={"flagged.dsh": FLAGGED.replace("mount tool-fs\n", "")})
    assert "read" in base and "read" not in other.view(Request(host="web", preset="flagged")).names


def test_a_requests_glob_group_memo_holds_its_groups_across_index_rebuilds(monkeypatch):
    """The per-request memo of glob groups is keyed by the group's id: each entry holds its group,
    so when invented names push a tool's index out of the policy's LRU and it is built anew, no
    new group can take a remembered id and read another group's summary."""
    monkeypatch.setattr(fact_tables, "TABLE_LIMIT", 0)  # no group tabulated: summaries are read per request
    linux = ' and platform == "linux"'  # a fact condition: each group's summary is read per request
    program = Program.load(
        texts={
            "p.dsh": 'policy p "Fetches" {\n  default allow\n'
            f'  deny web_fetch when args.url matches "http://*"{linux}\n'
            f'  ask web_* when args.url matches "*.zip"{linux}\n}}\n'
        }
    )
    request = Request(policy="p", platform="linux")
    expected = {"http://a": "deny", "https://b.zip": "ask", "https://c": "allow"}
    for round_ in range(3):
        for url, effect in expected.items():
            assert program.decide(request, "web_fetch", {"url": url}, "/w", gates=False).effect == effect
        for index in range(1100):  # past the policy's per-name index bound: web_fetch's index is dropped
            program.decide(request, f"web_invented{round_}_{index}", {"url": "x"}, "/w", gates=False)
    decider, _, _ = program._deciders.find(request)
    assert decider._groups and all(key == id(group) for key, (group, _) in decider._groups.items())


def test_the_glob_group_memo_and_the_shared_decisions_are_bounded(monkeypatch):
    from dshc.compiler.policy import index

    monkeypatch.setattr(fact_tables, "TABLE_LIMIT", 0)  # no group tabulated: summaries are read per request
    monkeypatch.setattr(index, "GROUP_CACHE", 2)
    monkeypatch.setattr(index, "DECIDED_CACHE", 2)
    linux = ' and platform == "linux"'  # a fact condition: each group's summary is read per request
    program = Program.load(
        texts={
            "p.dsh": 'policy p "Fetches" {\n  default allow\n'
            f'  deny web_fetch when args.url matches "http://*"{linux}\n'
            f'  ask web_fetch when args.url matches "*.zip"{linux}\n'
            f'  ask web_fetch when args.url matches "ftp:*"{linux}\n}}\n'
        }
    )
    request = Request(policy="p", platform="linux")
    expected = {
        "http://a.zip": ("deny", [3]),
        "https://b.zip": ("ask", [4]),
        "ftp:c": ("ask", [5]),
        "ftp:c.zip": ("ask", [4, 5]),
        "http://d": ("deny", [3]),
        "https://e": ("allow", []),
    }
    for _ in range(2):  # the second round finds what the bounds let it keep, or makes it again
        for url, (effect, lines) in expected.items():
            decision = program.decide(request, "web_fetch", {"url": url}, "/w", gates=False)
            assert (decision.effect, [span.line for _, span in decision.deciding if lines]) == (effect, lines)
    decider, _, _ = program._deciders.find(request)
    shared = decider.compiled.index("web_fetch", decider.tool_for("web_fetch")).decided
    assert 0 < len(decider._groups) <= 2 and 0 < len(shared) <= 2
