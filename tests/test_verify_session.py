"""`dshc verify` over policies that test the session: every call is decided in each session state the tests
tell apart (the strictest, no log, and a concrete one per class of earlier calls), not in the strictest alone,
where every session test holds for a deny: a deny loosened from `> 20` to `> 30` denied calls did not show."""

from __future__ import annotations

import pytest

from dshc.compiler import verify as verify_module
from dshc.compiler.policy import Decision
from dshc.compiler.program import Program
from dshc.compiler.session_states import session_states
from dshc.compiler.verify import verify

REMEMBERS = """
policy remembers "Asks after a secret was read" {
  default allow
  ask bash, web_fetch when session.read matches "*.env"
  deny bash when session.env_read matches "*_TOKEN" and args.command matches "curl *"
  deny write when session.denied_count > 20
  allow read when not session.read matches "secrets/*"
}
"""


def _program(text: str = REMEMBERS) -> Program:
    return Program.load(texts={"p.dsh": text})


@pytest.fixture(scope="module")
def against_itself():
    """(the policy's program, its proof against itself): the proof of narrowing and monotonicity with nothing
    wider than itself besides, shared by the tests that read either."""
    program = _program()
    return program, verify(program, against=program, policy_names=["remembers"])


def test_a_policy_that_tests_the_session_is_proved_in_every_state(against_itself):
    _, report = against_itself
    assert report.exact and not report.violations, (report.notes, report.violations)


def test_a_deny_that_widens_only_after_an_earlier_read_is_caught(monkeypatch):
    """Mutation test: a deny that allows once the session read a `.env` file; the strictest state alone (no log)
    never shows it."""
    real = verify_module.decide

    def broken(policy, approval, source, name, tool, env, **options):
        decision = real(policy, approval, source, name, tool, env, **options)
        read = [value for value, _ in env.session.read] if env.session is not None else []
        if decision.effect == "deny" and any(value.endswith(".env") for value in read):
            return Decision("allow", "a broken deny", decision.deciding)
        return decision

    monkeypatch.setattr(verify_module, "decide", broken)
    report = verify(_program(), policy_names=["remembers"])
    found = [v for v in report.violations if v.property == "monotonicity"]
    assert found and found[0].witness["session"]["read"], report.violations
    assert any(value.endswith(".env") for value in found[0].witness["session"]["read"])


def test_against_old_catches_a_session_deny_that_holds_later(against_itself):
    old, itself = against_itself
    assert not itself.violations
    new = _program(REMEMBERS.replace("session.denied_count > 20", "session.denied_count > 30"))
    report = verify(new, against=old, policy_names=["remembers"])
    wider = next(v for v in report.violations if v.property == "against")
    assert wider.message.endswith("deny → allow")  # a write, or a shell line that writes
    assert 20 < wider.witness["session"]["denied_count"] <= 30


def test_the_states_are_every_class_the_tests_make():
    program = _program("""
policy p {
  default allow
  ask bash when session.read matches "*.env" or session.read matches "a.env"
  deny bash when session.denied_count >= 3 or session.env_read in ["OPENAI_API_KEY"]
}
""")
    policy = program.resolved.policies["p"]
    states = session_states(item.condition for item in policy.rules)
    assert states.exact and states.states[0] is None
    conditions = [item.condition for item in policy.rules]

    def holds(condition, state):  # each condition here is an `or` of session tests
        return any(state.test(atom, False) for atom in condition.items)

    answers = {tuple(holds(condition, state) for condition in conditions) for state in states.states[1:]}
    # the ask's `or` holds or not (which of its globs an earlier read met does not matter), and so does the
    # deny's: every mix of the two conditions (and, apart, a read of anything: it holds only for a deny)
    assert answers == {(ask, deny) for ask in (True, False) for deny in (True, False)}
    assert session_states([None]).states == (None,)


def test_which_test_of_an_or_held_is_not_a_state_of_its_own():
    """A guard testing 40 secret patterns in one `or` needs the states "one of them was read" and "none was",
    not one state per pattern: verify decides every call in each state."""
    patterns = " or ".join(f'session.read matches "*.secret{n}"' for n in range(40))
    program = _program(
        f'policy p {{\n  default allow\n  ask bash when ({patterns}) and args.command matches "curl *"\n}}\n'
    )
    states = session_states(item.condition for item in program.resolved.policies["p"].rules)
    # the strictest, one pattern read, none read, and a read of anything (it holds only for an ask)
    assert len(states.states) <= 4
