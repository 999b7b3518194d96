"""The Duplicates view (issue 21): the analysis's groups of copies as rows of thumbnails with their
split and record; a click on one shows that record in the table. The groups come as the analysis
job sends them (`messages.DuplicateGroups`, through the session's signal)."""

from __future__ import annotations

from tests.gui.driver import Driver
from tests.helpers import RACCOON
from tfrview.core.procs.messages import CopyGroup, DuplicateGroups


def test_groups_show_as_rows_of_thumbnails_and_a_click_shows_the_record(qtbot, open_window, qtmodeltester):
    w = open_window([RACCOON])
    d = Driver(qtbot, w)
    d.wait_analysed()  # the window's own analysis has said what it found (no groups to replace ours)
    msg = DuplicateGroups(
        (
            CopyGroup(1, True, ((0, 2, "train"), (0, 9, "train")), 0),
            CopyGroup(2, False, ((0, 4, "train"), (0, 7, "validation"), (0, 11, "validation")), 3),
        ),
        2,
    )
    w.session.duplicates_ready.emit(msg)
    d.show_duplicates()
    assert d.duplicates_tab_text() == "Duplicates (2)"
    rows = d.duplicate_rows()
    assert rows[0] == ("group 1 · 2 exact copies · train", [("train", 2), ("train", 9)])
    assert rows[1][0] == "group 2 · 6 copies and near copies · train, validation"
    assert rows[1][1] == [("train", 4), ("validation", 7), ("validation", 11)]
    qtbot.waitUntil(lambda: d.duplicate_thumbnails_ready(1), timeout=20000)  # painted, so asked
    d.click_copy(1, 2)
    qtbot.waitUntil(lambda: w._selected == 11, timeout=5000)
    assert w.tabs.currentWidget() is w.table
    assert w.model.record_number(w.table.currentIndex().row()) == 11
    qtmodeltester.check(w.duplicates_model, force_py=True)
    # a new analysis: the groups of the last one go
    w.session.analysis_started.emit()
    assert d.duplicate_rows() == [] and d.duplicates_tab_text() == "Duplicates"
