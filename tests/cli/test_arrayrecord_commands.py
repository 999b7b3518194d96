"""Every command on one small ArrayRecord file (issue 22's audit) and on a TFDS `array_record`
split: each answer's content checked, no traceback; what cannot apply to ArrayRecord (repair, an
'offset size' index) is one line starting "not for ArrayRecord"."""

from __future__ import annotations

import json
from pathlib import Path

import msgpack
import pytest

from tests.core.test_riegeli_metadata import metadata_bytes, riegeli_with_metadata
from tests.exportdata import label_map_text, od_record
from tests.helpers import write_arrayrecord
from tests.preddata import planted_record
from tests.tfdsdata import _example, class_label, fdict, info_doc, text
from tfrview.cli import main

pytest.importorskip(
    "array_record.python.array_record_module",
    reason="the official array-record wheel is not installed here (it has no Windows build)",
)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("audit")
    write_arrayrecord(d / "od-train.array_record", "group_size:1,zstd:3", [od_record(i) for i in range(12)])
    (d / "label_map.pbtxt").write_text(label_map_text())
    write_arrayrecord(d / "pred.array_record", "group_size:1,zstd:3", [planted_record(i) for i in range(4)])
    root = d / "tfds" / "mnist" / "3.0.1"
    root.mkdir(parents=True)
    lengths = {"train": [3, 4], "test": [2]}
    for split, ls in lengths.items():
        for i, n in enumerate(ls):
            recs = [_example(label=k % 3, text=f"{split}{i}-{k}").SerializeToString() for k in range(n)]
            name = f"mnist-{split}.array_record-{i:05d}-of-{len(ls):05d}"
            write_arrayrecord(root / name, "group_size:1,zstd:3", recs)
    info = info_doc("mnist", "3.0.1", lengths, file_format="array_record")
    (root / "dataset_info.json").write_text(json.dumps(info))
    (root / "features.json").write_text(json.dumps(fdict(text=text(), label=class_label(3))))
    msgs = [msgpack.packb({"step": i, "pose": [0.5, -1.0]}) for i in range(3)]
    write_arrayrecord(d / "msg.array_record", "group_size:1,snappy", msgs)
    riegeli_with_metadata(d, [od_record(0)], metadata_bytes(1)).rename(d / "meta.riegeli")
    (d / "out").mkdir()
    return d


F = "od-train.array_record"
D = "tfds/mnist/3.0.1"

# (arguments, exit code, what the output must hold); {out} is a fresh output path
CASES = [
    (
        ["info", F],
        0,
        ["compression   arrayrecord", "records       12", "chunks        12, options group_size:1"],
    ),
    (
        ["info", D],
        0,
        ["format        array_record", "train        7 records in 2 shards", "split         test"],
    ),
    (["verify", F], 0, ["OK  12 records", "compression arrayrecord"]),
    (["verify", D], 0, ["splits: train 2 files 7 records · test 1 file 2 records", "3 OK, 0 with problems"]),
    (["verify", "--checks", F], 0, ["OK  12 records", "0 groups of exact or near copies"]),
    (["dump", F, "--records", "1"], 0, ["record 1", "'image/source_id': bytes_list[1] 'src-1'"]),
    (
        ["dump", D, "--records", "4"],
        0,
        ["file tfds/mnist/3.0.1/mnist-train.array_record-00001-of-00002", "'train1-1'"],
    ),
    (["export", "--parquet", "{out}.parquet", F], 0, ["wrote 12 records"]),
    (["export", "--stats", "{out}.pbtxt", D], 0, ["2 datasets (test 2 examples, train 7 examples)"]),
    (["export", "--coco", "{out}", F], 0, ["COCO (instances JSON + images): wrote 12 images"]),
    (["export", "--yolo", "{out}", F], 0, ["wrote 12 images"]),
    (["export", "--voc", "{out}", F], 0, ["wrote 12 images"]),
    (["export", "--hf-parquet", "{out}.parquet", F], 0, ["wrote 12 images"]),
    (["export", "--webdataset", "{out}", F], 0, ["wrote 12 images"]),
    (["export", "--coco", "{out}", "--where", "len(image/object/bbox/xmin) > 1", F], 0, ["wrote 6 images"]),
    (["salvage", F, "-o", "{out}.array_record"], 0, ["wrote 12 intact records (arrayrecord)"]),
    (
        ["salvage", "--format", "tfrecord", F, "-o", "{out}.tfrecord"],
        0,
        ["wrote 12 intact records (tfrecord)"],
    ),
    (["repair", F, "-o", "{out}.tfrecord"], 2, ["tfrview: not for ArrayRecord: ", "`tfrview salvage`"]),
    # refused before the output is looked at (the source opened once: refused, then the output checked)
    (["repair", F, "-o", F], 2, ["tfrview: not for ArrayRecord: "]),
    (["index", F, "-o", "{out}.idx"], 2, ["tfrview: not for ArrayRecord: ", "footer is its own index"]),
    (["rewrite", D, "-o", "{out}", "--where", "label == 1"], 0, ["wrote 3 of 9 records in 2 shards"]),
    (["schema", "infer", F, "-o", "{out}.pbtxt"], 0, ["12 features from 12 examples"]),
    (["validate", D, "--schema", "{schema}"], 0, ["no anomalies in 9 examples"]),
    (["compare", "train", "test", D], 1, ["train: 7 records in 2 files · test: 2 records in 1 file"]),
    (
        ["dump", "--json", "msg.array_record", "--records", "2"],
        0,
        ['"kind": "msgpack"', '"msgpack": {"step": 2, "pose": [0.5, -1.0]}'],
    ),
    (["dump", "msg.array_record", "--records", "1"], 0, ["msgpack {", "  step: int 1", "  pose: array[2]"]),
    (["info", "meta.riegeli"], 0, ["metadata      record type tensorflow.Example", "records       1"]),
    (["evaluate", "pred.array_record"], 0, ["4 images, 8 boxes, 12 predictions", "mAP@0.5 0.500"]),
]


@pytest.mark.parametrize(("args", "code", "said"), CASES, ids=[" ".join(c[0][:2]) for c in CASES])
def test_every_command_on_arrayrecord(capsys, monkeypatch, data: Path, args, code: int, said) -> None:
    monkeypatch.chdir(data)
    out_path = data / "out" / f"o{CASES.index(next(c for c in CASES if c[0] == args))}"
    if "{schema}" in args:
        assert main(["schema", "infer", D, "-o", str(out_path) + ".schema.pbtxt"]) == 0
        capsys.readouterr()
    argv = [
        a.replace("{out}", str(out_path)).replace("{schema}", str(out_path) + ".schema.pbtxt") for a in args
    ]
    # one process: the pass runs in this one (no workers to start for twelve records)
    got = (
        main([argv[0], "-j", "1", *argv[1:]])
        if argv[0] in ("info", "verify", "export", "rewrite")
        else main(argv)
    )
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert got == code, (out, err)
    for words in said:
        assert words in out + err, (words, out, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1  # one line
