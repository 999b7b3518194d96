"""Issue 24, the Evaluation view: the confusion matrix (a click on a cell shows its records), the
per-class table, thresholds shared with the image panel's slider, Sort by max_fp_score. These
tests feed the view an evaluation's plain data as the job sends it (the job itself: the tests
of the load and evaluate jobs)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.gui.driver import Driver
from tests.preddata import planted_file
from tfrview.gui.controllers.evaluation import EvalArrays, LoadedPredictions
from tfrview.gui.widgets.evaluation_panel import matrix_cells

LABELS = ["cat", "dog", "bird", "background"]


def _summary() -> dict:
    m = np.array([[6, 0, 0, 0], [0, 0, 1, 6], [0, 0, 0, 0], [0, 0, 6, 0]])
    rows = [
        {
            "class": "cat",
            "boxes": 6,
            "tp": 6,
            "fp": 0,
            "fn": 0,
            "precision": 1.0,
            "recall": 1.0,
            "ap50": 1.0,
            "ap": 0.8,
        },
        {
            "class": "dog",
            "boxes": 7,
            "tp": 0,
            "fp": 0,
            "fn": 7,
            "precision": None,
            "recall": 0.0,
            "ap50": 0.0,
            "ap": 0.0,
        },
        {
            "class": "bird",
            "boxes": 0,
            "tp": 0,
            "fp": 6,
            "fn": 0,
            "precision": 0.0,
            "recall": None,
            "ap50": None,
            "ap": None,
        },
    ]
    return {
        "source": "record", "images": 6, "boxes": 13, "predictions": 13, "iou": 0.5, "score": 0.5,
        "map": 0.4, "map50": 0.5, "classes": rows, "confusion": {"labels": LABELS, "matrix": m.tolist()},
    }  # fmt: skip


def _arrays() -> EvalArrays:
    """Records 1..6 evaluated (0 and 7 not): each a cat matched, a dog missed (record 4's dog
    taken for a bird), a bird false positive (max_fp_score 0.6 + record / 100)."""
    recs = np.arange(1, 7)
    scores = np.full(8, np.nan)
    scores[recs] = 0.6 + recs / 100
    dog_col = np.where(recs == 4, 2, 3)
    return EvalArrays(
        scores, np.r_[recs, recs, recs], np.r_[np.zeros(6), np.ones(6), np.full(6, 3)], np.r_[np.zeros(6), dog_col, np.full(6, 2)]
    )  # fmt: skip


def test_the_cells_lay_out_square_and_find_a_point():
    c = matrix_cells(600, 500, 4)
    assert c.side >= 34 and c.at(c.left + 1, c.top + 1) == (0, 0)
    r = c.rect(3, 2)
    assert c.at(r.center().x(), r.center().y()) == (3, 2)
    assert c.at(c.left - 1, c.top + 1) is None and c.at(c.left + 4 * c.side + 1, c.top) is None


def test_the_arrays_say_a_cells_records_and_each_records_score():
    a = _arrays()
    assert a.records_in(1, 2).tolist() == [4]
    assert a.records_in(1, 3).tolist() == [1, 2, 3, 5, 6]
    assert a.records_in(3, 2).tolist() == [1, 2, 3, 4, 5, 6]
    assert a.records_in(2, 2).tolist() == []
    s = a.scores_of(8)
    assert np.isnan(s[0]) and np.isnan(s[7]) and abs(s[6] - 0.66) < 1e-9


def test_a_click_on_a_matrix_cell_shows_its_records_and_the_table_says_each_class(
    qtbot, open_window, tmp_path
):
    w = open_window([planted_file(tmp_path / "planted.tfrecord", 8)])
    d = Driver(qtbot, w)
    w.evaluating.show(_summary(), _arrays())
    assert d.matrix_labels() == LABELS
    t = w.evaluating.panel.table
    assert [t.item(r, 0).text() for r in range(t.rowCount())] == ["cat", "dog", "bird"]
    assert [t.item(1, c).text() for c in range(t.columnCount())] == [
        "dog",
        "7",
        "0",
        "0",
        "7",
        "–",
        "0.000",
        "0.000",
        "0.000",
    ]
    assert "mAP@[.5:.95] 0.400" in w.evaluating.panel.status.text()
    assert d.click_matrix_cell("dog", "bird") == [4]
    qtbot.waitUntil(lambda: d.shown_record() == 4)
    assert "truth dog, predicted bird" in d.filter_text
    assert d.click_matrix_cell("background", "bird") == [1, 2, 3, 4, 5, 6]
    assert d.click_matrix_cell("dog", "background") == [1, 2, 3, 5, 6]
    d.press_escape(in_filter_box=True)
    assert len(d.shown_records()) == 8


def test_sort_by_the_most_confident_false_positive(qtbot, open_window, tmp_path):
    w = open_window([planted_file(tmp_path / "planted.tfrecord", 8)])
    d = Driver(qtbot, w)
    w.evaluating.show(_summary(), _arrays())
    w.sorting.sort_by("max_fp_score", descending=True)
    assert d.shown_records()[:6] == [6, 5, 4, 3, 2, 1] and sorted(d.shown_records()[6:]) == [0, 7]


def test_the_views_share_one_pair_of_thresholds(qtbot, open_window, tmp_path):
    w = open_window([planted_file(tmp_path / "planted.tfrecord", 4)])
    d = Driver(qtbot, w)
    d.show_record(1)
    w.evaluating.panel.score.setValue(0.85)  # the view's control moves the image panel's slider
    assert w.image_panel.score.value() == 85 and d.predictions_drawn() == ["cat 0.90"]
    assert w.thumbs.thresholds == (0.5, 0.85)
    d.move_score_slider(0.3)  # and the slider the view's control
    assert abs(w.evaluating.panel.score.value() - 0.3) < 1e-9
    w.evaluating.panel.iou.setValue(0.95)  # the cat's box (IoU 0.90) no longer matches
    assert d.truth_outcomes() == ["missed", "missed"]


def test_the_gallery_draws_its_tiles_again_when_the_thresholds_move(qtbot, open_window, tmp_path):
    """Tiles drawn at the old thresholds are asked again once the thresholds stay put, each keeping
    its old picture meanwhile (no reset: the gallery's scroll and current tile stay)."""
    w = open_window([planted_file(tmp_path / "planted.tfrecord", 4)])
    g = w.gallery_model
    w.tabs.setCurrentWidget(w.gallery)
    for r in range(g.rowCount()):
        g.data(g.index(r, 0), 1)  # DecorationRole asks the pool
    qtbot.waitUntil(lambda: all(g.record_number(r) in g._pixmaps for r in range(g.rowCount())), timeout=20000)
    before = {n: pm.cacheKey() for n, pm in g._pixmaps.items()}
    resets = []
    g.modelReset.connect(lambda: resets.append(1))
    with qtbot.waitSignal(w.evaluating.tiles_stale, timeout=5000):  # once the thresholds stay put
        w.evaluating.panel.score.setValue(0.95)  # every prediction of the planted records but one hidden
    assert g._stale == set(before)  # each tile still shows its old picture
    for r in range(g.rowCount()):  # painted: asked again
        g.data(g.index(r, 0), 1)
    qtbot.waitUntil(lambda: all(g._pixmaps[n].cacheKey() != k for n, k in before.items()), timeout=20000)
    assert resets == [] and w.thumbs.thresholds == (0.5, 0.95)


def test_loaded_predictions_are_drawn_for_their_records(qtbot, open_window, tmp_path):
    w = open_window([planted_file(tmp_path / "bare.tfrecord", 4, detections=False)])
    d = Driver(qtbot, w)
    d.show_record(2)
    assert d.predictions_drawn() == [] and not w.image_panel.score.isVisible()
    loaded = LoadedPredictions(
        np.array([2, 2, 3]),
        np.array([[0.06, 0.31, 0.41, 0.88], [0.7, 0.02, 0.95, 0.2], [0.1, 0.1, 0.2, 0.2]]),
        np.array([1, 3, 2]),
        np.array([0.9, 0.8, 0.7]),
        "results.json",
    )
    w.evaluating.use_predictions(loaded, "results.json", {"line": "3 predictions joined"})
    assert d.predictions_drawn() == ["cat 0.90", "id 3 0.80"] and w.image_panel.score.isVisible()
    assert "results.json" in w.image_panel.facts.text()
    d.show_record(1)
    assert d.predictions_drawn() == []


@pytest.mark.slow  # the analysis and a job process: ~11 s on a loaded 2-core machine
def test_the_evaluate_job_answers_and_answers_again_at_new_thresholds(qtbot, open_window, tmp_path):
    w = open_window([planted_file(tmp_path / "planted.tfrecord", 4)])
    d = Driver(qtbot, w)
    d.wait_checks()
    s = d.evaluation()
    assert s["confusion"]["labels"] == ["cat", "dog", "id 3", "background"]
    assert s["confusion"]["matrix"] == [[4, 0, 0, 0], [0, 0, 0, 4], [0, 0, 0, 0], [0, 0, 4, 0]]
    assert [r["tp"] for r in s["classes"]] == [4, 0, 0] and s["map50"] == 0.5
    job = w.evaluating.job
    s = d.set_evaluation_thresholds(0.5, 0.2)  # the faint dogs count now: false positives
    assert s["confusion"]["matrix"][3] == [0, 4, 4, 0]
    assert w.evaluating.job is job  # the same process answered: nothing was read again
    assert d.click_matrix_cell("background", "id 3") == [0, 1, 2, 3]
    w.sorting.sort_by("max_fp_score", descending=True)
    assert d.shown_records() == [3, 2, 1, 0]  # bird false positives of score 0.6 + record / 10
    w.evaluating.panel.curves.click()
    assert w.plot_dock.isVisible() and "precision against recall" in w.plots.panel.status.text()


@pytest.mark.slow  # the analysis, a join and an evaluation in a job process: ~10 s on a loaded machine
def test_the_menu_loads_a_coco_results_file_and_says_how_many_joined(qtbot, open_window, tmp_path):
    from tests.preddata import coco_results

    w = open_window([planted_file(tmp_path / "bare.tfrecord", 4, detections=False)])
    d = Driver(qtbot, w)
    d.wait_checks()
    said = d.load_predictions(coco_results(tmp_path / "results.json", 4, unmatched=2))
    assert said.startswith("results.json: 8 of 10 predictions joined to 4 of 4 records by image/filename")
    assert any("2 name an image id no record has" in line for line in d.join_details())
    d.show_record(1)
    assert d.predictions_drawn() == ["cat 0.90", "dog 0.80"]
    assert d.truth_outcomes() == ["matched", "missed"]
    qtbot.waitUntil(lambda: w.evaluating.summary is not None, timeout=30000)
    m = w.evaluating.summary["confusion"]
    assert m["matrix"][m["labels"].index("background")][m["labels"].index("dog")] == 4
    assert d.click_matrix_cell("background", "dog") == [0, 1, 2, 3]


def test_the_evaluation_and_compare_panels_are_made_on_first_show(qtbot, open_window, tmp_path):
    """Neither view is built with the window (their modules and widgets cost its start); shown
    the first time, each is made with what was decided before: the thresholds moved on the image
    panel's slider, the session's splits."""
    w = open_window([planted_file(tmp_path / "planted.tfrecord", 4)])
    d = Driver(qtbot, w)
    assert w.evaluating._panel is None and w.comparing._panel is None
    assert w.evaluation_dock.widget() is None and w.compare_dock.widget() is None
    d.show_record(1)
    d.move_score_slider(0.3)
    w.evaluation_dock.toggleViewAction().trigger()
    qtbot.waitUntil(lambda: w.evaluation_dock.widget() is not None, timeout=2000)
    assert w.evaluation_dock.widget() is w.evaluating.panel
    assert abs(w.evaluating.panel.score.value() - 0.3) < 1e-9 and w.evaluating.panel.iou.value() == 0.5
    w.compare_dock.toggleViewAction().trigger()
    qtbot.waitUntil(lambda: w.compare_dock.widget() is not None, timeout=2000)
    assert w.compare_dock.widget() is w.comparing.panel
    c = w.comparing.panel
    # the session's splits (none here: the file's name names none), each side's last choice
    assert [c.side_a.itemText(i) for i in range(c.side_a.count())] == ["all files"]
    assert [c.side_b.itemText(i) for i in range(c.side_b.count())] == ["another dataset…"]
