"""The window's filter reads the dataset step's per-record columns (issue 21, item 6): after the
analysis, `leak` and `dup_group == N` select exactly the planted copies, as the CLI's facts do
(tests/core/test_stepcolumns.py tests the filter job's other cases without a window)."""

from __future__ import annotations

import pytest

from tests.gui.driver import Driver
from tests.helpers import copies_split


@pytest.mark.slow  # an analysis and two filter jobs' processes: ~6 s on 2 busy cores
def test_the_filter_selects_planted_copies_and_leaks(qtbot, open_window, tmp_path):
    w = open_window(copies_split(tmp_path / "split"))
    d = Driver(qtbot, w)
    d.wait_analysed()
    assert d.filter("leak") == [2, 5]  # B in train and its copy in validation
    group_of_a = next(g.number for g in w.duplicates_model.rows if g.members[0].n == 0)  # as the view says it
    assert d.filter(f"dup_group == {group_of_a}") == [0, 1]  # A and its exact copy
