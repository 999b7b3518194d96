"""Which predictions match which ground-truth boxes: the one matching rule (the window's drawing,
the evaluation, the problem kinds and the CLI all ask it, so a box is "missed" in one place only).

COCO's greedy rule: predictions taken by descending score (ties in their given order), each
matched to the unmatched ground-truth box of its own class with the highest IoU at or above the
threshold (of equal IoUs the later box, as pycocotools' `evaluateImg` does). Then, for the confusion
matrix and `possible_wrong_class`, a second pass by the same rule pairs each prediction still
unmatched with an unmatched ground-truth box of ANOTHER class (IoU at or above the threshold):
both are `WRONG_CLASS`. What is left is `FALSE_POSITIVE` (a prediction) or `MISSED` (a box).

`match_padded` is the rule over many images at once (padded arrays, one numpy step a prediction
rank, every image in parallel), which the evaluation uses; `match_image` is one image of it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from tfrview.core.records.predictions import Predictions


class BoxOutcome(IntEnum):
    """What became of a box in the matching (one vocabulary, one home; `words` as people read them)."""

    MATCHED = 0
    FALSE_POSITIVE = 1
    MISSED = 2
    WRONG_CLASS = 3

    @property
    def words(self) -> str:
        return _WORDS[self]


_WORDS = {
    BoxOutcome.MATCHED: "matched",
    BoxOutcome.FALSE_POSITIVE: "false_positive",
    BoxOutcome.MISSED: "missed",
    BoxOutcome.WRONG_CLASS: "wrong_class",
}
BELOW_SCORE = -1  # pred_outcome of a prediction under the score threshold (not matched at all)


@dataclass(frozen=True)
class ImageMatch:
    """One image's matching: arrays, never an object a box."""

    gt_outcome: np.ndarray  # (g,) BoxOutcome per ground-truth box
    pred_outcome: np.ndarray  # (p,) BoxOutcome per prediction at or above the score threshold; below it: -1
    gt_partner: np.ndarray  # (g,) index of the matched (or wrong-class) prediction, or -1
    pred_iou: np.ndarray  # (p,) best IoU of each prediction with any ground-truth box (0 when none)
    pred_partner: np.ndarray | None = None  # (p,) index of the matched (or wrong-class) box, or -1


def iou_matrix(pred: np.ndarray, gt: np.ndarray) -> np.ndarray:
    """IoU of every prediction with every box: (..., p, 4) and (..., g, 4) x0, y0, x1, y1 ->
    (..., p, g). Boxes with NaN or no area overlap nothing (0)."""
    px0, py0, px1, py1 = (pred[..., :, None, i] for i in range(4))
    gx0, gy0, gx1, gy1 = (gt[..., None, :, i] for i in range(4))
    iw = np.minimum(px1, gx1) - np.maximum(px0, gx0)
    ih = np.minimum(py1, gy1) - np.maximum(py0, gy0)
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    pa = np.clip(px1 - px0, 0, None) * np.clip(py1 - py0, 0, None)
    ga = np.clip(gx1 - gx0, 0, None) * np.clip(gy1 - gy0, 0, None)
    union = pa + ga - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
    return np.nan_to_num(out, nan=0.0)


