"""`dump` and the deep pass of a TFDS dataset read by its features.json (issue 22): class names from
its labels files, Tensors decoded, a bad features.json said in one line and the records still dumped."""

from __future__ import annotations

import json
from pathlib import Path

from tests import tfdsdata as td
from tfrview.cli import main
from tfrview.core.analysis import analyze
from tfrview.core.analysis.shard import plan


def test_dump_says_what_the_features_declare(capsys, tmp_path: Path) -> None:
    d = td.detection(tmp_path / "v")
    shard = next(d.glob("*.tfrecord-*"))
    assert main(["dump", str(shard), "--records", "1:2"]) == 0
    out = capsys.readouterr().out
    assert "    record label 'label': 1 (dog)\n" in out
    assert "    'depth': Tensor float32 [2x3] zlib = float32[2, 3] 1, 1.25, 1.5, 1.75, 2, 2.25\n" in out
    assert (
        "'objects/label': ClassLabel, 3 classes, names (objects-label.labels.txt), one an item of objects = 1 (car), 0 (person)"
        in out
    )
    assert main(["dump", "--json", str(shard), "--records", "2:3"]) == 0
    got = json.loads(capsys.readouterr().out)["tfds"]
    assert got["label"] == "2 (bird)"
    assert got["features"]["depth"]["shape"] == [2, 3]
    assert got["features"]["depth"]["array"] == ((td.DEPTH + 2).tolist())
    assert got["features"]["objects/label"]["value"] == "1 (car), 1 (car)"


def test_a_bad_features_json_is_one_line_and_the_records_are_dumped(capsys, tmp_path: Path) -> None:
    d = td.detection(tmp_path / "v")
    (d / "features.json").write_text('{"pythonClassName": ' * 3)
    assert main(["dump", str(next(d.glob("*.tfrecord-*"))), "--records", "0:1"]) == 0
    cap = capsys.readouterr()
    assert "record 0" in cap.out and "tfds {" not in cap.out
    assert cap.err.startswith("tfrview: features.json: not JSON") and cap.err.count("\n") == 1


def test_the_deep_pass_names_classes_by_the_labels_files(tmp_path: Path) -> None:
    d = td.detection(tmp_path / "v")
    shard = str(next(d.glob("*.tfrecord-*")))
    a = analyze([shard], deep=True, jobs=1, use_cache=False)
    assert a.summary.box_classes == {"car": 5, "tree": 2, "person": 1}
    assert a.summary.record_labels == {"0 (cat)": 2, "1 (dog)": 1, "2 (bird)": 1}
    # the features are in the task (plain data) and in its stored result's key
    (task,) = plan([shard], True)
    assert task.tfds is not None and task.tfds.label_maps["label"] == {0: "cat", 1: "dog", 2: "bird"}
    (d / "label.labels.txt").write_text("kitten\npuppy\nchick\n")
    (again,) = plan([shard], True)
    assert again.tfds_stamp != task.tfds_stamp


def test_the_column_path_names_record_labels_too(tmp_path: Path) -> None:
    """Plain Examples (no image, no box) take the deep pass's column path: their ClassLabel is the
    record label, named by its labels file, as the reading names it."""
    import json

    from tfrview.core.output.writer import write_records
    from tfrview.demo import _example

    d = tmp_path / "tab"
    d.mkdir()
    (d / "features.json").write_text(json.dumps(td.fdict(x=td.tensor([3]), species=td.class_label(3))))
    (d / "species.labels.txt").write_text("setosa\nversicolor\nvirginica\n")
    recs = [_example(x=[0.5, 1.5, float(i)], species=i % 3).SerializeToString() for i in range(30)]
    write_records(d / "iris-train.tfrecord-00000-of-00001", recs)
    a = analyze([str(next(d.glob("*.tfrecord-*")))], deep=True, jobs=1, use_cache=False)
    assert a.summary.record_labels == {"0 (setosa)": 10, "1 (versicolor)": 10, "2 (virginica)": 10}
