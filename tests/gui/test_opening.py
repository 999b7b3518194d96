import gc

from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDropEvent

from tests.gui.driver import Driver
from tests.helpers import PENGUIN, RACCOON


def test_drop_files_asks_to_open_them(qtbot, open_window):
    w = open_window([RACCOON])
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(PENGUIN))])
    ev = QDropEvent(
        QPointF(QPoint(10, 10)),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(w.open_requested) as sig:
        w.dropEvent(ev)
    assert sig.args == [[str(PENGUIN)]]


def test_second_file_new_window_reload_replaces_and_recent_files(qtbot):
    from tfrview.gui.app import Windows

    collecting = gc.isenabled()
    wins = Windows()
    a = wins.open_dataset([str(RACCOON)])
    # the collector was paused while the window was made, and what it made frozen out of later
    # collections (`app._collector_paused`): running again, as it was
    assert gc.isenabled() == collecting and gc.get_freeze_count() > 0
    Driver(qtbot, a).wait_index_ended()
    a.open_requested.emit([str(PENGUIN)])
    assert len(wins.open) == 2 and wins.open[1].ds.name == "penguin_train-00000-of-00001.gz"
    b = wins.open[1]
    Driver(qtbot, b).wait_index_ended()
    b.reload()
    qtbot.waitUntil(lambda: len(wins.open) == 2 and b not in wins.open, timeout=10000)
    assert wins.open[-1].ds.name == "penguin_train-00000-of-00001.gz"
    recent = QSettings().value("recent", [], type=list)
    assert str(PENGUIN) in recent
    assert str(RACCOON) in recent
    for w in list(wins.open):
        w.close()
    qtbot.waitUntil(lambda: not wins.open, timeout=10000)
    assert gc.get_freeze_count() == 0  # a closed window's objects are the collector's again


def test_geometry_is_remembered(qtbot, open_window):
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.gui.main_window import MainWindow

    w = open_window([RACCOON])
    w.resize(640, 480)  # smaller than the offscreen screen, which restoreGeometry clamps to
    w.close()  # saves the geometry
    w2 = MainWindow(Dataset.open([str(RACCOON)]))
    qtbot.addWidget(w2)
    try:
        assert (w2.width(), w2.height()) == (640, 480)
    finally:
        w2.shutdown()


def test_paging_indicator_past_the_row_cap(qtbot, open_window, tmp_path):
    from tfrview.core.output.writer import write_records

    p = tmp_path / "many.tfrecord"
    write_records(p, [b"%d" % i for i in range(300)])
    w = open_window([p])
    w.model.row_cap = 100
    w.model.set_page(0)
    w.select_record(250)
    w._update_status()
    assert "showing records 200–299" in w.status_label.text()


def test_the_spare_job_process_waits_for_the_first_rows(qtbot, open_window, monkeypatch):
    """No spare job process while the window and its first rows are made (on 2 cores its start-up
    took a core from them); it starts once the first rows have painted (`session._spare_soon`)."""
    from tfrview.core.procs import launch
    from tfrview.gui import session

    monkeypatch.delenv(launch.NO_SPARE_ENV, raising=False)
    launch.drop_spare()
    started = []
    monkeypatch.setattr(launch, "prewarm", lambda: started.append(True))
    w = open_window([RACCOON], wait=False)
    assert started == []  # the window made, its scan started: no spare yet
    Driver(qtbot, w).wait_index_ended()
    qtbot.waitUntil(lambda: started != [], timeout=session.SPARE_AFTER_MS + 5000)
    assert w.session._painted


def test_row_0_is_selected_when_the_tables_focus_made_it_current_first(qtbot, open_window):
    """Qt's focus-in makes the first row current without selecting it; when that comes between
    the first rows and `_select_first`, row 0 is still selected (it showed unmarked)."""
    from PySide6.QtCore import QItemSelectionModel

    w = open_window([RACCOON], wait=False)
    qtbot.waitUntil(lambda: w.model.rowCount() > 0, timeout=10000)
    sm = w.table.selectionModel()
    if not sm.hasSelection():  # (as a focus-in does it)
        sm.setCurrentIndex(w.model.index(0, 0), QItemSelectionModel.SelectionFlag.NoUpdate)
    qtbot.waitUntil(lambda: sm.hasSelection(), timeout=2000)
    assert [i.row() for i in sm.selectedRows()] == [0] and w._selected == 0
