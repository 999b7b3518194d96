"""`tfrview export --coco/--yolo/--voc/--hf-parquet/--webdataset [--where]` and `tfrview import-coco`."""

import json

import numpy as np
import pytest

from tests.exportdata import boxes_of, label_map_text, write_od
from tfrview.cli import main
from tfrview.core.records.payload import decode
from tfrview.core.records.reading import read_record
from tfrview.core.tfrecord.dataset import Dataset


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    write_od(d / "train-00000-of-00001.tfrecord", 8)
    (d / "labels.pbtxt").write_text(label_map_text())
    return d


def test_export_every_format_at_once_with_where(capsys, tmp_path, data):
    outs = {f: tmp_path / f for f in ("coco", "yolo", "voc", "wds")}
    code, out, err = run(
        capsys,
        "export",
        data,
        "--coco",
        outs["coco"],
        "--yolo",
        outs["yolo"],
        "--voc",
        outs["voc"],
        "--webdataset",
        outs["wds"],
        "--shard-size",
        2,
        "--hf-parquet",
        tmp_path / "t.parquet",
        "--where",
        "len(image/object/bbox/xmin) >= 2",
    )
    assert code == 0, err
    keep = [i for i in range(8) if len(boxes_of(i)[1]) >= 2]
    assert out.count(f"wrote {len(keep)} images") == 5
    doc = json.loads((outs["coco"] / "annotations" / "instances_train.json").read_text())
    assert sorted(i["id"] for i in doc["images"]) == keep
    assert [c["name"] for c in doc["categories"]] == [
        "cat",
        "dog",
        "bird",
    ]  # from the label map beside the data
    assert len(list((outs["wds"]).glob("train-*.tar"))) == -(-len(keep) // 2)


def test_export_one_line_errors(capsys, tmp_path, data):
    code, _, err = run(capsys, "export", data)
    assert code == 2 and err.count("\n") == 1 and "name an output" in err
    code, _, err = run(capsys, "export", data, "--coco", data / "inside")
    assert code == 2 and "inside the input folder" in err and err.count("\n") == 1
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("x")
    code, _, err = run(capsys, "export", data, "--yolo", tmp_path / "taken")
    assert code == 2 and "exists (use --force" in err
    code, _, err = run(capsys, "export", data, "--coco", tmp_path / "c", "--where", "blur < 3")
    assert code == 2 and "analysis" in err and err.count("\n") == 1
    plain = tmp_path / "plain.tfrecord"
    from tests.exportdata import example
    from tfrview.core.output.writer import write_records

    write_records(plain, [example({"label": 1})])
    code, _, err = run(capsys, "export", plain, "--voc", tmp_path / "v")
    assert code == 2 and "no record with an image" in err and not (tmp_path / "v").exists()


def test_import_coco_round_trip(capsys, tmp_path, data):
    assert run(capsys, "export", data, "--coco", tmp_path / "coco")[0] == 0
    ann = tmp_path / "coco" / "annotations" / "instances_train.json"
    code, out, err = run(
        capsys, "import-coco", ann, data, "-o", tmp_path / "fixed.tfrecord", "--join", "source_id"
    )
    assert code == 0, err
    assert "8 records matched" in out
    report = json.loads((tmp_path / "fixed.tfrecord.report.json").read_text())
    assert report["matched"] == 8 and report["join"] == "source_id"
    with Dataset.open([str(tmp_path / "fixed.tfrecord")]) as ds:
        ds.frame_and_verify()
        for n in range(ds.count):
            r = read_record(decode(ds.read(n)))
            b, ids = boxes_of(n)
            assert np.allclose(r.boxes.reshape(-1, 4), b, atol=1e-6) and r.class_ids.tolist() == ids
    code, _, err = run(capsys, "import-coco", ann, data, "-o", tmp_path / "fixed.tfrecord")
    assert code == 2 and "exists" in err
