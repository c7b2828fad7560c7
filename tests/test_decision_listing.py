"""A Decision lists its deciding rules on first read; a shared decision may be read by several threads."""
from dshc.compiler.policy.decision import Decision

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
