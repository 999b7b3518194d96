"""Issue 21.1: splits through the CLI. `--split NAME=PATH` (its files join the files analysed),
the split a path names, each file's split and the records per split in `verify`/`info` text and
JSON, `--rule NAME=VALUE`, `tfrview rules`, and one-line errors for words naming nothing."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from tfrview.cli import main
from tfrview.core.output.writer import write_records
from tfrview.demo import _example


def _dataset(tmp_path) -> dict:
    """train/ with 3 shards of 10 records, val/ with 1 of 10, other/ one file of 5."""
    recs = [_example(label=k, text=f"t{k}").SerializeToString() for k in range(10)]
    made = {}
    for split, n in (("train", 3), ("val", 1)):
        (tmp_path / split).mkdir()
        made[split] = [tmp_path / split / f"data-{i:05d}-of-{n:05d}" for i in range(n)]
        for p in made[split]:
            write_records(p, recs)
    (tmp_path / "other").mkdir()
    made["other"] = [tmp_path / "other" / "x.tfrecord"]
    write_records(made["other"][0], recs[:5])
    return made


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([*args, "-j", "1"])
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_names_each_files_split_and_the_records_per_split(capsys, tmp_path):
    d = _dataset(tmp_path)
    code, out, _ = _run(capsys, "verify", "--json", str(tmp_path / "train"), str(tmp_path / "val"))
    assert code == 0
    doc = json.loads(out)
    assert [f["split"] for f in doc["files"]] == ["train", "train", "train", "validation"]
    assert doc["splits"] == {
        "train": {"files": 3, "records": 30, "bytes": sum(p.stat().st_size for p in d["train"])},
        "validation": {"files": 1, "records": 10, "bytes": d["val"][0].stat().st_size},
    }
    code, out, _ = _run(capsys, "verify", str(tmp_path / "train"), str(tmp_path / "val"))
    lines = out.splitlines()
    assert lines[-2] == "splits: train 3 files 30 records · validation 1 file 10 records"
    assert (
        f"{d['val'][0]}: OK  10 records, {d['val'][0].stat().st_size} B, compression none, split validation"
        in lines
    )


def test_a_split_named_by_the_person_adds_its_files_and_wins_over_the_path(capsys, tmp_path):
    d = _dataset(tmp_path)
    code, out, _ = _run(
        capsys,
        "verify",
        "--json",
        str(tmp_path / "train"),
        "--split",
        f"holdout={tmp_path / 'other'}",
        "--split",
        f"test={d['train'][2]}",
    )
    assert code == 0
    doc = json.loads(out)
    assert {f["path"]: f["split"] for f in doc["files"]} == {
        str(d["train"][0]): "train",
        str(d["train"][1]): "train",
        str(d["train"][2]): "test",
        str(d["other"][0]): "holdout",
    }
    assert doc["splits"]["holdout"] == {"files": 1, "records": 5, "bytes": d["other"][0].stat().st_size}
    code, out, _ = _run(
        capsys, "info", "--split", f"eval={tmp_path / 'val' / 'data-*'}", str(tmp_path / "other")
    )
    assert code == 0
    assert out.splitlines()[-2] == "splits: validation 1 file 10 records · (none) 1 file 5 records"
    assert "  split         validation" in out.splitlines()


def test_one_split_alone_changes_nothing_in_the_output(capsys, tmp_path):
    _dataset(tmp_path)
    code, out, _ = _run(capsys, "info", "--json", str(tmp_path / "train"))
    doc = json.loads(out)
    assert set(doc) == {"files", "datasets", "totals"}
    assert all("split" not in f for f in doc["files"])


def test_split_and_rule_words_that_name_nothing_are_one_line_errors(capsys, tmp_path):
    _dataset(tmp_path)
    cases = [
        (
            ["verify", "--split", f"train={tmp_path / 'nothere'}", str(tmp_path / "val")],
            "names no file (no such file)",
        ),
        (["verify", "--split", f"train={tmp_path / 'zz*'}", str(tmp_path / "val")], "names no file"),
        (["info", "--split", "train", str(tmp_path / "val")], "say NAME=PATH"),
        (["verify", "--checks", "--rule", "bogus=1", str(tmp_path / "val")], "no rule is called 'bogus'"),
        (
            [
                "export",
                "--parquet",
                str(tmp_path / "o.parquet"),
                "--rule",
                "near_distance=x",
                str(tmp_path / "val"),
            ],
            "near_distance takes a whole number",
        ),
        (["verify"], "name at least one PATH"),
    ]
    for argv, words in cases:
        code, out, err = _run(capsys, *argv)
        assert code == 2, argv
        assert len(err.strip().splitlines()) == 1 and words in err, (argv, err)
        assert "Traceback" not in err


def test_export_carries_each_records_split(capsys, tmp_path):
    _dataset(tmp_path)
    out = tmp_path / "all.parquet"
    code, _, _ = _run(
        capsys,
        "export",
        "--parquet",
        str(out),
        str(tmp_path / "train"),
        "--split",
        f"validation={tmp_path / 'val'}",
        "--rule",
        "near_distance=6",
    )
    assert code == 0
    t = pq.read_table(out)
    splits = t.column("split").to_pylist()
    assert splits.count("train") == 30 and splits.count("validation") == 10 and len(splits) == 40


def test_rules_lists_every_rule_with_its_default_and_doc(capsys):
    from tfrview.core.analysis.rules import DatasetRules

    code, out, _ = _run_no_jobs(capsys, "rules", "--json")
    assert code == 0
    rules = json.loads(out)["rules"]
    assert {r["name"]: r["default"] for r in rules} == DatasetRules().names()
    assert all(r["doc"] for r in rules)
    near = next(r for r in rules if r["name"] == "near_distance")
    assert near["type"] == "int" and "Hamming" in near["doc"]
    code, out, _ = _run_no_jobs(capsys, "rules")
    assert "  near_distance=12" in out and "duplicates:" in out.splitlines()


def _run_no_jobs(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err
