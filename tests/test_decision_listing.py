"""A Decision lists its deciding rules on first read; a shared decision may be read by several threads."""

import pytest

from dshc.compiler.policy.decision import Decision, LaterDeny

LISTED = (("team/deny@3", None),)


class _ListedMeanwhile(Decision):
    """A reader whose first look at the listing comes just before another thread finished it: its
    first read of `_deciding` sees nothing yet, every later one sees the finished listing."""

    __slots__ = ("_looked",)

    @property
    def _deciding(self):
        if not getattr(self, "_looked", False):
            self._looked = True
            return None
        return Decision._deciding.__get__(self)

    @_deciding.setter
    def _deciding(self, value):
        Decision._deciding.__set__(self, value)


def test_a_listing_finished_by_another_thread_between_two_reads_is_read_not_rebuilt():
    decision = _ListedMeanwhile("deny", "a rule matched", build=lambda: LISTED)
    Decision._deciding.__set__(decision, LISTED)  # the other thread's work: listed, then `_build` cleared
    decision._build = None
    assert decision.deciding == LISTED


def test_the_listing_is_built_once_and_then_kept():
    builds = []
    decision = Decision("deny", "a rule matched", build=lambda: builds.append(1) or LISTED)
    assert decision.deciding == LISTED and decision.deciding == LISTED
    assert builds == [1]


class _Counted(LaterDeny):
    """A deny listed from what it holds: (the listing, a list of builds)."""

    reason = "a rule matched"

    def _list(self):
        self[1].append(1)
        return self[0]


def test_a_deny_made_as_a_tuple_is_a_decision_equal_to_the_stored_one():
    later, stored = _Counted((LISTED, [])), Decision("deny", "a rule matched", LISTED)
    assert later == stored and stored == later and not later != stored and not stored != later
    assert (later.effect, later.gate, later.matched, later.allowed) == ("deny", "allowed", True, False)
    assert later != Decision("deny", "another reason", LISTED) and later != Decision("ask", "a rule matched", LISTED)
    assert later != tuple(later) and not later == tuple(later)  # a decision, not the tuple it is made of
    with pytest.raises(TypeError):
        hash(later)  # a decision is never a key, whatever it is made of


def test_a_tuple_made_deny_lists_once_and_keeps_the_listing():
    builds: list = []
    later = _Counted((LISTED, builds))
    assert builds == []  # nothing is listed until read
    assert later.deciding == LISTED and later.deciding == LISTED and builds == [1]


def test_a_deny_that_cannot_list_its_rules_says_so():
    class Unlisted(LaterDeny):
        reason = "a rule matched"

    with pytest.raises(TypeError, match="Unlisted does not say how its rules are listed"):
        Unlisted(()).deciding
