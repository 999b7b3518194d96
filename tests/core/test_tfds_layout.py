"""Issue 22.1: TFDS prepared directories found and opened by their dataset_info.json, read as JSON
data (core/tfds/info.py, layout.py), the shards wired into Dataset, splits and groups, the two
checks (split_missing_shard, shard_length_mismatch), and bad metadata: missing, not JSON, huge,
deeply nested, wrong types, shards named that do not exist. One line, never a traceback."""

from __future__ import annotations

import contextlib
import json
import random

import pytest

from tests.tfdsdata import info_doc, make_tfds
from tfrview.core.errors import TfrviewError
from tfrview.core.limits import MAX_TFDS_INFO_BYTES, MAX_TFDS_JSON_DEPTH
from tfrview.core.problems import ProblemKind
from tfrview.core.tfds.info import DEFAULT_TEMPLATE, InfoError, parse_info, shard_names
from tfrview.core.tfds.layout import TfdsChoiceError, choices, find, pick
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.groups import group_files
from tfrview.core.tfrecord.splits import split_of_files


def _names(ds) -> list[str]:
    return [f.path.name for f in ds.files]


def test_info_reads_what_tfds_writes():
    doc = info_doc("mnist", "3.0.1", {"train": [3, 4], "test": [2]})
    doc["configName"] = "small"
    i = parse_info(json.dumps(doc).encode())
    assert (i.name, i.version, i.config_name, i.file_format) == ("mnist", "3.0.1", "small", "tfrecord")
    assert i.description.startswith("The mnist test dataset.") and i.citation.startswith("@article{x,")
    assert i.download_size == 2000 and i.supervised_keys == ("image", "label")
    assert [(s.name, s.shard_lengths, s.num_bytes, s.num_shards) for s in i.splits] == [
        ("train", (3, 4), 700, 2),
        ("test", (2,), 200, 1),
    ]
    assert i.num_examples == 9 and i.notes == ()
    assert shard_names(i, i.splits[0]) == [
        "mnist-train.tfrecord-00000-of-00002",
        "mnist-train.tfrecord-00001-of-00002",
    ]


def test_info_older_and_other_shapes():
    doc = {
        "name": "d",
        "version": "1.0.0",
        "fileFormat": "array_record",
        "supervisedKeys": {"input": "image", "output": "label"},
        "splits": [
            {"name": "train", "numShards": "2"},  # before shardLengths: counts not said
            {
                "name": "val",
                "shardLengths": ["5"],
                "filepathTemplate": "{SPLIT}/{DATASET}-{SHARD_INDEX}.{FILEFORMAT}",
            },
        ],
    }
    i = parse_info(json.dumps(doc).encode())
    assert i.supervised_keys == ("image", "label") and i.num_examples is None
    train, val = i.splits
    assert (train.shard_lengths, train.num_shards, train.template) == (None, 2, DEFAULT_TEMPLATE)
    assert shard_names(i, train) == [
        "d-train.array_record-00000-of-00002",
        "d-train.array_record-00001-of-00002",
    ]
    assert shard_names(i, val) == ["val/d-00000.array_record"]
    assert parse_info(b'{"name": "x"}').file_format == "tfrecord"  # TFDS's default


