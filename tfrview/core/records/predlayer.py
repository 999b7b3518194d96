"""A record's predictions drawn beside its ground truth: the matching of one image at the window's
IoU and score thresholds (`matching.match_image`, the one rule), as arrays in image pixels that
the drawing (`drawing.draw_overlay`, PIL) and the window's painting (`gui.painting`) both read.

`Versus` is what a record brings (its predictions, its ground truth in [0, 1], its class names);
`prediction_layer` matches them at the thresholds asked, so a slider's move re-matches one image
(a few hundred boxes: well under a millisecond) without reading the record again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.records.matching import BELOW_SCORE, BoxOutcome, match_image
from tfrview.core.records.predictions import Predictions
from tfrview.core.records.reading import class_name

IOU_THRESHOLD = 0.5  # COCO's AP@0.5: where the window starts
SCORE_THRESHOLD = 0.5  # the slider's start: most detectors' own cut


@dataclass(frozen=True, eq=False)
class Versus:
    """What one image's predictions are matched against: arrays, never an object a box."""

    predictions: Predictions | None  # None: none yet (the record holds none and none were loaded)
    gt: np.ndarray  # (g, 4) ground-truth x0, y0, x1, y1 in [0, 1] (the reading's `normalized`)
    gt_classes: np.ndarray  # (g,) or fewer: the reading's class ids
    names: Mapping[int, str] = field(default_factory=dict)  # class id -> name (the record's, the label map's)

    def name(self, class_id: int) -> str:
        return self.names.get(class_id) or class_name(class_id)

    def with_predictions(self, predictions: Predictions | None) -> Versus:
        return Versus(predictions, self.gt, self.gt_classes, self.names)

    def with_loaded(self, loaded: Loaded, labels: Sequence[str]) -> Versus:
        """With predictions loaded from a file. Their classes are codes into `loaded.names` (the
        evaluation's classes, matched by name: a box's class text, else its id's name): the
        boxes are coded the same way by their labels (`labels`, the drawn boxes' names, in order;
        a box past them, or of a name the evaluation lacks, is of no class: -1)."""
        if loaded.names is None:
            return self.with_predictions(loaded.predictions)
        code = {name: i for i, name in enumerate(loaded.names)}
        gt_codes = np.full(len(self.gt), -1, dtype=np.int64)
        k = min(len(labels), len(self.gt))
        gt_codes[:k] = [code.get(label, -1) for label in labels[:k]]
        return Versus(loaded.predictions, self.gt, gt_codes, dict(enumerate(loaded.names)))


@dataclass(frozen=True, eq=False)
class Loaded:
    """A record's predictions loaded from a file, with the names their class codes index (None:
    the codes are the label map's ids, as the records' own)."""

    predictions: Predictions
    names: tuple[str, ...] | None = None


@dataclass(frozen=True, eq=False)
class PredictionLayer:
    """One image's predictions in pixels with what became of each, and of each ground-truth box."""

    boxes: np.ndarray  # (p, 4) x0, y0, x1, y1 in image pixels
    classes: np.ndarray  # (p,) class ids
    scores: np.ndarray  # (p,)
    outcome: np.ndarray  # (p,) BoxOutcome, or BELOW_SCORE (hidden: under the score threshold)
    iou: np.ndarray  # (p,) best IoU with any ground-truth box
    labels: tuple[str, ...]  # (p,) "cat 0.87": the class and the score
    gt_outcome: np.ndarray  # (g,) BoxOutcome of each ground-truth box
    gt_iou: np.ndarray  # (g,) IoU with the prediction it was paired with (0: none)
    gt_score: np.ndarray  # (g,) that prediction's score (NaN: none)
    iou_threshold: float
    score_threshold: float
    source: str

    @property
    def shown(self) -> np.ndarray:
        """Indices of the predictions drawn: at or above the score threshold."""
        return np.flatnonzero(self.outcome != BELOW_SCORE)

    def counts(self) -> dict[BoxOutcome, int]:
        """Boxes of each outcome: predictions matched, false positives, wrong classes (predictions
        shown) and ground-truth boxes missed."""
        out = {o: int(np.count_nonzero(self.outcome == o)) for o in BoxOutcome if o != BoxOutcome.MISSED}
        out[BoxOutcome.MISSED] = int(np.count_nonzero(self.gt_outcome == BoxOutcome.MISSED))
        return out


def prediction_layer(
    versus: Versus,
    width: float,
    height: float,
    iou: float = IOU_THRESHOLD,
    score: float = SCORE_THRESHOLD,
) -> PredictionLayer | None:
    """The predictions of a width x height image matched to its ground truth (None: it has none)."""
    pred = versus.predictions
    if pred is None:
        return None
    m = match_image(versus.gt, versus.gt_classes, pred, iou=iou, score=score)
    scale = np.array([width, height, width, height], dtype=np.float64)
    pscores = np.asarray(pred.scores, dtype=np.float64)
    partner = np.asarray(m.gt_partner, dtype=np.int64)
    has = partner >= 0
    gt_iou = np.zeros(len(partner))
    gt_score = np.full(len(partner), np.nan)
    if has.any():
        from tfrview.core.records.matching import iou_matrix

        pairs = iou_matrix(pred.normalized[partner[has]][:, None, :], versus.gt[has][:, None, :])
        gt_iou[has] = pairs[:, 0, 0]
        gt_score[has] = pscores[partner[has]]
    names = {c: versus.name(c) for c in np.unique(pred.classes).tolist()}
    labels = tuple(
        f"{names[c]} {s:.2f}" for c, s in zip(pred.classes.tolist(), pscores.tolist(), strict=True)
    )
    return PredictionLayer(
        boxes=np.asarray(pred.normalized, dtype=np.float64).reshape(-1, 4) * scale,
        classes=np.asarray(pred.classes, dtype=np.int64),
        scores=pscores,
        outcome=np.asarray(m.pred_outcome, dtype=np.int64),
        iou=np.asarray(m.pred_iou, dtype=np.float64),
        labels=labels,
        gt_outcome=np.asarray(m.gt_outcome, dtype=np.int64),
        gt_iou=gt_iou,
        gt_score=gt_score,
        iou_threshold=iou,
        score_threshold=score,
        source=pred.source,
    )


def describe_prediction(layer: PredictionLayer, i: int) -> str:
    """What the tooltip says of prediction i: class, score, IoU and outcome."""
    o = int(layer.outcome[i])
    what = BoxOutcome(o).words.replace("_", " ") if o != BELOW_SCORE else "under the score threshold"
    return f"prediction {layer.labels[i]} · IoU {layer.iou[i]:.2f} · {what}"


def describe_truth(layer: PredictionLayer, i: int, name: str) -> str:
    """What the tooltip says of ground-truth box i: its class and what the matching made of it."""
    if i >= len(layer.gt_outcome):
        return f"ground truth {name}"
    o = BoxOutcome(int(layer.gt_outcome[i]))
    if np.isnan(layer.gt_score[i]):
        return f"ground truth {name} · {o.words.replace('_', ' ')}"
    return (
        f"ground truth {name} · {o.words.replace('_', ' ')} "
        f"(IoU {layer.gt_iou[i]:.2f} with a prediction of score {layer.gt_score[i]:.2f})"
    )
