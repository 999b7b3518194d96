"""The `evaluate` job's work (issue 24; `jobs.job_evaluate` runs it): predictions measured against
the ground truth for the window, from the stored analysis, kept prepared in this process so that a
new IoU or score threshold, read from stdin, costs only the matching and the counting.

What the window gets a question: `messages.Evaluated` (the summary, each class's PR curve, and an
.npz of each evaluated record's TP/FP/FN/most confident false positive and each box's cell of the
confusion matrix, in the window's record numbers); with a predictions file, first
`messages.PredictionsJoined` (the joined predictions as an .npz the window draws from, and the
join's report). It imports neither `jobs` nor the window: `jobs` hands it its emitter and the
stored results."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.procs.messages import Evaluated, Message, PredictionsJoined
from tfrview.core.procs.requests import EvaluateRequest

log = logging.getLogger(__name__)

ARRAY_NAMES = ("records", "tp", "fp", "fn", "max_fp_score", "cell_image", "cell_row", "cell_col")


class NothingToEvaluate(TfrviewError):
    """No record holds predictions (and none were loaded), or the analysis is not stored yet."""


def run(req: EvaluateRequest, emit: Callable[[Message], None], analysis, stdin=None) -> None:
    """Answer at the request's thresholds, then at each further line of `stdin` until it ends."""
    from tfrview.core.analysis import evaluation as E  # heavy: pyarrow on first use only

    if analysis is None:
        raise NothingToEvaluate(
            "the analysis is not stored yet: the evaluation comes from it (wait for the QA checks)"
        )
    starts = np.concatenate([[0], np.cumsum(np.asarray(req.counts or _counts(analysis), dtype=np.int64))])
    data = _data(req, emit, analysis, starts)
    prep = E.prepare(data)
    records = starts[np.asarray(data.file, dtype=np.int64)] + data.record
    answer(prep, records, req.iou, req.score, 0, req.out_dir, emit)
    for line in stdin if stdin is not None else sys.stdin:
        if not line.strip():
            continue
        try:
            ask = json.loads(line)
            iou, score, asked = float(ask["iou"]), float(ask["score"]), int(ask.get("asked", 0))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("the evaluate job could not read a question: %s", exc)
            continue
        answer(prep, records, iou, score, asked, req.out_dir, emit)


def _counts(analysis) -> list[int]:
    return [len(s.offsets) for s in analysis.shards]


def _data(req: EvaluateRequest, emit, analysis):
    from tfrview.core.analysis import evaluation as E

    if analysis is None:
        raise NothingToEvaluate(
            "the analysis is not stored yet: the evaluation comes from it (wait for the QA checks)"
        )
    label_map = {int(k): v for k, v in (req.label_map or {}).items()} if req.label_map else None
    if req.predictions:
        raise NothingToEvaluate("predictions from a file cannot be joined yet")
    data = E.gather(analysis, label_map)
    if data is None:
        raise NothingToEvaluate(
            "no record holds predictions (the Object Detection API's image/detection/* keys): "
            "load some with File › Load Predictions…"
        )
    return data


def _joined(joined, starts: np.ndarray, out_dir: str) -> PredictionsJoined:
    """The joined predictions saved for the window (its record numbers), and the join's words."""
    from tfrview.core.output.atomic import atomic_file

    path = Path(out_dir) / f"predictions-{os.getpid()}.npz"
    with atomic_file(path, "wb") as f:
        np.savez(
            f,
            record=starts[np.asarray(joined.file, dtype=np.int64)] + joined.record,
            box=joined.boxes,
            cls=joined.classes,
            score=joined.scores,
        )
    lines = joined.report.lines()
    return PredictionsJoined(str(path), joined.source, lines[0], [line.strip() for line in lines[1:]])


def cells(ev, data) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each box's cell of the confusion matrix, as the evaluation counts them: a ground-truth box
    in its class's row and its partner's class's column (matched: its own; wrong class: the
    prediction's) or the background's (missed); a false positive in the background's row and its
    class's column. (image, row, column) arrays."""
    from tfrview.core.records.matching import BoxOutcome

    k = len(data.names)
    g_out, g_par = ev.gt_outcome, ev.gt_partner
    paired = (g_out == int(BoxOutcome.MATCHED)) | (g_out == int(BoxOutcome.WRONG_CLASS))
    g_col = np.full(len(g_out), k, dtype=np.int64)
    g_col[paired] = data.pred_class[g_par[paired]]
    fp = ev.pred_outcome == int(BoxOutcome.FALSE_POSITIVE)
    image = np.concatenate([data.gt_image, data.pred_image[fp]]).astype(np.int64)
    row = np.concatenate([data.gt_class, np.full(int(fp.sum()), k)]).astype(np.int64)
    col = np.concatenate([g_col, data.pred_class[fp]]).astype(np.int64)
    return image, row, col


def curves(ev) -> dict:
    """Each class's precision against recall at the evaluation's IoU (classes with boxes)."""
    from tfrview.core.analysis.evaluation import RECALL_POINTS

    out = []
    for c, name in enumerate(ev.names):
        if not np.isfinite(ev.ap50[c]):
            continue
        reached = np.isfinite(ev.pr_score[c])
        out.append(
            {
                "name": f"{name} (AP {np.nanmean(ev.pr_precision[c]):.3f})",
                "colour_key": name,
                "x": RECALL_POINTS[reached].tolist(),
                "y": ev.pr_precision[c][reached].tolist(),
            }
        )
    return {
        "title": f"precision against recall of each class at IoU ≥ {ev.iou:.2f} (every score)",
        "x_name": "recall",
        "y_name": "precision",
        "curves": out,
    }


def answer(prep, records: np.ndarray, iou: float, score: float, asked: int, out_dir: str, emit) -> None:
    """One question's answer: the evaluation at (iou, score), its arrays saved beside."""
    from tfrview.core.analysis import evaluation as E
    from tfrview.core.output.atomic import atomic_file

    ev = E.evaluate(prep, iou, score)
    data = prep.data
    image, row, col = cells(ev, data)
    path = Path(out_dir) / f"evaluation-{os.getpid()}-{asked}.npz"
    with atomic_file(path, "wb") as f:
        np.savez(
            f,
            records=records,
            tp=ev.image_tp,
            fp=ev.image_fp,
            fn=ev.image_fn,
            max_fp_score=ev.image_max_fp_score,
            cell_image=image,
            cell_row=row,
            cell_col=col,
        )
    emit(Evaluated(E.summary(ev, data), curves(ev), str(path), asked))
