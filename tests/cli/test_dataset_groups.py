"""Issue 18.2: files of unrelated datasets named on one command line (or lying in one folder) are
each judged against their own schema, payload kind and label map, never against each other's; the
output says which dataset each file was judged with."""

from __future__ import annotations

import json

import pytest

from tfrview.cli import main
from tfrview.core.analysis.checks import Schema, check_against_schema
from tfrview.core.analysis.merge import merge
from tfrview.core.output.writer import write_records
from tfrview.core.records.payload import decode
from tfrview.core.tfrecord.groups import group_files
from tfrview.demo import _example


def _pets(n: int) -> list[bytes]:
    return [
        _example(**{"image/filename": f"pet_{i}.jpg", "image/object/class/label": [1]}).SerializeToString()
        for i in range(n)
    ]


def _raw(n: int) -> list[bytes]:
    return [
        _example(depth=3, height=4, width=5, label=i % 3, image_raw=bytes(60)).SerializeToString()
        for i in range(n)
    ]


def _verify(capsys, *args) -> tuple[int, dict, str]:
    code = main(["verify", "--checks", "--json", "-j", "1", *args])
    out, err = capsys.readouterr()
    assert out.endswith("}\n")
    return code, json.loads(out), err


def test_group_files_by_shard_pattern_folder_and_name():
    paths = [
        "d/train-00000-of-00002.tfrecord",
        "d/train-00001-of-00002.tfrecord",
        "d/val-00000-of-00001.tfrecord",
        "d/part_1.rec",
        "d/part_2.rec",
        "e/part_3.rec",
        "d/pets_examples.record",
        "d/two_damaged_regions.tfrecords",
    ]
    groups = {g.name: g.files for g in group_files(paths)}
    assert groups == {
        "train-?????-of-00002.tfrecord": (0, 1),
        "val-00000-of-00001.tfrecord": (2,),
        "part_?.rec": (3, 4),
        "part_3.rec": (5,),
        "pets_examples.record": (6,),
        "two_damaged_regions.tfrecords": (7,),
    }
    assert [g.files for g in group_files(paths, one_dataset=True)] == [tuple(range(8))]
    two = ["gs://b/a/train-00000-of-00002", "gs://b/a/train-00001-of-00002", "gs://b/c/train-00000-of-00002"]
    assert [(g.name, g.files) for g in group_files(two)] == [
        ("train-?????-of-00002", (0, 1)),
        ("train-00000-of-00002", (2,)),
    ]
    both = two + ["gs://b/c/train-00001-of-00002"]  # two folders, one name: each says where it lies
    assert [g.name for g in group_files(both)] == [
        "gs://b/a/train-?????-of-00002",
        "gs://b/c/train-?????-of-00002",
    ]


def test_unrelated_files_on_one_command_line_get_no_missing_features_of_each_other(capsys, tmp_path):
    pets, other = tmp_path / "pets_examples.record", tmp_path / "two_damaged_regions.tfrecords"
    write_records(pets, _pets(4))
    write_records(other, _raw(40))
    code, doc, _ = _verify(capsys, str(pets), str(other))
    assert code == 0, doc
    assert [f["dataset"] for f in doc["files"]] == ["pets_examples.record", "two_damaged_regions.tfrecords"]
    assert [d["files"] for d in doc["datasets"]] == [[str(pets)], [str(other)]]
    assert all(f["problems"] == [] for f in doc["files"])
    # judged as one dataset (as before), pets lacks the other file's features: the rule is per dataset
    code, doc, _ = _verify(capsys, "--one-dataset", str(pets), str(other))
    assert code == 1
    missing = [p for p in doc["files"][0]["problems"] if p["kind"] == "missing_feature"]
    assert len(missing) == 4 and "depth, height, image_raw, label, width" in missing[0]["message"]


def test_a_folder_of_two_datasets_gives_each_its_own_payload_judgement(capsys, tmp_path):
    write_records(tmp_path / "examples.tfrecord", _raw(20))
    write_records(tmp_path / "blobs.bin.tfrecord", [b"\xff\xfe not a protobuf %d" % i for i in range(4)])
    code, doc, _ = _verify(capsys, str(tmp_path))
    assert code == 0 and not any(f["problems"] for f in doc["files"]), doc
    assert len(doc["datasets"]) == 2


def test_shards_of_one_pattern_are_judged_together(capsys, tmp_path):
    a, b = tmp_path / "train-00000-of-00002", tmp_path / "train-00001-of-00002"
    write_records(a, _raw(20))
    write_records(b, [_example(depth=3, height=4, width=5, label=1).SerializeToString()])  # no image_raw
    code, doc, _ = _verify(capsys, str(a), str(b))
    assert code == 1
    assert {f["dataset"] for f in doc["files"]} == {"train-?????-of-00002"}
    (p,) = doc["files"][1]["problems"]
    assert p["kind"] == "missing_feature" and "image_raw" in p["message"]


