"""Issue 24: predictions measured against the ground truth (analysis/evaluation.py): counts and the
confusion matrix on a hand-made set, AP and mAP against pycocotools on a planted one."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

from tfrview.core.analysis.evaluation import EvalData, evaluate, likely_errors, prepare
from tfrview.core.analysis.rules import PredictionRules
from tfrview.core.records.matching import BELOW_SCORE, BoxOutcome

W, H = 640, 480


def planted(seed: int = 7, images: int = 40, classes: int = 4):
    """Ground truth and predictions in pixels [x, y, w, h], as COCO writes them: predictions near
    the boxes (IoUs from 0.3 to 1), duplicates, wrong classes, misses and boxes on nothing, with
    scores that never tie."""
    rng = np.random.default_rng(seed)
    gt, dt = [], []
    scores = iter(rng.permutation(np.linspace(0.01, 0.99, 4000)))
    for img in range(images):
        for _ in range(int(rng.integers(0, 7))):
            w, h = rng.uniform(20, 200), rng.uniform(20, 200)
            x, y = rng.uniform(0, W - w), rng.uniform(0, H - h)
            c = int(rng.integers(0, classes))
            gt.append((img, c, [x, y, w, h]))
            roll = rng.uniform()
            if roll < 0.15:
                continue  # missed
            jit = rng.uniform(0, 0.35)
            box = [x + jit * w * rng.uniform(-1, 1), y + jit * h * rng.uniform(-1, 1), w, h]
            cls = c if roll < 0.8 else int((c + 1) % classes)  # some wrong classes
            dt.append((img, cls, box, float(next(scores))))
            if rng.uniform() < 0.2:  # a duplicate, a little off
                dt.append((img, c, [box[0] + 3, box[1] - 2, w * 0.95, h], float(next(scores))))
        for _ in range(int(rng.integers(0, 3))):  # on nothing
            w, h = rng.uniform(10, 100), rng.uniform(10, 100)
            dt.append(
                (
                    img,
                    int(rng.integers(0, classes)),
                    [rng.uniform(0, W - w), rng.uniform(0, H - h), w, h],
                    float(next(scores)),
                )
            )
    return gt, dt


def as_data(gt, dt, images: int, classes: int) -> EvalData:
    def norm(b):
        x, y, w, h = b
        return [x / W, y / H, (x + w) / W, (y + h) / H]

    def ints(v):
        return np.array(v, dtype=np.int64)

    return EvalData(
        file=np.zeros(images, np.int32),
        record=np.arange(images, dtype=np.int64),
        gt_image=ints([g[0] for g in gt]),
        gt_box=np.array([norm(g[2]) for g in gt]).reshape(-1, 4),
        gt_class=ints([g[1] for g in gt]),
        gt_slot=np.arange(len(gt), dtype=np.int64),
        pred_image=ints([d[0] for d in dt]),
        pred_box=np.array([norm(d[2]) for d in dt]).reshape(-1, 4),
        pred_class=ints([d[1] for d in dt]),
        pred_score=np.array([d[3] for d in dt]),
        pred_slot=np.arange(len(dt), dtype=np.int64),
        names=[f"c{i}" for i in range(classes)],
    )


def test_ap_and_map_agree_with_pycocotools():
    pytest.importorskip("pycocotools", reason="pycocotools (the test extra) is the reference AP")
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    images, classes = 40, 4
    gt, dt = planted(images=images, classes=classes)
    coco = COCO()
    coco.dataset = {
        "images": [{"id": i + 1, "width": W, "height": H} for i in range(images)],
        "annotations": [
            {
                "id": j + 1,
                "image_id": g[0] + 1,
                "category_id": g[1] + 1,
                "bbox": g[2],
                "area": g[2][2] * g[2][3],
                "iscrowd": 0,
            }
            for j, g in enumerate(gt)
        ],
        "categories": [{"id": c + 1, "name": f"c{c}"} for c in range(classes)],
    }
    with contextlib.redirect_stdout(io.StringIO()):
        coco.createIndex()
        res = coco.loadRes(
            [{"image_id": d[0] + 1, "category_id": d[1] + 1, "bbox": d[2], "score": d[3]} for d in dt]
        )
        ev = COCOeval(coco, res, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    ours = evaluate(prepare(as_data(gt, dt, images, classes)), iou=0.5, score=0.5)
    assert abs(ours.map - ev.stats[0]) < 1e-3 and abs(ours.map50 - ev.stats[1]) < 1e-3
    prec = ev.eval["precision"]  # [T, R, K, A, M]
    for k in range(classes):
        p50 = prec[0, :, k, 0, 2]
        assert abs(ours.ap50[k] - p50[p50 > -1].mean()) < 1e-3
        pall = prec[:, :, k, 0, 2]
        assert abs(ours.ap[k] - pall[pall > -1].mean()) < 1e-3
    assert 0.1 < ours.map < 0.9  # the planted set is neither perfect nor hopeless


def one_image() -> EvalData:
    """Two images: a cat found, a dog called a cat, a missed bird; a cat on nothing; then an image
    with a cat found twice (one duplicate)."""
    gt = [(0, 0, [0.1, 0.1, 0.3, 0.3]), (0, 1, [0.5, 0.5, 0.9, 0.9]), (0, 2, [0.0, 0.6, 0.2, 0.8])]
    gt += [(1, 0, [0.2, 0.2, 0.6, 0.6])]
    dt = [
        (0, 0, [0.1, 0.1, 0.3, 0.3], 0.9),
        (0, 0, [0.5, 0.5, 0.9, 0.88], 0.8),
        (0, 0, [0.7, 0.0, 0.9, 0.2], 0.95),
        (0, 2, [0.0, 0.6, 0.2, 0.8], 0.2),
        (1, 0, [0.2, 0.2, 0.6, 0.6], 0.7),
        (1, 0, [0.21, 0.2, 0.6, 0.6], 0.6),
    ]
    return EvalData(
        file=np.zeros(2, np.int32),
        record=np.arange(2, dtype=np.int64),
        gt_image=np.array([g[0] for g in gt]),
        gt_box=np.array([g[2] for g in gt], dtype=float),
        gt_class=np.array([g[1] for g in gt]),
        gt_slot=np.array([0, 1, 2, 0]),
        pred_image=np.array([d[0] for d in dt]),
        pred_box=np.array([d[2] for d in dt], dtype=float),
        pred_class=np.array([d[1] for d in dt]),
        pred_score=np.array([d[3] for d in dt]),
        pred_slot=np.array([0, 1, 2, 3, 0, 1]),
        names=["cat", "dog", "bird"],
    )


def test_counts_confusion_and_outcomes():
    prep = prepare(one_image())
    ev = evaluate(prep, iou=0.5, score=0.5)
    assert (
        ev.image_tp.tolist() == [1, 1] and ev.image_fp.tolist() == [2, 1] and ev.image_fn.tolist() == [2, 0]
    )
    assert ev.image_max_fp_score.tolist() == pytest.approx([0.95, 0.6])
    B = BoxOutcome
    assert ev.gt_outcome.tolist() == [B.MATCHED, B.WRONG_CLASS, B.MISSED, B.MATCHED]
    assert ev.pred_outcome.tolist() == [
        B.MATCHED,
        B.WRONG_CLASS,
        B.FALSE_POSITIVE,
        BELOW_SCORE,
        B.MATCHED,
        B.FALSE_POSITIVE,
    ]
    # rows: truth cat, dog, bird, background; columns: predicted cat, dog, bird, background
    assert ev.confusion.tolist() == [[2, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [2, 0, 0, 0]]
    assert ev.tp.tolist() == [2, 0, 0] and ev.fp.tolist() == [3, 0, 0] and ev.fn.tolist() == [0, 1, 1]
    assert ev.precision[0] == pytest.approx(0.4) and np.isnan(ev.precision[1]) and ev.recall[2] == 0
    # a lower score threshold: the bird is found
    low = evaluate(prep, iou=0.5, score=0.1)
    assert low.gt_outcome.tolist()[2] == B.MATCHED and low.confusion[2, 2] == 1
    # a strict IoU: the duplicate's twin still matches exactly, the others are unchanged
    assert evaluate(prep, iou=0.99, score=0.5).image_tp.tolist() == [1, 1]
    assert ev.table()[0] == {
        "class": "cat",
        "boxes": 2,
        "tp": 2,
        "fp": 3,
        "fn": 0,
        "precision": 0.4,
        "recall": 1.0,
        "ap50": 0.5,
        "ap": pytest.approx(ev.ap[0], abs=1e-6),
    }


def test_likely_errors_on_planted_ones():
    rules = PredictionRules(missing_label_score=0.9, wrong_class_score=0.7, spurious_score=0.1, near_iou=0.1)
    errs = likely_errors(prepare(one_image()), rules)
    assert errs.missing.tolist() == [2]  # the confident cat on nothing
    assert errs.wrong_class.tolist() == [1] and errs.wrong_box.tolist() == [1]  # a cat on the dog
    assert errs.spurious.tolist() == []  # the bird has a (weak) prediction on it
    strict = likely_errors(prepare(one_image()), PredictionRules(spurious_score=0.5))
    assert strict.spurious.tolist() == [2]


def test_many_sizes_of_images_bucket_alike():
    """Images of 0 to 40 boxes and predictions: one matching whatever the padding."""
    rng = np.random.default_rng(3)
    gt, dt = [], []
    s = iter(rng.permutation(np.linspace(0.01, 0.99, 5000)))
    for img in range(60):
        for _ in range(int(rng.integers(0, 40))):
            x, y = rng.uniform(0, 0.8, 2)
            gt.append((img, int(rng.integers(0, 3)), [x, y, x + 0.1, y + 0.1]))
            if rng.uniform() < 0.7:
                dt.append((img, gt[-1][1], [x + 0.01, y, x + 0.11, y + 0.1], float(next(s))))
    d = EvalData(
        np.zeros(60, np.int32),
        np.arange(60),
        np.array([g[0] for g in gt]),
        np.array([g[2] for g in gt]),
        np.array([g[1] for g in gt]),
        np.zeros(len(gt), np.int64),
        np.array([g[0] for g in dt]),
        np.array([g[2] for g in dt]),
        np.array([g[1] for g in dt]),
        np.array([g[3] for g in dt]),
        np.zeros(len(dt), np.int64),
        ["a", "b", "c"],
    )
    ev = evaluate(prepare(d), iou=0.5, score=0.0)
    assert int(ev.image_tp.sum()) == len(dt) and int(ev.image_fn.sum()) == len(gt) - len(dt)


def test_no_spurious_box_in_an_image_without_predictions():
    d = one_image()
    keep = d.pred_image == 0  # image 1 (its cat) has no prediction at all now
    bare = EvalData(
        d.file,
        d.record,
        d.gt_image,
        d.gt_box,
        d.gt_class,
        d.gt_slot,
        d.pred_image[keep],
        d.pred_box[keep],
        d.pred_class[keep],
        d.pred_score[keep],
        d.pred_slot[keep],
        d.names,
    )
    errs = likely_errors(prepare(bare), PredictionRules(spurious_score=0.5))
    assert errs.spurious.tolist() == [2]  # the bird of image 0, not image 1's cat
