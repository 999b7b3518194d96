"""Issue 18: a filter on the QA findings typed while the pass runs is run again when they arrive
(and said provisional until then); a plot selection says itself in the filter box and Esc clears
it; the record pane follows the filter."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from tests.gui.driver import Driver
from tfrview.core.output.writer import write_records
from tfrview.demo import _example


def _png(shade: int) -> bytes:
    b = io.BytesIO()
    Image.fromarray(np.full((8, 8, 3), shade, np.uint8)).save(b, "PNG")
    return b.getvalue()


def _records(tmp_path, shades: list[int]):
    path = tmp_path / "dups.tfrecord"
    write_records(
        path,
        [
            _example(**{"image/encoded": _png(s), "image/format": "png", "label": [i]}).SerializeToString()
            for i, s in enumerate(shades)
        ],
    )
    return path


def test_a_filter_on_findings_typed_during_the_pass_runs_again_when_it_ends(qtbot, open_window, tmp_path):
    shades = [10, 10, 10, 20, 10, 30, 20, 10, 40, 10]
    first = {s: shades.index(s) for s in shades}
    copies = [n for n, s in enumerate(shades) if first[s] != n]  # a later copy of an earlier image
    assert len(copies) == 6
    w = open_window([_records(tmp_path, shades)])
    d = Driver(qtbot, w)
    d.wait_checks()
    d.restart_analysis()  # findings void until the pass ends: typed now, the filter sees none
    assert d.checks.running
    d.type_filter('problem != "duplicate_image"')
    assert "QA still running" in d.filter_words
    d.wait_analysed()
    qtbot.waitUntil(
        lambda: not d.filter_state.running and d.shown_records() == [n for n in range(10) if n not in copies],
        timeout=20000,
    )
    assert d.filter_words.startswith("4 of 10 records match") and "QA still running" not in d.filter_words
    assert d.filter('any(problem == "duplicate_image")') == copies


def test_a_plot_selection_says_itself_in_the_filter_box_and_esc_clears_it(qtbot, open_window, tmp_path):
    w = open_window([_records(tmp_path, [10, 20, 30, 40, 50])])
    d = Driver(qtbot, w)
    d.wait_checks()
    w.select_record(4)
    qtbot.waitUntil(lambda: d.shown_record() == 4, timeout=10000)
    from tfrview.core.procs.requests import SelectRequest

    request = w.session.request(SelectRequest, plot="image sizes (scatter)", lo=(8, 8), hi=(8, 8))
    w.filtering.run_job(request, what="image 8 × 8")  # as a click on the scatter's dot does
    d.wait_filter()
    assert d.shown_records() == [0, 1, 2, 3, 4]
    assert d.filter_text == "plot selection: 5 records (image 8 × 8)"
    d.press_escape()  # focus elsewhere, nothing running: Esc clears the filter
    assert w.model.filter_rows is None and d.filter_text == ""
    w.filtering.run_job(request, what="image 8 × 8")
    d.wait_filter()
    w.filter_edit.clear()  # the box's ✕ clears a plot selection as any filter
    assert w.model.filter_rows is None and d.shown_records() == [0, 1, 2, 3, 4]
    # a filter that leaves the shown record out shows its first match; one with none empties the pane
    assert d.filter("label <= 1") == [0, 1]
    qtbot.waitUntil(lambda: d.shown_record() == 0, timeout=10000)
    assert d.filter("label > 100") == []
    assert d.shown_record() is None and "No record matches" in w.image_panel.view.message
    d.press_escape(in_filter_box=True)
    assert w.model.filter_rows is None and d.filter_text == ""
    qtbot.waitUntil(lambda: d.shown_record() == 0, timeout=10000)


def test_the_shown_record_stays_selected_when_the_filter_keeps_it(qtbot, open_window, tmp_path):
    w = open_window([_records(tmp_path, [10, 20, 30, 40, 50])])
    d = Driver(qtbot, w)
    w.select_record(3)
    qtbot.waitUntil(lambda: d.shown_record() == 3, timeout=10000)
    assert d.filter("label >= 2") == [2, 3, 4]
    assert d.shown_record() == 3 and w.model.record_number(w.table.currentIndex().row()) == 3
