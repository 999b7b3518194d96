"""The fact table and its Parquet export with a feature held in several types (issue 26.4), keys
that look like derived columns, and keys past the tracked ones (issue 25.4)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tfrview.core.analysis.facts import column_of, concat, key_of, len_column_of
from tfrview.core.analysis.filterexpr import parse
from tfrview.core.analysis.merge import merge
from tfrview.core.analysis.parquet_export import write_parquet
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard
from tfrview.core.analysis.vfilter import match
from tfrview.core.output.writer import write_records
from tfrview.core.records.proto import example_pb2

BIG = 1152921504606846977  # 2**60 + 1: no double holds it


def example(**features) -> bytes:
    """An Example; each value a list of int, float or bytes (the type its first item says)."""
    ex = example_pb2.Example()
    for k, v in features.items():
        f = ex.features.feature[k.replace("__", "#")]  # a#len cannot be a keyword argument
        if isinstance(v[0], bytes):
            f.bytes_list.value.extend(v)
        elif isinstance(v[0], float):
            f.float_list.value.extend(v)
        else:
            f.int64_list.value.extend(v)
    return ex.SerializeToString()


def analysed(tmp_path, *files: list[bytes]):
    paths = []
    for i, records in enumerate(files):
        paths.append(tmp_path / f"part-{i}.tfrecord")
        write_records(paths[-1], records)
    return merge(
        [
            analyze_shard(ShardTask(str(p), i, True, read_cache=False, write_cache=False))
            for i, p in enumerate(paths)
        ]
    )


def exported(tmp_path, *files: list[bytes]) -> pa.Table:
    out = tmp_path / "facts.parquet"
    write_parquet(analysed(tmp_path, *files), out)
    return pq.read_table(out)


def test_int_beside_float_and_bytes_beside_float_export_exactly(tmp_path):
    t = exported(
        tmp_path,
        [example(x=[BIG], y=[b"abc"], z=[3], w=[BIG]), example(x=[7], y=[b"def"], z=[4], w=[5])],
        [example(x=[2.5], y=[1.5], z=[0.25], w=[4.0])],
    )
    # past 2**53 beside a fraction: text, every value exact
    assert t.schema.field("x").type == pa.string() and t.column("x").to_pylist() == [str(BIG), "7", "2.5"]
    assert t.column("y").to_pylist() == ["abc", "def", "1.5"]  # bytes beside numbers: text
    assert t.schema.field("z").type == pa.float64() and t.column("z").to_pylist() == [3.0, 4.0, 0.25]
    # past 2**53 beside whole floats: int64, exact
    assert t.schema.field("w").type == pa.int64() and t.column("w").to_pylist() == [BIG, 5, 4]


def test_bytes_that_are_not_text_beside_numbers_are_binary(tmp_path):
    t = exported(tmp_path, [example(b=[b"\xff\x00"])], [example(b=[7])])
    assert t.schema.field("b").type == pa.binary() and t.column("b").to_pylist() == [b"\xff\x00", b"7"]


def test_types_mixed_within_one_file_keep_every_value(tmp_path):
    t = exported(tmp_path, [example(x=[1]), example(x=[0.5]), example(x=[BIG]), example(s=[b"t"], x=[b"u"])])
    assert t.column("x").to_pylist() == ["1", "0.5", str(BIG), "u"]
    t = exported(tmp_path, [example(x=[1, 2]), example(x=[0.5])])
    assert t.column("x").to_pylist() == [[1.0, 2.0], [0.5]] and t.column("x#len").to_pylist() == [2, 1]


def test_a_key_named_like_a_length_column_keeps_its_own(tmp_path):
    t = exported(tmp_path, [example(a=[1, 2, 3], a__len=[7]), example(a=[4], a__len=[8])])
    assert t.column("a").to_pylist() == [[1, 2, 3], [4]]
    assert t.column(len_column_of("a")).to_pylist() == [3, 1]  # the list's lengths
    assert t.column(column_of("a#len")).to_pylist() == [7, 8]  # the key's own values
    assert len(set(t.column_names)) == len(t.column_names)
    assert {key_of(c) for c in ("a", "a#len", "feature:a##len")} == {
        ("a", False),
        ("a", True),
        ("a#len", False),
    }


@pytest.mark.parametrize(
    "key", ["a", "a#len", "a##len", "file", "file#len", "feature:a", "feature:a#len", "n", "image", "#"]
)
def test_column_names_never_collide(key):
    others = [
        "a",
        "a#len",
        "a##len",
        "file",
        "file#len",
        "feature:a",
        "feature:a#len",
        "n",
        "image",
        "#",
        "len",
    ]
    names = [column_of(k) for k in others] + [len_column_of(k) for k in others]
    assert len(set(names)) == len(names)
    assert key_of(column_of(key)) == (key, False) and key_of(len_column_of(key)) == (key, True)


def test_concat_unifies_scalar_and_list_and_the_filter_reads_it(tmp_path):
    a = analysed(
        tmp_path, [example(x=[1], a=[1, 2, 3], a__len=[9])], [example(x=[0.5, 4.0]), example(x=[BIG])]
    )
    t = a.facts()
    assert t.column("x").to_pylist() == [["1"], ["0.5", "4"], [str(BIG)]]  # text: BIG beside a fraction
    hits, _ = match(t, parse("len(x) == 2"))
    assert hits.tolist() == [1]
    hits, _ = match(t, parse('len(a) == 3 and "a#len" == 9'))
    assert hits.tolist() == [0]
    b = analysed(tmp_path, [example(x=[1])], [example(x=[0.5, 4.0])])
    hits, _ = match(b.facts(), parse("x > 0.75"))
    assert hits.tolist() == [0, 1]


def test_the_dataset_fact_table_keeps_fact_keys(tmp_path, monkeypatch):
    import tfrview.core.analysis.facts as facts

    monkeypatch.setattr(facts, "FACT_KEYS", 3)
    tables = []
    for i, keys in enumerate((["a", "b"], ["c", "d", "b"])):
        fb = facts.FactsBuilder()
        from tfrview.core.records.payload import decode

        data = example(**{k: [1, 2] for k in keys})
        fb.add(0, decode(data), None, 0)
        tables.append(fb.table(f"f{i}", np.array([0]), np.array([len(data)]), np.array([1], np.uint8)))
    t = concat(tables)
    assert sorted({key_of(c)[0] for c in t.column_names if key_of(c)}) == ["a", "b", "c"]
    assert t.column("b#len").to_pylist() == [2, 2]


def test_an_expected_key_a_file_could_not_track_is_not_said_missing(tmp_path, monkeypatch):
    import tfrview.core.analysis.checks as checks
    import tfrview.core.analysis.datasummary as datasummary

    monkeypatch.setattr(checks, "TRACKED_KEYS", 5)
    monkeypatch.setattr(datasummary, "TRACKED_KEYS", 5)
    first = [
        example(Label=[1], **{f"a{i}": [i] for i in range(8)}) for _ in range(19)
    ]  # keys in sorted order
    second = [example(**{f"A{i}": [i] for i in range(8)}, Label=[1])]  # Label comes after 5 other keys
    a = analysed(tmp_path, first, second)
    found = [(fi, p.record, str(p.kind)) for fi in (0, 1) for p in a.problems(fi)]
    # said once; file 1's record may hold Label, a0..a3 among its untracked keys: never said missing
    assert found == [(0, 0, "limit_exceeded")], found
    assert sorted(a.schema.expected_keys()) == ["Label", "a0", "a1", "a2", "a3"]
    assert "Label" not in a.shards[1].deep.schema.types
    assert a.summary.other_keys == a.schema.other == 19 * 4 + 4 + 5  # file 1's A0..A4: not the dataset's
    assert len(a.summary.keys) == len(a.schema.types) == 5


def test_a_feature_named_like_a_dataset_step_column_keeps_its_own(tmp_path):
    """The dataset step adds `dup_group`, `leak` (and `tp`, `fp`, `fn`, `max_fp_score` with
    predictions): a feature of that name gets a column of its own, never the step's."""
    import io

    from PIL import Image

    from tfrview.core.analysis.facts import RESERVED
    from tfrview.core.analysis.stepcolumns import NAMES

    assert set(NAMES) <= RESERVED and {"dup_group", "leak", "tp", "max_fp_score"} <= set(NAMES)
    rnd = np.random.default_rng(3)

    def png() -> bytes:
        buf = io.BytesIO()
        Image.fromarray(rnd.integers(0, 255, (32, 32, 3), dtype=np.uint8)).save(buf, "PNG")
        return buf.getvalue()

    same = png()  # one image in train and in test: a copy across splits, a leak
    ex = [
        example(**{"image/encoded": [img], "leak": [7 + i], "dup_group": [b"mine"], "tp": [0.5]})
        for i, img in enumerate([same, png(), same])
    ]
    paths = [tmp_path / "train" / "a.tfrecord", tmp_path / "test" / "b.tfrecord"]
    for p, recs in zip(paths, [ex[:2], ex[2:]], strict=True):
        p.parent.mkdir()
        write_records(p, recs)
    a = merge(
        [
            analyze_shard(ShardTask(str(p), i, True, read_cache=False, write_cache=False))
            for i, p in enumerate(paths)
        ]
    )
    t = a.facts()
    assert len(set(t.column_names)) == len(t.column_names)
    assert t.column("leak").to_pylist() == [True, None, True]  # the step's: the copy in another split
    assert t.column(column_of("leak")).to_pylist() == [7, 8, 9]  # the feature's own
    assert column_of("leak") == "feature:leak" and key_of("feature:leak") == ("leak", False)
    assert (
        t.column(column_of("dup_group")).to_pylist() == ["mine"] * 3
        and t.column(column_of("tp")).to_pylist() == [0.5] * 3
    )
    g = t.column("dup_group").to_pylist()
    assert g[0] == g[2] is not None and g[1] is None
    # the filter's word is the feature's, as for an image signal a feature is named like
    hits, _ = match(t, parse("leak == 8"))
    assert hits.tolist() == [1]
