"""The deep pass's column path for plain Examples (analysis.plain) gives what the record-by-record
path gives: the same schema, statistics, findings, signatures, image keys and fact table, on a file
that mixes every feature type, missing keys, empty lists, lists of every length, non-UTF-8 bytes,
NaN, keys held in several types, labels, images and other payloads."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfrview.core.analysis import plain
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard
from tfrview.core.output.writer import write_records
from tfrview.core.records.proto import example_pb2

JPEG = b"\xff\xd8\xff\xe0" + bytes(200)  # sniffs as a JPEG (and does not decode)


def example(features: dict) -> bytes:
    ex = example_pb2.Example()
    for k, v in features.items():
        f = ex.features.feature[k]
        if isinstance(v, tuple):  # (type, values): an empty list of that type
            getattr(f, v[0]).value.extend(v[1])
        elif v and isinstance(v[0], bytes):
            f.bytes_list.value.extend(v)
        elif v and isinstance(v[0], float):
            f.float_list.value.extend(v)
        else:
            f.int64_list.value.extend(v)
    return ex.SerializeToString()


def mixed_records(n: int = 1500, seed: int = 7) -> list[bytes]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        r = rnd.random()
        f: dict = {
            "label": [rnd.randrange(5)],
            "x": [
                rnd.choice([0.5, -0.0, 0.0, 1e30, -2.25, float(i)]) for _ in range(rnd.choice([1, 3, 8, 16]))
            ],
            "id": [b"id-%05d" % i],
        }
        if r < 0.05:
            f["x"] = [1.0, math.nan, math.inf]  # NaN and infinities: findings
        elif r < 0.08:
            f["x"] = [0.25] * rnd.choice([17, 300])  # past KeyStats' few values and FACT_VALUES
        elif r < 0.11:
            del f["label"]  # a missing key
        elif r < 0.14:
            f["x"] = ("float_list", [])  # an empty list
        elif r < 0.17:
            f["id"] = [b"\xff\xfe not utf-8 %d" % i]  # non-UTF-8 bytes
        elif r < 0.19:
            f["id"] = [JPEG]  # an image where text was: the general path's
        elif r < 0.21:
            f["id"] = [b"a", b"b" * 70]  # two values, one past 64 bytes
        elif r < 0.23:
            f["label"] = [b"cat"]  # the key as bytes: another type, a text label
        elif r < 0.25:
            f["label"] = [1.5]  # as float
        elif r < 0.27:
            f["label"] = list(range(9))  # more than 8: no caption from it
        elif r < 0.29:
            f["tags"] = [b"", b"t%d" % (i % 3)]
            f["n"] = [i % 4, 2**40]
        elif r < 0.31:
            f["image/encoded"] = [b"not a picture"]  # not a plain layout
            f["image/format"] = [b"jpeg"]
        elif r < 0.32:
            out.append(b"\x08\x96\x01")  # a protobuf, not an Example
            continue
        elif r < 0.33:
            out.append(b"")  # an empty Example
            continue
        elif r < 0.34:
            f["empty"] = ("bytes_list", [])
            f["solo"] = [b""]  # one empty bytes value
        out.append(example(f))
    return out


def deep(tmp_path, name: str, records: list[bytes], label_map: dict | None = None):
    path = tmp_path / name
    if not path.exists():
        write_records(path, records)
    return analyze_shard(
        ShardTask(str(path), 0, deep=True, read_cache=False, write_cache=False, label_map=label_map)
    )


def facts_of(r):
    d = r.deep
    return {
        "schema": (
            d.schema.records,
            list(d.schema.kinds.items()),
            list(d.schema.presence.items()),
            [(k, list(c.items())) for k, c in d.schema.types.items()],
            d.schema.od,
            d.schema.other,
            d.schema.first_other,
        ),
        "summary": d.summary.to_json(),
        "summary_order": [
            (
                k,
                list(s.types.items()),
                list(s.top.items()),
                s.per_record_min,
                s.per_record_max,
                s.num_min,
                s.num_max,
                s.num_sum,
                s.num_count,
                s.nan,
                s.top_full,
            )
            for k, s in d.summary.keys.items()
        ],
        "labels": list(d.summary.record_labels.items()),
        "signatures": d.signatures,
        "signature_of": d.signature_of.tolist(),
        "digests": d.digests,
        "class_zero": d.class_zero,
        "class_ids": sorted(d.class_ids),
        "image_keys": (
            list(d.image_keys.seen.items()),
            list(d.image_keys.images.items()),
            list(d.image_keys.odd.items()),
        ),
        "problems": [
            (p.kind, p.offset, p.length, p.record, p.message, p.feature, p.detail) for p in r.problems
        ],
    }


@pytest.mark.parametrize(
    ("batch", "bulk", "span"), [(4096, True, 4 << 20), (7, True, 900), (4096, False, 4 << 20)]
)
def test_the_column_path_gives_what_the_record_path_gives(tmp_path, monkeypatch, batch, bulk, span):
    """`bulk`: each read of the file parsed at once (examplecols; `span` bytes a read, so the
    variants are learnt in one read and counted in the next), else `take` a record at a time."""
    from tfrview.core import limits

    records = mixed_records()
    label_map = {"1": "one", "3": "three"}
    monkeypatch.setattr(plain, "PLAIN_BATCH_RECORDS", batch)
    monkeypatch.setattr(plain, "BULK", bulk)
    monkeypatch.setattr(limits, "DEEP_READ_BYTES", span)
    taken = []
    take, count_bulk = plain.PlainExamples.take, plain.PlainExamples._count_bulk

    def counted(self, n, data):
        got = take(self, n, data)
        taken.append(got)
        return got

    def counted_bulk(self, parsed, numbers, lo, hi):
        taken.extend([True] * (hi - lo))
        count_bulk(self, parsed, numbers, lo, hi)

    monkeypatch.setattr(plain.PlainExamples, "take", counted)
    monkeypatch.setattr(plain.PlainExamples, "_count_bulk", counted_bulk)
    fast = deep(tmp_path, "mixed.tfrecord", records, label_map)
    assert sum(taken) > 0.6 * len(records)  # most records took the column path
    monkeypatch.setattr(plain.PlainExamples, "take", lambda self, n, data: False)
    monkeypatch.setattr(plain, "BULK", False)
    slow = deep(tmp_path, "mixed.tfrecord", records, label_map)
    a, b = facts_of(fast), facts_of(slow)
    for k in a:
        assert a[k] == b[k], k
    fa, fb = fast.deep.facts, slow.deep.facts
    assert fa.schema.equals(fb.schema, check_metadata=True)
    for name in fa.column_names:  # by their values' reprs: a NaN equals a NaN
        assert repr(fa.column(name).to_pylist()) == repr(fb.column(name).to_pylist()), name
    assert any(p.kind.value == "nan_or_inf" for p in fast.problems)  # the checks found what is there
    assert b["summary"]["keys"]["x"]["nan"] > 0


def test_a_file_of_one_layout_takes_the_column_path_after_its_first_record(tmp_path, monkeypatch):
    records = [example({"label": [i % 3], "x": [0.5 * i, 1.0], "id": [b"r%d" % i]}) for i in range(100)]
    seen = []
    learnt = plain.PlainExamples.learnt

    def spy(self, n, sig):
        seen.append(n)
        learnt(self, n, sig)

    monkeypatch.setattr(plain.PlainExamples, "learnt", spy)
    r = deep(tmp_path, "one.tfrecord", records)
    assert seen == [0]  # the general path read the first record only
    s = r.deep.summary.to_json()
    assert s["keys"]["x"]["values_per_record"] == [2, 2]
    assert s["keys"]["x"]["max"] == 49.5 and s["keys"]["label"]["top"][0] == [0, 34]
    assert r.deep.facts.column("label").to_pylist() == [i % 3 for i in range(100)]
    assert r.deep.facts.column("id").to_pylist()[:2] == ["r0", "r1"]
    assert r.deep.signature_of.tolist() == [0] * 100


@pytest.mark.parametrize("span", [1 << 20, 300, 1])
def test_payloads_read_a_span_at_a_time_are_each_records_own(tmp_path, monkeypatch, span):
    from tfrview.core import limits
    from tfrview.core.analysis.shard import _payloads
    from tfrview.core.tfrecord.payload_bytes import bounded_payload
    from tfrview.core.tfrecord.report import index_and_verify
    from tfrview.core.tfrecord.source import open_source

    records = [bytes([i]) * (i * 37 % 500) for i in range(60)]
    path = tmp_path / "spans.tfrecord"
    write_records(path, records)
    raw = bytearray(path.read_bytes())
    raw[300] ^= 0xFF  # a damaged record in the middle: not among the numbers read
    path.write_bytes(bytes(raw))
    monkeypatch.setattr(limits, "DEEP_READ_BYTES", span)
    src = open_source(str(path))
    try:
        idx, _ = index_and_verify(src)
        offs, lens = np.asarray(idx.offsets, np.uint64), np.asarray(idx.lengths, np.uint64)
        numbers = np.array([n for n in range(len(offs)) if n % 3 and n != 4], dtype=np.int64)
        read = src.bulk_reader()
        got = list(_payloads(read, offs, lens, numbers))
        assert [n for n, _ in got] == numbers.tolist()
        assert all(d == bounded_payload(read, int(offs[n]), int(lens[n])) for n, d in got)
        assert got[0][1] == records[1] and len(got) == len(numbers)
    finally:
        src.close()


def test_fact_texts_are_text_only_when_every_value_is_utf8():
    from tfrview.core.analysis.facts import _flat
    from tfrview.core.limits import FACT_BYTES

    assert _flat("bytes_list", [[b"caf\xc3\xa9", b""], [b"x"]]).to_pylist() == ["café", "", "x"]
    # a surrogate, an overlong form, a byte no UTF-8 holds, past U+10FFFF
    for bad in (b"\xed\xa0\x80", b"\xc0\xaf", b"\xff", b"\xf4\x90\x80\x80"):
        got = _flat("bytes_list", [[b"ok", bad]])
        assert str(got.type) == "binary" and got.to_pylist() == [b"ok", bad]
    long = b"\xff" * (FACT_BYTES + 1)  # left out (null): its bytes do not make the column binary
    assert _flat("bytes_list", [[b"ok", long]]).to_pylist() == ["ok", None]


def test_the_parts_of_a_file_hold_its_index_once_and_merge_as_before(tmp_path):
    from tfrview.core.analysis.merge import merge
    from tfrview.core.analysis.pool import run_tasks
    from tfrview.core.analysis.shard import share_framing

    path = tmp_path / "parts.tfrecord"
    write_records(
        path, [example({"v": [i], "t": [b"r%d" % i]} if i != 250 else {"v": [i]}) for i in range(300)]
    )
    tasks = [
        ShardTask(str(path), 0, True, read_cache=False, write_cache=False, part=k, parts=3) for k in range(3)
    ]
    parts = list(run_tasks(tasks, jobs=1))
    assert len(parts) == 3 and all(
        p.offsets is parts[0].offsets and p.status is parts[0].status for p in parts
    )
    joined = merge(parts)
    facts = joined.shards[0].deep.facts
    assert joined.shards[0].records == 300 and facts.column("v").to_pylist() == list(range(300))
    alone = merge(
        list(run_tasks([ShardTask(str(path), 0, True, read_cache=False, write_cache=False)], jobs=1))
    )
    assert alone.shards[0].deep.facts.column("t").to_pylist() == facts.column("t").to_pylist()
    assert alone.summary.to_json() == joined.summary.to_json()
    missing = [(p.record, p.message) for p in joined.problems(0) if p.kind.value == "missing_feature"]
    assert missing == [(250, "missing t (present in ≥90% of records)")]  # a part's signatures, at its records
    assert [(p.record, p.message) for p in alone.problems(0) if p.kind.value == "missing_feature"] == missing
    other = analyze_shard(ShardTask(str(path), 0, True, read_cache=False, write_cache=False, part=1, parts=3))
    other.offsets = other.offsets + 1  # a part that framed the file otherwise keeps its own arrays
    assert share_framing(other, {0: parts[0]}).offsets is not parts[0].offsets


def test_a_workers_stored_fact_table_is_read_when_asked_and_made_again_when_gone(tmp_path):
    from tfrview.core.analysis.cache import clear
    from tfrview.core.analysis.shard import StoredFacts, analyze_batch

    paths = []
    for f in range(2):
        paths.append(tmp_path / f"s{f}.tfrecord")
        write_records(
            paths[-1], [example({"v": [f * 10 + i], "t": [b"x\xff" if i == 2 else b"y"]}) for i in range(5)]
        )
    tasks = [ShardTask(str(p), i, True, read_cache=False) for i, p in enumerate(paths)]
    direct = [
        analyze_shard(ShardTask(str(p), i, True, read_cache=False, write_cache=False))
        for i, p in enumerate(paths)
    ]
    got = analyze_batch(tasks)
    assert all(isinstance(r.deep._facts, StoredFacts) for r in got)  # sent without its table
    for r, d in zip(got, direct, strict=True):
        assert r.deep.facts.equals(d.deep.facts) and r.deep.facts.column("v").to_pylist()[0] == d.file_no * 10
    again = analyze_batch(tasks)
    clear()  # gone from the store: read from the file again
    assert again[1].deep.facts.equals(direct[1].deep.facts)


def test_the_column_path_takes_the_label_the_reading_takes(tmp_path):
    """A text label first in LABEL_KEYS wins for every record, by both paths: the column path no
    longer takes class ids from a later int key (review of issue 20, defect 2)."""
    from tfrview.core.records.payload import decode
    from tfrview.core.records.reading import read_record

    records = [example({"image/class/text": [b"cat"], "target": [5]}) for _ in range(6)]
    r = read_record(decode(records[0]))
    assert (r.label_key, r.label_text, r.dataset_class_ids) == ("image/class/text", "cat", [])
    d = deep(tmp_path, "text_first.tfrecord", records)
    assert d.deep.class_ids == set()  # records 2-6 took the column path and once gave {5}
    assert d.deep.summary.record_labels == {"cat": 6}


_KEYS = ("label", "x", "id", "image/class/label", "n")
_VALUES = {  # a list type's values: any int64, few ids, floats with NaN and signed zeros, bytes, labels
    "int": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=10),
    "ids": st.lists(st.sampled_from([0, 1, 2, 7]), min_size=1, max_size=2),
    "float": st.lists(st.floats(width=32), max_size=20),
    "bytes": st.lists(st.binary(max_size=12), max_size=4),
    "text": st.lists(st.sampled_from([b"cat", b"dog", b"\xff", JPEG]), min_size=1, max_size=2),
}
_EMPTY = {
    "int": "int64_list",
    "ids": "int64_list",
    "float": "float_list",
    "bytes": "bytes_list",
    "text": "bytes_list",
}


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    st.lists(
        st.dictionaries(st.sampled_from(_KEYS), st.sampled_from(sorted(_VALUES)), max_size=4),
        min_size=1,
        max_size=3,
    ),
    st.lists(st.integers(0, 2), min_size=1, max_size=40),
    st.booleans(),
    st.data(),
)
def test_a_bulk_read_gives_what_the_reading_gives_on_generated_examples(
    tmp_path_factory, layouts, which, small, data
):
    """Generated Examples of a few layouts (a key's type differing between them; values of any
    length, NaNs, labels, images), counted by the bulk reading in reads of a few records or of the
    whole file, equal the record-by-record reading."""
    from tfrview.core import limits

    records = []
    for w in which:
        layout = layouts[w % len(layouts)]
        f = {k: data.draw(_VALUES[t]) for k, t in layout.items()}
        records.append(example({k: v if v else (_EMPTY[layout[k]], []) for k, v in f.items()}))
    path = tmp_path_factory.mktemp("gen")
    old = (plain.BULK, limits.DEEP_READ_BYTES, plain.PlainExamples.take)
    try:
        limits.DEEP_READ_BYTES = 300 if small else 4 << 20
        fast = deep(path, "g.tfrecord", records, {"1": "one"})
        plain.BULK = False
        plain.PlainExamples.take = lambda self, n, data: False
        slow = deep(path, "g.tfrecord", records, {"1": "one"})
    finally:
        plain.BULK, limits.DEEP_READ_BYTES, plain.PlainExamples.take = old
    a, b = facts_of(fast), facts_of(slow)
    for k in a:
        assert repr(a[k]) == repr(b[k]), k
    fa, fb = fast.deep.facts, slow.deep.facts
    assert fa.schema.equals(fb.schema, check_metadata=True)
    for name in fa.column_names:
        assert repr(fa.column(name).to_pylist()) == repr(fb.column(name).to_pylist()), name
