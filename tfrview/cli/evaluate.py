"""`tfrview evaluate PATH... [--predictions FILE] [--iou 0.5] [--score 0.5] [--json]`: predictions
against the ground truth (issue 24): the per-class table (precision, recall, AP@0.5, AP@[.5:.95]),
mAP, the confusion matrix with its background row and column, and the likely label errors with
their file:record. Predictions are the records' own detection keys, or a COCO results JSON or a
TFRecord of predictions joined to the records (`analysis.predictions_join`). Exit 0 answered,
2 error (as every command)."""

from __future__ import annotations

import json
import sys

HELP = "predictions against the ground truth: per-class AP, mAP, confusion matrix, likely label errors"
EXAMPLES = (
    "  tfrview evaluate detections.tfrecord            the records' own image/detection/* keys\n"
    "  tfrview evaluate val/ --predictions results.json  a COCO results file joined by image id\n"
    "  tfrview evaluate val/ --predictions preds.tfrecord --iou 0.75 --score 0.3 --json\n"
)
ERRORS_LISTED = 20  # likely label errors printed (all in --json)


def configure(p) -> None:
    from tfrview.cli import _add_grouping, _add_jobs, _add_splits

    p.add_argument("paths", nargs="*", metavar="PATH", help="files, folders, globs of the dataset")
    p.add_argument(
        "--predictions",
        metavar="FILE",
        help="a COCO results JSON ([{image_id, category_id, bbox, score}]) or a TFRecord of predictions "
        "(default: the records' own image/detection/* keys)",
    )
    p.add_argument("--iou", type=_unit, default=0.5, help="IoU at which a prediction matches a box (0.5)")
    p.add_argument("--score", type=_unit, default=0.5, help="predictions scoring less are not counted (0.5)")
    p.add_argument(
        "--label-map", metavar="PBTXT", help="label map naming class ids (default: one beside the data)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument("-v", "--verbose", action="store_true", help="list every likely label error")
    _add_jobs(p)
    _add_grouping(p)
    _add_splits(p, rules=True)


def add_likely_errors(analysis, path: str, rules, label_map) -> None:
    """`verify --checks --predictions FILE`: the predictions of FILE joined to the records and their
    likely label errors added to the dataset's problems (those of the records' own detection keys
    are the dataset step's already)."""
    from tfrview.core.analysis import evaluation
    from tfrview.core.analysis.predictions_join import join

    lm = dict(label_map) if label_map else None
    data = evaluation.gather_joined(analysis, join(analysis, path, lm), lm)
    if data is None:
        return
    prep = evaluation.prepare(data)
    pr = rules.predictions
    for fi, n, finding in evaluation.findings(prep, evaluation.likely_errors(prep, pr), pr):
        s = analysis.shards[fi]
        if n < len(s.offsets):
            analysis.dataset_problems.setdefault(fi, []).append(finding.at(s.offsets[n], s.lengths[n], n))


def _unit(text: str) -> float:
    import argparse

    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0 <= v <= 1:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {v}")
    return v


def run(args) -> int:
    from tfrview.cli import (
        Progress,
        _files_and_splits,
        _grouped_plan,
        _label_map_for_checks,
        _rules,
        _run_pass,
    )
    from tfrview.core.analysis import evaluation
    from tfrview.core.analysis.merge import merge
    from tfrview.core.errors import TfrviewError
    from tfrview.core.termtext import printable
    from tfrview.core.tfrecord.groups import group_files

    failed, paths, splits = _files_and_splits(args)
    rules = _rules(args)
    for _, err in failed:
        raise TfrviewError(err)
    groups = group_files(paths, args.one_dataset)
    label_maps = [_label_map_for_checks(args, [paths[i] for i in g.files])[0] for g in groups]
    tasks = _grouped_plan(paths, groups, True, label_maps, notices=True)
    results = _run_pass(tasks, args.jobs, Progress(not args.json), "reading", args.dask)
    for r in results:
        if r.error is not None:
            print(f"tfrview: {printable(r.error)}", file=sys.stderr)
    analysis = merge(results, groups, splits=splits, rules=rules)
    label_map = next((dict(lm) for lm in label_maps if lm), None)
    data, report = evaluation.gather_for(analysis, args.predictions, label_map)
    prep = evaluation.prepare(data)
    ev = evaluation.evaluate(prep, args.iou, args.score)
    found = evaluation.findings(prep, evaluation.likely_errors(prep, rules.predictions), rules.predictions)
    if args.json:
        doc = evaluation.summary(ev, data)
        doc["join"] = report.to_json() if report is not None else None
        doc["notes"] = list(data.notes)
        doc["likely_label_errors"] = [
            {"file": analysis.shards[fi].path, "record": rec, "kind": str(f.kind), "message": f.message}
            for fi, rec, f in found
        ]
        print(json.dumps(doc))
        return 0
    _print(analysis, data, ev, found, report, args.verbose)
    return 0


def _print(analysis, data, ev, found, report, every: bool) -> None:
    from tfrview.core.termtext import printable

    if report is not None:
        for line in report.lines():
            print(printable(line))
    else:
        print(f"predictions: the records' own image/detection/* keys ({data.images:,} records hold them)")
    for note in data.notes if report is None else ():
        print(f"note: {printable(note)}")
    print(
        f"{data.images:,} images, {len(data.gt_class):,} boxes, {len(data.pred_class):,} predictions; "
        f"IoU {ev.iou:g}, score >= {ev.score:g}"
    )
    print(
        f"mAP@[.5:.95] {_f(ev.map)}   mAP@0.5 {_f(ev.map50)}   (COCO: 101 recall points, 100 a class an image)"
    )
    width = max([5, *(len(printable(n)) for n in ev.names)])
    print()
    print(
        f"{'class':<{width}}  {'boxes':>7} {'tp':>7} {'fp':>7} {'fn':>7} {'prec':>6} {'recall':>6} {'AP50':>6} {'AP':>6}"
    )
    for row in ev.table():
        print(
            f"{printable(row['class']):<{width}}  {row['boxes']:>7,} {row['tp']:>7,} {row['fp']:>7,} {row['fn']:>7,} "
            f"{_f(row['precision']):>6} {_f(row['recall']):>6} {_f(row['ap50']):>6} {_f(row['ap']):>6}"
        )
    print()
    labels = [printable(n) for n in ev.names] + ["background"]
    cw = max(6, *(len(x) for x in labels))
    print("confusion matrix (rows: ground truth, columns: predicted)")
    print(" " * cw + "  " + " ".join(f"{x[:cw]:>{cw}}" for x in labels))
    for name, row in zip(labels, ev.confusion.tolist(), strict=True):
        print(f"{name:<{cw}}  " + " ".join(f"{v:>{cw},}" for v in row))
    print()
    shown = found if every else found[:ERRORS_LISTED]
    print(
        f"likely label errors: {len(found):,}"
        + ("" if len(shown) == len(found) else f" (first {len(shown)}; -v lists all)")
    )
    for fi, rec, f in shown:
        print(f"  {printable(analysis.shards[fi].path)}:{rec}  {f.kind}: {printable(f.message)}")


def _f(v) -> str:
    import math

    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"
