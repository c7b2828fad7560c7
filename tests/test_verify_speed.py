"""verify's speed-ups keep its answers: the shortest-witness search and the progress bar."""

from __future__ import annotations

import io

import pytest

from dshc.cli.progress import ProgressBar
from dshc.compiler import argclasses
from dshc.compiler.globs import glob_regex


def _first_string(region):
    return next(("".join(chars) for chars in region.strings()), None)


# witnesses at most two characters long: the enumeration's cost is the alphabet to that power
@pytest.mark.parametrize("patterns", [["*.p", "s/*"], ["a?", "?b", "*"], ["[ab]*", "*z"], ["x", "*x*"]])
def test_the_shortest_witness_is_the_first_string_the_enumeration_yields(patterns):
    regions = argclasses._atoms(argclasses.TEXT_UNIVERSE, [glob_regex(p, False) for p in patterns])
    for region in regions:
        assert argclasses._shortest(region) == _first_string(region)


def test_a_suffix_pattern_gets_its_witness_without_enumerating_the_alphabet():
    (inside, outside) = argclasses._atoms(argclasses.TEXT_UNIVERSE, [glob_regex("*.env", False)])
    assert {argclasses._shortest(inside), argclasses._shortest(outside)} == {".env", ""}
    empty = argclasses._fsm("a") & argclasses._fsm("b")
    assert argclasses._shortest(empty) is None


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_bar_stays_quiet_for_a_second_then_draws_and_clears():
    clock, stream = _Clock(), io.StringIO()
    stream.isatty = lambda: True
    bar = ProgressBar(stream, "verify", clock=clock)
    bar(1, 10)
    assert stream.getvalue() == ""
    clock.now = 1.5
    bar(5, 10)
    assert "verify [###############...............] 5/10 (50%, 2 s)" in stream.getvalue()
    clock.now = 1.55
    bar(6, 10)  # within a tenth of a second: not redrawn
    assert "6/10" not in stream.getvalue()
    bar.close()
    assert stream.getvalue().endswith("\r\x1b[K")


def test_off_a_terminal_the_bar_is_whole_lines_every_ten_seconds():
    clock, stream = _Clock(), io.StringIO()
    bar = ProgressBar(stream, "verify", clock=clock)
    for second in range(1, 25):
        clock.now = float(second)
        bar(second, 30)
    bar(30, 30)
    bar.close()
    lines = stream.getvalue().splitlines()
    assert [line.split("] ")[1].split(" ")[0] for line in lines] == ["1/30", "11/30", "21/30", "30/30"]