def test_version_dataset_and_config_folders_and_a_shard_all_open_the_dataset(tmp_path):
    root = make_tfds(tmp_path)
    (tmp_path / "mnist" / "1.0.0").mkdir()  # older, complete
    (tmp_path / "mnist" / "1.0.0" / "dataset_info.json").write_text(
        json.dumps(info_doc("mnist", "1.0.0", {}))
    )
    (tmp_path / "mnist" / "10.0.0.incomplete.X1").mkdir()  # newer but unfinished: skipped
    (tmp_path / "mnist" / "9.0.0").mkdir()  # no metadata: not a version
    picked = find(tmp_path / "mnist")
    assert picked.root == root and picked.chosen == "version 3.0.1, the newest of 1.0.0, 3.0.1"
    assert picked.title == "mnist/3.0.1"
    assert find(root).chosen == "" and find(root / "mnist-test.tfrecord-00000-of-00001").root == root
    assert find(tmp_path).root == root  # a data_dir of one dataset: that one
    assert find(tmp_path / "mnist" / "9.0.0") is None
    want = [
        "mnist-train.tfrecord-00000-of-00003",
        "mnist-train.tfrecord-00001-of-00003",
        "mnist-train.tfrecord-00002-of-00003",
        "mnist-test.tfrecord-00000-of-00001",
    ]
    for arg in (tmp_path / "mnist", root, root / "mnist-test.tfrecord-00000-of-00001"):
        with Dataset.open([str(arg)]) as ds:
            assert _names(ds) == want and ds.name == "mnist/3.0.1" and ds.missing == []
            assert [(f.split, f.expected_records) for f in ds.files] == [
                ("train", 3),
                ("train", 4),
                ("train", 2),
                ("test", 2),
            ]
    # a shell's glob of every shard: each shard once
    with Dataset.open([str(root / n) for n in want]) as ds:
        assert _names(ds) == want


def test_config_folders(tmp_path):
    make_tfds(tmp_path / "bridge", name="default", version="1.0.0")
    got = find(tmp_path / "bridge")
    assert got.root == tmp_path / "bridge" / "default" / "1.0.0"
    assert got.chosen == "default/1.0.0, the only dataset or config there"
    make_tfds(tmp_path / "bridge", name="other", version="2.0.0")
    make_tfds(tmp_path / "bridge", name="other", version="2.1.0", lengths={"train": [5, 1]})
    with pytest.raises(
        TfdsChoiceError,
        match=r"holds 2 TFDS datasets or configs \(default/1.0.0, other/2.0.0, other/2.1.0\): open one",
    ) as got_error:
        find(tmp_path / "bridge")
    # every config and version, with its splits' counts from its own dataset_info.json
    assert [(c.label, c.splits_text()) for c in got_error.value.choices] == [
        ("default/1.0.0", "train 9 · test 2"),
        ("other/2.0.0", "train 9 · test 2"),
        ("other/2.1.0", "train 6"),
    ]
    bridge = tmp_path / "bridge"
    assert pick(bridge, "other") == bridge / "other" / "2.1.0"  # its newest
    assert pick(bridge, "other", "2.0.0") == bridge / "other" / "2.0.0"
    assert find(pick(bridge, "default")).title == "default/1.0.0"
    with pytest.raises(TfrviewError, match=r"no TFDS config nope \(it holds default, other\)"):
        pick(bridge, "nope")
    with pytest.raises(TfrviewError, match=r"no TFDS version 9.9.9 \(it holds 2.0.0, 2.1.0\)"):
        pick(bridge, "other", "9.9.9")
    with pytest.raises(TfdsChoiceError):
        pick(bridge, None, "1.0.0")  # a version alone does not say which config
    (bridge / "broken" / "1.0.0").mkdir(parents=True)
    (bridge / "broken" / "1.0.0" / "dataset_info.json").write_text("{not json")
    (broken,) = [c for c in choices(bridge) if c.config == "broken"]
    assert broken.splits == () and "JSON" in broken.splits_text()


def test_splits_and_groups_come_from_the_metadata(tmp_path):
    root = make_tfds(tmp_path, name="d", lengths={"holdout_7": [1], "train": [2]})
    paths = [root / "d-holdout_7.tfrecord-00000-of-00001", root / "d-train.tfrecord-00000-of-00001"]
    assert split_of_files(paths) == ["holdout_7", "train"]
    assert split_of_files(paths, [("test", [str(paths[1])])]) == ["holdout_7", "test"]  # the person first
    groups = group_files(paths)
    assert [(g.name, g.files) for g in groups] == [("d/3.0.1", (0, 1))]


