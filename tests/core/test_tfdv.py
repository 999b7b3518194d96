"""Issue 23 part 4: TFDV statistics, schema inference and validation without TensorFlow, from the
analysis pass's fact tables; what we write parsed by TensorFlow Metadata's own descriptors."""

from __future__ import annotations

import numpy as np
import pytest
from google.protobuf import text_format

from tests.tfdvdata import NAME, make_tfx
from tfrview.core.analysis import analyze
from tfrview.core.tfdv.anomalies import AnomalyKind, to_proto, validate
from tfrview.core.tfdv.columns import splits_of, whole
from tfrview.core.tfdv.files import TfdvFile, kind_of, table
from tfrview.core.tfdv.schema import SchemaError, infer, read_schema
from tfrview.core.tfdv.schema import write as write_schema
from tfrview.core.tfdv.stats import from_splits, statistics
from tfrview.core.tfdv.stats import write as write_stats
from tfrview.core.tfrecord.dataset import expand_arg
from tfrview.core.tfrecord.splits import split_of_files


def _analysed(root):
    paths = [str(p) for p in expand_arg(str(root))]
    return analyze(paths, deep=True, jobs=1, use_cache=False), paths


def test_a_tfx_root_opens_with_its_split_folders_as_splits(tmp_path):
    root = make_tfx(tmp_path / "examples" / "1")
    paths = expand_arg(str(root))
    assert paths == [root / "Split-eval" / NAME, root / "Split-train" / NAME]
    assert split_of_files(paths) == ["validation", "train"]
    assert split_of_files([tmp_path / "Split-holdout" / NAME]) == ["holdout"]  # TFX's own names kept


def test_statistics_per_split_with_the_values_we_wrote(tmp_path):
    analysis, _ = _analysed(make_tfx(tmp_path))
    stats = statistics(analysis)
    by = {d.name: d for d in stats.datasets}
    assert {n: d.num_examples for n, d in by.items()} == {"train": 20, "validation": 8}
    feats = {f.name: f for f in by["train"].features}
    assert sorted(feats) == ["colour", "image/encoded", "label", "opt", "score"]
    label = feats["label"].num_stats
    labels = np.arange(20) % 3
    assert label.mean == pytest.approx(labels.mean()) and label.std_dev == pytest.approx(labels.std())
    assert (label.min, label.max, label.median, label.num_zeros) == (0, 2, 1, 7)
    assert label.common_stats.num_non_missing == 20 and label.common_stats.num_missing == 0
    score = feats["score"].num_stats
    assert score.common_stats.min_num_values == score.common_stats.max_num_values == 2
    assert score.common_stats.tot_num_values == 40
    assert sum(b.sample_count for b in score.histograms[0].buckets) == 40  # STANDARD: every value
    opt = feats["opt"].string_stats
    assert (opt.common_stats.num_non_missing, opt.common_stats.num_missing, opt.unique) == (10, 10, 10)
    colour = feats["colour"].string_stats
    assert [(v.value, v.frequency) for v in colour.top_values] == [("green", 7), ("red", 7), ("blue", 6)]
    assert colour.avg_length == pytest.approx(4.0)
    image = feats["image/encoded"]  # longer than the fact table keeps: present, counted, no values
    assert image.WhichOneof("stats") == "bytes_stats" and image.bytes_stats.common_stats.num_non_missing == 20


def test_statistics_parse_with_tensorflow_metadatas_descriptors(tmp_path):
    tfmd = pytest.importorskip("tensorflow_metadata.proto.v0.statistics_pb2", reason="tensorflow-metadata")
    analysis, _ = _analysed(make_tfx(tmp_path / "d"))
    stats = statistics(analysis)
    for name in ("FeatureStats.pb", "stats.pbtxt"):
        out = tmp_path / name
        write_stats(stats, out)
        theirs = tfmd.DatasetFeatureStatisticsList()
        if name.endswith(".pbtxt"):
            text_format.Parse(out.read_text(), theirs)
        else:
            theirs.ParseFromString(out.read_bytes())
        assert [(d.name, d.num_examples) for d in theirs.datasets] == [("train", 20), ("validation", 8)]
        assert [f.name for f in theirs.datasets[0].features] == [
            "colour",
            "image/encoded",
            "label",
            "opt",
            "score",
        ]
        label = next(f for f in theirs.datasets[0].features if f.name == "label")
        assert label.type == tfmd.FeatureNameStatistics.INT and label.num_stats.max == 2


