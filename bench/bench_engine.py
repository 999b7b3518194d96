"""Engine figures against the targets of the record-engine issue. Makes its own files (cached).

    python bench/bench_engine.py [--dir /tmp/tfrview-bench] [--quick]

Figures are for a warm page cache (each file is read once before timing). Not a test: it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tfrview.core.tfrecord.framing import encode_record  # noqa: E402
from tfrview.core.tfrecord.index import RecordIndex, scan, verify  # noqa: E402
from tfrview.core.tfrecord.source import open_source  # noqa: E402


def make_small(path: Path, n: int) -> None:
    """n Examples of ~100 bytes (label, a few floats, an id)."""
    from tfrview.core.records.proto import example_pb2

    base = []
    for i in range(97):
        ex = example_pb2.Example()
        ex.features.feature["label"].int64_list.value.append(i)
        ex.features.feature["x"].float_list.value.extend([0.5] * (8 + i % 5))
        ex.features.feature["id"].bytes_list.value.append(b"id-%05d" % i)
        base.append(encode_record(ex.SerializeToString()))
    _write_chunks(path, (base[i % 97] for i in range(n)))


def make_small_varied(path: Path, n: int) -> None:
    """n Examples like make_small's whose lengths follow no pattern: each record one of 4,096
    variants (label 0-9,999, 8-12 floats, an id of 6-9 bytes) drawn at random, so framing cannot
    foresee the next length from the last ones (make_small's cycle through 97 repeats every 5)."""
    from tfrview.core.records.proto import example_pb2

    rnd = random.Random(19)
    base = []
    for _ in range(4096):
        ex = example_pb2.Example()
        ex.features.feature["label"].int64_list.value.append(rnd.randrange(10_000))
        ex.features.feature["x"].float_list.value.extend([0.5] * rnd.randrange(8, 13))
        ex.features.feature["id"].bytes_list.value.append(b"i" * rnd.randrange(6, 10))
        base.append(encode_record(ex.SerializeToString()))
    picks = rnd.choices(range(4096), k=n)
    _write_chunks(path, (base[k] for k in picks))


def make_big(path: Path, total: int, rec: int = 250_000) -> None:
    """~total bytes of ~rec-byte records of random bytes (JPEG-like: incompressible)."""
    rnd = random.Random(1)
    blocks = [rnd.randbytes(rec + 1000) for _ in range(8)]
    n = total // rec
    _write_chunks(
        path, (encode_record(blocks[i % 8][i % 997 : i % 997 + rec - 500 + i % 1000]) for i in range(n))
    )


def make_gzip(path: Path, total: int) -> None:
    """A GZIP file of about `total` bytes on disk, of ~20 KB records that barely compress."""
    import gzip

    rnd = random.Random(2)
    blocks = [rnd.randbytes(21_000) for _ in range(16)]
    tmp = path.with_suffix(".partial")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1, mtime=0) as gz:
        written = 0
        i = 0
        while raw.tell() < total:
            r = encode_record(blocks[i % 16][i % 500 : i % 500 + 20_000])
            gz.write(r)
            written += len(r)
            i += 1
    tmp.replace(path)


def make_gzip_text(path: Path, total: int) -> None:
    """A GZIP file of about `total` bytes on disk whose records compress about 3:1 (text-like),
    so reaching a record means inflating real deflate blocks, not stored ones."""
    import gzip

    rnd = random.Random(4)
    words = [
        bytes(rnd.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(2, 9)))
        for _ in range(4000)
    ]
    tmp = path.with_suffix(".partial")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
        i = 0
        while raw.tell() < total:
            body = b" ".join(rnd.choice(words) for _ in range(3000)) + rnd.randbytes(200)
            gz.write(encode_record(body))
            i += 1
    tmp.replace(path)


def _write_chunks(path: Path, records) -> None:
    tmp = path.with_suffix(".partial")
    with open(tmp, "wb") as f:
        buf: list[bytes] = []
        size = 0
        for r in records:
            buf.append(r)
            size += len(r)
            if size > 64 << 20:
                f.write(b"".join(buf))
                buf, size = [], 0
        f.write(b"".join(buf))
    tmp.replace(path)


