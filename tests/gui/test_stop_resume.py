"""Esc stops only what the focused part started, and a stopped scan can be resumed (issue 9)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from tests.gui.driver import Driver
from tests.helpers import framed, payloads


@pytest.fixture
def damaged_late(tmp_path):
    """8,000 records with damage at 50 % and 90 %."""
    data, offs = framed(payloads(8000, base=200))
    b = bytearray(data)
    for k in (4000, 7200):
        b[offs[k] + 20] ^= 1  # a bad data CRC
    path = tmp_path / "late.tfrecord"
    path.write_bytes(bytes(b))
    return path


def test_esc_in_the_filter_box_never_stops_the_scan(qtbot, open_window, damaged_late):
    w = open_window([damaged_late], wait=False)
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)
    w.filter_edit.setFocus()
    qtbot.keyClick(w.filter_edit, Qt.Key.Key_Escape)
    assert Driver(qtbot, w).wait_index_ended() == "done" and w.model.total() == 8000
    assert sorted(r.record for r in w.problems.rows if r.problem.kind == "bad_data_crc") == [4000, 7200]


def test_a_stopped_scan_says_so_and_resumes(qtbot, open_window, damaged_late):
    w = open_window([damaged_late], wait=False)
    d = Driver(qtbot, w)
    d.stop_scan()  # as Esc elsewhere in the window does
    if d.wait_index_ended() == "done":
        pytest.skip("the scan finished before it could be stopped")
    assert d.index_phase == "cancelled"
    assert "only partly read" in w.status_label.text() and "all CRCs checked" not in w.status_label.text()
    assert w.cancel_button.isVisible() and w.cancel_button.defaultAction() is w.actions_by_name["resume"]
    w.cancel_button.click()
    qtbot.waitUntil(lambda: d.index_ended() and d.index_phase == "done", timeout=30000)
    assert w.model.total() == 8000 and "all CRCs checked" in w.status_label.text()
    bad = [r.record for r in w.problems.rows if r.problem.kind == "bad_data_crc"]
    assert sorted(bad) == [4000, 7200]  # each once: nothing reported twice after resuming
    assert not w.cancel_button.isVisible()
