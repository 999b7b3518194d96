"""Issue 24's shared API: a record's predictions (the OD API's detection keys, never ground truth)
and the one matching rule (records/predictions.py, records/matching.py)."""

from __future__ import annotations

import numpy as np

from tests.core.test_payload import make_example
from tfrview.core.records.matching import BELOW_SCORE, BoxOutcome, iou_matrix, match_image
from tfrview.core.records.payload import decode
from tfrview.core.records.predictions import Predictions, from_columns
from tfrview.core.records.reading import read_record

OD = "image/object/bbox/"
DET = "image/detection/bbox/"


def detection_record(**extra) -> bytes:
    """A record as the OD API's infer_detections.py writes it: ground truth and detections."""
    return make_example(
        **{
            "image/width": [100],
            "image/height": [100],
            OD + "xmin": [0.1, 0.5],
            OD + "ymin": [0.1, 0.5],
            OD + "xmax": [0.3, 0.9],
            OD + "ymax": [0.3, 0.9],
            "image/object/class/label": [1, 2],
            DET + "ymin": [0.5, 0.1, 0.0],
            DET + "xmin": [0.5, 0.1, 0.0],
            DET + "ymax": [0.9, 0.3, 0.05],
            DET + "xmax": [0.9, 0.3, 0.05],
            "image/detection/label": [2, 1, 3],
            "image/detection/score": [0.9, 0.75, 0.25],
            **extra,
        }
    )


def test_detection_keys_are_predictions_never_ground_truth():
    r = read_record(decode(detection_record()))
    assert r.spec is not None and r.spec.keys[0] == OD + "xmin"
    np.testing.assert_allclose(r.normalized, [[0.1, 0.1, 0.3, 0.3], [0.5, 0.5, 0.9, 0.9]], rtol=1e-6)
    p = r.predictions
    assert p is not None and p.source == "record"
    np.testing.assert_allclose(
        p.normalized, [[0.5, 0.5, 0.9, 0.9], [0.1, 0.1, 0.3, 0.3], [0, 0, 0.05, 0.05]], rtol=1e-6
    )
    assert p.classes.tolist() == [2, 1, 3] and p.classes.dtype == np.int64
    np.testing.assert_allclose(p.scores, [0.9, 0.75, 0.25], rtol=1e-6)


def test_a_record_of_detections_alone_has_no_ground_truth():
    data = make_example(
        **{DET + c: [0.2] if c.endswith("min") else [0.4] for c in ("xmin", "ymin", "xmax", "ymax")}
    )
    r = read_record(decode(data))
    assert r.spec is None and r.box_count == 0
    assert r.predictions is not None and len(r.predictions) == 1
    assert r.predictions.classes.tolist() == [-1] and r.predictions.scores.tolist() == [1.0]


def test_a_record_without_detections_has_no_predictions():
    r = read_record(decode(make_example(**{OD + c: [0.5] for c in ("xmin", "ymin", "xmax", "ymax")})))
    assert r.predictions is None


def test_iou_of_known_boxes():
    a = np.array([[0, 0, 2, 2], [0, 0, 1, 1], [np.nan, 0, 1, 1]], dtype=float)
    b = np.array([[1, 1, 3, 3], [0, 0, 1, 1]], dtype=float)
    np.testing.assert_allclose(iou_matrix(a, b), [[1 / 7, 0.25], [0, 1], [0, 0]])


def _preds(boxes, classes, scores) -> Predictions:
    return Predictions(
        np.array(boxes, dtype=float).reshape(-1, 4), np.array(classes), np.array(scores, dtype=float), "t"
    )


def test_matching_outcomes_of_one_image():
    gt = np.array([[0.1, 0.1, 0.3, 0.3], [0.5, 0.5, 0.9, 0.9], [0.0, 0.6, 0.2, 0.8]])
    preds = _preds(
        [
            [0.5, 0.5, 0.9, 0.9],  # matches gt 1 (class 2)
            [0.11, 0.1, 0.3, 0.3],  # class 5 on gt 0 (class 1): wrong class
            [0.7, 0.0, 0.9, 0.2],  # on nothing: false positive
            [0.5, 0.5, 0.88, 0.9],  # a duplicate of the first, lower score: false positive
            [0.0, 0.6, 0.2, 0.8],  # on gt 2 but under the score threshold
        ],
        [2, 5, 1, 2, 7],
        [0.9, 0.8, 0.7, 0.6, 0.3],
    )
    m = match_image(gt, np.array([1, 2, 7]), preds, iou=0.5, score=0.5)
    B = BoxOutcome
    assert m.gt_outcome.tolist() == [B.WRONG_CLASS, B.MATCHED, B.MISSED]
    assert m.pred_outcome.tolist() == [
        B.MATCHED,
        B.WRONG_CLASS,
        B.FALSE_POSITIVE,
        B.FALSE_POSITIVE,
        BELOW_SCORE,
    ]
    assert m.gt_partner.tolist() == [1, 0, -1]
    assert m.pred_partner.tolist() == [1, 0, -1, -1, -1]
    assert m.pred_iou[0] == 1.0 and m.pred_iou[2] == 0.0 and m.pred_iou[4] == 1.0
    assert [o.words for o in B] == ["matched", "false_positive", "missed", "wrong_class"]


def test_the_higher_score_wins_whatever_the_given_order():
    gt = np.array([[0.0, 0.0, 0.5, 0.5]])
    preds = _preds([[0.0, 0.0, 0.5, 0.45], [0.0, 0.0, 0.5, 0.5]], [1, 1], [0.6, 0.9])
    m = match_image(gt, np.array([1]), preds)
    assert m.pred_outcome.tolist() == [BoxOutcome.FALSE_POSITIVE, BoxOutcome.MATCHED]
    assert m.gt_partner.tolist() == [1]


def test_iou_threshold_decides_and_no_classes_match_each_other():
    gt = np.array([[0.0, 0.0, 0.4, 0.4]])
    preds = from_columns(np.array([0.0]), np.array([0.0]), np.array([0.4]), np.array([0.2]), None, None)
    assert match_image(gt, np.array([]), preds, iou=0.5).gt_outcome.tolist() == [BoxOutcome.MATCHED]
    assert match_image(gt, np.array([]), preds, iou=0.6).gt_outcome.tolist() == [BoxOutcome.MISSED]


def test_empty_sides():
    none = _preds([], [], [])
    m = match_image(np.array([[0, 0, 1, 1.0]]), np.array([1]), none)
    assert m.gt_outcome.tolist() == [BoxOutcome.MISSED] and len(m.pred_outcome) == 0
    m = match_image(np.empty((0, 4)), np.array([]), _preds([[0, 0, 1, 1]], [1], [0.9]))
    assert m.pred_outcome.tolist() == [BoxOutcome.FALSE_POSITIVE] and m.pred_iou.tolist() == [0.0]
