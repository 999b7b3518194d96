"""Many small files in one task (issue 19.2): each file's result is the same whether it ran alone or
grouped with others, is stored and found per file, and is reported per file."""

from dataclasses import replace
from itertools import pairwise

import numpy as np
import pytest

from tests.helpers import framed
from tfrview.core import limits
from tfrview.core.analysis.merge import merge
from tfrview.core.analysis.pool import batches, run_tasks
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_batch, analyze_shard, plan


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # workers inherit it


def example(i: int) -> bytes:
    from tfrview.core.records.proto import example_pb2

    ex = example_pb2.Example()
    ex.features.feature["label"].int64_list.value.append(i % 5)
    ex.features.feature["x"].float_list.value.extend([0.5, float("nan") if i == 2 else 1.5])
    ex.features.feature["id"].bytes_list.value.append(b"id-%d" % i)
    return ex.SerializeToString()


@pytest.fixture
def shards(tmp_path):
    """Five small shards; the third has a flipped data byte in its second record."""
    paths = []
    for s in range(5):
        data, offs = framed([example(s * 10 + i) for i in range(4 + s)])
        if s == 2:
            data = bytearray(data)
            data[offs[1] + 14] ^= 0x10
            data = bytes(data)
        p = tmp_path / f"part-{s:05d}-of-00005.tfrecord"
        p.write_bytes(data)
        paths.append(str(p))
    return paths


def facts_of(r):
    t = r.deep.facts
    return {name: t.column(name).to_pylist() for name in t.column_names}


def same(a, b) -> None:
    assert (a.file_no, a.path, a.error) == (b.file_no, b.path, b.error)
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.lengths, b.lengths)
    assert np.array_equal(a.status, b.status)
    assert [p.to_json() for p in a.problems] == [p.to_json() for p in b.problems]
    assert (a.records, a.damaged) == (b.records, b.damaged)
    if a.deep is not None or b.deep is not None:
        assert a.deep.summary.to_json() == b.deep.summary.to_json()
        assert repr(facts_of(a)) == repr(facts_of(b))  # NaN included
        assert np.array_equal(a.deep.signature_of, b.deep.signature_of)


@pytest.mark.parametrize("deep", [False, True])
def test_a_group_gives_each_file_the_result_it_gets_alone(shards, deep):
    tasks = plan(shards, deep, read_cache=False, write_cache=False)
    alone = [analyze_shard(t) for t in tasks]
    grouped = analyze_batch(tasks)
    assert len(grouped) == 5
    for a, b in zip(alone, grouped, strict=True):
        same(a, b)
    assert [r.records for r in grouped] == [4, 5, 5, 7, 8]  # the third lost its damaged record
    assert grouped[2].damaged == 1 and grouped[2].problems[0].kind == "bad_data_crc"
    if deep:
        assert any(p.kind == "nan_or_inf" and p.record == 2 for p in grouped[0].problems)  # record 2: a NaN


@pytest.mark.parametrize("deep", [False, True])
def test_a_batch_pickles_its_arrays_at_once_and_each_file_gets_its_own_back(shards, tmp_path, deep):
    """A pool worker's answer (results.ResultList): one file unreadable, one damaged (its status
    not all one word), records of other lengths and offsets not from the start kept as they were."""
    import pickle

    from tfrview.core.analysis.results import ResultList
    from tfrview.core.tfrecord.index import VERIFIED
    from tfrview.core.tfrecord.status import status_bytes

    gone = ShardTask(str(tmp_path / "gone.tfrecord"), 5, deep=deep, read_cache=False, write_cache=False)
    got = analyze_batch([*plan(shards, deep, read_cache=False, write_cache=False), gone])
    odd = replace(got[4], offsets=got[4].offsets + np.uint64(7), lengths=got[4].lengths * np.uint64(300))
    for rs in (got, ResultList([odd, got[5]]), ResultList([got[5]]), ResultList()):
        back = pickle.loads(pickle.dumps(rs))
        assert type(back) is ResultList and len(back) == len(rs)
        for a, b in zip(rs, back, strict=True):
            same(a, b)
            assert a.offsets.dtype == b.offsets.dtype and a.lengths.dtype == b.lengths.dtype
            assert b.status.dtype == np.uint8 and np.array_equal(b.status, a.status)
            # the counts of each status byte, taken for the whole batch at once: a file's own bincount
            assert np.array_equal(b.status_bytes(), status_bytes(b.status)) and b.records == a.records
    assert got[5].error and len(got[2].problems) == 1
    assert sorted(set(got[2].status.tolist())) != [VERIFIED] and got[2].damaged == 1  # (not all one status)
    for r in got[:2]:  # a clean file read whole: its counts known without a pass (every record VERIFIED)
        assert np.array_equal(r.status_bytes(), status_bytes(r.status))


