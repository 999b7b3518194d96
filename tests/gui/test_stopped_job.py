"""Issue 20 (review defect 6): a salvage a person stops is a stop, not an error. The window says
"stopped" in its status bar and shows no warning dialog; the job process itself reports an
`errors.Cancelled` as a `Failed` of kind "cancelled"."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from tests.gui.driver import Driver
from tfrview.core.errors import Cancelled
from tfrview.core.procs.messages import Failed, decode, encode


def test_a_cancelled_job_is_reported_as_a_stop():
    f = Failed.of(Cancelled("salvage cancelled"))
    assert f.stopped and f.kind == "cancelled" and f.message == "stopped"
    assert decode(encode(f)) == f  # the wire shape the window reads
    assert not Failed.of(OSError("disk full")).stopped


def test_stopping_a_salvage_shows_stopped_and_no_warning(
    qtbot, open_window, damaged_file, tmp_path, monkeypatch
):
    w = open_window([damaged_file])
    Driver(qtbot, w).wait_index_phase("done", timeout=10000)
    dialogs: list[tuple[str, str]] = []  # a modal dialog would block the test: record what would show
    monkeypatch.setattr(
        QMessageBox, "warning", staticmethod(lambda _p, title, text: dialogs.append((title, text)))
    )
    monkeypatch.setattr(
        QMessageBox, "information", staticmethod(lambda _p, title, text: dialogs.append((title, text)))
    )
    out = tmp_path / "intact.tfrecord"
    before = set(w.exporting.tasks)
    w.exporting.write_intact(out, "none")
    (worker,) = set(w.exporting.tasks) - before
    worker.cancel()  # what the progress dialog's Cancel does
    qtbot.waitUntil(lambda: worker not in w.exporting.tasks, timeout=30000)
    assert dialogs == []
    assert w.statusBar().currentMessage() == "Save intact records: stopped"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left
