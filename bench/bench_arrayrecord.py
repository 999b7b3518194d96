"""ArrayRecord figures against issue 22's targets, on a 1 GB file (group size 1, zstd) made with the
official writer (cached under --dir; skipped with a reason where the wheel cannot be imported).

    python bench/bench_arrayrecord.py [--dir /tmp/tfrview-bench] [--gb 1] [--runs 5]

- count and first rows: the file opened as a source (postscript and footer read), its count, and
  the first 50 rows' records read: target <= 50 ms
- record N warm: a record read again (its chunk decoded again: another record of the same chunk
  would not decode at all with group size 1, so each is a fresh chunk), median of 200: <= 5 ms
- full verify of chunk headers: every block header and chunk header hashed and checked against the
  footer: >= 1 GB/s of file
- for reference (no target): the whole `index_and_verify` the `verify` command runs, and with
  --data-hashes every chunk's data hash too (opt-in, TFRVIEW_AR_DATA_HASHES=1: minutes a GB).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make(path: Path, gb: float) -> None:
    try:
        from array_record.python import array_record_module as m
    except ImportError as exc:
        sys.exit(f"skipped: the official array-record wheel cannot be imported here ({exc})")
    rnd = random.Random(0)
    block = rnd.randbytes(1 << 20)
    tmp = path.with_suffix(".part")
    w = m.ArrayRecordWriter(str(tmp), "group_size:1,zstd:3")
    written = 0
    i = 0
    while written < gb * (1 << 30):
        n = 8192 + rnd.randrange(16384)
        at = rnd.randrange(len(block) - n)
        rec = block[at : at + n // 2] + bytes(n // 2)  # half noise, half zeros: about 2:1
        w.write(i.to_bytes(8, "little") + rec)
        written += (n // 2) + 64
        i += 1
    w.close()
    tmp.rename(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--data-hashes", action="store_true", help="also time every chunk's data hash (minutes)")
    args = ap.parse_args()
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"arrayrecord-{args.gb:g}g.array_record"
    if not path.exists():
        t = time.perf_counter()
        make(path, args.gb)
        print(f"made {path} in {time.perf_counter() - t:.1f} s")
    size = path.stat().st_size
    with open(path, "rb") as f:  # in the page cache, as a file just written or opened before is
        while f.read(64 << 20):
            pass
    from tfrview.core.arrayrecord.reader import open_arrayrecord
    from tfrview.core.tfrecord.report import index_and_verify
    from tfrview.core.tfrecord.source import open_source

    print(f"file {size / 1e9:.2f} GB; os.cpu_count() = {os.cpu_count()}; load {os.getloadavg()[0]:.1f}")
    firsts = []
    cpu = []  # the process's CPU time too: on a machine shared with other work, the steadier figure
    for _ in range(args.runs):
        t = time.perf_counter()
        c = time.process_time()
        src = open_source(path)
        count = src.record_count
        rows = [src.ar.record(i) for i in range(50)]
        firsts.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        src.close()
    chunks = len(src.ar.chunks)
    print(
        f"count and first 50 rows      {statistics.median(firsts) * 1e3:8.1f} ms   target <= 50 ms"
        f"   ({count:,} records, {chunks:,} chunks, {len(rows)} rows; CPU {statistics.median(cpu) * 1e3:.1f} ms)"
    )
    with open_arrayrecord(path) as ar:
        rnd = random.Random(1)
        picks = [rnd.randrange(ar.num_records) for _ in range(200)]
        warm = []
        for n in picks:
            ar.record(n)
            ar._cached = None  # read again, its chunk decoded again (not served from the kept chunk)
            t = time.perf_counter()
            ar.record(n)
            warm.append(time.perf_counter() - t)
        print(f"record N warm                 {statistics.median(warm) * 1e3:8.2f} ms   target <= 5 ms")
        heads = []
        for _ in range(args.runs):
            t = time.perf_counter()
            found = ar.verify(data=False)
            heads.append(time.perf_counter() - t)
        rate = size / statistics.median(heads) / 1e9
        print(
            f"verify chunk headers         {rate:8.2f} GB/s  target >= 1 GB/s"
            f"   ({statistics.median(heads):.3f} s, {len(found)} problems)"
        )
        if args.data_hashes:
            t = time.perf_counter()
            found = ar.verify(data=True)
            dt = time.perf_counter() - t
            print(
                f"verify data hashes too       {size / dt / 1e6:8.1f} MB/s  (no target, opt-in; {dt:.1f} s)"
            )
    with open_source(path) as src:
        t = time.perf_counter()
        idx, _ = index_and_verify(src)
        dt = time.perf_counter() - t
        print(f"index_and_verify (verify)    {dt:8.1f} s     (no target; {idx.count:,} records)")


if __name__ == "__main__":
    main()