def test_small_files_are_grouped_and_every_task_is_in_one_group(shards, tmp_path):
    big = tmp_path / "big.tfrecord"
    big.write_bytes(b"\0" * 100)  # a part of a big file stays alone, whatever its size
    tasks = plan(shards, False) + [ShardTask(str(big), 5, part=1, parts=2)]
    tasks.append(ShardTask(str(tmp_path / "gone.tfrecord"), 6))  # no size: alone
    groups = batches(tasks, jobs=1)
    assert sorted(t.file_no for g in groups for t in g) == list(range(7))
    assert [len(g) for g in groups if g[0].file_no < 5] == [5]  # one task for the five shards
    assert [g for g in groups if g[0].file_no >= 5] == [[tasks[5]], [tasks[6]]]
    # with more workers than the dataset has room for, each file is its own task again
    assert all(len(g) == 1 for g in batches(tasks, jobs=64))


def test_groups_shrink_towards_the_end_so_no_core_waits_long(tmp_path):
    paths = []
    for i in range(400):
        p = tmp_path / f"s-{i:05d}.tfrecord"
        p.write_bytes(b"\0" * 1000)
        paths.append(str(p))
    groups = batches(plan(paths, False), jobs=2)
    sizes = [len(g) for g in groups]
    assert [t.file_no for g in groups for t in g] == list(range(400))
    assert sizes[0] == 25 and sizes[-1] <= sizes[0] // 4  # an eighth of a worker's share of 400, then less
    assert all(a >= b for a, b in pairwise(sizes[:-1]))  # (the last: what is left)
    assert min(sizes[:-1]) >= 25 // 8


def test_a_group_is_bounded_by_files(shards, monkeypatch):
    monkeypatch.setattr(limits, "TASK_FILES", 2)
    groups = batches(plan(shards, False), jobs=1)
    assert [[t.file_no for t in g] for g in groups] == [[0, 1], [2, 3], [4]]


def test_grouped_results_are_stored_and_found_per_file(shards):
    from tfrview.core.analysis.cache import is_stored, load, load_many

    tasks = plan(shards, True)
    first = analyze_batch(tasks)  # stored in one transaction
    assert all(is_stored(t) for t in tasks)
    again = load_many(tasks)
    assert all(r is not None and r.from_cache for r in again)
    for a, b in zip(first, again, strict=True):
        same(a, b)
    same(load(tasks[3]), first[3])
    looks = [r for r in run_tasks(plan(shards, False), jobs=1)]  # a look answered by the deep pass stored
    assert all(r.from_cache and r.deep is not None for r in looks)
    assert sorted(r.records for r in looks) == [4, 5, 5, 7, 8]


def test_a_changed_file_in_a_group_is_read_again(shards):
    tasks = plan(shards, False)
    analyze_batch(tasks)
    data, _ = framed([example(i) for i in range(3)])
    with open(shards[1], "wb") as f:
        f.write(data)
    got = analyze_batch(tasks)
    assert [r.from_cache for r in got] == [True, False, True, True, True]
    assert got[1].records == 3


def test_the_pool_reports_grouped_files_per_file(shards):
    tasks = plan(shards, True, read_cache=False)
    pooled = merge(list(run_tasks(tasks, jobs=2)))
    alone = merge([analyze_shard(replace(t, write_cache=False)) for t in tasks])
    assert len(pooled.shards) == 5
    for a, b in zip(pooled.shards, alone.shards, strict=True):
        same(a, b)
    assert pooled.summary.to_json() == alone.summary.to_json()


