"""Issue 24, drawn: a record's predictions matched beside its ground truth at the thresholds
(`records/predlayer.py`) and drawn by the exports' and thumbnails' drawing (`drawing.draw_overlay`):
the ground truth solid, predictions dashed, each in its outcome's colour."""

from __future__ import annotations

import numpy as np

from tests.preddata import H, W, planted_record
from tfrview.core.records.drawing import dash_segments, draw_overlay
from tfrview.core.records.matching import BELOW_SCORE, BoxOutcome
from tfrview.core.records.overlays import compute_overlay
from tfrview.core.records.palette import outcome_rgb
from tfrview.core.records.payload import decode
from tfrview.core.records.predictions import Predictions
from tfrview.core.records.predlayer import describe_prediction, describe_truth, prediction_layer
from tfrview.core.records.thumbs import make_thumbnail


def _overlay(i: int = 1, detections: bool = True):
    return compute_overlay(decode(planted_record(i, detections)).features, W, H)


def test_the_planted_record_matches_as_built():
    ov = _overlay(1)
    layer = prediction_layer(ov.versus, W, H)
    assert layer.outcome.tolist() == [BoxOutcome.MATCHED, BoxOutcome.FALSE_POSITIVE, BELOW_SCORE]
    assert layer.gt_outcome.tolist() == [BoxOutcome.MATCHED, BoxOutcome.MISSED]
    assert layer.shown.tolist() == [0, 1]
    assert layer.labels == ("cat 0.90", "id 3 0.70", "dog 0.30")
    np.testing.assert_allclose(layer.boxes[0], [0.06 * W, 0.31 * H, 0.41 * W, 0.88 * H], rtol=1e-5)
    assert describe_prediction(layer, 1) == "prediction id 3 0.70 · IoU 0.00 · false positive"
    assert describe_truth(layer, 1, "dog") == "ground truth dog · missed"
    assert describe_truth(layer, 0, "cat").startswith(
        "ground truth cat · matched (IoU 0.90 with a prediction of score 0.90)"
    )
    # a lower threshold shows the faint dog, which misses its box (IoU 0): a second false positive
    low = prediction_layer(ov.versus, W, H, score=0.2)
    assert low.shown.tolist() == [0, 1, 2] and low.outcome[2] == BoxOutcome.FALSE_POSITIVE
    assert low.counts()[BoxOutcome.FALSE_POSITIVE] == 2 and low.counts()[BoxOutcome.MISSED] == 1


def test_a_record_without_detections_takes_loaded_predictions():
    ov = _overlay(0, detections=False)
    assert ov.versus is not None and ov.versus.predictions is None
    assert prediction_layer(ov.versus, W, H) is None
    loaded = Predictions(
        np.array([[0.55, 0.4, 0.95, 0.95]]), np.array([1]), np.array([0.8]), "results.json"
    )  # a cat on the dog's box: the wrong class
    layer = prediction_layer(ov.versus.with_predictions(loaded), W, H)
    assert layer.source == "results.json"
    assert layer.outcome.tolist() == [BoxOutcome.WRONG_CLASS]
    assert layer.gt_outcome.tolist() == [BoxOutcome.MISSED, BoxOutcome.WRONG_CLASS]


def test_dashes_cover_about_half_of_every_side():
    seg = dash_segments(0, 0, 100, 50, 5)
    lengths = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    assert abs(lengths.sum() - 150) < 10  # half of the 300 px outline
    assert (lengths <= 5 + 1e-9).all()


def _edge(px: np.ndarray, y: int, x0: int, x1: int) -> np.ndarray:
    return px[y, x0:x1]


def test_the_drawing_draws_truth_solid_and_predictions_dashed_in_outcome_colours():
    ov = _overlay(1)
    layer = prediction_layer(ov.versus, W, H)
    grey = np.full((H, W, 3), 90, dtype=np.uint8)
    px = np.asarray(draw_overlay(grey, ov, labels=False, layer=layer))
    # the missed dog (ground truth, solid amber): its right edge at x = 0.95 W is amber all along
    amber = np.array(outcome_rgb(BoxOutcome.MISSED))
    cols = px[int(0.45 * H) : int(0.9 * H), round(0.95 * W) - 4 : round(0.95 * W) + 2]
    assert (np.abs(cols.astype(int) - amber).sum(axis=2) < 30).mean(axis=0).max() > 0.95
    # the false positive bird (prediction, dashed red): its bottom edge at y = 0.2 H alternates
    red = np.array(outcome_rgb(BoxOutcome.FALSE_POSITIVE))
    rows = px[round(0.2 * H) - 3 : round(0.2 * H) + 2, int(0.72 * W) : int(0.93 * W)]
    is_red = (np.abs(rows.astype(int) - red).sum(axis=2) < 30).any(axis=0)
    assert 0.25 < is_red.mean() < 0.75  # dashes and gaps
    assert np.count_nonzero(np.diff(is_red.astype(int))) >= 6  # several dashes, not one long line
    # the faint dog (under the threshold) is not drawn: its top-left is the background
    assert (px[int(0.02 * H) + 1 : int(0.12 * H) - 1, int(0.1 * W) + 2 : int(0.2 * W) - 2] == 90).all()
    # the matched cat: green
    green = np.array(outcome_rgb(BoxOutcome.MATCHED))
    left = px[int(0.4 * H) : int(0.8 * H), round(0.05 * W) - 2 : round(0.05 * W) + 4]
    assert (np.abs(left.astype(int) - green).sum(axis=2) < 30).mean(axis=0).max() > 0.9


def test_a_thumbnail_draws_the_styles_too():
    t = make_thumbnail(planted_record(1), 160)
    px = t.pixels
    assert px.shape[:2] == (120, 160)
    red = np.array(outcome_rgb(BoxOutcome.FALSE_POSITIVE))
    amber = np.array(outcome_rgb(BoxOutcome.MISSED))
    assert (np.abs(px.astype(int) - red).sum(axis=2) < 30).sum() > 20
    assert (np.abs(px.astype(int) - amber).sum(axis=2) < 30).sum() > 50
