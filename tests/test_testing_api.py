"""`dshc.testing`, the shipped property-testing API: its assertions fail with the call that breaks
them, its strategies reach every rule through the policy's argument classes, it needs hypothesis
only for the strategies, and the documented example runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import find, given, settings

from dshc.compiler.diagnostics import DshError
from dshc.testing import (
    Call,
    argument_classes,
    assert_decides,
    assert_never_widens,
    calls,
    load_policy,
    reachable,
    requests,
)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "testing"
TEAM = load_policy("team", EXAMPLE / "team.dsh")
NEXT = load_policy("team-next", EXAMPLE / "team.dsh")
PUSH = ("bash", {"command": "git push origin main", "description": "d"})


def test_assert_decides_passes_on_the_decision_and_names_it_otherwise():
    assert_decides(TEAM, PUSH, "ask")
    with pytest.raises(
        AssertionError,
        match=r"decides bash\(.*git push origin main.*\) .* as `ask`, not `allow`: "
        r"rule `ask` matched \(decided by team/ask@7\)",
    ):
        assert_decides(TEAM, PUSH, "allow")
    with pytest.raises(ValueError, match="effect must be one of"):
        assert_decides(TEAM, PUSH, "conditional")


def test_a_call_is_decided_under_the_policy_it_is_asserted_against():
    call = Call(
        TEAM.context.model_copy(update={"policy": "team"}),
        "bash",
        {"command": "git push --force x", "description": "d"},
    )
    assert_decides(TEAM, call, "ask")
    assert_decides(NEXT, call, "deny")


def test_assert_never_widens_names_the_first_widened_call():
    assert_never_widens(TEAM, NEXT)  # the edit adds a deny rule: narrower
    with pytest.raises(
        AssertionError,
        match=r"policy `team` widens bash\(\{'command': 'git push --force'\}\).*"
        r"`deny` under `team-next`, now `ask`",
    ):
        assert_never_widens(NEXT, TEAM)


def test_a_tool_the_new_side_adds_is_a_widening():
    def open_policy(mounts: str):
        text = f'preset p "P" {{\n{mounts}}}\npolicy open "Open" {{\n  default allow\n}}\n'
        return load_policy("open", texts={"p.dsh": text}, preset="p")

    old, new = open_policy("  mount tool-fs\n"), open_policy("  mount tool-fs\n  mount tool-bash\n")
    with pytest.raises(AssertionError, match=r"widens bash\(\{\}\) · preset p .*`deny` under `open`, now `allow`"):
        assert_never_widens(old, new, within=[new.context])
    assert_never_widens(new, old, within=[new.context])


def test_the_call_strategy_reaches_every_effect_of_the_policy_rules():
    bash = calls(NEXT, tools=["bash"])
    for effect in ("allow", "ask", "deny"):
        found = find(
            bash,
            lambda call, effect=effect: NEXT.decide(call).effect == effect,
            settings=settings(max_examples=200, database=None),
        )
        assert found.tool == "bash" and NEXT.decide(found).effect == effect


@settings(max_examples=30, deadline=None)
@given(calls(NEXT, request_strategy=requests(NEXT, host="web")))
def test_drawn_calls_are_reachable_tools_with_argument_class_witnesses(call):
    assert call.request.host == "web" and call.request.policy == "team-next"
    assert call.tool in reachable(NEXT.program, call.request)
    assert call.arguments in argument_classes(NEXT.program, call.request, call.tool)


def test_requests_pins_fields_and_refuses_an_empty_domain():
    with pytest.raises(ValueError, match="no composable request"):
        requests(NEXT, host="no-such-host")


def test_an_unknown_policy_is_a_diagnostic():
    with pytest.raises(DshError, match="no policy `tema`"):
        load_policy("tema", EXAMPLE / "team.dsh")


def test_without_hypothesis_the_strategies_say_what_to_install_and_the_assertions_still_work(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    with pytest.raises(ImportError, match=r"pip install 'dshc\[testing\]'"):
        calls(TEAM)
    assert_decides(TEAM, PUSH, "ask")


def test_the_documented_example_runs():
    # `-n 0`: in one process, as a user's project runs it (the project's own addopts spread tests over CPUs)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", str(EXAMPLE)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0 and "4 passed" in done.stdout, done.stdout + done.stderr