def match_padded(
    iou: np.ndarray,
    pred_cls: np.ndarray,
    gt_cls: np.ndarray,
    pred_ok: np.ndarray,
    gt_ok: np.ndarray,
    threshold: float,
    wrong_class: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The matching rule over n images at once. `iou` (n, p, g) with each image's predictions in
    descending score order; `pred_ok` (n, p): predictions taken (score, padding, maxDets);
    `gt_ok` (n, g): real boxes. Returns gt_outcome (n, g), pred_outcome (n, p) (BELOW_SCORE where
    not taken), gt_partner (n, g) and pred_partner (n, p) (-1: none). One numpy step a rank."""
    n, p, g = iou.shape
    gt_partner = np.full((n, g), -1, dtype=np.int64)
    pred_partner = np.full((n, p), -1, dtype=np.int64)
    greedy(iou, pred_cls, gt_cls, pred_ok, gt_ok, gt_partner, pred_partner, threshold, same=True)
    if wrong_class:
        return wrong_class_pass(iou, pred_cls, gt_cls, pred_ok, gt_ok, gt_partner, pred_partner, threshold)
    return outcomes(pred_ok, gt_ok, gt_partner, pred_partner, None)


def outcomes(pred_ok, gt_ok, gt_partner, pred_partner, wrong: np.ndarray | None):
    """BoxOutcome arrays from the partners: matched where partnered in the first pass, wrong class
    where partnered in the second (`wrong`: (n, p) True for those predictions)."""
    gt_out = np.where(gt_ok, int(BoxOutcome.MISSED), -1).astype(np.int8)
    pred_out = np.where(pred_ok, int(BoxOutcome.FALSE_POSITIVE), BELOW_SCORE).astype(np.int8)
    has = pred_partner >= 0
    pred_out[has] = int(BoxOutcome.MATCHED)
    r, k = np.nonzero(has)
    gt_out[r, pred_partner[r, k]] = int(BoxOutcome.MATCHED)
    if wrong is not None:
        w = has & wrong
        pred_out[w] = int(BoxOutcome.WRONG_CLASS)
        r, k = np.nonzero(w)
        gt_out[r, pred_partner[r, k]] = int(BoxOutcome.WRONG_CLASS)
    return gt_out, pred_out, gt_partner, pred_partner


def wrong_class_pass(iou, pred_cls, gt_cls, pred_ok, gt_ok, gt_partner, pred_partner, threshold):
    """The second pass over a first pass's partners (which it extends in place), and the outcomes."""
    before = pred_partner >= 0
    free = gt_ok & (gt_partner < 0)
    greedy(iou, pred_cls, gt_cls, pred_ok, free, gt_partner, pred_partner, threshold, same=False)
    return outcomes(pred_ok, gt_ok, gt_partner, pred_partner, (pred_partner >= 0) & ~before)


def greedy(iou, pred_cls, gt_cls, pred_ok, free, gt_partner, pred_partner, threshold, same: bool) -> None:
    """One greedy pass (module docstring), rank by rank over every image at once: each taken,
    unpartnered prediction takes the free box of its class (`same`) or another class with the
    highest IoU at or above the threshold. Partners are written in place."""
    n, p, g = iou.shape
    if not n or not p or not g:
        return
    thr = min(threshold, 1 - 1e-10)  # pycocotools' bound: an IoU of 1 still matches at 1.0
    free = free & (gt_partner < 0)
    rows = np.arange(n)
    for k in range(p):
        live = pred_ok[:, k] & (pred_partner[:, k] < 0)
        if not live.any():
            continue
        r = rows[live]
        cls_ok = (gt_cls[r] == pred_cls[r, k, None]) if same else (gt_cls[r] != pred_cls[r, k, None])
        cand = np.where(free[r] & cls_ok, iou[r, k, :], -1.0)
        last = g - 1 - np.argmax(cand[:, ::-1], axis=1)  # of equal IoUs the later box
        best = cand[np.arange(len(r)), last]
        hit = best >= thr
        r, last = r[hit], last[hit]
        gt_partner[r, last] = k
        pred_partner[r, k] = last
        free[r, last] = False


def match_image(
    gt_normalized: np.ndarray,
    gt_classes: np.ndarray,
    predictions: Predictions,
    iou: float = 0.5,
    score: float = 0.5,
) -> ImageMatch:
    """One image's matching (module docstring): the ground-truth boxes (g, 4) in [0, 1] with their
    class ids (fewer ids than boxes: the rest are -1), the predictions (any order), the IoU and
    score thresholds. Arrays are in the given orders."""
    gt = np.asarray(gt_normalized, dtype=np.float64).reshape(-1, 4)
    g = len(gt)
    gcls = np.full(g, -1, dtype=np.int64)
    k = min(g, len(gt_classes))
    gcls[:k] = np.asarray(gt_classes, dtype=np.int64)[:k]
    order = np.argsort(-predictions.scores, kind="stable")
    boxes = predictions.normalized[order]
    ious = iou_matrix(boxes, gt)  # (p, g)
    pred_ok = (predictions.scores[order] >= score)[None, :]
    gt_out, pred_out, gt_partner, pred_partner = match_padded(
        ious[None], predictions.classes[order][None], gcls[None], pred_ok, np.ones((1, g), dtype=bool), iou
    )
    back = np.empty_like(order)
    back[order] = np.arange(len(order))  # sorted position of each given prediction
    partner = gt_partner[0]
    return ImageMatch(
        gt_outcome=gt_out[0].astype(np.int64),
        pred_outcome=pred_out[0][back].astype(np.int64),
        gt_partner=np.where(partner >= 0, order[np.maximum(partner, 0)], -1) if len(order) else partner,
        pred_iou=(ious.max(axis=1) if g else np.zeros(len(order)))[back],
        pred_partner=pred_partner[0][back],
    )
