"""The window at scale (issue 19.3): a selection of every row is one range and no view walks it
(Ctrl+A then the Gallery froze the window ~13 s on 2,000,000 records), and the Shards panel finds
the bad shard among many at once."""

from __future__ import annotations

import sys

import numpy as np
from PySide6.QtCore import Qt

from tests.gui.driver import Driver
from tests.helpers import framed, payloads
from tfrview.core.output.writer import write_records


class _CallCount:
    """How often Python methods of these names run (Qt calls them from C++) while it is on."""

    def __init__(self, *names: str) -> None:
        self.names, self.calls = set(names), 0

    def __enter__(self) -> _CallCount:
        def hook(frame, event, _arg) -> None:
            if event == "call" and frame.f_code.co_name in self.names:
                self.calls += 1

        sys.setprofile(hook)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(None)


def test_every_row_selected_is_one_range_and_the_gallery_follows_without_walking_it(
    qtbot, open_window, tmp_path
):
    path = tmp_path / "many.tfrecord"
    n = 20_000
    write_records(path, (b"r%06d" % i for i in range(n)))
    w = open_window([path])
    assert w.model.rowCount() == n
    w.table.setFocus()
    with _CallCount("rowCount", "columnCount") as counted:
        w.table.selectAll()  # what Ctrl+A does (a key click needs the focus, which a loaded offscreen run may not give)
        w.table.viewport().repaint()
        w.table.horizontalHeader().viewport().repaint()
        w.tabs.setCurrentWidget(w.gallery)
        # the gallery's current moves inside the selection (Qt makes its first item current when it
        # takes the focus; a click): that record is shown, and the selection once became that row
        w.gallery.setCurrentIndex(w.gallery_model.index(5, 0))
        qtbot.waitUntil(lambda: w._selected == 5, timeout=5000)
        qtbot.wait(50)
        w.tabs.setCurrentWidget(w.table)
        w.table.horizontalHeader().viewport().repaint()
        qtbot.wait(50)
    # the header asked isColumnSelected, which walked every row: 2 calls a cell, 12 n in all (n rows x 6
    # columns); now the rows painted and the gallery laid out, a count that grows with the repaints a
    # loaded machine makes (1.5 n seen), never with the selection
    assert counted.calls < 3 * n, counted.calls
    sel = w.table.selectionModel().selection()
    assert len(sel) == 1 and (sel[0].top(), sel[0].bottom()) == (0, n - 1)
    numbers = w.exporting.selected_records()
    assert isinstance(numbers, np.ndarray) and np.array_equal(numbers, np.arange(n))
    w.tabs.setCurrentWidget(w.gallery)
    qtbot.waitUntil(lambda: w.gallery.currentIndex().isValid(), timeout=5000)
    assert w.gallery_model.record_number(w.gallery.currentIndex().row()) == w._selected


def test_the_shards_panel_puts_the_bad_shard_first_among_many(qtbot, open_window, tmp_path):
    data, offs = framed(payloads(3))
    shards = 300
    for i in range(shards):
        b = bytearray(data)
        if i == 211:
            b[offs[1] + 20] ^= 1
        (tmp_path / f"s-{i:05d}-of-{shards:05d}.tfrecord").write_bytes(bytes(b))
    w = open_window([tmp_path])
    d = Driver(qtbot, w)
    d.wait_indexed()
    w.problems.flush()
    w.shards_panel.refresh()
    s = w.shards_panel.model
    col = {c: i for i, c in enumerate(s.columns)}
    assert s.rowCount() == shards
    w.shards_view.sortByColumn(col["damaged"], Qt.SortOrder.DescendingOrder)
    assert s.data(s.index(0, col["file"])) == "s-00211-of-00300.tfrecord"
    assert [s.data(s.index(0, col[c])) for c in ("records", "ok", "damaged")] == ["3", "2", "1"]
    assert s.data(s.index(1, col["damaged"])) == "0"
    w.shards_view.sortByColumn(col["file"], Qt.SortOrder.DescendingOrder)
    assert s.data(s.index(0, col["file"])) == "s-00299-of-00300.tfrecord"
    assert s.data(s.index(shards - 1, col["file"])) == "s-00000-of-00300.tfrecord"


def test_reopening_a_split_takes_every_file_from_the_store_a_batch_at_a_time(
    qtbot, open_window, tmp_path, monkeypatch
):
    from tfrview.core.analysis import cache

    data, offs = framed(payloads(4))
    shards = 30
    for i in range(shards):
        b = bytearray(data)
        if i == 7:
            b[offs[2] + 20] ^= 1
        (tmp_path / f"r-{i:05d}-of-{shards:05d}.tfrecord").write_bytes(bytes(b))
    w = open_window([tmp_path])
    Driver(qtbot, w).wait_checks()
    asked: list[str] = []
    real_many = cache.load_many
    monkeypatch.setattr(cache, "load", lambda task, index_only=False: asked.append(task.path))
    monkeypatch.setattr(
        cache,
        "load_many",
        lambda tasks, index_only=False: (asked.append(len(tasks)), real_many(tasks, index_only))[1],
    )
    again = open_window([tmp_path])
    d = Driver(qtbot, again)
    assert d.stored_files == shards
    # one query for the deep pass's results and the scan's together (one identity a file), no file alone
    assert asked == [2 * shards]
    assert again.model.total() == 4 * shards
    assert again.model.status_of(7 * 4 + 2) == "damaged" and again.model.status_of(7 * 4 + 1) == "ok"