def test_missing_shards_and_wrong_lengths_are_problems(tmp_path):
    root = make_tfds(tmp_path, held={"train": [3, 5, 2], "test": [2]})  # shard 1 holds 5, not 4
    (root / "mnist-train.tfrecord-00002-of-00003").unlink()
    with Dataset.open([str(root)]) as ds:
        gap = next(f for f in ds.files if f.missing)
        assert gap.path.name == "mnist-train.tfrecord-00002-of-00003"
        assert gap.gap_kind == ProblemKind.SPLIT_MISSING_SHARD
        assert gap.error == (
            "mnist-train.tfrecord-00002-of-00003 is not there: dataset_info.json names 3 shards for split train"
        )
        assert ds.missing == ["mnist-train.tfrecord-00002-of-00003"]
        for fi in range(len(ds.files)):  # as the window frames: scan
            list(ds.scan_file(fi))
        found = [(f.path.name, p.kind, p.message) for f in ds.files for p in f.index.problems]
        assert found == [
            (
                "mnist-train.tfrecord-00001-of-00003",
                ProblemKind.SHARD_LENGTH_MISMATCH,
                "5 intact records, where dataset_info.json says 4 for this shard of split train",
            )
        ]
        ds.frame_and_verify()  # as dump/salvage frame: the same one problem
        assert [p.kind for _, p in ds.problems()] == [ProblemKind.SHARD_LENGTH_MISMATCH]


def test_every_named_shard_missing_says_so_in_one_line(tmp_path):
    root = make_tfds(tmp_path)
    for p in root.glob("mnist-*"):
        p.unlink()
    with Dataset.open([str(root)]) as ds:
        assert ds.files[0].error == f"{root}: none of the 4 shards 3.0.1/dataset_info.json names is there"
        assert sum(f.missing for f in ds.files) == 4


# --- bad metadata -------------------------------------------------------------------------------


def _opens_plain(tmp_path, text: bytes | str):
    root = make_tfds(tmp_path)
    data = text.encode() if isinstance(text, str) else text
    (root / "dataset_info.json").write_bytes(data)
    with Dataset.open([str(root)]) as ds:
        assert len([f for f in ds.files if f.source is not None]) == 4  # every shard, as plain files
        assert ds.tfds[0].info is None and "\n" not in ds.tfds[0].problem
        return ds.tfds[0].problem


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("{not json", "not JSON"),
        ("", "not JSON"),
        (b"\xff\xfe{}", "not JSON"),
        ("[1, 2]", "a JSON list, not an object"),
        ("[" * 100_000 + "]" * 100_000, "MAX_TFDS_JSON_DEPTH"),
        ('{"a":' * (MAX_TFDS_JSON_DEPTH + 1) + "1" + "}" * (MAX_TFDS_JSON_DEPTH + 1), "MAX_TFDS_JSON_DEPTH"),
    ],
)
def test_unreadable_metadata_opens_the_files_and_says_why(tmp_path, text, said):
    problem = _opens_plain(tmp_path, text)
    assert said in problem and problem.endswith("its shards opened as plain files")


def test_huge_metadata_is_not_read(tmp_path):
    root = make_tfds(tmp_path)
    with open(root / "dataset_info.json", "wb") as fh:
        fh.truncate(MAX_TFDS_INFO_BYTES + 1)  # sparse: nothing written
    with Dataset.open([str(root)]) as ds:
        assert "over the 32.0 MiB limit (MAX_TFDS_INFO_BYTES)" in ds.tfds[0].problem or (
            "MAX_TFDS_INFO_BYTES" in ds.tfds[0].problem
        )
        assert len(ds.files) == 4


def test_no_metadata_is_a_plain_folder(tmp_path):
    root = make_tfds(tmp_path)
    (root / "dataset_info.json").unlink()
    with Dataset.open([str(root)]) as ds:
        assert ds.tfds == [] and len(ds.files) == 4


