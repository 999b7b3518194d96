"""The result store (analysis/cache.py, one SQLite file): results come back as stored, several
processes write and read it at once, a damaged or busy store is said in one line, the least recently
used results make room, the old layout goes, and `tfrview cache` says what is kept on disk."""

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import framed
from tfrview.core.analysis import cache
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard
from tfrview.core.tfrecord.framing import encode_record

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # workers and children inherit it
    yield
    cache._forget()
    cache._off.clear()


def examples(n: int, seed: int = 0) -> bytes:
    """n small Examples (a label, a few floats, an id), framed."""
    from tfrview.core.records.proto import example_pb2

    out = []
    for i in range(n):
        ex = example_pb2.Example()
        ex.features.feature["label"].int64_list.value.append((i + seed) % 5)
        ex.features.feature["x"].float_list.value.extend([0.5 * i] * (1 + i % 3))
        ex.features.feature["id"].bytes_list.value.append(b"id-%d-%d" % (seed, i))
        out.append(encode_record(ex.SerializeToString()))
    return b"".join(out)


def shard(tmp_path: Path, name: str, n: int = 20, seed: int = 0) -> ShardTask:
    p = tmp_path / name
    p.write_bytes(examples(n, seed))
    return ShardTask(str(p), 0, deep=True)


def rows(sql: str) -> list:
    with sqlite3.connect(cache.store_path()) as c:
        return c.execute(sql).fetchall()


def test_a_result_comes_back_as_it_was_stored(tmp_path):
    task = shard(tmp_path, "a.tfrecord", 30)
    first = analyze_shard(task)
    # image hashes are raw bytes: one ending in a zero byte must keep it
    first.deep.digests = [(3, "image/encoded", b"\x01" * 15 + b"\x00"), (9, "other", bytes(range(16)))]
    cache.store(task, first)
    again = cache.load(task)
    assert again.from_cache and again.records == 30 and again.analysed_at == first.analysed_at
    assert np.array_equal(again.offsets, first.offsets) and np.array_equal(again.status, first.status)
    assert again.deep.digests == first.deep.digests
    assert again.deep.facts.equals(first.deep.facts)
    assert again.deep.summary.to_json() == first.deep.summary.to_json()
    assert again.deep.summary.keys["label"].top == first.deep.summary.keys["label"].top
    assert np.array_equal(again.deep.signature_of, first.deep.signature_of)
    again.offsets[0] = 1  # writable arrays, as before
    index_only = cache.load(task, index_only=True)
    assert index_only.deep is None and len(index_only.offsets) == 30
    assert rows("SELECT format FROM entries") == [(cache.FORMAT,)]


def test_the_running_total_is_the_sum_of_the_entries(tmp_path):
    tasks = [shard(tmp_path, f"s{i}.tfrecord", 10 + i, i) for i in range(4)]
    for t in tasks:
        analyze_shard(t)
    analyze_shard(tasks[0])  # found: not stored twice
    cache.store(tasks[1], analyze_shard(ShardTask(tasks[1].path, 0, deep=True, read_cache=False)))  # replaced
    (n, size), (count, total) = cache.usage(), rows("SELECT count(*), sum(size) FROM entries")[0]
    assert n == count == 4 and size == total > 0


def test_the_least_recently_used_results_make_room(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "_TOUCH_AFTER", 0.0)  # every load counts as a use
    tasks = [shard(tmp_path, f"s{i}.tfrecord", 20, i) for i in range(5)]
    results = [analyze_shard(ShardTask(t.path, 0, deep=True, write_cache=False)) for t in tasks]
    sizes = []
    for t, r in zip(tasks[:3], results, strict=False):
        cache.store(t, r)
        sizes.append(cache.usage()[1] - sum(sizes))
    limit = sum(sizes) + 10  # room for three results of about this size
    assert cache.load(tasks[0]) is not None  # used again: now the second is the least recently used
    cache.store(tasks[3], results[3], max_bytes=limit)
    assert [cache.is_stored(t) for t in tasks[:4]] == [True, False, True, True]
    cache.store(tasks[4], results[4], max_bytes=limit)
    assert [cache.is_stored(t) for t in tasks] == [True, False, False, True, True]
    n, size = cache.usage()
    assert n == 3 and size <= limit and rows("SELECT sum(size) FROM entries")[0][0] == size
    assert cache.trim(0) == (3, size) and cache.usage() == (0, 0)


def test_facts_read_after_their_result_left_the_store_are_said(tmp_path):
    task = shard(tmp_path, "a.tfrecord")
    analyze_shard(task)
    lazy = cache.load(task)
    cache.clear()
    with pytest.raises(cache.StoreError, match="left the result store"):
        lazy.deep.facts  # noqa: B018


