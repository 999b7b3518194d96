"""Opening a TFDS folder of several configs in the window asks which (each config/version with
its splits and counts from its dataset_info.json) and opens the one chosen; a folder of several
versions opens its newest and the status line says so."""

from __future__ import annotations

from PySide6.QtCore import QTimer

from tests.gui.driver import Driver
from tests.tfdsdata import make_tfds


def _bridge(tmp_path):
    make_tfds(tmp_path / "bridge", name="default", version="1.0.0")
    make_tfds(tmp_path / "bridge", name="other", version="2.0.0")
    make_tfds(tmp_path / "bridge", name="other", version="2.1.0", lengths={"train": [5, 1]})
    return tmp_path / "bridge"


def _close(qtbot, wins) -> None:
    for w in list(wins.open):
        w.close()
    qtbot.waitUntil(lambda: not wins.open, timeout=10000)


def test_the_window_asks_which_config_and_opens_it(qtbot, tmp_path) -> None:
    from tfrview.gui.app import Windows

    bridge = _bridge(tmp_path)
    wins = Windows()
    seen = {}

    def answer() -> None:
        dlg = wins.asking
        if dlg is None:  # not shown yet
            QTimer.singleShot(20, answer)
            return
        seen["rows"] = dlg.rows()
        seen["default"] = dlg.chosen().label
        dlg.choose("other/2.0.0")
        dlg.accept()

    QTimer.singleShot(0, answer)
    w = wins.open_dataset([str(bridge)])
    try:
        assert seen["rows"] == [
            ("default/1.0.0", "train 9 · test 2"),
            ("other/2.0.0", "train 9 · test 2"),
            ("other/2.1.0", "train 6"),
        ]
        assert seen["default"] == "default/1.0.0"
        Driver(qtbot, w).wait_index_ended()
        assert w.ds.name == "other/2.0.0" and len(w.ds.files) == 4
        assert w.status_label.text().startswith("TFDS other/2.0.0 (11 records in 2 splits")
    finally:
        _close(qtbot, wins)


def test_a_cancelled_choice_opens_nothing_and_says_the_folders(qtbot, tmp_path) -> None:
    import pytest

    from tfrview.core.errors import TfrviewError
    from tfrview.gui.app import Windows

    bridge = _bridge(tmp_path)
    wins = Windows()

    def cancel() -> None:
        if wins.asking is None:
            QTimer.singleShot(20, cancel)
            return
        wins.asking.reject()

    QTimer.singleShot(0, cancel)
    with pytest.raises(TfrviewError, match=r"default/1.0.0, other/2.0.0, other/2.1.0"):
        wins.open_dataset([str(bridge)])  # no window yet: the one line the app prints
    assert wins.open == []


def test_several_versions_open_the_newest_and_the_status_line_says_so(qtbot, tmp_path) -> None:
    from tfrview.gui.app import Windows

    bridge = _bridge(tmp_path)
    wins = Windows()
    w = wins.open_dataset([str(bridge / "other")])
    try:
        Driver(qtbot, w).wait_index_ended()
        qtbot.waitUntil(lambda: "newest of 2 versions" in w.status_label.text(), timeout=5000)
        assert w.status_label.text().startswith(
            "TFDS other/2.1.0 (newest of 2 versions; 6 records in 1 split"
        )
    finally:
        _close(qtbot, wins)
