"""A shell command's glob entries found by their literal parts are exactly those `segment_matches`
admits one by one: denies and asks where some command the segment could be matches (expansion words,
a program named by its path), allows where every one does, none for an allow on a hazard."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler import ast
from dshc.compiler.policy.core import lenient
from dshc.compiler.policy.index import _FieldIndex, _Globbed
from dshc.compiler.shell import Segment, segment_matches
from dshc.compiler.source import Span

from conftest import examples

WORDS = ["git", "push", "rm", "-rf", "a", "ab", "x.sh"]
word_globs = st.sampled_from(WORDS + ["*", "?", "a*", "*b", "g?t"])
patterns = st.one_of(
    st.lists(word_globs, min_size=1, max_size=3).map(" ".join),
    st.builds(
        lambda words, tail: " ".join(words) + tail,
        st.lists(st.sampled_from(WORDS), max_size=3),
        st.sampled_from(["", " ", "*", " *", "?"]),
    ),
    st.builds(lambda words: "*" + " ".join(words), st.lists(st.sampled_from(WORDS), max_size=2)),
    st.sampled_from(["", "*", "**", " *", "rm ", "*.sh "]),
)
segments = st.builds(
    lambda argv, literal, base, hazard: Segment(
        tuple(argv), literal=min(literal, len(argv)) if literal is not None else None, base=base, hazard=hazard
    ),
    st.lists(st.sampled_from(WORDS + ["$X", "./rm"]), min_size=1, max_size=4),
    st.one_of(st.none(), st.integers(0, 4)),
    st.sampled_from(["", "rm", "git"]),
    st.sampled_from(["", "runs code"]),
)


def _index(rules):
    index = _FieldIndex()
    for line, (effect, pattern) in enumerate(rules, start=1):
        rule = ast.Rule(effect, (), None, Span("p.dsh", line, 1, line, 2))
        index.add(_Globbed(rule, None, pattern), shell=True)
    index.seal(lambda tiers: None)
    return index


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(["allow", "ask", "deny"]), patterns), min_size=1, max_size=12),
    st.lists(segments, min_size=1, max_size=6),
)
def test_entries_found_by_literal_parts_are_those_matching_one_by_one(rules, probes):
    index = _index(rules)
    for segment in probes:
        expected = {id(e) for e in index.every if segment_matches(segment, e.pattern, lenient(e.rule))}
        assert {id(e) for e in index.segment_entries(segment)} == expected, segment


def test_an_expansion_after_literal_words():
    index = _index(
        [
            ("deny", "git push*"),
            ("allow", "git *"),
            ("allow", "git push"),
            ("ask", "*.sh"),
            ("deny", "rm *"),
            ("allow", "rm "),
        ]
    )
    (found,) = [sorted(e.pattern for e in index.segment_entries(Segment(("git", "$X"), literal=1)))]
    assert found == ["*.sh", "git *", "git push*"]  # `$X` may be `push --force` or `a.sh`; only `git *` covers all
    found = sorted(e.pattern for e in index.segment_entries(Segment(("rm", "$X"), literal=1)))
    assert found == ["*.sh", "rm *"]  # the deny's bare `rm` and its `rm …`; `"rm "` covers no `rm $X`
