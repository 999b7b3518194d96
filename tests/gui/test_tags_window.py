"""Issue 23: tags in the window: D on a selection tags every selected record `drop` (the Tag column
and the gallery's badge say it, the store keeps it), Ctrl+Z undoes the whole bulk tag in one step,
Ctrl+Shift+Z redoes it; K/R/Backspace on the gallery's record; the filter `tag == "drop"`."""

from __future__ import annotations

import numpy as np
import pytest

from tests.gui.driver import Driver
from tests.helpers import framed, payloads
from tfrview.core.tags import TagStore, TagWord, file_key


@pytest.fixture(autouse=True)
def own_tags(tmp_path, monkeypatch):
    """Each test its own tag store: tags follow a file's content, and the tests' files share it."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


def test_d_on_a_selection_then_undo_and_redo(qtbot, open_window, tmp_path):
    f = tmp_path / "train.tfrecord"
    data, offs = framed(payloads(20))
    f.write_bytes(data)
    w = open_window([f])
    d = Driver(qtbot, w)
    assert d.tag_column() == [""] * 20
    d.select_rows(3, 6)
    d.press("D")
    assert d.tag_column()[2:8] == ["", "drop", "drop", "drop", "drop", ""]
    # the first letter that tags says so, once: a person typing to find a row is told why
    said = d.status_message()
    assert said.startswith("D: drop 4 records") and said.endswith("tag here; press / to filter")
    assert d.gallery_tags()[3:7] == ["drop"] * 4 and d.gallery_tags()[0] is None
    with TagStore.open() as store:
        assert sorted(store.tags_of(file_key(f))) == offs[3:7]
    d.press("Ctrl+Z")
    assert d.tag_column() == [""] * 20  # the bulk tag undone in one step
    with TagStore.open() as store:
        assert store.tags_of(file_key(f)) == {}
    d.press("Ctrl+Shift+Z")
    assert d.tag_column()[3:7] == ["drop"] * 4
    d.select_rows(9, 9)
    d.press("R")
    assert d.tag_column()[9] == "review" and d.status_message() == "review 1 record · Ctrl+Z undoes"
    d.press("Ctrl+Z")
    d.press("/")  # / puts the focus in the filter box, where / types
    assert w.filter_edit.hasFocus() and w.filter_edit.text() == ""
    d.press("/", w.filter_edit)
    assert w.filter_edit.text() == "/"
    w.filter_edit.clear()
    w.table.setFocus()
    # the gallery's record: K keeps it, Backspace clears it
    w.tabs.setCurrentWidget(w.gallery)
    w.gallery.setFocus()
    w.gallery.setCurrentIndex(w.gallery_model.index(4, 0))
    d.press("K")
    assert d.gallery_tags()[4] == "keep" and d.tag_column()[3:7] == ["drop", "keep", "drop", "drop"]
    d.press("Backspace")
    assert d.gallery_tags()[4] is None
    d.press("Ctrl+Z")
    assert d.gallery_tags()[4] == "keep"
    # a note keeps the word and shows as a mark
    w.tagging.apply(w.model.record_numbers([5]), None, "two boxes on one raccoon", "the selection")
    assert d.tag_column()[5] == "drop ✎"
    assert w.model.tag_text(5) == "drop: two boxes on one raccoon"
    # typing in the filter box types: D is a letter there, not a tag
    w.filter_edit.setFocus()
    d.press("D", w.filter_edit)
    assert w.filter_edit.text() == "d" and d.tag_column()[0] == ""


@pytest.mark.slow  # three filter jobs, each a process (~1-2 s each on 2 loaded cores)
def test_the_filter_names_tag(qtbot, open_window, tmp_path):
    f = tmp_path / "train.tfrecord"
    f.write_bytes(framed(payloads(20))[0])
    w = open_window([f])
    d = Driver(qtbot, w)
    d.select_rows(3, 5)
    d.press("D")
    assert d.filter('tag == "drop"') == [3, 4, 5]
    d.select_rows(0, 0)  # the filtered table's first row: record 3
    d.press("Backspace")  # a filter that names tag runs again when tags change
    qtbot.waitUntil(lambda: d.shown_records() == [4, 5], timeout=30000)
    w.tagging.apply(np.array([1]), TagWord.DROP, None)  # record 1, outside the filter's rows
    qtbot.waitUntil(lambda: d.shown_records() == [1, 4, 5], timeout=30000)


def test_tags_show_when_the_dataset_is_opened_again(qtbot, open_window, tmp_path):
    f = tmp_path / "a.tfrecord"
    data, offs = framed(payloads(8))
    f.write_bytes(data)
    w = open_window([f])
    d = Driver(qtbot, w)
    d.select_rows(1, 1)
    d.press("R")
    w.shutdown()
    g = tmp_path / "moved" / "b.tfrecord"
    g.parent.mkdir()
    g.write_bytes(data)  # a copy elsewhere, another name: the same content
    w2 = open_window([g])
    assert Driver(qtbot, w2).tag_column()[:3] == ["", "review", ""]
    assert str(TagWord.REVIEW) == "review"
