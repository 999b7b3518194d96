"""Issue 22.1 through the CLI: `tfrview info DIR` on a TFDS prepared folder prints the metadata's
name, version, splits and counts first (text and --json), which version it chose, and `verify`
names split_missing_shard and shard_length_mismatch; bad metadata is one line on stderr."""

from __future__ import annotations

import json

from tests.tfdsdata import make_tfds
from tfrview.cli import main


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([*args, "-j", "1"])
    out, err = capsys.readouterr()
    return code, out, err


def test_info_prints_the_metadata_first(capsys, tmp_path):
    root = make_tfds(tmp_path)
    (tmp_path / "mnist" / "1.0.0").mkdir()
    (tmp_path / "mnist" / "1.0.0" / "dataset_info.json").write_text('{"name": "mnist", "version": "1.0.0"}')
    code, out, err = _run(capsys, "info", str(tmp_path / "mnist"))
    assert code == 0
    assert "TFDS dataset mnist/3.0.1: opened version 3.0.1, the newest of 1.0.0, 3.0.1" in err
    lines = out.splitlines()
    assert lines[:7] == [
        f"TFDS mnist/3.0.1  ({root})",
        "  format        tfrecord",
        "  description   The mnist test dataset.",
        "  supervised    image, label",
        "  download      2.0 KB",
        "  splits        2 (11 records in 4 shards, by dataset_info.json)",
        "    train        9 records in 3 shards, 900 B",
    ]
    assert lines[7] == "    test         2 records in 1 shard, 200 B"
    assert lines[8] == str(root / "mnist-train.tfrecord-00000-of-00003")  # then what the shards hold
    assert "split         test" in out


def test_info_json_has_the_metadata(capsys, tmp_path):
    root = make_tfds(tmp_path)
    code, out, _ = _run(capsys, "info", "--json", str(root))
    assert code == 0
    doc = json.loads(out)
    (t,) = doc["tfds"]
    assert (t["name"], t["version"], t["file_format"], t["records"], t["problem"]) == (
        "mnist",
        "3.0.1",
        "tfrecord",
        11,
        "",
    )
    assert [(s["name"], s["shards"], s["records"], s["shard_lengths"]) for s in t["splits"]] == [
        ("train", 3, 9, [3, 4, 2]),
        ("test", 1, 2, [2]),
    ]
    assert [f["split"] for f in doc["files"]] == ["train", "train", "train", "test"]
    assert [d["name"] for d in doc["datasets"]] == ["mnist/3.0.1"]  # every split: one dataset


def test_verify_names_missing_shards_and_wrong_lengths(capsys, tmp_path):
    root = make_tfds(tmp_path, held={"train": [3, 5, 2], "test": [2]})
    (root / "mnist-train.tfrecord-00002-of-00003").unlink()
    code, out, _ = _run(capsys, "verify", str(root))
    assert code == 1
    assert (
        "  shard_length_mismatch: 5 intact records, where dataset_info.json says 4 for this shard of split train"
    ) in out
    assert f"{root / 'mnist-train.tfrecord-00002-of-00003'}: MISSING  1 problem" in out
    assert (
        "  split_missing_shard: mnist-train.tfrecord-00002-of-00003 is not there: "
        "dataset_info.json names 3 shards for split train"
    ) in out
    code, out, _ = _run(capsys, "verify", "--json", str(root))
    doc = json.loads(out)
    kinds = [p["kind"] for f in doc["files"] for p in f["problems"]]
    assert sorted(kinds) == ["shard_length_mismatch", "split_missing_shard"]
    assert doc["totals"]["missing_shards"] == 1


def test_info_says_the_shard_length_mismatch(capsys, tmp_path):
    root = make_tfds(tmp_path, held={"train": [3, 5, 2], "test": [2]})
    code, out, _ = _run(capsys, "info", str(root))
    assert "  shard_length_mismatch  5 intact records, where dataset_info.json says 4" in out


def test_bad_metadata_is_one_line_and_the_shards_still_open(capsys, tmp_path):
    root = make_tfds(tmp_path)
    (root / "dataset_info.json").write_text("{" * 5000)
    code, out, err = _run(capsys, "info", str(root))
    assert code == 0 and "Traceback" not in err
    said = [line for line in err.splitlines() if "dataset_info.json" in line]
    assert len(said) == 1 and "its shards opened as plain files" in said[0]
    assert out.count("  records       ") >= 4


def test_split_words_name_one_shard_of_a_tfds_folder(capsys, tmp_path):
    root = make_tfds(tmp_path)
    shard = root / "mnist-train.tfrecord-00001-of-00003"
    code, out, _ = _run(capsys, "info", "--json", str(root), "--split", f"holdout={shard}")
    doc = json.loads(out)
    assert [f["split"] for f in doc["files"]] == ["train", "holdout", "train", "test"]
