"""The sandbox's rows (`runtime/sandbox/rows.py`) declare each field twice — in `FIELDS`, which runs, and as a
class annotation, which type checkers read: the two lists are the same."""

from __future__ import annotations

import pytest

from dshc.runtime.sandbox.confine import Confinement, Launch
from dshc.runtime.sandbox.probe import Probe
from dshc.runtime.sandbox.rows import Row


@pytest.mark.parametrize("row", [Confinement, Launch, Probe])
def test_a_rows_annotations_name_its_fields(row):
    assert issubclass(row, Row)
    annotated = {name for name in row.__annotations__ if name != "FIELDS"}
    assert annotated == set(row.FIELDS)
