"""Request contexts of one Program that differ only in flags no preset row reads compose alike, and share
the work (SharedCompositions).

The cache key is everything compose reads of a request; a mistake in it would hand one context
another's tools, so every field of the cached composition is compared with a fresh one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from dshc.compiler.compose import SharedCompositions, compose
from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import Program
from dshc.compiler.request import Request

from conftest import examples

TEXT = """
preset flagged "Rows behind flags" {
  mount tool-fs
  mount tool-web when flag web_on
  mount tool-jobs when not flag no_jobs and platform == "linux"
}
scope narrow { parent root ; hide write* }
policy strict { default deny }
"""
PROGRAM = Program.load(texts={"compose-cache.dsh": TEXT})
SHARED = SharedCompositions(PROGRAM.resolved)

requests = st.builds(
    Request,
    host=st.sampled_from(["web", "headless", "nowhere"]),
    preset=st.sampled_from([None, "standard", "flagged", "minimal", "missing"]),
    platform=st.sampled_from(["linux", "darwin", "win32"]),
    with_services=st.sets(st.sampled_from(["browser", "sandbox", "unknown-service"]), max_size=2),
    without_services=st.sets(st.sampled_from(["browser", "sandbox"]), max_size=1),
    flags=st.sets(st.sampled_from(["web_on", "no_jobs", "marker", "other"]), max_size=3),
    scope=st.sampled_from(["root", "narrow", "child", "nope"]),
    mode=st.sampled_from([None, "native", "code"]),
    policy=st.sampled_from([None, "strict", "absent"]),
    plan=st.booleans(),
)


def _fresh(request: Request):
    try:
        return compose(PROGRAM.resolved, request)
    except DshError as exc:
        return ("error", [d.message for d in exc.diagnostics])


def _cached(request: Request):
    try:
        return SHARED.compose(request)
    except DshError as exc:
        return ("error", [d.message for d in exc.diagnostics])


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(requests, min_size=2, max_size=6))
def test_a_cached_composition_is_the_fresh_one(batch):
    for request in batch + batch[::-1]:  # the second pass finds what the first one cached
        assert _cached(request) == _fresh(request)


def test_a_flag_no_row_reads_shares_the_composition_and_one_a_row_reads_does_not():
    plain = SHARED.compose(Request(preset="flagged", flags=["marker"]))
    other = SHARED.compose(Request(preset="flagged", flags=["other"]))
    web = SHARED.compose(Request(preset="flagged", flags=["web_on", "marker"]))
    assert other.rows is plain.rows and other.request.flags == {"other"}  # shared work, its own request
    assert web.rows is not plain.rows
    assert (
        [r.status for r in web.rows if r.package == "tool-web"]
        == ["registered"]
        != [r.status for r in plain.rows if r.package == "tool-web"]
    )


def test_a_bad_request_is_refused_every_time():
    for _ in range(2):
        with pytest.raises(DshError):
            SHARED.compose(Request(preset="missing"))


FIELD_VALUES = {
    "host": ["web", "headless", "nowhere"],
    "preset": ["flagged", "standard", "missing", None],
    "platform": ["linux", "win32"],
    "with_services": [set(), {"browser"}, {"unknown-service"}],
    "without_services": [set(), {"sandbox"}],
    "flags": [set(), {"web_on"}, {"no_jobs"}],
    "scope": ["root", "narrow", "nope"],
    "mode": [None, "code"],
    "policy": [None, "strict", "absent"],
    "plan": [False, True],
}


@pytest.mark.parametrize("field", sorted(FIELD_VALUES))
def test_each_field_compose_reads_tells_contexts_apart(field):
    """Deterministic, field by field: a key without that field would answer the second value with the first's."""
    shared = SharedCompositions(PROGRAM.resolved)
    for value in FIELD_VALUES[field]:
        request = Request(**{"preset": "flagged", field: value})
        try:
            cached = shared.compose(request)
        except DshError as exc:
            cached = ("error", [d.message for d in exc.diagnostics])
        assert cached == _fresh(request)
