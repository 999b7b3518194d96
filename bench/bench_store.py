"""The result store (issue 19.1): each figure beside its target, on this machine's cores.

    python bench/bench_store.py [--dir /tmp/tfrview-bench-store] [--shards 2048] [--others 20000]

Store and load costs are the median of many calls on a deep result of a 1,000-record shard of small
Examples (wall time, and this process's CPU time: the machine may be shared). The "others" are
copies of a small shard's stored row under other keys, put in with one SQL statement (storing them
one by one would take minutes and measure nothing new). `verify` runs the `tfrview` command on
`--shards` files cut at record boundaries from one generated file of small Examples (interpreter and
worker start-up included), once with an empty store and once with the others already stored.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Before the store (a folder of files per result, trimmed by a walk of every folder), as issue 19
# measured on this machine: verify of 2,048 small shards 37.5 s with an empty cache, 88 s with
# 2,360 entries stored; info of those 2,048 stored shards 85 s.
BEFORE_VERIFY_EMPTY_S = 37.5
BEFORE_VERIFY_FULL_S = 88.0
BEFORE_INFO_S = 85.0


def line(name: str, value: str, target: str, ok: bool | None) -> None:
    mark = "" if ok is None else ("PASS" if ok else "MISS")
    print(f"{name:<58} {value:>18}   target {target:<24} {mark}", flush=True)


def cut_shards(d: Path, shards: int, per: int) -> list[Path]:
    """One generated file of small Examples, cut at record boundaries into `shards` files."""
    from bench.bench_engine import make_small

    d.mkdir(parents=True, exist_ok=True)
    names = [d / f"small-{i:05d}-of-{shards:05d}.tfrecord" for i in range(shards)]
    if all(p.exists() for p in names):
        return names
    whole = d / "whole.tfrecord"
    make_small(whole, shards * per)
    data = whole.read_bytes()
    at, bounds = 0, [0]
    while at < len(data):  # 8-byte length, 4-byte CRC, the data, 4-byte CRC
        at += 16 + int.from_bytes(data[at : at + 8], "little")
        bounds.append(at)
    for i, p in enumerate(names):
        p.write_bytes(data[bounds[i * per] : bounds[(i + 1) * per]])
    whole.unlink()
    return names


def timed(fn, n: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `fn` over n calls; also printed: the mean (checkpoints of the
    write-ahead log included) and the tenth percentile (what it costs when this process has a core)."""
    wall, cpu = [], []
    for i in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        fn(i)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    p10 = sorted(wall)[n // 10]
    print(f"  ({n} calls: wall median {statistics.median(wall) * 1e3:.2f} ms, mean {statistics.mean(wall) * 1e3:.2f}"
          f" ms, 10th percentile {p10 * 1e3:.2f} ms; CPU median {statistics.median(cpu) * 1e3:.2f} ms)")  # fmt: skip
    return statistics.median(wall), statistics.median(cpu)


def add_others(n: int, small_task) -> None:
    """n copies of one small shard's stored row, under other keys, least recently used."""
    import sqlite3

    from tfrview.core.analysis import cache
    from tfrview.core.analysis.shard import analyze_shard

    analyze_shard(small_task)  # stored
    key = cache._key(small_task, cache.identity_of(small_task.path))
    with sqlite3.connect(cache.store_path()) as c:
        c.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            "INSERT INTO entries (key, format, size, used, meta, arrays, facts) "
            "SELECT printf('other-%026d', i), format, size, used - 86400 + i * 0.001, meta, arrays, facts "
            "FROM entries, n WHERE key = ?",
            (n, key),
        )


