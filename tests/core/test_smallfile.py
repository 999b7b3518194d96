"""Small plain files framed from memory (issue 19, tfrecord.smallfile): a clean file's result is the
usual path's, field by field; any damage, compression or a file that is not regular goes the usual
way, which says why."""

import gzip
import os
from dataclasses import replace

import numpy as np
import pytest

from tests.helpers import framed, payloads
from tfrview.core.analysis import shard
from tfrview.core.analysis.results import ShardTask, identity_of
from tfrview.core.tfrecord.framing import encode_record
from tfrview.core.tfrecord.smallfile import frame_many, frame_whole


def _usual(task: ShardTask, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(shard, "_whole_small", lambda task, t0: None)
        return shard._analyze(task)


def _same(a, b) -> None:
    assert (a.identity, a.compression, a.file_size, a.scanned, a.lo, a.hi, a.cause, a.error) == (
        b.identity,
        b.compression,
        b.file_size,
        b.scanned,
        b.lo,
        b.hi,
        b.cause,
        b.error,
    )
    for name in ("offsets", "lengths", "status"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert [p.to_json() for p in a.problems] == [p.to_json() for p in b.problems]


@pytest.mark.parametrize(
    "records",
    [
        [b"one"],
        [b"", b"", b"x"],  # empty payloads
        payloads(300),
        [os.urandom(70_000), os.urandom(70_000), b"tail"],  # past 2 x 64 KB: identity from both ends
        [os.urandom(128 * 1024 - 16)],  # exactly 2 x 64 KB
    ],
)
@pytest.mark.parametrize("few_bytes", [32 << 10, 0])  # checked record by record, or by numpy
def test_a_clean_file_reads_as_the_usual_path_reads_it(tmp_path, monkeypatch, records, few_bytes):
    from tfrview.core.tfrecord import smallfile

    monkeypatch.setattr(smallfile, "_FEW_BYTES", few_bytes)
    path = tmp_path / "clean.tfrecord"
    path.write_bytes(b"".join(encode_record(r) for r in records))
    task = ShardTask(str(path), 3, read_cache=False, write_cache=False)
    fast = shard._analyze(task)
    assert frame_whole(str(path), 64 << 10) is not None and fast.records == len(records)
    _same(fast, _usual(task, monkeypatch))
    assert fast.identity == identity_of(str(path))  # the store finds it again


def _damaged(tmp_path):
    data, offs = framed(payloads(40))
    b = bytearray(data)
    flipped = tmp_path / "flipped.tfrecord"
    b[offs[7] + 20] ^= 4
    flipped.write_bytes(bytes(b))
    header = tmp_path / "header.tfrecord"
    b = bytearray(data)
    b[offs[3] + 1] ^= 1
    header.write_bytes(bytes(b))
    (tmp_path / "cut.tfrecord").write_bytes(data[:-5])
    (tmp_path / "tail.tfrecord").write_bytes(data + b"\0\0\0")
    (tmp_path / "gz.tfrecord.gz").write_bytes(gzip.compress(data))
    (tmp_path / "empty.tfrecord").write_bytes(b"")
    (tmp_path / "garbage.tfrecord").write_bytes(b"not a record at all, just text" * 3)
    os.mkfifo(tmp_path / "fifo.tfrecord")
    return data


@pytest.mark.parametrize("few_bytes", [32 << 10, 0])  # checked record by record, or by numpy
def test_damage_compression_and_odd_files_go_the_usual_way(tmp_path, monkeypatch, few_bytes):
    from tfrview.core.tfrecord import smallfile

    monkeypatch.setattr(smallfile, "_FEW_BYTES", few_bytes)
    _damaged(tmp_path)
    for name in ("flipped", "header", "cut", "tail", "gz", "empty", "garbage", "fifo"):
        path = tmp_path / (f"{name}.tfrecord" + (".gz" if name == "gz" else ""))
        assert frame_whole(str(path), 64 << 10) is None, name
        task = ShardTask(str(path), 0, read_cache=False, write_cache=False)
        _same(shard._analyze(task), _usual(task, monkeypatch))
    flipped = shard._analyze(
        ShardTask(str(tmp_path / "flipped.tfrecord"), 0, read_cache=False, write_cache=False)
    )
    assert flipped.damaged == 1 and [str(p.kind) for p in flipped.problems] == ["bad_data_crc"]


def _whole_same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    assert (a.stat.st_ino, a.stat.st_size, a.ends) == (b.stat.st_ino, b.stat.st_size, b.ends)
    for name in ("offsets", "lengths", "status"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    return True


@pytest.mark.parametrize("run_bytes", [2 << 20, 700, 1])  # one run, a few files a run, a file a run
def test_many_files_framed_together_are_each_framed_as_alone(tmp_path, monkeypatch, run_bytes):
    """A damaged file among clean ones (a record cut at its end, bytes after its last record: the
    chain runs into the next file) is None, and the files after it are framed as they are alone."""
    from tfrview.core.tfrecord import smallfile

    monkeypatch.setattr(smallfile, "_RUN_BYTES", run_bytes)
    _damaged(tmp_path)
    paths = []
    for k, name in enumerate(["flipped", "header", "cut", "tail", "gz", "empty", "garbage", "fifo", "gone"]):
        clean = tmp_path / f"clean{k}.tfrecord"
        clean.write_bytes(framed(payloads(3 + k, base=k))[0])
        paths += [str(clean), str(tmp_path / (f"{name}.tfrecord" + (".gz" if name == "gz" else "")))]
    paths.append(str(tmp_path / "clean0.tfrecord"))  # the same file twice: framed twice
    many = frame_many(paths, 64 << 10)
    alone = [frame_whole(p, 64 << 10) for p in paths]
    assert [w is not None for w in many] == [i % 2 == 0 for i in range(len(paths))]
    assert all(_whole_same(a, b) for a, b in zip(many, alone, strict=True))
    assert [len(w.offsets) for w in many[0:6:2]] == [3, 4, 5]


def test_a_bigger_file_or_a_deep_pass_goes_the_usual_way(tmp_path, monkeypatch):
    from tfrview.core import limits

    data, _ = framed(payloads(50))
    path = tmp_path / "s.tfrecord"
    path.write_bytes(data)
    monkeypatch.setattr(limits, "SMALL_FILE_WHOLE_BYTES", len(data) - 1)
    assert frame_whole(str(path), 64 << 10) is None
    calls = []
    monkeypatch.setattr(shard, "_whole_small", lambda task, t0: calls.append(task) or None)
    task = ShardTask(str(path), 0, deep=True, read_cache=False, write_cache=False)
    assert shard._analyze(task).deep is not None and calls == []
    shard._analyze(replace(task, deep=False))
    assert len(calls) == 1