def _boxes(cls: list[int], text: str) -> bytes:
    n = len(cls)
    return _example(
        **{
            "image/object/bbox/xmin": [0.1] * n,
            "image/object/bbox/ymin": [0.1] * n,
            "image/object/bbox/xmax": [0.5] * n,
            "image/object/bbox/ymax": [0.5] * n,
            "image/object/class/label": cls,
            "image/object/class/text": [text] * n,
        }
    ).SerializeToString()


def test_a_dataset_keeps_the_label_map_beside_it_when_opened_beside_another(capsys, tmp_path):
    (tmp_path / "raccoon").mkdir()
    (tmp_path / "other").mkdir()
    raccoon = tmp_path / "raccoon" / "raccoon.record"
    # misspelt: the map names id 1 'raccoon'
    write_records(raccoon, [_boxes([1], "racoon") for _ in range(6)])
    (tmp_path / "raccoon" / "label_map.pbtxt").write_text("item { id: 1 name: 'raccoon' }\n")
    other = tmp_path / "other" / "other.record"
    write_records(other, [_boxes([k], f"c{k}") for k in range(2, 12)])  # ids the raccoon map does not name
    code, doc, err = _verify(capsys, str(raccoon), str(other))
    kinds = [p["kind"] for p in doc["files"][0]["problems"]]
    assert kinds == ["label_text_mismatch"] * 6, doc
    assert not any(p["kind"].startswith("label_") for p in doc["files"][1]["problems"])
    main(["verify", "--checks", "-j", "1", str(raccoon), str(other)])
    out, err = capsys.readouterr()
    assert f"label map for raccoon.record: {tmp_path / 'raccoon' / 'label_map.pbtxt'}" in err
    assert (
        "dataset raccoon.record (judged on its own): 1 file (0 OK, 1 with problems)" in out
        and "dataset other.record" in out
    )
    assert out.splitlines()[-1].startswith(
        "total: 2 files in 2 datasets (1 OK, 1 with problems) · 16 intact records"
    )


def test_a_negative_image_without_box_lists_is_no_missing_feature(tmp_path):
    boxed = [_boxes([1, 2], "cat") for _ in range(30)]
    negative = _example(**{"image/encoded": b"x"}).SerializeToString()
    schema = Schema()
    for rec in boxed:
        schema.add(decode(rec))
    assert check_against_schema(decode(negative), schema) == []
    half = _example(**{"image/object/bbox/xmin": [0.1]}).SerializeToString()  # objects, but lists missing
    (f,) = check_against_schema(decode(half), schema)
    assert str(f.kind) == "missing_feature" and "image/object/bbox/xmax" in f.message


@pytest.mark.parametrize("one", [False, True])
def test_merge_groups_by_name_unless_told(tmp_path, one):
    from tfrview.core.analysis import analyze

    pets, other = tmp_path / "pets.record", tmp_path / "other.record"
    write_records(pets, _pets(5))
    write_records(other, _raw(45))
    a = analyze([str(pets), str(other)], deep=True, jobs=1)
    assert [g.files for g in a.groups] == [(0,), (1,)]
    assert a.problems(0) == []
    if one:
        b = merge(a.shards, group_files([str(pets), str(other)], one_dataset=True))
        assert {str(p.kind) for p in b.problems(0)} == {"missing_feature"}


def test_export_judges_each_dataset_alone(capsys, tmp_path):
    import pyarrow.parquet as pq

    pets, other = tmp_path / "pets_examples.record", tmp_path / "two_damaged_regions.tfrecords"
    write_records(pets, _pets(4))
    write_records(other, _raw(40))
    out = tmp_path / "facts.parquet"
    assert main(["export", "--parquet", str(out), "-j", "1", str(pets), str(other)]) == 0
    assert pq.read_table(out).column("problems").to_pylist() == [[]] * 44
    out.unlink()
    assert main(["export", "--parquet", str(out), "-j", "1", "--one-dataset", str(pets), str(other)]) == 0
    assert pq.read_table(out).column("problems").to_pylist()[:4] == [["missing_feature"]] * 4


def test_a_label_map_in_a_folder_of_two_datasets_serves_the_one_it_names(capsys, tmp_path):
    write_records(tmp_path / "boxes.record", [_boxes([1], "racoon") for _ in range(6)])
    write_records(
        tmp_path / "penguins.record", [_example(species=k % 3 + 7).SerializeToString() for k in range(9)]
    )
    (tmp_path / "label_map.pbtxt").write_text("item { id: 1 name: 'raccoon' }\n")
    assert main(["verify", "--checks", "-j", "1", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    # no 'not using' for the penguins: the map serves the dataset it names
    assert err == f"label map for boxes.record: {tmp_path / 'label_map.pbtxt'}\n"
    assert "label_text_mismatch ×6" in out
