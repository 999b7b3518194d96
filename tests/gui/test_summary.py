from tests.gui.driver import Driver
from tests.helpers import PENGUIN, RACCOON


def test_summary_panel_and_label_map_that_does_not_fit(qtbot, open_window):
    w = open_window([PENGUIN])
    # the corpus folder's raccoon label map does not name penguin species: not used
    assert w.label_map is None and w.label_map_path is None
    d = Driver(qtbot, w)
    qtbot.waitUntil(lambda: d.summary is not None and bool(w.summary_panel.chart.counts), timeout=60000)
    assert d.summary["records"] == 234
    assert w.summary_panel.table.rowCount() == 5
    assert w.summary_panel.table.item(4, 0).text() == "species"
    assert w.summary_panel.chart.counts == [("0", 99), ("2", 89), ("1", 46)]


def test_raccoon_keeps_its_label_map(qtbot, open_window):
    w = open_window([RACCOON])
    assert w.label_map == {1: "raccoon"}


def test_ctrl_i_shows_the_summary_in_front_and_keeps_it(qtbot, open_window, tmp_path):
    from tests.helpers import PENGUIN

    w = open_window([PENGUIN])
    w.problems_dock.show()
    for _ in range(2):  # a second Ctrl+I keeps it, in front
        w.actions_by_name["summary"].trigger()
        qtbot.waitUntil(
            lambda: w.summary_dock.isVisible() and not w.summary_dock.visibleRegion().isEmpty(), timeout=5000
        )
    assert w.problems_dock.visibleRegion().isEmpty()  # behind it, in the same dock area


def test_dialogs_about_the_data_open_in_its_folder(qtbot, open_window):
    from tests.helpers import RACCOON

    w = open_window([RACCOON])
    assert w.data_dir() == str(RACCOON.parent.resolve())


def test_one_analysis_job_brings_checks_and_summary_and_its_workers_are_niced(qtbot, open_window, tmp_path):
    """The QA checks and the summary come from one pass (issue 10), whose job process and pool
    workers run below the window's priority."""
    import os

    from tests.gui.test_problems_panel import wait_checks
    from tfrview.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    d = Driver(qtbot, w)
    qtbot.waitUntil(
        lambda: d.analysis_worker is not None and d.analysis_worker.proc is not None, timeout=20000
    )
    proc = d.analysis_worker.proc
    assert proc.args[-1] == "tfrview.core.procs.jobs" and d.analysis_worker.request.JOB == "analyze"
    want = min(os.getpriority(os.PRIO_PROCESS, 0) + 10, 19)

    def niced_or_gone() -> bool:
        try:
            return proc.poll() is not None or os.getpriority(os.PRIO_PROCESS, proc.pid) >= want
        except ProcessLookupError:
            return True

    qtbot.waitUntil(niced_or_gone, timeout=10000)  # it lowers its priority first thing after start-up
    wait_checks(qtbot, w)
    # every intact record
    assert d.summary is not None and not d.summary_partial and d.summary["records"] == 38


def test_reopening_an_analysed_dataset_uses_the_stored_analysis(qtbot, open_window, tmp_path):
    from tests.gui.test_problems_panel import wait_checks
    from tfrview.demo import build_demo

    paths = build_demo(tmp_path / "demo")
    w = open_window(paths, demo=True)
    wait_checks(qtbot, w)
    first = sorted(str(r.problem) for r in w.problems.rows)
    assert Driver(qtbot, w).analysis_note == ""
    again = open_window(paths, demo=True)
    wait_checks(qtbot, again)
    assert sorted(str(r.problem) for r in again.problems.rows) == first
    assert (
        Driver(qtbot, again).analysis_note.startswith("checked ") and "checked" in again.status_label.text()
    )
    # the index and CRC status came from the stored analysis too, and the status bar says when
    assert Driver(qtbot, again).stored_files == len(paths)
    assert (
        again.model.total() == w.model.total()
        and again.model.status_of(26) == w.model.status_of(26) == "damaged"
    )
    assert "unchanged since" in again.status_label.text()


def test_a_click_on_a_class_bar_of_the_summary_filters_the_table_to_it(qtbot, open_window, tmp_path):
    from tfrview.demo import build_demo
    from tfrview.gui.widgets.summary_panel import bar_at

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    d = Driver(qtbot, w)
    d.wait_checks()
    chart = w.summary_panel.chart
    qtbot.waitUntil(lambda: bool(chart.counts), timeout=20000)
    names = [k for k, _ in chart.counts]
    from PySide6.QtGui import QFontMetricsF

    h = QFontMetricsF(chart.font()).height()
    i = names.index("circle")
    assert bar_at(6 + (h + 6) * (i + 1) + 2, 6, h, len(names)) == i and bar_at(8, 6, h, len(names)) is None
    chart.class_clicked.emit("circle")  # what a click on that bar does
    d.wait_filter()
    assert w.filter_edit.text() == '"image/object/class/text" == "circle"'
    from tfrview.core.records.payload import decode

    want = [
        n
        for n in range(w.ds.count)
        if w.model.status_of(n) == "ok"
        and b"circle" in decode(w.ds.read(n)).features.get("image/object/class/text", _NONE).values
    ]
    qtbot.waitUntil(lambda: d.shown_records() == want, timeout=20000)
    assert len(want) > 3


class _NONE:
    values = ()
