"""Predictions measured against the ground truth, from the stored analysis (issue 24): per image
TP/FP/FN, a confusion matrix with a background row and column, per class precision, recall and
AP@0.5, COCO's mAP@[.5:.95], and the likely label errors (`possible_missing_label`,
`possible_wrong_class`, `possible_spurious_label`).

Where the boxes come from: every file's fact table (`factboxes.table_boxes` for the ground truth,
`factboxes.table_predictions` for the OD API's detection keys the records hold), or predictions
joined from a file (`predictions_join`), as `EvalData`: flat arrays over every box, never an object
a box. Classes are matched by name: a ground-truth box's class text, else its id named by the label
map (else "id N"); a prediction's id is named by the text the ground truth gives that id, else the
label map, else "id N" (records of ids alone match id by id).

How it stays fast: `prepare` sorts each image's predictions by score once and computes the IoU of
every prediction with every box of its image once, images grouped by their padded box counts
(`Bucket`: (images, predictions, boxes) arrays); `evaluate(prepared, iou, score)` then runs the
one matching rule (`records.matching.match_padded`: one numpy step a prediction rank, every image
of a bucket at once) and counts; a new IoU or score threshold costs only that (`bench_evaluate`:
<= 1 s for 100,000 images x 10 boxes). mAP@[.5:.95] needs ten matchings and is computed once.

COCO's rules, as pycocotools' COCOeval (bbox, area "all", maxDets 100, no crowd boxes): the
predictions of an image and class taken by descending score, at most 100 of them; AP the mean over
101 recall points of the interpolated precision (precision made monotone from the right), per
class with ground truth (a class only predicted has no AP); mAP the mean over classes and the ten
IoU thresholds 0.50:0.05:0.95. Within 1e-3 of pycocotools (tests/core/test_evaluation.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

import numpy as np

from tfrview.core.analysis.checks import Finding
from tfrview.core.analysis.factboxes import (
    box_class_ids,
    box_classes,
    prediction_columns,
    schema_box_spec,
    table_boxes,
    table_predictions,
)
from tfrview.core.analysis.factcolumns import RECORD, Growing, Step, expected_rows, read
from tfrview.core.analysis.facts import LEN_SUFFIX, column_of
from tfrview.core.analysis.rules import DatasetRules, PredictionRules
from tfrview.core.analysis.stepcolumns import BY_STEP
from tfrview.core.limits import EVAL_FIRST_PASSES
from tfrview.core.problems import ProblemKind
from tfrview.core.records.matching import (
    BELOW_SCORE,
    BoxOutcome,
    greedy,
    iou_matrix,
    outcomes,
    wrong_class_pass,
)
from tfrview.core.records.predictions import DETECTION_BOX_KEYS, RECORD_SOURCE
from tfrview.core.records.reading import class_name

log = logging.getLogger(__name__)

IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1)  # as pycocotools
RECALL_POINTS = np.linspace(0.0, 1.0, int(np.round(1.0 / 0.01)) + 1)
MAX_DETS = 100  # predictions of an image and class taken, by score (COCO's maxDets)
NO_CLASS = "(no class)"  # the class of a box or prediction whose record names none
IOU_PIECE = 1 << 21  # IoU cells computed at once in `prepare` (memory: ~10 arrays of this many)


@dataclass(frozen=True)
class EvalData:
    """The boxes of the images evaluated, as flat arrays. Images are numbered 0..n-1 (`file`,
    `record` say which record each is); boxes in [0, 1] of their image (NaN: unknown, which
    overlaps nothing); classes are codes into `names`."""

    file: np.ndarray  # (n,) int32
    record: np.ndarray  # (n,) int64
    gt_image: np.ndarray  # (g,) int64
    gt_box: np.ndarray  # (g, 4) float64
    gt_class: np.ndarray  # (g,) int64
    gt_slot: np.ndarray  # (g,) int64: the box's number in its record
    pred_image: np.ndarray  # (p,) int64
    pred_box: np.ndarray  # (p, 4)
    pred_class: np.ndarray  # (p,) int64
    pred_score: np.ndarray  # (p,) float64
    pred_slot: np.ndarray  # (p,) int64: the prediction's number in its record (or its file)
    names: list[str]
    source: str = RECORD_SOURCE  # "record" or the predictions file's name
    notes: tuple[str, ...] = ()

    @property
    def images(self) -> int:
        return len(self.file)


@dataclass(frozen=True)
class Bucket:
    """Images whose prediction and box counts pad to the same (p, g): each image's predictions in
    descending score order, their IoU with every box computed once."""

    images: np.ndarray  # (m,)
    pred: np.ndarray  # (m, p) index into EvalData's predictions, -1 padding
    gt: np.ndarray  # (m, g) index into EvalData's boxes, -1 padding
    iou: np.ndarray  # (m, p, g)
    pred_cls: np.ndarray  # (m, p) (padding -3)
    gt_cls: np.ndarray  # (m, g) (padding -2)
    score: np.ndarray  # (m, p) (padding -inf)
    taken: np.ndarray  # (m, p): a real prediction within the first MAX_DETS of its image and class
    # where the real cells are, flattened, to scatter answers back without fancy 2-D indexing again
    gpos: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # cells of real boxes in (m, g)
    ppos: np.ndarray = field(
        default_factory=lambda: np.zeros(0, np.int64)
    )  # cells of real predictions in (m, p)

    def scatter_to(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(box index, prediction index, row base into (m, p) of each real box, row base into
        (m, g) of each real prediction), computed once."""
        got = self.__dict__.get("_scatter")
        if got is None:
            m, p = self.pred.shape
            g = self.gt.shape[1]
            got = (
                self.gt.ravel()[self.gpos],
                self.pred.ravel()[self.ppos],
                (self.gpos // max(g, 1)) * p,
                (self.ppos // max(p, 1)) * g,
            )
            object.__setattr__(self, "_scatter", got)
        return got


@dataclass(frozen=True)
class Prepared:
    """An `EvalData` made ready to be matched at any thresholds (`prepare`)."""

    data: EvalData
    buckets: tuple[Bucket, ...]
    pred_iou: np.ndarray  # (p,) each prediction's best IoU with any box of its image
    _cache: dict = field(default_factory=dict, repr=False, compare=False)


@dataclass(frozen=True)
class Evaluation:
    """The answer at one (iou, score): arrays a class, an image, a box (module docstring)."""

    iou: float
    score: float
    names: list[str]
    confusion: np.ndarray  # (k+1, k+1): rows ground truth, columns predicted; the last of each: background
    gt_count: np.ndarray  # (k,) boxes of each class
    tp: np.ndarray  # (k,) at (iou, score)
    fp: np.ndarray
    fn: np.ndarray
    precision: np.ndarray  # (k,) NaN: no prediction of the class
    recall: np.ndarray  # (k,) NaN: no box of the class
    ap50: np.ndarray  # (k,) AP at IoU 0.5 (NaN: no box of the class)
    ap: np.ndarray  # (k,) AP@[.5:.95]
    map50: float
    map: float  # COCO's mAP@[.5:.95] (NaN: no boxes)
    pr_precision: np.ndarray  # (k, 101) interpolated precision at RECALL_POINTS at this IoU (PR curves)
    pr_score: np.ndarray  # (k, 101) the score at which each recall point is reached (NaN: never)
    image_tp: np.ndarray  # (n,) int32
    image_fp: np.ndarray
    image_fn: np.ndarray
    image_max_fp_score: np.ndarray  # (n,) float32, NaN: no false positive
    gt_outcome: np.ndarray  # (g,) BoxOutcome
    gt_partner: np.ndarray  # (g,) the prediction it matched (or wrong-class partner), -1
    pred_outcome: np.ndarray  # (p,) BoxOutcome, BELOW_SCORE under the score threshold or past MAX_DETS
    pred_partner: np.ndarray  # (p,)
    pred_iou: np.ndarray  # (p,)

    def table(self) -> list[dict]:
        """The per-class table as rows of plain values (the CLI's --json and the window)."""
        rows = []
        for k, name in enumerate(self.names):
            rows.append(
                {
                    "class": name,
                    "boxes": int(self.gt_count[k]),
                    "tp": int(self.tp[k]),
                    "fp": int(self.fp[k]),
                    "fn": int(self.fn[k]),
                    "precision": _num(self.precision[k]),
                    "recall": _num(self.recall[k]),
                    "ap50": _num(self.ap50[k]),
                    "ap": _num(self.ap[k]),
                }
            )
        return rows


def _num(v) -> float | None:
    return None if not np.isfinite(v) else round(float(v), 6)


# --- preparing ---------------------------------------------------------------------------------------


def _ladder(n: np.ndarray) -> np.ndarray:
    """Counts padded to 0, 1, 2, 3, 4, 6, 8, 12, 16, 24, ...: at most 1.5 times the count."""
    n = np.asarray(n, dtype=np.int64)
    out = n.copy()
    big = n > 4
    k = np.floor(np.log2(np.maximum(n, 1) - 1e-9)).astype(np.int64)  # 2^k < n <= 2^(k+1)
    low, high = 1.5 * (1 << np.maximum(k, 0)), 2 * (1 << np.maximum(k, 0))
    out[big] = np.where(n[big] <= low[big], low[big], high[big]).astype(np.int64)
    return out


def _pad(values: np.ndarray, idx: np.ndarray, valid: np.ndarray, fill) -> np.ndarray:
    """values[idx] where valid, else fill (values may be empty when nothing is valid)."""
    if not len(values):
        return np.full(idx.shape, fill, dtype=np.result_type(values.dtype, np.asarray(fill).dtype))
    return np.where(valid, values[np.clip(idx, 0, len(values) - 1)], fill)


def prepare(data: EvalData) -> Prepared:
    """Each image's predictions in descending score order (stable: as given, on ties) and their
    IoU with each box of the image, once, in buckets of equal padded size."""
    n = data.images
    order = np.lexsort((np.arange(len(data.pred_score)), -data.pred_score, data.pred_image))
    p_img = data.pred_image[order]
    p_cls = data.pred_class[order]
    # rank of each prediction within its image and class (COCO's maxDets is per image and class)
    k = max(len(data.names), 1)
    key = p_img * (k + 1) + p_cls
    by = np.argsort(key, kind="stable")
    ks = key[by]
    first = np.r_[True, ks[1:] != ks[:-1]] if len(ks) else np.zeros(0, bool)
    start = np.maximum.accumulate(np.where(first, np.arange(len(ks)), 0)) if len(ks) else ks
    rank = np.empty(len(ks), dtype=np.int64)
    rank[by] = np.arange(len(ks)) - start
    p_count = np.bincount(data.pred_image, minlength=n) if n else np.zeros(0, np.int64)
    g_order = np.argsort(data.gt_image, kind="stable")
    g_count = np.bincount(data.gt_image, minlength=n) if n else np.zeros(0, np.int64)
    p_start = np.concatenate([[0], np.cumsum(p_count)[:-1]]).astype(np.int64)
    g_start = np.concatenate([[0], np.cumsum(g_count)[:-1]]).astype(np.int64)
    pp, gg = _ladder(p_count), _ladder(g_count)
    pred_iou = np.zeros(len(order), dtype=np.float64)
    s_box, s_cls, s_score = data.pred_box[order], p_cls, data.pred_score[order]
    buckets = []
    size_key = pp * (1 << 32) + gg
    for sk in np.unique(size_key):
        imgs = np.flatnonzero(size_key == sk)
        P, G = int(sk >> 32), int(sk & 0xFFFFFFFF)
        ar_p, ar_g = np.arange(P), np.arange(G)
        pv = ar_p[None, :] < p_count[imgs, None]
        gv = ar_g[None, :] < g_count[imgs, None]
        pidx = np.where(pv, p_start[imgs, None] + ar_p[None, :], -1)  # into the sorted predictions
        gidx = _pad(g_order, g_start[imgs, None] + ar_g[None, :], gv, -1)  # into the boxes
        iou = np.zeros((len(imgs), P, G), dtype=np.float64)
        if P and G:
            step = max(1, IOU_PIECE // (P * G))
            for s in range(0, len(imgs), step):
                pi, gi = pidx[s : s + step], gidx[s : s + step]
                got = iou_matrix(s_box[np.maximum(pi, 0)], data.gt_box[np.maximum(gi, 0)])
                got[(pi < 0)[:, :, None] | (gi < 0)[:, None, :]] = 0.0
                iou[s : s + step] = got
            best = iou.max(axis=2)
            pred_iou[pidx[pv]] = best[pv]
        buckets.append(
            Bucket(
                images=imgs,
                pred=_pad(order, pidx, pv, -1),
                gt=gidx,
                iou=iou,
                pred_cls=_pad(s_cls, pidx, pv, -3),
                gt_cls=_pad(data.gt_class, gidx, gv, -2),
                score=_pad(s_score, pidx, pv, -np.inf),
                taken=pv & (_pad(rank, pidx, pv, MAX_DETS) < MAX_DETS),
                gpos=np.flatnonzero(gv.ravel()),
                ppos=np.flatnonzero(pv.ravel()),
            )
        )
    back = np.empty(len(order), dtype=np.float64)
    back[order] = pred_iou
    return Prepared(data, tuple(buckets), back)


# --- matching and counting ---------------------------------------------------------------------------


def _first_pass(prep: Prepared, iou: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each bucket's first-pass partners (gt, pred) at this IoU over every taken prediction, kept
    for the next threshold change (a few IoUs at a time). A score threshold needs no new first
    pass: the predictions are taken by descending score, so those above it match as they would
    alone, and the matches of those below are undone (`_match`)."""
    cache = prep._cache.setdefault("first", {})
    got = cache.get(iou)
    if got is None:
        got = []
        for b in prep.buckets:
            gp = np.full(b.gt.shape, -1, dtype=np.int64)
            pp = np.full(b.pred.shape, -1, dtype=np.int64)
            greedy(b.iou, b.pred_cls, b.gt_cls, b.taken, b.gt >= 0, gp, pp, iou, same=True)
            got.append((gp, pp))
        if len(cache) >= EVAL_FIRST_PASSES:
            cache.pop(next(iter(cache)))
        cache[iou] = got
    return got


def _match(prep: Prepared, iou: float, score: float | None, wrong_class: bool):
    """The matching rule over every bucket; flat outcomes and partners (EvalData order)."""
    d = prep.data
    g_out = np.full(len(d.gt_class), int(BoxOutcome.MISSED), dtype=np.int8)
    p_out = np.full(len(d.pred_class), BELOW_SCORE, dtype=np.int8)
    g_par = np.full(len(d.gt_class), -1, dtype=np.int64)
    p_par = np.full(len(d.pred_class), -1, dtype=np.int64)
    for b, (gp0, pp0) in zip(prep.buckets, _first_pass(prep, iou), strict=True):
        gp, pp = gp0.copy(), pp0.copy()
        ok = b.taken
        if score is not None:
            ok = b.taken & (b.score >= score)
            undo = (pp >= 0) & ~ok
            r, k = np.nonzero(undo)
            gp[r, pp[r, k]] = -1
            pp[undo] = -1
        if wrong_class:
            go, po, gp, pp = wrong_class_pass(b.iou, b.pred_cls, b.gt_cls, ok, b.gt >= 0, gp, pp, iou)
        else:
            go, po, gp, pp = outcomes(ok, b.gt >= 0, gp, pp, None)
        greal, preal, grow, prow = b.scatter_to()
        g_out[greal] = go.ravel()[b.gpos]
        p_out[preal] = po.ravel()[b.ppos]
        if b.pred.shape[1] and b.gt.shape[1]:
            gpar, ppar = gp.ravel()[b.gpos], pp.ravel()[b.ppos]
            g_par[greal] = np.where(gpar >= 0, b.pred.ravel()[grow + np.maximum(gpar, 0)], -1)
            p_par[preal] = np.where(ppar >= 0, b.gt.ravel()[prow + np.maximum(ppar, 0)], -1)
    return g_out, p_out, g_par, p_par


def _ap_order(prep: Prepared) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """COCO's order of the taken predictions for AP (images in turn, each image's by score, then all
    of a class by score, stable), each class's bounds in it and its boxes: thresholds never change
    it, so it is sorted once."""
    got = prep._cache.get("ap_order")
    if got is None:
        d = prep.data
        k = len(d.names)
        taken = np.zeros(len(d.pred_class), dtype=bool)
        for b in prep.buckets:
            taken[b.pred[b.taken]] = True
        sel = np.flatnonzero(taken)
        within = np.lexsort((np.arange(len(sel)), -d.pred_score[sel], d.pred_image[sel]))
        sel = sel[within]
        order = sel[np.lexsort((np.arange(len(sel)), -d.pred_score[sel], d.pred_class[sel]))]
        bounds = np.searchsorted(d.pred_class[order], np.arange(k + 1))
        npig = np.bincount(d.gt_class, minlength=k)[:k] if len(d.gt_class) else np.zeros(k, np.int64)
        got = prep._cache["ap_order"] = (order, bounds, npig)
    return got


def _ap(prep: Prepared, matched: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """COCO's AP of each class from one first pass over every taken prediction (`matched`: each
    prediction matched a box of its class), with the 101-point interpolated precision and the
    score at each recall point (NaN: not reached)."""
    d = prep.data
    k = len(d.names)
    order, bounds, npig = _ap_order(prep)
    ap = np.full(k, np.nan)
    curve = np.zeros((k, len(RECALL_POINTS)))
    at = np.full((k, len(RECALL_POINTS)), np.nan)
    eps = np.spacing(1)
    hits = matched[order]
    for c in range(k):
        if npig[c] == 0:
            continue
        s, e = bounds[c], bounds[c + 1]
        if s == e:
            ap[c] = 0.0
            continue
        tp = np.cumsum(hits[s:e], dtype=np.float64)
        fp = np.arange(1, e - s + 1, dtype=np.float64) - tp
        rc = tp / npig[c]
        pr = tp / (fp + tp + eps)
        pr = np.maximum.accumulate(pr[::-1])[::-1]
        inds = np.searchsorted(rc, RECALL_POINTS, side="left")
        inside = inds < len(rc)
        curve[c, inside] = pr[inds[inside]]
        at[c, inside] = d.pred_score[order[s:e]][inds[inside]]
        ap[c] = curve[c].mean()
    return ap, curve, at


def _all_thresholds(prep: Prepared) -> tuple[np.ndarray, np.ndarray]:
    """AP@0.5 and AP@[.5:.95] of each class (computed once a Prepared: no threshold changes them)."""
    got = prep._cache.get("ap")
    if got is None:
        per = []
        for t in IOU_THRESHOLDS:
            _, p_out, _, _ = _match(prep, float(t), None, wrong_class=False)
            per.append(_ap(prep, p_out == int(BoxOutcome.MATCHED))[0])
        per = np.array(per).reshape(len(IOU_THRESHOLDS), len(prep.data.names))
        # a class has an AP at every threshold or at none (its boxes): NaN stays NaN
        got = prep._cache["ap"] = (per[0], per.mean(axis=0))
    return got


def _curve(prep: Prepared, iou: float) -> tuple[np.ndarray, np.ndarray]:
    """Each class's PR curve at this IoU over every prediction (a curve is over scores: no score
    threshold), kept for a few IoUs as their first passes are (a score change costs none)."""
    cache = prep._cache.setdefault("curve", {})
    got = cache.get(iou)
    if got is None:
        _, p_all, _, _ = _match(prep, iou, None, wrong_class=False)
        got = _ap(prep, p_all == int(BoxOutcome.MATCHED))[1:]
        if len(cache) >= EVAL_FIRST_PASSES:
            cache.pop(next(iter(cache)))
        cache[iou] = got
    return got


def _tally(d: EvalData, g_out, p_out, g_par):
    """The confusion matrix and per-class boxes, TP, FP, FN of one matching."""
    k = len(d.names)
    M, W, F = int(BoxOutcome.MATCHED), int(BoxOutcome.WRONG_CLASS), int(BoxOutcome.FALSE_POSITIVE)
    conf = np.zeros((k + 1, k + 1), dtype=np.int64)
    gc = d.gt_class
    m = g_out == M
    np.add.at(conf, (gc[m], gc[m]), 1)
    w = g_out == W
    np.add.at(conf, (gc[w], d.pred_class[g_par[w]]), 1)
    np.add.at(conf, (gc[g_out == int(BoxOutcome.MISSED)], k), 1)
    fpm = p_out == F
    np.add.at(conf, (np.full(int(fpm.sum()), k), d.pred_class[fpm]), 1)
    gt_count = np.bincount(gc, minlength=k)[:k] if len(gc) else np.zeros(k, np.int64)
    tp = np.bincount(gc[m], minlength=k)[:k]
    fp = np.bincount(d.pred_class[(p_out != BELOW_SCORE) & (p_out != M)], minlength=k)[:k]
    return conf, gt_count, tp, fp, gt_count - tp


def grid(prep: Prepared, ious, scores) -> dict[str, np.ndarray]:
    """The confusion matrix and per-class TP, FP, FN at every (iou, score) of a grid, without the
    rest of `evaluate` (no PR curve, no per-image counts): a window's sliders over the grid need no
    new job. Arrays (i, s, k+1, k+1) and (i, s, k)."""
    d = prep.data
    k = len(d.names)
    ious, scores = list(ious), list(scores)
    conf = np.zeros((len(ious), len(scores), k + 1, k + 1), dtype=np.int64)
    tp, fp, fn = (np.zeros((len(ious), len(scores), k), dtype=np.int64) for _ in range(3))
    for i, iou in enumerate(ious):
        for j, score in enumerate(scores):
            g_out, p_out, g_par, _ = _match(prep, float(iou), float(score), wrong_class=True)
            conf[i, j], _, tp[i, j], fp[i, j], fn[i, j] = _tally(d, g_out, p_out, g_par)
    return {
        "grid_ious": np.asarray(ious, dtype=np.float64),
        "grid_scores": np.asarray(scores, dtype=np.float64),
        "grid_confusion": conf,
        "grid_tp": tp,
        "grid_fp": fp,
        "grid_fn": fn,
    }


def evaluate(prep: Prepared, iou: float = 0.5, score: float = 0.5) -> Evaluation:
    """Everything at one IoU and score threshold (module docstring)."""
    d = prep.data
    n = d.images
    ap50, ap = _all_thresholds(prep)
    curve, at = _curve(prep, iou)
    g_out, p_out, g_par, p_par = _match(prep, iou, score, wrong_class=True)
    M = int(BoxOutcome.MATCHED)
    conf, gt_count, tp, fp, fn = _tally(d, g_out, p_out, g_par)
    counted = p_out != BELOW_SCORE
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), np.nan)
        recall = np.where(gt_count > 0, tp / np.maximum(gt_count, 1), np.nan)
    img_tp = np.bincount(d.pred_image[p_out == M], minlength=n).astype(np.int32)
    wrong = counted & (p_out != M)
    img_fp = np.bincount(d.pred_image[wrong], minlength=n).astype(np.int32)
    img_fn = np.bincount(d.gt_image[g_out != M], minlength=n).astype(np.int32)
    mx = np.full(n, -np.inf)
    np.maximum.at(mx, d.pred_image[wrong], d.pred_score[wrong])
    mx = np.where(np.isfinite(mx), mx, np.nan).astype(np.float32)
    has = ~np.isnan(ap)
    return Evaluation(
        iou=iou,
        score=score,
        names=list(d.names),
        confusion=conf,
        gt_count=gt_count,
        tp=tp,
        fp=fp,
        fn=fn,
        precision=precision,
        recall=recall,
        ap50=ap50,
        ap=ap,
        map50=float(np.nanmean(ap50)) if has.any() else float("nan"),
        map=float(np.mean(ap[has])) if has.any() else float("nan"),
        pr_precision=curve,
        pr_score=at,
        image_tp=img_tp,
        image_fp=img_fp,
        image_fn=img_fn,
        image_max_fp_score=mx,
        gt_outcome=g_out.astype(np.int64),
        gt_partner=g_par,
        pred_outcome=p_out.astype(np.int64),
        pred_partner=p_par,
        pred_iou=prep.pred_iou,
    )


# --- likely label errors -----------------------------------------------------------------------------


@dataclass(frozen=True)
class LikelyErrors:
    """The boxes and predictions each problem kind names (indices into EvalData's arrays)."""

    missing: np.ndarray  # predictions: confident, no box near (possible_missing_label)
    wrong_class: np.ndarray  # predictions: confident, another class on a box (possible_wrong_class)
    wrong_box: np.ndarray  # the box each of those is on
    spurious: np.ndarray  # boxes no prediction comes near (possible_spurious_label)


def likely_errors(prep: Prepared, rules: PredictionRules) -> LikelyErrors:
    """Where the model and the labels disagree, by the thresholds of `rules` (rules.PredictionRules);
    a box is judged spurious only in an image with at least one prediction."""
    d = prep.data
    missing = np.flatnonzero((d.pred_score >= rules.missing_label_score) & (prep.pred_iou < rules.near_iou))
    _, p_out, _, p_par = _match(prep, rules.wrong_class_iou, rules.wrong_class_score, wrong_class=True)
    wrong = np.flatnonzero(p_out == int(BoxOutcome.WRONG_CLASS))
    # the best IoU of each box with any prediction scoring at least spurious_score
    near = np.zeros(len(d.gt_class))
    for b in prep.buckets:
        if not b.iou.shape[1] or not b.iou.shape[2]:
            continue
        ok = b.taken & (b.score >= rules.spurious_score)
        best = np.where(ok[:, :, None], b.iou, 0.0).max(axis=1)
        real = b.gt >= 0
        near[b.gt[real]] = best[real]
    # only in images with some prediction: an image the model was not run on (a results file of
    # one split joined to the whole dataset) says nothing of its boxes
    predicted = np.bincount(d.pred_image, minlength=d.images) > 0 if d.images else np.zeros(0, bool)
    spurious = np.flatnonzero((near < rules.near_iou) & predicted[d.gt_image])
    return LikelyErrors(missing, wrong, p_par[wrong], spurious)


def findings(prep: Prepared, errs: LikelyErrors, rules: PredictionRules) -> list[tuple[int, int, Finding]]:
    """The likely label errors as findings at records: one a record and kind ("2 confident
    predictions ..., e.g. prediction 3: ..."), never one a box."""
    d = prep.data
    key = DETECTION_BOX_KEYS[0] if d.source == RECORD_SOURCE else d.source
    out: list[tuple[int, int, Finding]] = []

    def per_record(idx: np.ndarray, image: np.ndarray, say) -> None:
        if not len(idx):
            return
        img = image[idx]
        order = np.argsort(img, kind="stable")
        idx, img = idx[order], img[order]
        starts = np.flatnonzero(np.r_[True, img[1:] != img[:-1]])
        counts = np.diff(np.r_[starts, len(img)])
        for s, c in zip(starts.tolist(), counts.tolist(), strict=True):
            i = int(img[s])
            out.append((int(d.file[i]), int(d.record[i]), say(idx[s : s + c])))

    def missing(ix):
        j = int(ix[np.argmax(d.pred_score[ix])])
        many = f"{len(ix)} confident predictions" if len(ix) > 1 else "a confident prediction"
        return Finding(
            ProblemKind.POSSIBLE_MISSING_LABEL,
            f"{many} with no ground-truth box near (IoU < {rules.near_iou:g})"
            f"{', e.g.' if len(ix) > 1 else ':'} prediction {int(d.pred_slot[j])}: {d.names[d.pred_class[j]]} "
            f"at score {d.pred_score[j]:.2f} (best IoU {prep.pred_iou[j]:.2f}): a box the labels may lack",
            key,
        )

    def wrong(ix):
        j = int(ix[np.argmax(d.pred_score[ix])])
        g = int(errs.wrong_box[np.searchsorted(errs.wrong_class, j)])
        many = f"{len(ix)} confident predictions" if len(ix) > 1 else "a confident prediction"
        return Finding(
            ProblemKind.POSSIBLE_WRONG_CLASS,
            f"{many} of another class on a ground-truth box{', e.g.' if len(ix) > 1 else ':'} "
            f"box {int(d.gt_slot[g])} is {d.names[d.gt_class[g]]}, predicted {d.names[d.pred_class[j]]} "
            f"at score {d.pred_score[j]:.2f}",
            key,
        )

    def spurious(ix):
        g = int(ix[0])
        many = f"{len(ix)} ground-truth boxes" if len(ix) > 1 else "a ground-truth box"
        return Finding(
            ProblemKind.POSSIBLE_SPURIOUS_LABEL,
            f"{many} no prediction comes near (score >= {rules.spurious_score:g}, IoU >= {rules.near_iou:g})"
            f"{', e.g.' if len(ix) > 1 else ':'} box {int(d.gt_slot[g])} ({d.names[d.gt_class[g]]})",
            key,
        )

    per_record(errs.missing, d.pred_image, missing)
    per_record(errs.wrong_class, d.pred_image, wrong)
    per_record(errs.spurious, d.gt_image, spurious)
    out.sort(key=lambda t: (t[0], t[1]))
    return out


# --- gathering from the fact tables ------------------------------------------------------------------


class EvalGatherer:
    """What the evaluation keeps of each fact table (a `factcolumns.Gatherer`): the ground-truth
    boxes (normalised by the image's size when in pixels) with their class names and ids, and the
    detection keys' predictions, of the records that hold detection keys (`joined`: predictions
    from a file instead; then every record is evaluated, as pycocotools evaluates every image).
    `ids_only`: keep the records' ids for the join (`predictions_join.image_ids`)."""

    def __init__(self, expected: int = 0, label_map=None, joined: bool = False) -> None:
        self.label_map = label_map
        self.joined = joined
        self.img_file, self.img_record = Growing(expected), Growing(expected)
        self.g_img, self.g_slot, self.g_id, self.g_text = (Growing(expected) for _ in range(4))
        self.g_box = [Growing(expected) for _ in range(4)]
        self.p_img, self.p_slot, self.p_id, self.p_score = (Growing(expected) for _ in range(4))
        self.p_box = [Growing(expected) for _ in range(4)]
        self.texts: dict[str, int] = {}
        self.id_names: dict[int, str] = {}
        self.images = 0
        self.cut = 0
        self.unsized = 0
        self.row_image: dict[int, np.ndarray] = {}  # file -> image number of each row (-1: not evaluated)

    def needs(self, schema) -> list[str]:
        spec = schema_box_spec(schema)
        cols = [column_of(k) for k in spec.keys]
        out = [RECORD, *cols, cols[0] + LEN_SUFFIX, "image_width", "image_height"]
        out += [column_of(k) for k in (spec.class_id, spec.class_text) if k]
        return out + prediction_columns(schema)

    def add_many(self, tables: list) -> None:
        """Many files' tables (`factcolumns.read`): those without detection keys (most datasets)
        only noted, without a look at their rows; the others file by file, as `add`."""
        col = column_of(DETECTION_BOX_KEYS[0])
        for fi, t in tables:
            if not self.joined and col not in t.column_names:
                self.row_image.setdefault(fi, np.full(0, -1))
            else:
                self.add(fi, t)

    def add(self, fi: int, t) -> None:
        rec = np.asarray(t[RECORD].to_numpy(zero_copy_only=False), dtype=np.int64)
        n = t.num_rows
        preds = None if self.joined else table_predictions(t)
        if self.joined:
            evaluated = np.ones(n, dtype=bool)
        else:
            col = column_of(DETECTION_BOX_KEYS[0])
            if col not in t.column_names:
                self.row_image.setdefault(fi, np.full(0, -1))
                return
            evaluated = np.asarray(t[col].is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        image_of = np.full(n, -1, dtype=np.int64)
        image_of[evaluated] = self.images + np.arange(int(evaluated.sum()))
        prior = self.row_image.get(fi)
        self.row_image[fi] = image_of if prior is None else np.concatenate([prior, image_of])
        self.images += int(evaluated.sum())
        self.img_file.extend(np.full(int(evaluated.sum()), fi, dtype=np.int32))
        self.img_record.extend(rec[evaluated])
        size = _sizes(t)
        boxes = table_boxes(t)
        if boxes is not None:
            keep = evaluated[boxes.row]
            self.cut += boxes.cut
            ids, names = box_class_ids(t, boxes)
            for i, name in names.items():
                self.id_names.setdefault(i, name)
            texts = np.full(len(boxes), -1, dtype=np.int64)
            if boxes.spec.class_text:
                codes, words = box_classes(t, replace(boxes, spec=replace(boxes.spec, class_id=None)))
                remap = np.array([self.texts.setdefault(w, len(self.texts)) for w in words] + [-1], np.int64)
                texts = remap[codes]
            corners = [boxes.x0, boxes.y0, boxes.x1, boxes.y1]
            if not boxes.spec.convention.normalized:
                w, h = size[0][boxes.row], size[1][boxes.row]
                self.unsized += int(np.count_nonzero(keep & ~(np.isfinite(w) & np.isfinite(h))))
                corners = [corners[0] / w, corners[1] / h, corners[2] / w, corners[3] / h]
            self.g_img.extend(image_of[boxes.row][keep])
            self.g_slot.extend(boxes.slot[keep])
            self.g_id.extend(ids[keep])
            self.g_text.extend(texts[keep])
            for acc, c in zip(self.g_box, corners, strict=True):
                acc.extend(np.asarray(c, dtype=np.float64)[keep])
        if preds is not None:
            keep = evaluated[preds.row]
            self.p_img.extend(image_of[preds.row][keep])
            self.p_slot.extend(preds.slot[keep])
            self.p_id.extend(preds.classes[keep])
            self.p_score.extend(preds.scores[keep])
            for acc, c in zip(self.p_box, (preds.x0, preds.y0, preds.x1, preds.y1), strict=True):
                acc.extend(np.asarray(c, dtype=np.float64)[keep])

    def done(self) -> EvalData | EvalGatherer | None:
        """What was kept: the EvalData; itself when `joined` (`gather_joined` adds the predictions)."""
        if self.joined:
            return self
        if not self.images:
            return None
        f = self.img_file.array() if self.img_file.n else np.zeros(0, np.int32)
        return self.data(f, self.img_record.array(), *self._preds())

    def _preds(self):
        if not self.p_img.n:
            e = np.zeros(0)
            return e.astype(np.int64), np.zeros((0, 4)), e.astype(np.int64), e, e.astype(np.int64)
        box = np.stack([np.asarray(a.array(), dtype=np.float64) for a in self.p_box], axis=1)
        return (
            np.asarray(self.p_img.array(), np.int64),
            box,
            np.asarray(self.p_id.array(), np.int64),
            np.asarray(self.p_score.array(), np.float64),
            np.asarray(self.p_slot.array(), np.int64),
        )

    def data(
        self, file, record, p_img, p_box, p_id, p_score, p_slot, source=RECORD_SOURCE, notes=()
    ) -> EvalData:
        """The EvalData of what was kept, with these predictions (ids: named as the module says)."""
        names: dict[str, int] = {}
        text_words = list(self.texts)
        if self.g_img.n:
            g_img = np.asarray(self.g_img.array(), np.int64)
            g_slot = np.asarray(self.g_slot.array(), np.int64)
            g_id = np.asarray(self.g_id.array(), np.int64)
            g_text = np.asarray(self.g_text.array(), np.int64)
            g_box = np.stack([np.asarray(a.array(), dtype=np.float64) for a in self.g_box], axis=1)
        else:
            g_img = g_slot = g_id = g_text = np.zeros(0, np.int64)
            g_box = np.zeros((0, 4))
        self.g_img = Growing(0)  # let go: `data` is called once
        text_code = np.array([names.setdefault(w, len(names)) for w in text_words] + [-1], np.int64)
        g_cls = text_code[g_text]
        ids = np.unique(np.concatenate([g_id[g_cls < 0], p_id]))
        id_code = {int(i): names.setdefault(self._id_name(int(i)), len(names)) for i in ids.tolist()}
        lookup = np.array(list(id_code.values()) or [0], np.int64)
        keys = np.array(list(id_code.keys()) or [0], np.int64)
        no = g_cls < 0
        g_cls[no] = lookup[np.searchsorted(keys, g_id[no])] if no.any() else g_cls[no]
        p_cls = lookup[np.searchsorted(keys, p_id)] if len(p_id) else p_id
        notes = list(notes)
        if self.cut:
            notes.append(
                f"{self.cut:,} boxes past the fact table's values a list were not evaluated (limits.FACT_VALUES)"
            )
        if self.unsized:
            notes.append(f"{self.unsized:,} pixel boxes of records stating no image size match nothing")
        return EvalData(
            np.asarray(file, np.int32),
            np.asarray(record, np.int64),
            g_img,
            g_box,
            g_cls,
            g_slot,
            np.asarray(p_img, np.int64),
            np.asarray(p_box, np.float64).reshape(-1, 4),
            np.asarray(p_cls, np.int64),
            np.asarray(p_score, np.float64),
            np.asarray(p_slot, np.int64),
            list(names),
            source,
            tuple(notes),
        )

    def _id_name(self, i: int) -> str:
        if i < 0:
            return NO_CLASS
        return self.id_names.get(i) or class_name(i, self.label_map)


def _sizes(t) -> tuple[np.ndarray, np.ndarray]:
    """Each row's image width and height (NaN: unknown)."""
    out = []
    for name in ("image_width", "image_height"):
        if name in t.column_names:
            col = t[name].combine_chunks().cast("float64").fill_null(np.nan)
            out.append(np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64))
        else:
            out.append(np.full(t.num_rows, np.nan))
    return out[0], out[1]


def gather(analysis, label_map=None) -> EvalData | None:
    """The ground truth and the detection keys' predictions of a merged, deep analysis's fact
    tables (None: no record holds detection keys)."""
    return read(analysis, [EvalGatherer(expected_rows(analysis), label_map)])[0]


def gather_for(analysis, predictions: str | None, label_map=None):
    """(what to evaluate, the join's report or None): the records' own detection keys, or with
    `predictions` (a COCO results JSON or a TFRecord of predictions) that file joined to the
    records; a one-line `TfrviewError` when there is nothing to evaluate (the CLI's and the window's
    job's one rule)."""
    from tfrview.core.errors import TfrviewError

    report = None
    if predictions:
        from tfrview.core.analysis.predictions_join import join

        joined = join(analysis, predictions, label_map)
        report = joined.report
        data = gather_joined(analysis, joined, label_map)
    else:
        data = gather(analysis, label_map)
    if data is None:
        raise TfrviewError(
            "no record of the dataset could be evaluated"
            if predictions
            else "no predictions: no record holds the Object Detection API's image/detection/* keys "
            "(name a predictions file: a COCO results JSON or a TFRecord of predictions)"
        )
    return data, report


def gather_joined(analysis, joined, label_map=None) -> EvalData | None:
    """The ground truth of every record of a merged, deep analysis with predictions joined from a
    file (`predictions_join.Joined`): every record is evaluated, as pycocotools evaluates every image
    (a record no prediction joined has its boxes missed)."""
    g = EvalGatherer(expected_rows(analysis), label_map, joined=True)
    read(analysis, [g])
    if not g.images:
        return None
    file = np.asarray(g.img_file.array(), np.int32)
    record = np.asarray(g.img_record.array(), np.int64)
    key = file.astype(np.int64) * (1 << 40) + record
    order = np.argsort(key, kind="stable")
    want = joined.file.astype(np.int64) * (1 << 40) + joined.record
    at = np.searchsorted(key[order], want)
    ok = (at < len(key)) & (key[order][np.minimum(at, len(key) - 1)] == want)
    image = order[np.minimum(at, len(key) - 1)][ok]
    return g.data(
        file,
        record,
        image.astype(np.int64),
        joined.boxes[ok],
        joined.classes[ok],
        joined.scores[ok],
        joined.slot[ok],
        source=joined.source,
        notes=tuple(joined.report.lines()),
    )


# --- the dataset step --------------------------------------------------------------------------------

# The per-record columns the step adds to the fact table (declared in `stepcolumns.BY_STEP`: the
# filter joins them)
RECORD_COLUMNS = tuple(BY_STEP["evaluation"])


def record_columns(analysis, data: EvalData, ev: Evaluation) -> dict[str, dict[int, np.ndarray]]:
    """tp, fp, fn (-1: a record not evaluated) and max_fp_score (NaN: none) a row of each file."""
    out: dict[str, dict[int, np.ndarray]] = {name: {} for name in RECORD_COLUMNS}
    rows = {fi: len(s.offsets) for fi, s in enumerate(analysis.shards) if s.deep is not None}
    for fi, n in rows.items():
        out["tp"][fi] = np.full(n, -1, dtype=np.int32)
        out["fp"][fi] = np.full(n, -1, dtype=np.int32)
        out["fn"][fi] = np.full(n, -1, dtype=np.int32)
        out["max_fp_score"][fi] = np.full(n, np.nan, dtype=np.float32)
    for fi in np.unique(data.file).tolist():
        mine = np.flatnonzero(data.file == fi)
        recs = data.record[mine]
        n = rows.get(fi, 0)
        ok = recs < n
        mine, recs = mine[ok], recs[ok]
        out["tp"][fi][recs] = ev.image_tp[mine]
        out["fp"][fi][recs] = ev.image_fp[mine]
        out["fn"][fi][recs] = ev.image_fn[mine]
        out["max_fp_score"][fi][recs] = ev.image_max_fp_score[mine]
    return out


def judge(analysis, rules: DatasetRules, qa, data: EvalData | None) -> list[tuple[int, int, Finding]]:
    """The dataset step (`datasetqa.STEPS`): records holding the OD API's detection keys evaluated
    at the rules' thresholds: the table in `qa.tables["evaluation"]`, tp/fp/fn/max_fp_score as
    record columns, the likely label errors as findings. Nothing when no record holds detections."""
    if data is None:
        return []
    pr = rules.predictions
    prep = prepare(data)
    ev = evaluate(prep, pr.eval_iou, pr.eval_score)
    qa.tables["evaluation"] = summary(ev, data)
    qa.record_columns.update(record_columns(analysis, data, ev))
    qa.notes.extend(data.notes)
    return findings(prep, likely_errors(prep, pr), pr)


def summary(ev: Evaluation, data: EvalData) -> dict:
    """The evaluation as plain data (JSON): thresholds, mAP, the per-class table and the matrix."""
    return {
        "source": data.source,
        "images": data.images,
        "boxes": len(data.gt_class),
        "predictions": len(data.pred_class),
        "iou": ev.iou,
        "score": ev.score,
        "map": _num(ev.map),
        "map50": _num(ev.map50),
        "classes": ev.table(),
        "confusion": {"labels": [*ev.names, "background"], "matrix": ev.confusion.tolist()},
    }


STEP = Step("evaluation", judge, gather=lambda analysis: EvalGatherer(expected_rows(analysis)))
