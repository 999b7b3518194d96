"""Issue 24: predictions from a file joined to a dataset's records (analysis/predictions_join.py):
a COCO results JSON by image id, file name or source_id, a second TFRecord by source_id; what does
not join counted with why; a bad file in one line; the join stored."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.core.test_payload import make_example
from tests.helpers import rows_not_json
from tfrview.core.analysis import analyze, evaluation
from tfrview.core.analysis.predictions_join import PredictionsError, join, load_coco_results
from tfrview.core.output.writer import write_records

W, H = 640, 480
IDS = [397133, 37777, 252219]
# each image's boxes in pixels [x, y, w, h] with their class id
BOXES = {
    397133: [([100, 100, 200, 100], 1), ([400, 300, 100, 100], 2)],
    37777: [([10, 10, 50, 50], 1)],
    252219: [([300, 200, 120, 80], 3)],
}


def coco_record(image_id: int, source_id: bool = True, filename: bool = True) -> bytes:
    boxes = BOXES[image_id]
    d = {
        "image/width": [W],
        "image/height": [H],
        "image/object/bbox/xmin": [b[0] / W for b, _ in boxes],
        "image/object/bbox/ymin": [b[1] / H for b, _ in boxes],
        "image/object/bbox/xmax": [(b[0] + b[2]) / W for b, _ in boxes],
        "image/object/bbox/ymax": [(b[1] + b[3]) / H for b, _ in boxes],
        "image/object/class/label": [c for _, c in boxes],
    }
    if source_id:
        d["image/source_id"] = [str(image_id).encode()]
    if filename:
        d["image/filename"] = [f"{image_id:012d}.jpg".encode()]
    return make_example(**d)


def results(extra=()) -> list[dict]:
    """Every box found (one as another class), one prediction on nothing, and `extra` entries."""
    out = []
    for iid, boxes in BOXES.items():
        for b, c in boxes:
            out.append(
                {"image_id": iid, "category_id": c, "bbox": [b[0] + 2, b[1], b[2], b[3]], "score": 0.9}
            )
    out[1]["category_id"] = 1  # image 397133's class-2 box called class 1
    out.append({"image_id": 37777, "category_id": 3, "bbox": [500, 10, 40, 40], "score": 0.97})
    return out + list(extra)


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def dataset(tmp_path, **kw) -> list[str]:
    p = tmp_path / "coco.tfrecord"
    write_records(p, [coco_record(i, **kw) for i in IDS])
    return [str(p)]


def write_json(tmp_path, doc, name="results.json") -> str:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


@pytest.mark.parametrize(
    ("kw", "by"),
    [
        ({}, "image/source_id"),
        ({"source_id": False}, "image/filename (its number)"),
    ],
)
def test_joined_by_image_id_or_file_name(tmp_path, kw, by):
    paths = dataset(tmp_path, **kw)
    a = analyze(paths, deep=True, jobs=1)
    j = join(a, write_json(tmp_path, results()), None)
    rep = j.report
    assert (rep.results, rep.matched, rep.images_matched, rep.images, rep.joined_by) == (5, 5, 3, 3, by)
    assert sorted(j.record.tolist()) == [0, 0, 1, 1, 2]
    first = np.flatnonzero(j.slot == 0)[0]
    np.testing.assert_allclose(j.boxes[first], [102 / W, 100 / H, 302 / W, 200 / H])
    data = evaluation.gather_joined(a, j)
    ev = evaluation.evaluate(evaluation.prepare(data), 0.5, 0.5)
    assert int(ev.image_tp.sum()) == 3 and int(ev.image_fp.sum()) == 2 and int(ev.image_fn.sum()) == 1


def test_joined_by_the_file_name_itself(tmp_path):
    a = analyze(dataset(tmp_path, source_id=False), deep=True, jobs=1)
    doc = [dict(r, image_id=f"{r['image_id']:012d}.jpg") for r in results()]
    j = join(a, write_json(tmp_path, doc), None)
    assert j.report.matched == 5 and j.report.joined_by == "image/filename"


def test_what_does_not_join_is_counted_with_why(tmp_path):
    a = analyze(dataset(tmp_path), deep=True, jobs=1)
    extra = [
        {"image_id": 999, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.5},  # no such image
        {"image_id": 37777, "category_id": 77, "bbox": [0, 0, 10, 10], "score": 0.5},  # no such class
        {"image_id": 37777, "category_id": 1, "bbox": [0, 0, -3, 10], "score": 0.5},  # negative width
        {"image_id": 37777, "category_id": 1, "bbox": [float("nan"), 0, 3, 10], "score": 0.5},
        {"image_id": 37777, "bbox": [0, 0, 3, 10]},  # no category
        "not an object",
    ]
    j = join(a, write_json(tmp_path, results(extra)), {1: "person", 2: "bicycle", 3: "car"})
    rep = j.report
    assert (rep.results, rep.matched, rep.unknown_image, rep.unknown_category) == (11, 5, 1, 1)
    assert (rep.bad_boxes, rep.malformed, rep.unknown_categories) == (2, 2, [77])
    text = "\n".join(rep.lines())
    assert "5 of 11 predictions joined to 3 of 3 records by image/source_id" in text
    assert "1 name an image id no record has" in text and "category not in the label map (ids 77)" in text
    assert "2 boxes are not four finite numbers" in text and "2 entries are not predictions" in text
    assert "e.g. entry 9: no 'category_id'" in text


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("[{", "not JSON (line 1, column 3"),
        ('{"a": 1}', "a COCO results file is a JSON list"),
        ("\xff\xfe", "not JSON"),
    ],
)
def test_a_bad_file_is_one_line(tmp_path, content, says):
    p = tmp_path / "bad.json"
    p.write_bytes(content.encode("latin-1"))
    with pytest.raises(PredictionsError, match=None) as got:
        load_coco_results(str(p))
    assert says in str(got.value) and "\n" not in str(got.value)


def test_a_file_over_the_limit_is_refused_by_name(tmp_path, monkeypatch):
    from tfrview.core.analysis import predictions_join

    monkeypatch.setattr(predictions_join, "PREDICTIONS_FILE_BYTES", 10)
    p = write_json(tmp_path, results())
    with pytest.raises(PredictionsError, match=r"limits\.PREDICTIONS_FILE_BYTES"):
        load_coco_results(p)


def test_the_join_is_stored_and_read_back(tmp_path, monkeypatch):
    from tfrview.core.analysis import predictions_join

    a = analyze(dataset(tmp_path), deep=True, jobs=1)
    path = write_json(tmp_path, results())
    first = join(a, path, None)

    def no(*args, **kw):
        raise AssertionError("joined again")

    monkeypatch.setattr(predictions_join, "_join_coco", no)
    again = join(a, path, None)
    assert again.report.matched == 5 and again.slot.tolist() == first.slot.tolist()
    assert rows_not_json() == []
    np.testing.assert_array_equal(again.boxes, first.boxes)
    p = again.per_record(0, 0)
    assert len(p) == 2 and p.source == "results.json"


def test_a_second_tfrecord_joined_by_source_id(tmp_path):
    a = analyze(dataset(tmp_path), deep=True, jobs=1)
    preds = []
    for iid in reversed(IDS):  # another order than the dataset's
        b = BOXES[iid]
        preds.append(
            make_example(
                **{
                    "image/source_id": [str(iid).encode()],
                    "image/detection/bbox/xmin": [x[0] / W for x, _ in b],
                    "image/detection/bbox/ymin": [x[1] / H for x, _ in b],
                    "image/detection/bbox/xmax": [(x[0] + x[2]) / W for x, _ in b],
                    "image/detection/bbox/ymax": [(x[1] + x[3]) / H for x, _ in b],
                    "image/detection/label": [c for _, c in b],
                    "image/detection/score": [0.8] * len(b),
                }
            )
        )
    p = tmp_path / "preds.tfrecord"
    write_records(p, preds)
    j = join(a, str(p), None)
    assert (j.report.matched, j.report.images_matched, j.report.joined_by) == (4, 3, "image/source_id")
    ev = evaluation.evaluate(evaluation.prepare(evaluation.gather_joined(a, j)), 0.5, 0.5)
    assert int(ev.image_tp.sum()) == 4 and ev.map == pytest.approx(1.0)


def test_records_sharing_an_image_id_are_said(tmp_path):
    p = tmp_path / "twice.tfrecord"
    write_records(p, [coco_record(i) for i in (*IDS, IDS[0])])
    a = analyze([str(p)], deep=True, jobs=1)
    rep = join(a, write_json(tmp_path, results()), None).report
    assert rep.duplicate_ids == 1 and rep.matched == 5
    assert "1 records share an image id with an earlier one" in "\n".join(rep.lines())