def test_a_damaged_store_is_said_and_rebuilt(tmp_path, capsys):
    tasks = [shard(tmp_path, f"s{i}.tfrecord", 10, i) for i in range(2)]
    analyze_shard(tasks[0])
    cache._forget()
    path = cache.store_path()
    size = path.stat().st_size
    path.write_bytes(os.urandom(size))  # garbage over the whole file
    assert cache.load(tasks[0]) is None  # a miss, not a traceback
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "damaged" in err and "rebuilt empty" in err and str(path) in err
    analyze_shard(tasks[1])
    assert cache.is_stored(tasks[1]) and not cache.is_stored(tasks[0]) and cache.usage()[0] == 1
    assert rows("PRAGMA integrity_check") == [("ok",)]


def test_a_store_cut_short_while_in_use_is_rebuilt(tmp_path, capsys):
    tasks = [shard(tmp_path, f"s{i}.tfrecord", 200, i) for i in range(6)]
    for t in tasks:
        analyze_shard(t)
    assert cache.is_stored(tasks[0])  # this process holds a connection now
    with sqlite3.connect(cache.store_path()) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = cache.store_path()
    with open(path, "r+b") as f:  # a half-written copy: the tables' pages past the first few are gone
        f.truncate(4096 * 3)
    got = [cache.load(t) for t in tasks]
    analyze_shard(tasks[0])
    err = capsys.readouterr().err
    assert "rebuilt empty" in err and err.count("\n") == 1 and "Traceback" not in err
    assert all(g is None or g.records == 200 for g in got)
    assert cache.is_stored(tasks[0]) and rows("PRAGMA integrity_check") == [("ok",)]


def test_a_busy_store_is_said_once_and_left_alone(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cache.limits, "STORE_BUSY_SECONDS", 0.2)
    tasks = [shard(tmp_path, f"s{i}.tfrecord", 10, i) for i in range(3)]
    analyze_shard(tasks[0])
    cache._forget()
    holder = sqlite3.connect(cache.store_path(), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for ever
    try:
        r = analyze_shard(tasks[1])  # analysed all the same
        assert r.records == 10 and not r.from_cache
        assert cache.load(tasks[0]) is None and not cache.is_stored(tasks[2])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "busy" in err and "STORE_BUSY_SECONDS" in err
    assert rows("SELECT count(*) FROM entries") == [(1,)]  # untouched


def test_the_old_layout_is_removed_on_first_use(tmp_path):
    old = cache.analysis_dir() / ("0" * 32)
    old.mkdir(parents=True)
    (old / "meta.json").write_text("{}")
    (old / "index.npz").write_bytes(b"x" * 100)
    (cache.analysis_dir() / ".partial-abc").mkdir()
    assert cache.usage() == (0, 0)
    assert sorted(p.name for p in cache.analysis_dir().iterdir() if p.is_dir()) == []
    assert cache.store_path().exists()


WRITER = """
import sys
from pathlib import Path
from tfrview.core.analysis import cache
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard
me, paths = int(sys.argv[1]), sys.argv[2:]
mine = [p for i, p in enumerate(paths) if i % 3 == me]
for rounds in range(2):
    for p in mine:
        r = analyze_shard(ShardTask(p, 0, deep=True, read_cache=rounds == 1))
        assert r.error is None and r.records == 40, r.error
    for p in paths:  # the others' results, as far as they are written
        got = cache.load(ShardTask(p, 0, deep=True))
        assert got is None or (got.records == 40 and got.deep.facts.num_rows == 40)
print("ok")
"""


def test_several_processes_write_and_read_at_once(tmp_path):
    paths = []
    for i in range(18):
        p = tmp_path / f"s{i:02d}.tfrecord"
        p.write_bytes(examples(40, i))
        paths.append(str(p))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(me), *paths],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me in range(3)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0 and out.strip() == "ok" and err == "", err
    assert rows("PRAGMA integrity_check") == [("ok",)]
    n, size = cache.usage()
    assert n == 18 and (n, size) == rows("SELECT count(*), sum(size) FROM entries")[0]
    for p in paths:
        r = cache.load(ShardTask(p, 0, deep=True))
        assert r.records == 40 and r.deep.facts.column("label").to_pylist()[:2] == [
            int(Path(p).stem[1:]) % 5,
            (int(Path(p).stem[1:]) + 1) % 5,
        ]


def test_tfrview_cache_says_what_is_kept_on_disk(tmp_path, capsys):
    from tests.cli.test_cli import run
    from tfrview.core.tfrecord.remote import kept_dir

    p = tmp_path / "a.tfrecord"
    p.write_bytes(framed([b"x" * 30] * 5)[0])
    run(capsys, "info", str(p))
    data = kept_dir() / "data"
    data.mkdir(parents=True)
    (data / "k1.bin").write_bytes(b"r" * 100_000)  # the fetched pages of one remote object
    (data / "k1.pages").write_bytes(b"\x01")
    code, out, _ = run(capsys, "cache")
    store_line, remote_line = out.splitlines()
    assert code == 0 and store_line.startswith(f"{cache.store_path()}: 1 stored results, ")
    assert "on disk (limit 4.3 GB)" in store_line
    assert (
        remote_line.startswith(f"{kept_dir()}: 1 remote file kept locally, ")
        and "(limit 17.2 GB)" in remote_line
    )
    kept = float(remote_line.split("locally, ")[1].split(" KB")[0])
    assert 100 <= kept <= 120  # the bytes on disk, pages file included
    code, out, _ = run(capsys, "cache", "--clear")
    assert "removed 1 stored result " in out and "removed 1 remote file kept locally" in out
    code, out, _ = run(capsys, "cache")
    assert ": 0 stored results" in out and ": 0 remote files kept locally, 0 B" in out


