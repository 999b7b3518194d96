"""Issue 23 part 4 through the CLI: `schema infer`, `validate` (exit 1 on anomalies, --json,
--anomalies-out), `export --stats` and `info` of TFDV files, on a TFX ExampleGen root."""

from __future__ import annotations

import json

import pytest
from google.protobuf import text_format

from tests.tfdvdata import make_tfx
from tfrview.cli import main


def _run(capsys, *args) -> tuple[int, str, str]:
    code = main([*args, "-j", "1"]) if args[0] != "info" else main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_infer_then_validate_is_a_ci_gate(capsys, tmp_path):
    clean = make_tfx(tmp_path / "clean")
    schema = tmp_path / "schema.pbtxt"
    code, out, _ = _run(capsys, "schema", "infer", str(clean), "-o", str(schema))
    assert code == 0 and out.startswith(f"{schema}: 5 features from 28 examples")
    code, out, _ = _run(capsys, "validate", "--schema", str(schema), str(clean))
    assert code == 0 and out.strip() == f"no anomalies in 28 examples against {schema}"
    bad = make_tfx(tmp_path / "bad", planted={2: "colour", 5: "extra"})
    anomalies = tmp_path / "anomalies.pbtxt"
    code, out, _ = _run(
        capsys, "validate", "--schema", str(schema), str(bad), "--json", "--anomalies-out", str(anomalies)
    )
    assert code == 1
    doc = json.loads(out)
    assert not doc["ok"] and doc["examples"] == 28
    got = {(a["feature"], a["kind"]): a["first"] for a in doc["anomalies"]}
    evalf = str(bad / "Split-eval" / "data_tfrecord-00000-of-00001.gz")
    assert got == {
        ("colour", "ENUM_TYPE_UNEXPECTED_STRING_VALUES"): [{"path": evalf, "record": 2}],
        ("extra", "SCHEMA_NEW_COLUMN"): [{"path": evalf, "record": 5}],
    }
    tfmd = pytest.importorskip("tensorflow_metadata.proto.v0.anomalies_pb2", reason="tensorflow-metadata")
    theirs = text_format.Parse(anomalies.read_text(), tfmd.Anomalies())
    assert sorted(theirs.anomaly_info) == ["colour", "extra"]
    assert [f.name for f in theirs.baseline.feature][:2] == ["colour", "image/encoded"]
    code, out, _ = _run(capsys, "validate", "--schema", str(schema), str(bad))
    assert code == 1 and "colour: ENUM_TYPE_UNEXPECTED_STRING_VALUES  Unexpected string values" in out
    assert f"1 records: {evalf}#2" in out


def test_export_stats_and_info_of_the_files(capsys, tmp_path):
    root = make_tfx(tmp_path / "d")
    stats = tmp_path / "FeatureStats.pb"
    code, out, _ = _run(capsys, "export", "--stats", str(stats), str(root))
    assert code == 0 and "2 datasets (train 20 examples, eval 8 examples), 5 features" in out  # TFX's names
    code, out, _ = _run(capsys, "export", "--stats", str(tmp_path / "statistics") + "/", str(root))
    assert code == 0 and out.startswith(f"{tmp_path / 'statistics'}/Split-*/FeatureStats.pb: 2 datasets")
    for split, n in (("train", 20), ("eval", 8)):  # TFX's StatisticsGen layout, a split a file
        code, out, _ = _run(
            capsys, "info", str(tmp_path / "statistics" / f"Split-{split}" / "FeatureStats.pb"), "--json"
        )
        rows = json.loads(out)["files"][0]["rows"]
        assert code == 0 and {r[0] for r in rows} == {split} and len(rows) == 5
        assert next(r[3] for r in rows if r[1] == "label") == n  # present in every example
    code, out, _ = _run(capsys, "info", str(stats), "--json")
    assert code == 0
    doc = json.loads(out)["files"][0]
    assert doc["tfdv"] == "statistics" and len(doc["rows"]) == 10
    code, out, _ = _run(capsys, "info", str(stats))
    assert out.splitlines()[0].startswith(f"{stats}: TFDV statistics, 2 dataset(s)")


def test_one_line_errors(capsys, tmp_path):
    root = make_tfx(tmp_path / "d")
    bad = tmp_path / "schema.pbtxt"
    bad.write_text("feature { name: 'a' type: INTEGER }\n")
    code, _, err = _run(capsys, "validate", "--schema", str(bad), str(root))
    assert code == 2 and err.startswith(f"tfrview: {bad}: not a TFDV Schema") and err.count("\n") == 1
    junk = tmp_path / "FeatureStats.pb"
    junk.write_bytes(b"\xff\xfe garbage")
    code, _, err = _run(capsys, "info", str(junk))
    assert code == 2 and "not a TFDV DatasetFeatureStatisticsList" in err and err.count("\n") == 1
    code, _, err = _run(capsys, "export", str(root))
    assert (
        code == 2 and err.startswith("tfrview: name an output: --parquet, --stats,") and err.count("\n") == 1
    )


def test_the_stored_analysis_is_used_no_second_pass(capsys, tmp_path):
    """After `verify --checks` (or the window) analysed the data, the TFDV commands take every
    file's stored deep result: no file is read again."""
    from tfrview.cli import build_parser
    from tfrview.cli._tfdv import analysed

    root = make_tfx(tmp_path / "d")
    assert _run(capsys, "verify", "--checks", str(root))[0] == 1  # its "images" are no images
    args = build_parser().parse_args(["export", "--stats", str(tmp_path / "s.pb"), str(root), "-j", "1"])
    analysis, paths, unreadable = analysed(args, quiet=True)
    assert len(paths) == 2 and not unreadable
    assert all(s.from_cache and s.deep is not None for s in analysis.shards)