def warm(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass


def first_offsets_ms(path: Path) -> float:
    with open_source(path) as src:
        t = time.perf_counter()
        got = 0
        for chunk in scan(src):
            got += len(chunk.offsets)
            if got >= 1000 or chunk.done:
                break
        return (time.perf_counter() - t) * 1000


def full_index(path: Path) -> tuple[float, RecordIndex]:
    src = open_source(path)
    idx = RecordIndex()
    t = time.perf_counter()
    for chunk in scan(src):
        idx.apply(chunk)
    dt = time.perf_counter() - t
    src.close()
    return dt, idx


def full_verify(path: Path) -> tuple[float, int]:
    src = open_source(path)
    idx = RecordIndex()
    for chunk in scan(src):
        idx.apply(chunk)
    t = time.perf_counter()
    bad = 0
    for vc in verify(src, idx):
        bad += len(vc.bad)
    dt = time.perf_counter() - t
    src.close()
    return dt, bad


_MEM_CHILD = r"""
import json, sys, tracemalloc
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
import numpy, crc32c
from tfrview.core.tfrecord.source import open_source
from tfrview.core.tfrecord.index import RecordIndex, scan
from tfrview.core.tfrecord.framing import length_crc
length_crc(1)
base_anon = status('RssAnon:')
tracemalloc.start()
src = open_source(sys.argv[1]); idx = RecordIndex()
peak_anon = base_anon
for chunk in scan(src):
    idx.apply(chunk)
    peak_anon = max(peak_anon, status('RssAnon:'))
_, peak_py = tracemalloc.get_traced_memory()
print(json.dumps({"records": idx.count, "peak_anon_above": peak_anon - base_anon, "peak_traced": peak_py}))
"""


def index_memory(path: Path) -> dict:
    """Peak anonymous memory (the page cache of the mapped file is not ours) in a fresh interpreter."""
    r = subprocess.run(
        [sys.executable, "-c", _MEM_CHILD, str(path)], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return json.loads(r.stdout)


def random_reads_ms(path: Path, n: int = 20) -> tuple[list[float], RecordIndex]:
    src = open_source(path)
    idx = RecordIndex()
    for chunk in scan(src):
        idx.apply(chunk)
    rnd = random.Random(3)
    times = []
    for _ in range(n):
        k = rnd.randrange(idx.count)
        t = time.perf_counter()
        data = src.read(int(idx.offsets[k]) + 12, int(idx.lengths[k]))
        times.append((time.perf_counter() - t) * 1000)
        assert len(data) == int(idx.lengths[k])
    src.close()
    return times, idx


def line(name: str, value: str, target: str, ok: bool) -> None:
    print(f"  {name:<46} {value:>16}   target {target:<12} {'PASS' if ok else 'MISS'}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--quick", action="store_true", help="smaller files (smoke run, figures not comparable)")
    a = ap.parse_args()
    d = Path(a.dir)
    d.mkdir(parents=True, exist_ok=True)
    n_small = 200_000 if a.quick else 2_000_000
    big_bytes = 200 << 20 if a.quick else 2 << 30
    gz_bytes = 100 << 20 if a.quick else 1 << 30
    small = d / f"small-{n_small}.tfrecord"
    big = d / f"big-{big_bytes}.tfrecord"
    gz = d / f"gzip-{gz_bytes}.tfrecord.gz"
    gzt = d / f"gzip-text-{gz_bytes}.tfrecord.gz"
    for path, make, arg in (
        (small, make_small, n_small),
        (big, make_big, big_bytes),
        (gz, make_gzip, gz_bytes),
        (gzt, make_gzip_text, gz_bytes),
    ):
        if not path.exists():
            print(f"making {path} ...", flush=True)
            make(path, arg)
        warm(path)

    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(
        f"files: {small.name} {small.stat().st_size / 1e6:.0f} MB, {big.name} {big.stat().st_size / 1e9:.2f} GB,"
        f" {gz.name} {gz.stat().st_size / 1e9:.2f} GB"
    )
    f_small = min(first_offsets_ms(small) for _ in range(5))
    f_big = min(first_offsets_ms(big) for _ in range(5))
    line("first 1,000 offsets, small-record file", f"{f_small:.2f} ms", "<= 50 ms", f_small <= 50)
    line("first 1,000 offsets, 250 KB-record file", f"{f_big:.2f} ms", "<= 50 ms", f_big <= 50)

    best = None
    for _ in range(3):
        dt, idx = full_index(small)
        best = dt if best is None else min(best, dt)
    rate = idx.count / best / 1e6
    line(f"full index, {idx.count:,} small records", f"{rate:.2f} M rec/s", ">= 3 M/s", rate >= 3)

    vbest = None
    for _ in range(3):
        dt, bad = full_verify(big)
        vbest = dt if vbest is None else min(vbest, dt)
    gbps = big.stat().st_size / vbest / 1e9
    line(
        f"full verify, {big.stat().st_size / 1e9:.2f} GB of 250 KB records",
        f"{gbps:.2f} GB/s",
        ">= 5.5 GB/s",
        gbps >= 5.5,
    )

    mem = index_memory(small)
    mb = mem["peak_anon_above"] / 1e6
    line(f"peak memory indexing {mem['records']:,} records", f"{mb:.1f} MB", "<= 100 MB", mb <= 100)
    print(f"  {'':<46} (python+numpy allocations traced: {mem['peak_traced'] / 1e6:.1f} MB)")

    for path, what in ((gz, "incompressible"), (gzt, "text-like, ~3:1")):
        times, gidx = random_reads_ms(path)
        worst = max(times)
        med = sorted(times)[len(times) // 2]
        line(
            f"random record, {path.stat().st_size / 1e9:.2f} GB GZIP ({what}), worst of 20",
            f"{worst:.1f} ms",
            "<= 50 ms",
            worst <= 50,
        )
        print(
            f"  {'':<46} (median {med:.1f} ms over {gidx.count:,} records, {gidx.scanned / 1e9:.2f} GB inflated)"
        )


if __name__ == "__main__":
    main()