OPENER = """
import sys
from tfrview.core.analysis import cache
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard
for p in sys.argv[1:]:
    assert analyze_shard(ShardTask(p, 0)).records == 5
    assert cache.load(ShardTask(p, 0)).records == 5
print("ok")
"""


def test_processes_that_find_the_store_damaged_at_once_rebuild_it_once(tmp_path):
    paths = []
    for i in range(3):
        p = tmp_path / f"s{i}.tfrecord"
        p.write_bytes(framed([b"%d" % i * (10 + k) for k in range(5)])[0])
        paths.append(str(p))
    analyze_shard(ShardTask(paths[0], 0))
    cache._forget()
    cache.store_path().write_bytes(b"garbage " * 4096)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, p],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for p in paths
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [out.strip() for out, _ in outs] == ["ok"] * 3
    notices = "".join(err for _, err in outs)
    assert notices.count("rebuilt empty") == 1 and notices.count("\n") == 1, notices
    assert cache.usage()[0] == 3 and rows("PRAGMA integrity_check") == [("ok",)]


def test_every_row_is_standard_json_and_gives_back_nan_and_infinities(tmp_path):
    """Python's json writes NaN and Infinity, which are no JSON: SQLite's json_extract refused such a
    row ("malformed JSON"), and the store's damage check then rebuilt the store empty."""
    import math

    from tfrview.core.procs.messages import Progress, Summary, as_array, as_lines, decode, encode
    from tfrview.core.records.proto import example_pb2

    out = []
    for i, v in enumerate([math.nan, -math.inf, 1.5, math.inf]):
        ex = example_pb2.Example()
        ex.features.feature["x"].float_list.value.append(v)
        ex.features.feature["id"].bytes_list.value.append(b"id-%d" % i)  # a key with no numbers
        out.append(encode_record(ex.SerializeToString()))
    p = tmp_path / "odd.tfrecord"
    p.write_bytes(b"".join(out))
    task = ShardTask(str(p), 0, deep=True)
    first = analyze_shard(task)
    told = encode(Progress("records", 4, 4)) + encode(
        Summary({"x": {"min": -math.inf, "mean": math.nan}}, False)
    )
    cache.store_answer("answer-odd", as_array(told).encode())
    assert rows("SELECT count(*) FROM entries WHERE json_valid(meta) = 0") == [(0,)]
    assert rows("SELECT json_extract(meta, '$.records') FROM entries WHERE key != 'answer-odd'") == [(4,)]
    assert rows(
        "SELECT json_extract(meta, '$[0].type'), json_array_length(meta) FROM entries WHERE key = 'answer-odd'"
    ) == [("progress", 2)]
    x = first.deep.summary.keys["x"]
    again = cache.load(task).deep.summary.keys
    assert (again["x"].num_min, again["x"].num_max, again["x"].nan) == (x.num_min, x.num_max, x.nan)
    assert (again["x"].num_min, again["x"].num_max, again["x"].nan) == (1.5, 1.5, 3)  # ±inf counted as NaN
    assert (again["id"].num_min, again["id"].num_max) == (math.inf, -math.inf)  # KeyStats' start
    lines = as_lines(cache.load_answer("answer-odd")[0].decode())
    assert lines == told
    said = decode(lines.splitlines()[1]).summary["x"]
    assert said["min"] == -math.inf and math.isnan(said["mean"])


def test_standard_json_tags_what_is_not_finite_and_gives_it_back():
    import json
    import math

    from tfrview.core import jsontext

    doc = {"a": [1.0, math.nan, (math.inf, -math.inf)], "b": {"c": "NaN", "__float__": 2}, "d": 0.5}
    text = jsontext.dumps(doc)

    def refuse(word):
        raise AssertionError(f"{word} is no JSON")

    json.loads(text, parse_constant=refuse)
    back = jsontext.loads(text)
    assert math.isnan(back["a"][1]) and back["a"][2] == [math.inf, -math.inf]
    assert back["b"] == {"c": "NaN", "__float__": 2} and back["d"] == 0.5  # data that looks like a tag
    assert jsontext.dumps({"e": 1.5}) == json.dumps({"e": 1.5})  # finite: as json writes it
    assert jsontext.loads(b'{"x": NaN}')["x"] != 0  # an old row, as Python wrote it, still reads