def test_schema_inferred_as_tfdv_infers_it_and_round_trips_as_text(tmp_path):
    analysis, _ = _analysed(make_tfx(tmp_path / "d"))
    schema = infer(from_splits([whole(splits_of(analysis))]))
    feats = {f.name: f for f in schema.feature}
    assert feats["label"].presence.min_fraction == 1.0 and [d.size for d in feats["label"].shape.dim] == [1]
    assert [d.size for d in feats["score"].shape.dim] == [2]
    assert not feats["opt"].presence.HasField("min_fraction") and feats["opt"].presence.min_count == 1
    assert (feats["opt"].value_count.min, feats["opt"].value_count.max) == (1, 1)
    assert feats["colour"].domain == "colour"
    assert [list(d.value) for d in schema.string_domain if d.name == "colour"] == [["blue", "green", "red"]]
    assert feats["image/encoded"].WhichOneof("domain_info") is None  # its texts were not kept
    out = tmp_path / "schema.pbtxt"
    write_schema(schema, out)
    assert read_schema(out) == schema
    assert kind_of(out) is TfdvFile.SCHEMA
    tfmd = pytest.importorskip("tensorflow_metadata.proto.v0.schema_pb2", reason="tensorflow-metadata")
    theirs = text_format.Parse(out.read_text(), tfmd.Schema())
    assert [f.name for f in theirs.feature] == [f.name for f in schema.feature]


def test_validation_reports_exactly_the_planted_anomalies_with_their_records(tmp_path):
    clean, _ = _analysed(make_tfx(tmp_path / "clean"))
    schema = infer(from_splits([whole(splits_of(clean))]))
    planted = {1: "colour", 3: "label", 4: "score", 5: "extra", 6: "no_colour", 7: "colour"}
    analysis, paths = _analysed(make_tfx(tmp_path / "bad", planted=planted))
    found = validate(schema, whole(splits_of(analysis)))
    got = {
        (a.feature, a.kind): (a.records, [(paths[f], r) for f, r in zip(a.file, a.record, strict=True)])
        for a in found
    }
    evalf = paths[0]
    assert evalf.endswith("Split-eval/" + NAME)
    assert got == {
        ("colour", AnomalyKind.ENUM_TYPE_UNEXPECTED_STRING_VALUES): (2, [(evalf, 1), (evalf, 7)]),
        ("colour", AnomalyKind.FEATURE_TYPE_LOW_FRACTION_PRESENT): (1, [(evalf, 6)]),
        ("label", AnomalyKind.UNEXPECTED_DATA_TYPE): (1, [(evalf, 3)]),
        ("score", AnomalyKind.INVALID_FEATURE_SHAPE): (1, [(evalf, 4)]),
        ("extra", AnomalyKind.SCHEMA_NEW_COLUMN): (1, [(evalf, 5)]),
    }
    msg = to_proto(schema, found)
    assert sorted(msg.anomaly_info) == ["colour", "extra", "label", "score"]
    assert msg.anomaly_info["colour"].short_description == "Multiple errors"
    tfmd = pytest.importorskip("tensorflow_metadata.proto.v0.anomalies_pb2", reason="tensorflow-metadata")
    theirs = tfmd.Anomalies.FromString(msg.SerializeToString())
    assert [r.type for r in theirs.anomaly_info["label"].reason] == [tfmd.AnomalyInfo.UNEXPECTED_DATA_TYPE]


