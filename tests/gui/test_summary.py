from tests.helpers import PENGUIN, RACCOON


def test_summary_panel_and_label_map_that_does_not_fit(qtbot, open_window):
    w = open_window([PENGUIN])
    # the corpus folder's raccoon label map does not name penguin species: not used
    assert w.label_map is None and w.label_map_path is None
    qtbot.waitUntil(lambda: w.summary is not None and bool(w.summary_panel.chart.counts), timeout=60000)
    assert w.summary["records"] == 234
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
        qtbot.waitUntil(lambda: w.summary_dock.isVisible() and not w.summary_dock.visibleRegion().isEmpty(), timeout=5000)
    assert w.problems_dock.visibleRegion().isEmpty()  # behind it, in the same dock area


def test_dialogs_about_the_data_open_in_its_folder(qtbot, open_window):
    from tests.helpers import RACCOON

    w = open_window([RACCOON])
    assert w.data_dir() == str(RACCOON.parent.resolve())


def test_the_summary_runs_beside_the_checks_and_workers_are_niced(qtbot, open_window, tmp_path):
    import os

    from tfrview.core.demo import build_demo

    w = open_window(build_demo(tmp_path / "demo"), demo=True)
    qtbot.waitUntil(lambda: w.summarizer_job is not None, timeout=20000)
    assert w.check_state != "QA checks done" or w.summary is not None  # started with the checks, not after
    proc = w.summarizer_job._proc
    want = min(os.getpriority(os.PRIO_PROCESS, 0) + 10, 19)

    def niced_or_gone() -> bool:
        try:
            return proc.poll() is not None or os.getpriority(os.PRIO_PROCESS, proc.pid) >= want
        except ProcessLookupError:
            return True

    qtbot.waitUntil(niced_or_gone, timeout=10000)  # it lowers its priority first thing after start-up