def test_a_file_written_while_it_was_read_is_not_stored(shards):
    import time

    from tfrview.core.analysis.cache import is_stored, store_many

    tasks = plan(shards, False)
    got = analyze_batch([replace(t, write_cache=False) for t in tasks])
    time.sleep(0.02)  # past the clock's tick
    with open(shards[3], "ab") as f:  # another writer appends a record meanwhile
        f.write(framed([example(99)])[0])
    store_many(list(zip(tasks, got, strict=True)))
    assert [is_stored(t) for t in tasks] == [True, True, True, False, True]


def test_short_and_long_lists_decode_alike():
    """Lists of up to 64 values are read one by one (fast for a protobuf container), longer ones
    at once: the same values and types either way."""
    from tfrview.core.records.feature import FLOAT_LIST, INT64_LIST
    from tfrview.core.records.payload import decode
    from tfrview.core.records.proto import example_pb2

    ex = example_pb2.Example()
    for n in (1, 64, 65, 300):
        ex.features.feature[f"f{n}"].float_list.value.extend([i / 4 - 3 for i in range(n)])
        ex.features.feature[f"i{n}"].int64_list.value.extend([(i - 5) * 2**40 for i in range(n)])
    feats = decode(ex.SerializeToString()).features
    for n in (1, 64, 65, 300):
        f, i = feats[f"f{n}"], feats[f"i{n}"]
        assert (f.type, f.values.dtype, i.type, i.values.dtype) == (
            FLOAT_LIST,
            np.float32,
            INT64_LIST,
            np.int64,
        )
        assert f.values.tolist() == [i / 4 - 3 for i in range(n)]
        assert i.values.tolist() == [(k - 5) * 2**40 for k in range(n)]


def test_one_worker_says_each_file_and_stops_between_files(shards):
    from tfrview.core.analysis.cache import is_stored

    tasks = plan(shards, True)
    got = []
    for r in run_tasks(tasks, jobs=1, cancelled=lambda: len(got) >= 2):
        got.append(r)
    assert [r.file_no for r in got] == [0, 1]  # a group of five, stopped after its second file
    assert [is_stored(t) for t in tasks] == [True, True, False, False, False]


def test_a_file_of_many_tiny_records_is_decoded_in_parts_that_join_to_the_whole(tmp_path, monkeypatch):
    from tfrview.core.analysis.merge import join_parts
    from tfrview.core.analysis.shard import estimated_records

    data, offs = framed([example(i) for i in range(300)])
    data = bytearray(data)
    data[offs[150] + 14] ^= 0x01  # one damaged record, in the second part
    path = tmp_path / "tiny.tfrecord"
    path.write_bytes(bytes(data))
    whole = analyze_shard(ShardTask(str(path), 0, True, read_cache=False, write_cache=False))
    monkeypatch.setattr(limits, "PART_RECORDS", 100)
    assert estimated_records(str(path), len(data)) == 300
    tasks = plan([str(path)], True, read_cache=False, write_cache=False)
    assert [(t.part, t.parts) for t in tasks] == [(0, 3), (1, 3), (2, 3)]
    parts = [analyze_shard(t) for t in reversed(tasks)]
    assert sorted((r.lo, r.hi) for r in parts) == [(0, 100), (100, 200), (200, 300)]
    joined = join_parts(parts)[0]
    same(joined, whole)
    assert joined.records == 299 and joined.deep.facts.num_rows == 300
    gz = tmp_path / "tiny.tfrecord.gz"
    import gzip

    gz.write_bytes(gzip.compress(bytes(data)))
    monkeypatch.setattr(limits, "PART_RECORDS", 1)  # so small a file is read for its estimate
    assert estimated_records(str(gz), gz.stat().st_size) == 0  # compressed: one part, as before
    assert len(plan([str(gz)], True)) == 1
    monkeypatch.setattr(limits, "PART_RECORDS", 250_000)
    assert estimated_records(str(path), len(data)) == len(data) // 16  # too small to be read for it


def test_a_file_of_about_part_records_stays_one_part(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "PART_RECORDS", 100)
    for n, parts in ((100, 1), (120, 1), (149, 1), (151, 2)):
        path = tmp_path / f"n{n}.tfrecord"
        path.write_bytes(framed([example(i) for i in range(n)])[0])
        assert len(plan([str(path)], True)) == parts, n
