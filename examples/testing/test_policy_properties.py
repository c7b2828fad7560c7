"""Property tests of a team's policy and an edit of it, with `dshc.testing` (run: `pytest examples/testing`).

The strategies draw calls from the argument classes the policies' own patterns induce — the
classes `dshc verify` decides — so a few dozen examples reach every rule.
"""

from pathlib import Path

from hypothesis import given, settings

from dshc.testing import assert_decides, assert_never_widens, calls, load_policy, requests, widens

POLICIES = Path(__file__).with_name("team.dsh")
TEAM = load_policy("team", POLICIES)  # decided as preset standard on host web unless a call says otherwise
NEXT = load_policy("team-next", POLICIES)


def test_the_rules_decide_what_they_say():
    assert_decides(TEAM, ("bash", {"command": "git status", "description": "d"}), "allow")
    assert_decides(TEAM, ("bash", {"command": "git push origin main", "description": "d"}), "ask")
    assert_decides(NEXT, ("bash", {"command": "git push --force origin main", "description": "d"}), "deny")
    assert_decides(TEAM, ("read", {"file_path": "config/prod.env"}), "deny")


def test_the_edit_never_widens_the_policy():
    # every tool reached, every argument class either policy tells apart, native/code/both, plan off/on
    assert_never_widens(TEAM, NEXT)


@settings(max_examples=40, deadline=None)
@given(calls(NEXT, request_strategy=requests(NEXT, host="web", preset="standard")))
def test_plan_mode_never_lets_more_through(call):
    planned = call.request.model_copy(update={"plan": True})
    before = NEXT.decide(call).effect
    after = NEXT.decide(type(call)(planned, call.tool, call.arguments)).effect
    assert not widens(before, after), (call, before, after)


@settings(max_examples=40, deadline=None)
@given(calls(NEXT, tools=["bash"]))
def test_the_edit_changes_force_pushes_only(call):
    if NEXT.decide(call).effect != TEAM.decide(call).effect:
        assert call.arguments["command"].startswith("git push --force")
        assert_decides(NEXT, call, "deny")
