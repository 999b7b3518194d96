"""A record's predicted boxes, as arrays: the Object Detection API's detection keys read from the
record itself, or a predictions file's boxes joined to it (`analysis.predictions_join`).

The OD API's `infer_detections.py` writes `image/detection/bbox/{ymin,xmin,ymax,xmax}` (normalised),
`image/detection/label` and `image/detection/score` into the records beside the ground truth. Those
keys are predictions, never ground truth: `reading._roles` leaves them out of the box roles, and
`RecordReading.predictions` reads them here (the one reader of them from a record's features;
`analysis.factboxes.table_predictions` is the one reader of them from a fact table).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tfrview.core.records.feature import BYTES_LIST, Feature

DETECTION_PREFIX = "image/detection/"
DETECTION_BOX_KEYS = tuple(f"image/detection/bbox/{c}" for c in ("xmin", "ymin", "xmax", "ymax"))
DETECTION_LABEL_KEY = "image/detection/label"
DETECTION_SCORE_KEY = "image/detection/score"
DETECTION_KEYS = (*DETECTION_BOX_KEYS, DETECTION_LABEL_KEY, DETECTION_SCORE_KEY)
RECORD_SOURCE = "record"  # Predictions.source of the detection keys read from the record itself


@dataclass(frozen=True)
class Predictions:
    """A record's predicted boxes: arrays, never an object a box."""

    normalized: (
        np.ndarray
    )  # (n, 4) float64 x0, y0, x1, y1 in [0, 1] of the image (as RecordReading.normalized)
    classes: np.ndarray  # (n,) int64 class ids (the label map's ids; -1 unknown)
    scores: np.ndarray  # (n,) float64 in [0, 1]
    source: str  # "record" (the OD API's image/detection/* keys) or the predictions file's name

    def __len__(self) -> int:
        return len(self.scores)

    def above(self, score: float) -> Predictions:
        """The predictions whose score is at least `score` (a threshold slider's view)."""
        keep = self.scores >= score
        return Predictions(self.normalized[keep], self.classes[keep], self.scores[keep], self.source)


EMPTY = Predictions(
    np.empty((0, 4), dtype=np.float64), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64), ""
)


def has_detections(features: Mapping[str, Feature]) -> bool:
    """The record holds the OD API's four detection box keys."""
    return all(k in features for k in DETECTION_BOX_KEYS)


def from_columns(
    xmin: np.ndarray,
    ymin: np.ndarray,
    xmax: np.ndarray,
    ymax: np.ndarray,
    labels: np.ndarray | None,
    scores: np.ndarray | None,
    source: str = RECORD_SOURCE,
) -> Predictions:
    """Predictions from the four corner lists (cut to the shortest), the labels (-1 where missing)
    and the scores (1.0 where missing: a prediction with no score is taken as certain)."""
    n = min(len(xmin), len(ymin), len(xmax), len(ymax))
    boxes = np.stack([np.asarray(c[:n], dtype=np.float64) for c in (xmin, ymin, xmax, ymax)], axis=1)
    classes = np.full(n, -1, dtype=np.int64)
    if labels is not None:
        k = min(n, len(labels))
        classes[:k] = np.asarray(labels[:k], dtype=np.int64)
    sc = np.ones(n, dtype=np.float64)
    if scores is not None:
        k = min(n, len(scores))
        sc[:k] = np.asarray(scores[:k], dtype=np.float64)
    return Predictions(boxes.reshape(-1, 4), classes, sc, source)


def read_detections(features: Mapping[str, Feature]) -> Predictions | None:
    """The OD API's detection keys of a record as Predictions (None: the record has none)."""
    if not has_detections(features):
        return None
    cols = [_numbers(features, k) for k in DETECTION_BOX_KEYS]
    if any(c is None for c in cols):
        return None
    labels = _numbers(features, DETECTION_LABEL_KEY)
    scores = _numbers(features, DETECTION_SCORE_KEY)
    return from_columns(*cols, labels, scores)


def _numbers(features: Mapping[str, Feature], key: str) -> np.ndarray | None:
    f = features.get(key)
    if f is None or f.type == BYTES_LIST:
        return None
    return np.asarray(f.values, dtype=np.float64)
