"""Thousands of shards and millions of tiny records (issue 19.2 and 19.4): each figure beside its
target, on this machine's cores.

    python bench/bench_split.py [--dir /tmp/tfrview-bench-split] [--records 2000000] [--shards 2048]
                                [--checks 200000] [--rounds 2] [--no-rss]

The same small Examples (~116 bytes a record, as bench_engine.make_small writes them) as one file
and cut at record boundaries into `--shards` files (one generation, cut in memory: quick). `verify`
runs the `tfrview` command (interpreter and worker start-up included) with a fresh, empty store
each time; the fastest of `--rounds` runs is compared. `verify --checks` of a `--checks`-record
file on one worker (`--jobs 1`) gives records a second a core; the peak RSS is the largest
resident set of the command and its workers (`ru_maxrss` of the children) on the whole file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Issue 19 measured on this machine before this work: verify of the 2 M-record file 1.05-1.29 s,
# of the same records in 2,048 shards 37.5 s (13-16 s with the SQLite store); `verify --checks`
# ~16,000 records/s on one core; 1.09 GB peak RSS for `verify --checks` of the 2 M-record file.
BEFORE_SHARDS_S = "13-16 s"
BEFORE_CHECKS_RATE = 16_000
BEFORE_RSS_MB = 1090


def line(name: str, value: str, target: str, ok: bool | None) -> None:
    mark = "" if ok is None else ("PASS" if ok else "MISS")
    print(f"{name:<52} {value:>18}   target {target:<26} {mark}", flush=True)


def make_whole(d: Path, records: int) -> Path:
    from bench.bench_engine import make_small

    d.mkdir(parents=True, exist_ok=True)
    whole = d / f"whole-{records}.tfrecord"
    if not whole.exists():
        tmp = d / "whole.partial"
        make_small(tmp, records)
        tmp.rename(whole)
    return whole


def cut(whole: Path, d: Path, shards: int) -> Path:
    """`whole` cut at record boundaries into `shards` files in the folder returned."""
    out = d / f"shards-{shards}-of-{whole.stem}"
    if out.is_dir() and len(list(out.iterdir())) == shards:
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    data = whole.read_bytes()
    at, bounds = 0, [0]
    while at < len(data):  # 8-byte length, 4-byte CRC, the data, 4-byte CRC
        at += 16 + int.from_bytes(data[at : at + 8], "little")
        bounds.append(at)
    n = len(bounds) - 1
    for i in range(shards):
        lo, hi = bounds[n * i // shards], bounds[n * (i + 1) // shards]
        (out / f"small-{i:05d}-of-{shards:05d}.tfrecord").write_bytes(data[lo:hi])
    return out


def head_file(whole: Path, d: Path, records: int) -> Path:
    """The first `records` records of `whole`."""
    p = d / f"head-{records}.tfrecord"
    if p.exists():
        return p
    at = 0
    with open(whole, "rb") as f:
        data = f.read(records * 200 + 16)
    for _ in range(records):
        at += 16 + int.from_bytes(data[at : at + 8], "little")
    p.write_bytes(data[:at])
    return p


def tfrview(*args: str, home: str) -> tuple[float, int]:
    """(seconds, the largest resident set of the command and its workers in MB) of one run."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": home}
    code = (
        "import resource, subprocess, sys, time\n"
        "t0 = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
        "t = time.perf_counter() - t0\n"
        "if p.returncode not in (0, 1): print('failed: ' + p.stderr[-300:], file=sys.stderr)\n"
        "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    p = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "tfrview", *args], env=env,
                       capture_output=True, text=True, check=False)  # fmt: skip
    if p.stderr.strip():
        print(f"  {p.stderr.strip()[-300:]}")
    secs, rss = p.stdout.split()
    return float(secs), int(rss) // 1024


def fresh(homes: list[str]) -> str:
    homes.append(tempfile.mkdtemp(prefix="tfrview-bench-split-"))
    return homes[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/tfrview-bench-split")
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--shards", type=int, default=2048)
    ap.add_argument("--checks", type=int, default=200_000, help="records of the --checks rate's file")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--no-rss", action="store_true", help="skip verify --checks of the whole file")
    a = ap.parse_args()
    d = Path(a.dir)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    print(f"cores: {cores}; load average: {os.getloadavg()[0]:.1f}")
    t0 = time.perf_counter()
    whole = make_whole(d, a.records)
    shards = cut(whole, d, a.shards)
    head = head_file(whole, d, a.checks)
    print(f"  (files made or found in {time.perf_counter() - t0:.1f} s: {whole.stat().st_size / 1e6:.0f} MB)")
    homes: list[str] = []
    try:
        t_one, t_many = [], []
        for _ in range(a.rounds):  # alternately: a shared machine's load changes by the minute
            t_one.append(tfrview("verify", "--quiet", str(whole), home=fresh(homes))[0])
            t_many.append(tfrview("verify", "--quiet", str(shards), home=fresh(homes))[0])
        one, many = min(t_one), min(t_many)
        print(
            f"  (runs, one file / shards: {', '.join(f'{x:.2f} / {y:.2f}' for x, y in zip(t_one, t_many, strict=True))} s)"
        )
        line(f"verify {a.records:,} records in one file", f"{one:.2f} s", "", None)
        line(f"verify the same in {a.shards:,} shards", f"{many:.2f} s", f"before: {BEFORE_SHARDS_S}", None)
        line("  shards / one file", f"{many / one:.2f}x", "<= 1.5x", many / one <= 1.5)
        secs, rss = tfrview("verify", "--checks", "--quiet", "--jobs", "1", str(head), home=fresh(homes))
        rate = a.checks / secs
        line(f"verify --checks of {a.checks:,} records, 1 worker", f"{rate:,.0f} rec/s", ">= 50,000 rec/s a core",
             rate >= 50_000)  # fmt: skip
        print(
            f"  ({secs:.2f} s, start-up included; before: ~{BEFORE_CHECKS_RATE:,} rec/s, peak RSS {rss} MB)"
        )
        if not a.no_rss:
            secs, rss = tfrview("verify", "--checks", "--quiet", str(whole), home=fresh(homes))
            line(
                f"verify --checks of {a.records:,} records: peak RSS", f"{rss:,} MB", "<= 400 MB", rss <= 400
            )
            print(f"  ({secs:.1f} s on {cores} cores, {a.records / secs / cores:,.0f} rec/s a core; "
                  f"before: {BEFORE_RSS_MB:,} MB)")  # fmt: skip
    finally:
        for h in homes:
            shutil.rmtree(h, ignore_errors=True)


if __name__ == "__main__":
    main()
