"""Typing in the record table never walks the rows (issue 9): Qt's type-ahead search called Python
data() for every row, freezing the window for minutes on 2 M records."""

from __future__ import annotations

import time

import pytest

from tfrview.core.tfrecord.framing import encode_record


@pytest.fixture(scope="module")
def two_million(tmp_path_factory):
    path = tmp_path_factory.mktemp("typing") / "two-million.tfrecord"
    path.write_bytes(encode_record(b"\x0a\x00") * 2_000_000)  # 2 M empty Examples, 36 MB
    return path


def test_printable_keys_on_a_2m_row_table_never_block(qtbot, open_window, two_million):
    w = open_window([two_million])
    assert w.model.total() == 2_000_000
    worst = 0.0
    for key in "abcxyzABC!?-=.,;" + "0123456789" + "lable == 3":
        w.table.setFocus()
        t0 = time.perf_counter()
        qtbot.keyClicks(w.table, key)
        worst = max(worst, time.perf_counter() - t0)
    assert worst < 0.05, f"a key press blocked the UI thread for {worst * 1000:.0f} ms"


def test_digits_go_to_that_record_and_text_starts_a_filter(qtbot, open_window, two_million):
    w = open_window([two_million])
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)  # focus moves only in the active window
    w.table.setFocus()
    qtbot.keyClicks(w.table, "1234567")
    assert w._selected == 1_234_567 or w.table.currentIndex().row() == w.model.row_of(1_234_567)
    qtbot.keyClicks(w.table, "9999999999")  # past the end: the last record
    w.table.setFocus()
    qtbot.keyClicks(w.table, "w")
    assert w.filter_edit.hasFocus() and w.filter_edit.text().endswith("w")
    qtbot.keyClicks(w.filter_edit, "idth > 3")
    assert w.filter_edit.text().endswith("width > 3")


def test_the_gallery_and_problems_views_do_not_search_either(qtbot, open_window, two_million):
    w = open_window([two_million])
    for view in (w.gallery, w.problems_view):
        t0 = time.perf_counter()
        view.keyboardSearch("zzz")
        assert time.perf_counter() - t0 < 0.05


def test_the_number_column_shows_whole_numbers(qtbot, open_window, two_million):
    w = open_window([two_million])
    c = w.model.columns.index("#")
    need = w.table.fontMetrics().horizontalAdvance("1,999,999")
    assert w.table.horizontalHeader().sectionSize(c) > need
