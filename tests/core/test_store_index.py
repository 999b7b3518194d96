"""A file's index in the result store (issue 19): records that follow one another keep their
lengths alone, as their excess over the shortest in the narrowest type (a byte a record for
records of similar sizes: a commit past the write-ahead log's 4 MB costs a checkpoint), and come back as the index they were; a damaged file's
index, whose records do not follow one another, comes back as it was too."""

import sqlite3

import numpy as np
import pytest

from tests.helpers import framed, payloads
from tfrview.core.analysis import cache
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard


@pytest.fixture(autouse=True)
def own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield
    cache._forget()
    cache._off.clear()


def _round_trip(path):
    task = ShardTask(str(path), 0)
    first = analyze_shard(task)  # stored
    again = cache.load(task)
    assert again is not None and again.from_cache
    for name in ("offsets", "lengths", "status"):
        a, b = getattr(first, name), getattr(again, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    again.offsets[0] += 1  # writable, as before
    with sqlite3.connect(cache.store_path()) as c:
        (blob,) = c.execute("SELECT arrays FROM entries").fetchone()
    return first, len(blob)


def test_a_clean_index_is_stored_as_its_lengths(tmp_path):
    data, _ = framed(payloads(1000))
    path = tmp_path / "clean.tfrecord"
    path.write_bytes(data)
    first, stored = _round_trip(path)
    assert (
        first.records == 1000 and stored == 1000
    )  # uint8 lengths over the shortest; offsets and status implied


@pytest.mark.parametrize(("spread", "width"), [(300, 2), (70_000, 4)])
def test_lengths_that_differ_more_take_a_wider_type(tmp_path, spread, width):
    pls = [b"x" * (1 + (i * spread) // 9) for i in range(10)]
    data, _ = framed(pls)
    path = tmp_path / "wide.tfrecord"
    path.write_bytes(data)
    first, stored = _round_trip(path)
    assert first.records == 10 and stored == width * 10
    assert first.lengths.tolist() == [len(p) for p in pls]


def test_a_damaged_index_comes_back_as_it_was(tmp_path):
    data, offs = framed(payloads(200))
    b = bytearray(data)
    b[offs[50] + 3] ^= 0xFF  # a length's bytes: its header is damaged, records after it resynchronised
    b[offs[120] + 30] ^= 1  # a data CRC
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(bytes(b) + b"\0" * 7)
    first, stored = _round_trip(path)
    assert first.damaged >= 1 and len(set(first.status.tolist())) > 1
    assert stored >= 2 * len(first.offsets)  # a length and a status a record


def test_a_batch_packs_each_index_as_it_alone_packs():
    """`_index_arrays_many` (a batch's files checked at once) gives each file what `_index_arrays`
    gives it: records that follow one another or not, one status or several, lengths narrow, wide,
    with a base or none; a batch holding an empty file is packed a file at a time."""
    from tfrview.core.analysis.results import ShardResult

    u64, u8 = np.uint64, np.uint8

    def result(lengths, status, gap_at=None, first=0):
        lengths = np.array(lengths, u64)
        offs = np.concatenate([[0], np.cumsum(lengths + u64(16))[:-1]]).astype(u64) + u64(first)
        if gap_at is not None:
            offs[gap_at:] += u64(5)
        return ShardResult(0, "x", offsets=offs, lengths=lengths, status=np.array(status, u8))

    rs = [
        result([10, 12, 11], [1, 1, 1]),
        result([0, 300, 2], [1, 3, 1], gap_at=1, first=7),
        result([5], [0]),
        result([1 << 40, 3], [1, 1], first=16),
        result([70_000, 70_100], [1, 17]),
    ]
    for batch in (rs, rs[1:3], [rs[0], ShardResult(1, "y")]):
        got = cache._index_arrays_many(batch)
        for r, (meta, arrays) in zip(batch, got, strict=True):
            want_meta: dict = {}
            want = cache._index_arrays(r, want_meta)
            assert meta == want_meta and list(arrays) == list(want)
            for name in want:
                assert arrays[name].dtype == want[name].dtype and np.array_equal(arrays[name], want[name]), (
                    name
                )
