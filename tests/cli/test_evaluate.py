"""Issue 24: `tfrview evaluate`: the per-class table, mAP, the confusion matrix and the likely label
errors at file:record; --predictions joins a COCO results file; a bad one is one line, exit 2."""

from __future__ import annotations

import json

import pytest

from tests.core.test_evaluation_dataset import planted
from tests.core.test_predictions_join import IDS, coco_record, results
from tfrview.cli import main
from tfrview.core.output.writer import write_records


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_evaluate_the_records_own_detections(capsys, tmp_path):
    p = tmp_path / "det.tfrecord"
    write_records(p, planted())
    code, out, _ = run(capsys, "evaluate", str(p), "-j", "1")
    assert code == 0
    assert "5 images, 11 boxes, 11 predictions; IoU 0.5, score >= 0.5" in out
    assert "mAP@[.5:.95] 0.748   mAP@0.5 0.748" in out
    table = out.split("confusion matrix")[0].splitlines()
    rows = {line.split()[0]: line.split()[1:5] for line in table if line.startswith(("cat ", "dog "))}
    assert rows["cat"] == ["6", "5", "1", "1"] and rows["dog"] == ["5", "4", "0", "1"]
    assert "confusion matrix (rows: ground truth, columns: predicted)" in out
    matrix = out.split("confusion matrix")[1].splitlines()
    assert [r.split()[1:] for r in matrix if r.startswith("dog ")] == [["1", "4", "0", "0"]]
    assert "likely label errors: 3" in out
    assert f"{p}:2  possible_wrong_class: " in out and f"{p}:3  possible_spurious_label: " in out
    code, out, _ = run(capsys, "evaluate", str(p), "-j", "1", "--json", "--iou", "0.9")
    doc = json.loads(out)
    assert doc["iou"] == 0.9 and doc["images"] == 5 and doc["confusion"]["labels"][-1] == "background"
    assert [e["record"] for e in doc["likely_label_errors"]] == [1, 2, 3]
    assert {c["class"] for c in doc["classes"]} == {"cat", "dog", "id 3"}


def test_evaluate_with_a_coco_results_file(capsys, tmp_path):
    d = tmp_path / "coco.tfrecord"
    write_records(d, [coco_record(i) for i in IDS])
    r = tmp_path / "results.json"
    r.write_text(json.dumps(results([{"image_id": 5, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 1}])))
    code, out, _ = run(capsys, "evaluate", str(d), "--predictions", str(r), "-j", "1")
    assert code == 0
    assert "results.json: 5 of 6 predictions joined to 3 of 3 records by image/source_id" in out
    assert "1 name an image id no record has" in out and "e.g. entry 5: image_id 5 names no record" in out
    assert "3 images, 4 boxes, 5 predictions" in out


def test_a_bad_predictions_file_is_one_line(capsys, tmp_path):
    d = tmp_path / "coco.tfrecord"
    write_records(d, [coco_record(i) for i in IDS])
    r = tmp_path / "results.json"
    r.write_text('[{"image_id": 1,')
    code, out, err = run(capsys, "evaluate", str(d), "--predictions", str(r), "-j", "1")
    assert code == 2 and err.count("\n") == 1 and "not JSON (line 1" in err and "Traceback" not in err


def test_no_predictions_is_one_line(capsys, tmp_path):
    d = tmp_path / "coco.tfrecord"
    write_records(d, [coco_record(i) for i in IDS])
    code, _, err = run(capsys, "evaluate", str(d), "-j", "1")
    assert code == 2 and "no record holds the Object Detection API's image/detection/* keys" in err


def test_verify_checks_with_a_predictions_file(capsys, tmp_path):
    d = tmp_path / "coco.tfrecord"
    write_records(d, [coco_record(i) for i in IDS])
    r = tmp_path / "results.json"
    r.write_text(json.dumps(results()))
    code, out, _ = run(capsys, "verify", "--checks", str(d), "--predictions", str(r), "-j", "1", "--json")
    problems = {(p["record"], p["kind"]) for f in json.loads(out)["files"] for p in f["problems"]}
    assert (0, "possible_wrong_class") in problems and (1, "possible_missing_label") in problems
    assert code == 1
