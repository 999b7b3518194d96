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
