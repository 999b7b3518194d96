"""The Shards panel (issue 9): per-file health, sortable, double-click shows that file's records."""

from PySide6.QtCore import Qt

from tests.gui.driver import Driver
from tests.helpers import framed, payloads


def _split(tmp_path):
    data, offs = framed(payloads(5))
    for i in range(4):
        b = bytearray(data)
        if i == 2:
            b[offs[1] + 20] ^= 1
            b[offs[3] + 20] ^= 1
        (tmp_path / f"s-{i:05d}-of-00004.tfrecord").write_bytes(bytes(b))
    return tmp_path


def test_shards_panel_sorts_and_opens_a_shard(qtbot, open_window, tmp_path, qtmodeltester):
    w = open_window([_split(tmp_path)])
    qtbot.waitUntil(lambda: len(w.problems.rows) == 2, timeout=10000)
    assert w.shards_dock.isVisibleTo(w)  # shown for a dataset of many files
    w.shards_dock.raise_()
    w.problems.flush()
    w.shards_panel.refresh()
    s = w.shards_panel.model
    qtmodeltester.check(s, force_py=True)
    assert s.rowCount() == 4
    col = {c: i for i, c in enumerate(s.columns)}
    w.shards_view.sortByColumn(col["damaged"], Qt.SortOrder.DescendingOrder)
    assert s.data(s.index(0, col["file"])) == "s-00002-of-00004.tfrecord"
    assert [s.data(s.index(0, col[c])) for c in ("records", "ok", "damaged", "errors")] == [
        "5",
        "3",
        "2",
        "2",
    ]
    w.shards_view.doubleClicked.emit(s.index(0, 0))
    assert w.filter_edit.text() == 'file == "s-00002-of-00004.tfrecord"'
    assert w.model.match_count == 5 and w.model.record_number(0) == 10
    assert w._selected == 10
    w.problems.flush()
    assert sorted(r.target for r in w.problems.leaves()) == [11, 13]  # the panel follows
    w.filtering.apply()  # Enter in the filter box gives the same answer through the filter job
    Driver(qtbot, w).wait_filter()
    qtbot.waitUntil(lambda: w.model.match_count == 5, timeout=20000)
    assert [w.model.record_number(r) for r in range(5)] == list(range(10, 15))


def test_one_file_has_no_shards_panel(qtbot, open_window, tmp_path):
    path = tmp_path / "one.tfrecord"
    path.write_bytes(framed(payloads(3))[0])
    w = open_window([path])
    assert not w.shards_dock.isVisibleTo(w)
