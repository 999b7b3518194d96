"""Issue 24, drawn in the window: ground truth solid and predictions dashed in their outcome's
colours (pixel checks of the painting on a QImage), the score slider hiding predictions under it,
IoU and score on hover."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor, QImage

from tests.gui.driver import Driver
from tests.preddata import H, W, planted_file, planted_record
from tfrview.core.records.matching import BoxOutcome
from tfrview.core.records.overlays import compute_overlay
from tfrview.core.records.palette import outcome_rgb
from tfrview.core.records.payload import decode
from tfrview.core.records.predlayer import prediction_layer
from tfrview.gui.painting import render_overlay_on_image


def _pixels(img: QImage) -> np.ndarray:
    img = img.convertToFormat(QImage.Format.Format_RGB888)
    a = np.frombuffer(img.constBits(), dtype=np.uint8, count=img.sizeInBytes())
    rows = a.reshape(img.height(), img.bytesPerLine())[:, : 3 * img.width()]
    return rows.reshape(img.height(), img.width(), 3).copy()  # the QImage's memory goes with it


def _near(px: np.ndarray, rgb) -> np.ndarray:
    return np.abs(px.astype(int) - np.array(rgb)).sum(axis=-1) < 40


def test_the_painting_draws_truth_solid_and_predictions_dashed_by_outcome(qapp):
    ov = compute_overlay(decode(planted_record(1)).features, W, H)
    layer = prediction_layer(ov.versus, W, H)
    base = QImage(W, H, QImage.Format.Format_RGB32)
    base.fill(QColor(90, 90, 100))
    px = _pixels(render_overlay_on_image(base, ov, show_labels=False, layer=layer))
    # the missed dog's box (truth: solid amber): its right edge is amber all along
    x = round(0.95 * W)
    amber = _near(px[int(0.45 * H) : int(0.9 * H), x - 2 : x + 2], outcome_rgb(BoxOutcome.MISSED))
    assert amber.any(axis=1).mean() > 0.97
    # the false-positive bird (prediction: dashed red): its bottom edge alternates red and not red
    y = round(0.2 * H)
    red = _near(px[y - 2 : y + 2, int(0.72 * W) : int(0.93 * W)], outcome_rgb(BoxOutcome.FALSE_POSITIVE)).any(
        axis=0
    )
    assert 0.25 < red.mean() < 0.8 and np.count_nonzero(np.diff(red.astype(int))) >= 6
    # the matched cat: green; nothing of the hidden faint dog (under 0.5)
    assert _near(px, outcome_rgb(BoxOutcome.MATCHED)).sum() > 200
    faint = px[int(0.02 * H) + 3 : int(0.12 * H) - 3, int(0.1 * W) + 3 : int(0.2 * W) - 3]
    assert (faint == px[5, 5]).all()
    # at 0.2 the faint dog shows, dashed red too
    low = prediction_layer(ov.versus, W, H, score=0.2)
    px2 = _pixels(render_overlay_on_image(base, ov, show_labels=False, layer=low))
    top = px2[round(0.02 * H) - 2 : round(0.02 * H) + 2, int(0.1 * W) : int(0.2 * W)]
    assert _near(top, outcome_rgb(BoxOutcome.FALSE_POSITIVE)).any()


def test_the_slider_hides_predictions_under_it_and_hover_says_iou_and_score(qtbot, open_window, tmp_path):
    w = open_window([planted_file(tmp_path / "planted.tfrecord", 4)])
    d = Driver(qtbot, w)
    d.show_record(1)
    assert d.predictions_drawn() == ["cat 0.90", "id 3 0.70"]
    assert d.truth_outcomes() == ["matched", "missed"]
    assert w.image_panel.score.isVisible()
    assert "1 matched" in w.image_panel.facts.text() and "1 false positive" in w.image_panel.facts.text()
    d.move_score_slider(0.8)
    assert d.predictions_drawn() == ["cat 0.90"]
    d.move_score_slider(0.95)
    assert d.predictions_drawn() == [] and d.truth_outcomes() == ["missed", "missed"]
    d.move_score_slider(0.2)
    assert d.predictions_drawn() == ["cat 0.90", "id 3 0.70", "dog 0.30"]
    assert w.image_panel.score_label.text() == "score ≥ 0.20"
    # hover on the bird's box, then on the cat
    assert d.boxes_on_hover(0.8 * W, 0.1 * H) == ["prediction id 3 0.70 · IoU 0.00 · false positive"]
    said = d.boxes_on_hover(0.2 * W, 0.6 * H)
    assert "prediction cat 0.90 · IoU 0.90 · matched" in said
    assert any(s.startswith("ground truth cat · matched (IoU 0.90") for s in said)
    # the threshold holds for the next record
    d.show_record(2)
    assert d.predictions_drawn() == ["cat 0.90", "id 3 0.80", "dog 0.30"]