def store_figures(d: Path, others: int) -> tuple[float, float]:
    from dataclasses import replace

    from bench.bench_engine import make_small
    from tfrview.core.analysis import cache
    from tfrview.core.analysis.shard import ShardTask, analyze_shard

    big = d / "thousand.tfrecord"
    make_small(big, 1000)
    small = d / "small.tfrecord"
    make_small(small, 100)
    task = ShardTask(str(big), 0, deep=True, write_cache=False)
    r = analyze_shard(task)
    assert r.records == 1000 and r.deep.facts.num_rows == 1000
    n = 200

    def store(i: int) -> None:
        cache.store(replace(task, label_map={"n": i}), r)  # a new key each time: an insert

    store(-1)  # the store made
    empty_wall, empty_cpu = timed(store, n)
    line("store a 1,000-record shard's result (empty store)", f"{empty_wall * 1e3:.2f} ms", "<= 5 ms",
         empty_wall <= 0.005)  # fmt: skip
    line("  (CPU time of this process)", f"{empty_cpu * 1e3:.2f} ms", "", None)
    t0 = time.perf_counter()
    add_others(others, ShardTask(str(small), 0, deep=True))
    print(f"  ({others:,} other entries put in with one statement in {time.perf_counter() - t0:.1f} s)")
    full_wall, full_cpu = timed(lambda i: store(n + i), n)
    change = full_wall / empty_wall - 1
    line(f"store the same with {others:,} other entries", f"{full_wall * 1e3:.2f} ms", "<= 30 % change",
         abs(change) <= 0.30)  # fmt: skip
    line("  change", f"{change * 100:+.0f} %", "", None)
    line("  (CPU time of this process)", f"{full_cpu * 1e3:.2f} ms ({(full_cpu / empty_cpu - 1) * 100:+.0f} %)", "",
         None)  # fmt: skip
    lwall, lcpu = timed(lambda i: cache.load(replace(task, label_map={"n": i})).deep.facts, n)
    line("load it back (index, summary, fact table)", f"{lwall * 1e3:.2f} ms", "", None)
    line("  (CPU time of this process)", f"{lcpu * 1e3:.2f} ms", "", None)
    iwall, _ = timed(lambda i: cache.load(replace(task, label_map={"n": i}), index_only=True), n)
    line("load its index alone (the window's scan)", f"{iwall * 1e3:.2f} ms", "", None)
    entries, size = cache.usage()
    line("store after these", f"{entries:,} entries", "", None)
    line("  results' bytes / file on disk", f"{size / 1e6:.0f} / {cache.disk_bytes() / 1e6:.0f} MB", "", None)
    return empty_wall, full_wall


def tfrview(*args: str, env: dict) -> float:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "tfrview", *args], check=False, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    if p.returncode not in (0, 1):
        print(f"  tfrview {args[0]} failed: {p.stderr.strip()[-300:]}")
    return time.perf_counter() - t0


def verify_figures(d: Path, shards: int, per: int, others: int) -> None:
    from tfrview.core.analysis.shard import ShardTask

    paths = cut_shards(d / f"shards-{shards}x{per}", shards, per)
    where = str(paths[0].parent)
    base = {**os.environ, "PYTHONPATH": str(ROOT)}
    empty = tempfile.mkdtemp(prefix="tfrview-bench-store-")
    try:
        env = {**base, "XDG_CACHE_HOME": empty}
        t_empty = tfrview("verify", where, env=env)
        line(f"verify {shards:,} shards of {per} records, empty store", f"{t_empty:.1f} s",
             f"before: {BEFORE_VERIFY_EMPTY_S} s", None)  # fmt: skip
        os.environ["XDG_CACHE_HOME"] = empty
        from tfrview.core.analysis import cache

        t0 = time.perf_counter()
        got = [cache.load(ShardTask(str(p), i)) for i, p in enumerate(paths)]
        t_load = time.perf_counter() - t0
        cache._forget()
        assert all(r is not None and r.records == per for r in got)
        line(f"load the {shards:,} stored results (what info asks the store)", f"{t_load:.2f} s", "", None)
        t_info = tfrview("info", where, env=env)
        line(f"info of the {shards:,} stored shards", f"{t_info:.1f} s", f"before: {BEFORE_INFO_S} s", None)
        print("  (info decodes a sample of each file's records in one process: cli._sampled_summary)")
    finally:
        shutil.rmtree(empty, ignore_errors=True)
    full = tempfile.mkdtemp(prefix="tfrview-bench-store-")
    try:
        os.environ["XDG_CACHE_HOME"] = full
        small = d / "small.tfrecord"
        add_others(others, ShardTask(str(small), 0, deep=True))
        cache._forget()
        env = {**base, "XDG_CACHE_HOME": full}
        t_full = tfrview("verify", where, env=env)
        change = t_full / t_empty - 1
        line(f"verify the same with {others:,} other entries stored", f"{t_full:.1f} s",
             f"<= 30 % change (before: {BEFORE_VERIFY_FULL_S} s with 2,360)", abs(change) <= 0.30)  # fmt: skip
        line("  change", f"{change * 100:+.0f} %", "", None)
    finally:
        shutil.rmtree(full, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/tfrview-bench-store")
    ap.add_argument("--shards", type=int, default=2048)
    ap.add_argument("--per", type=int, default=100, help="records a shard")
    ap.add_argument("--others", type=int, default=20_000)
    ap.add_argument("--no-verify", action="store_true", help="the store and load figures only")
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    print(f"cores: {cores}; load average: {os.getloadavg()[0]:.1f}")
    cache_home = tempfile.mkdtemp(prefix="tfrview-bench-store-")
    os.environ["XDG_CACHE_HOME"] = cache_home
    try:
        store_figures(d, a.others)
    finally:
        from tfrview.core.analysis import cache

        cache._forget()
        shutil.rmtree(cache_home, ignore_errors=True)
    if not a.no_verify:
        verify_figures(d, a.shards, a.per, a.others)


if __name__ == "__main__":
    main()
