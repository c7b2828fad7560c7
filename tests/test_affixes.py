"""The prefix / suffix index answers what testing every key would, shortest key first."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.policy.affixes import AffixIndex

texts = st.text(alphabet="ab/.", max_size=6)


@settings(max_examples=300)
@given(st.sets(texts, max_size=10), st.lists(texts, min_size=1, max_size=10))
def test_every_key_a_text_starts_or_ends_with_is_found_shortest_first(keys, probes):
    values = {key: ("group", key) for key in keys}
    prefixed, suffixed = AffixIndex(values), AffixIndex(values, suffixes=True)
    for text in probes:
        starts = sorted((k for k in keys if text.startswith(k)), key=len)
        ends = sorted((k for k in keys if text.endswith(k)), key=len)
        assert prefixed.matching(text) == tuple(values[k] for k in starts)
        assert suffixed.matching(text) == tuple(values[k] for k in ends)


def test_nested_keys_and_a_miss():
    index = AffixIndex({"": 0, "git": 1, "git ": 2, "git push": 3, "go": 4})
    assert index.matching("git push origin") == (0, 1, 2, 3)
    assert index.matching("git pull") == (0, 1, 2)
    assert index.matching("gz") == (0,)
    assert AffixIndex({"x": 1}).matching("y") == () and AffixIndex({}).matching("y") == ()


def test_long_nested_keys_build_in_one_pass():
    keys = {"a" * n: n for n in range(1, 3000)}  # every key a prefix of the next: no quadratic slicing
    index = AffixIndex(keys)
    assert index.matching("a" * 5) == (1, 2, 3, 4, 5)
    assert len(index.matching("a" * 4000)) == 2999


@settings(max_examples=300)
@given(st.sets(texts, max_size=10), st.lists(texts, min_size=1, max_size=10))
def test_every_key_starting_with_a_text_is_found_in_key_order(keys, probes):
    values = {key: ("group", key) for key in keys}
    prefixed = AffixIndex(values)
    for text in probes:
        assert prefixed.extending(text) == [values[k] for k in sorted(keys) if k.startswith(text)]
