from PySide6.QtCore import Qt

from tests.gui.driver import Driver
from tfrview.gui.job_state import Phase


def run_filter(qtbot, w, text):
    return Driver(qtbot, w).filter(text)


def test_filter_shows_matches_as_rows(qtbot, open_window, tmp_path):
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    rows = run_filter(
        qtbot, w, '"image/object/class/text" contains "star" and len("image/object/bbox/xmin") >= 2'
    )
    assert rows and all(w.model.record_number(r) == n for r, n in enumerate(rows))
    for n in rows:
        text = w.model.data(w.model.index(w.model.row_of(n), w.model.columns.index("#")))
        assert text == str(n)
    assert "records match" in w.filter_status.text()
    assert run_filter(qtbot, w, 'kind == "sequence_example"') == [
        33,
        38,
    ]  # the demo's SequenceExample and its clip
    assert run_filter(qtbot, w, "digit == 7") == [32]
    w.filter_edit.setText("")  # clearing shows everything again
    assert w.model.filter_rows is None and w.model.rowCount() == 39


def test_filter_on_problems(qtbot, open_window, damaged_file):
    w = open_window([damaged_file])
    qtbot.waitUntil(lambda: len(w.problems.rows) >= 2, timeout=10000)
    assert run_filter(qtbot, w, 'problem == "bad_data_crc"') == [4]
    assert run_filter(qtbot, w, "problem") == [4, 10]
    assert run_filter(qtbot, w, "record >= 28") == [28, 29]


def test_filter_error_is_shown_inline(qtbot, open_window, damaged_file):
    w = open_window([damaged_file])
    d = Driver(qtbot, w)
    d.type_filter("label = 3")
    assert d.filter_state.phase is Phase.IDLE and w.model.filter_rows is None
    assert "use ==" in w.filter_status.text() and "character 7" in w.filter_status.text()
    assert w.filter_edit.cursorPosition() == 6 and w.filter_edit.property("error")
    w.filter_edit.setText("label == 3")  # editing clears the error
    assert not w.filter_edit.property("error") and w.filter_status.text() == ""


def test_job_results_arrive_on_the_ui_thread(qtbot, open_window, damaged_file, monkeypatch):
    # Workers must never touch widgets: their batches are delivered to the window's thread.
    from PySide6.QtCore import QThread
    from PySide6.QtWidgets import QApplication

    from tfrview.gui.controllers.filter import FilterController

    threads = []
    orig = FilterController._on_items

    def spy(self, worker, items):
        threads.append(QThread.currentThread() is QApplication.instance().thread())
        return orig(self, worker, items)

    monkeypatch.setattr(FilterController, "_on_items", spy)
    w = open_window([damaged_file])
    assert run_filter(qtbot, w, "record < 3") == [0, 1, 2]
    assert threads and all(threads)


def test_unknown_keys_and_bare_words_are_errors_with_a_suggestion(qtbot, open_window, tmp_path):
    """Not '0 matches' (issue 9): a misspelt key names the nearest one, a bare word wants quotes,
    and a bare last part resolves to the key it ends."""
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    qtbot.waitUntil(lambda: bool(Driver(qtbot, w).sample_keys), timeout=20000)
    w.filter_edit.setText("digti == 3")
    w.filtering.apply()
    assert (
        Driver(qtbot, w).filter_state.phase is Phase.IDLE and "did you mean digit?" in w.filter_status.text()
    )
    w.filter_edit.setText("kind == example")
    w.filtering.apply()
    assert 'quote it: "example"' in w.filter_status.text()
    assert run_filter(qtbot, w, "digit == 7") == [32]


def test_problem_not_equal_means_no_problem_equals(qtbot, open_window, damaged_file):
    w = open_window([damaged_file])
    qtbot.waitUntil(lambda: len(w.problems.rows) >= 2, timeout=10000)
    everything = run_filter(qtbot, w, "record >= 0")
    assert run_filter(qtbot, w, 'problem != "bad_data_crc"') == [n for n in everything if n != 4]


def test_the_filter_box_completes_keys_as_you_type(qtbot, open_window):
    from tests.helpers import RACCOON

    w = open_window([RACCOON])
    qtbot.waitUntil(lambda: "image/width" in Driver(qtbot, w).sample_keys, timeout=10000)
    box = w.filter_edit
    box.setFocus()
    qtbot.keyClicks(box, "label == 1 and wid")
    popup = box.completer_.popup()
    assert popup.isVisible()
    offered = [popup.model().index(i, 0).data() for i in range(popup.model().rowCount())]
    assert "image/width" in offered  # a bare name finds the key it is part of
    popup.setCurrentIndex(popup.model().index(offered.index("image/width"), 0))
    qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert box.text() == "label == 1 and image/width"
    assert w.model.filter_rows is None  # choosing a word does not apply the filter
    qtbot.keyClicks(box, " > 400")
    assert not popup.isVisible()
    qtbot.keyClick(box, Qt.Key.Key_Return)  # Enter with no popup applies it
    assert w.model.filter_rows is not None
    assert box.isClearButtonEnabled()  # switched on with the box's first text (not at the start)