@pytest.mark.parametrize(
    ("change", "note"),
    [
        (lambda d: d.update(name=3), "name is a int, not text"),
        (lambda d: d.update(splits={"train": 1}), "splits is not a list"),
        (lambda d: d["splits"][0].update(shardLengths="3"), "shardLengths is not a list"),
        (lambda d: d["splits"][0].update(shardLengths=["3", "x", "2"]), "shardLengths[1] is x"),
        (lambda d: d["splits"][0].update(shardLengths=[3.5, 4, 2]), "shardLengths[0] is a float"),
        (lambda d: d["splits"][0].update(shardLengths=["-3", "4", "2"]), "shardLengths[0] is -3"),
        (lambda d: d["splits"][0].update(shardLengths=["9" * 400, "4", "2"]), "not a count"),
        (lambda d: d["splits"][0].update(filepathTemplate="../../{SPLIT}"), "filepathTemplate"),
        (lambda d: d["splits"][0].update(filepathTemplate="{EVIL}-{SPLIT}"), "filepathTemplate"),
        (lambda d: d["splits"][0].update(name=None), "splits[0] has no usable name"),
        (lambda d: d["splits"][0].update(name="../x"), "splits[0] has no usable name"),
        (lambda d: d.update(name="../../etc"), "leaves the folder"),
        (lambda d: d.update(supervisedKeys=[1]), "supervisedKeys is not an object"),
        (lambda d: d.update(downloadSize={"a": 1}), "downloadSize is a dict"),
        (lambda d: d.update(splits=[]), "names no splits"),
    ],
)
def test_wrong_types_are_left_out_in_one_line(tmp_path, change, note):
    root = make_tfds(tmp_path)
    doc = info_doc("mnist", "3.0.1", {"train": [3, 4, 2], "test": [2]})
    change(doc)
    (root / "dataset_info.json").write_text(json.dumps(doc))
    with Dataset.open([str(root)]) as ds:
        problem = ds.tfds[0].problem
        assert note in problem and "\n" not in problem and problem.startswith(str(root / "dataset_info.json"))
        assert len([f for f in ds.files if f.source is not None]) == 4  # what can be opened is
        ds.frame_and_verify()


def test_fuzzed_metadata_never_raises_anything_but_info_error():
    good = json.dumps(info_doc("mnist", "3.0.1", {"train": [3, 4, 2], "test": [2]})).encode()
    rng = random.Random(22)
    values = [None, 1, -1, 1.5, "", "x", [], {}, [1, "a"], {"a": []}, True, "9" * 30]
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        with contextlib.suppress(InfoError):
            parse_info(bytes(data))
    for _ in range(300):  # well-formed JSON, fields of every wrong type
        doc = info_doc("mnist", "3.0.1", {"train": [3, 4, 2], "test": [2]})
        target = doc if rng.random() < 0.5 else rng.choice(doc["splits"])
        target[rng.choice(sorted(target))] = rng.choice(values)
        i = parse_info(json.dumps(doc).encode())
        for s in i.splits:
            assert all("/.." not in n and not n.startswith("/") for n in shard_names(i, s))


def test_many_shards_find_their_folders_dataset_once(tmp_path, monkeypatch):
    """`tfdsfiles.expected` with a `folders` memo (merge's length check over 2,048 shards) gives each
    shard what it gives alone, looking the folder up once."""
    from tfrview.core.tfrecord import tfdsfiles

    root = make_tfds(tmp_path, lengths={"train": [3, 4, 2], "test": [2]})
    shards = sorted(root.glob("*.tfrecord-*"))
    alone = [tfdsfiles.expected(p) for p in shards]
    looks = []
    real = tfdsfiles.dataset_of
    monkeypatch.setattr(tfdsfiles, "dataset_of", lambda p: looks.append(p) or real(p))
    folders: dict = {}
    assert [tfdsfiles.expected(p, folders) for p in shards] == alone
    assert len(looks) == 1 and sorted(n for _, n in alone) == [2, 2, 3, 4]
    assert tfdsfiles.length_problem(shards[0], 99, folders=folders) is not None and len(looks) == 1
    # the entry looked up already (merge's): the same problem, no look
    assert tfdsfiles.problem_of_expected(alone[0], 99) == tfdsfiles.length_problem(shards[0], 99)
    assert tfdsfiles.problem_of_expected(alone[0], alone[0][1]) is None
    assert tfdsfiles.problem_of_expected(None, 99) is None