def test_domains_a_person_writes_are_judged(tmp_path):
    analysis, paths = _analysed(make_tfx(tmp_path / "d"))
    data = whole(splits_of(analysis))
    schema = infer(from_splits([data]))
    label = next(f for f in schema.feature if f.name == "label")
    label.int_domain.min, label.int_domain.max = 1, 1
    score = next(f for f in schema.feature if f.name == "score")
    score.float_domain.max = 9.0
    kinds = {(a.feature, a.kind): a.records for a in validate(schema, data)}
    assert kinds == {
        ("label", AnomalyKind.INT_TYPE_SMALL_INT): 10,  # labels 0 in 7 train and 3 eval records
        ("label", AnomalyKind.INT_TYPE_BIG_INT): 8,  # labels 2 in 6 train and 2 eval records
        ("score", AnomalyKind.FLOAT_TYPE_BIG_FLOAT): 1,  # train record 19: 9.5
    }
    missing = schema.feature.add(name="gone", type=1)
    missing.presence.min_count = 1
    assert any(
        a.kind is AnomalyKind.SCHEMA_MISSING_COLUMN and a.records == 28 for a in validate(schema, data)
    )


def test_tfdv_files_as_tables_and_one_line_errors(tmp_path):
    analysis, _ = _analysed(make_tfx(tmp_path / "d"))
    stats_path = tmp_path / "FeatureStats.pb"
    write_stats(statistics(analysis), stats_path)
    t = table(stats_path)
    assert t.kind is TfdvFile.STATISTICS and len(t.rows) == 10
    row = dict(zip(t.columns, next(r for r in t.rows if r[0] == "train" and r[1] == "label"), strict=True))
    assert (row["type"], row["present"], row["max"]) == ("INT", 20, 2.0)
    bad = tmp_path / "schema.pbtxt"
    bad.write_text("feature { name: 'a' type: NOT_A_TYPE }\n")
    with pytest.raises(SchemaError) as e:
        read_schema(bad)
    assert "\n" not in str(e.value) and "not a TFDV Schema" in str(e.value)
    junk = tmp_path / "SchemaDiff.pb"
    junk.write_bytes(b"\xff\xff\xff\xff")
    with pytest.raises(SchemaError):
        table(junk)
    assert kind_of(tmp_path / "x.tfrecord") is None


# A schema as TFDV and people write them: fields our .proto leaves out (annotation, comparators,
# sparse features, tensor representations) are skipped; environments are honoured.
TFDV_SCHEMA = """
feature {
  name: "label"
  type: INT
  int_domain { min: 0 max: 2 is_categorical: true }
  presence { min_fraction: 1.0 min_count: 1 }
  shape { dim { size: 1 } }
  not_in_environment: "SERVING"
  annotation { tag: "target" }
  drift_comparator { infinity_norm { threshold: 0.01 } }
}
feature {
  name: "colour"
  type: BYTES
  domain: "colour"
  presence { min_count: 1 }
  value_count { min: 1 max: 1 }
}
feature {
  name: "score"
  type: FLOAT
  float_domain { min: 0 disallow_nan: true }
}
feature { name: "opt" type: BYTES }
feature { name: "image/encoded" type: BYTES }
feature { name: "served_only" type: INT presence { min_count: 1 } in_environment: "SERVING" }
string_domain { name: "colour" value: "red" value: "green" value: "blue" }
default_environment: "TRAINING"
default_environment: "SERVING"
tensor_representation_group { key: "" value { tensor_representation { key: "x" value { } } } }
"""


def test_a_tfdv_written_schema_with_fields_we_skip_and_environments(tmp_path):
    path = tmp_path / "schema.pbtxt"
    path.write_text(TFDV_SCHEMA)
    schema = read_schema(path)
    assert [f.name for f in schema.feature][:3] == ["label", "colour", "score"]
    analysis, _ = _analysed(make_tfx(tmp_path / "d"))
    data = whole(splits_of(analysis))
    assert validate(schema, data, environment="TRAINING") == []
    serving = {(a.feature, a.kind) for a in validate(schema, data, environment="SERVING")}
    assert serving == {("served_only", AnomalyKind.SCHEMA_MISSING_COLUMN)}  # label is not judged there
    assert ("served_only", AnomalyKind.SCHEMA_MISSING_COLUMN) in {
        (a.feature, a.kind) for a in validate(schema, data)
    }
