"""`tfrview rewrite` against the targets of issue 23: the 2 GB file of JPEG-like records into 16
shards (>= 300 MB/s), and 2,000,000 small records with a filter and a class map (<= 3x `verify` of
the same file).

    python bench/bench_rewrite.py [--dir /tmp/tfrview-bench] [--split-dir /tmp/tfrview-bench]
                                  [--rounds 2] [--out-dir DIR] [--skip-big] [--skip-small]
                                  [--store-dir DIR] [--no-disk]

Each figure is the `tfrview` command's wall time (start-up, verification of the inputs, the write,
the read-back of every shard, the rename), the fastest of `--rounds`, with a fresh result store for
each run; the filter's run is shown cold (the analysis pass reads every record first) and warm (its
stored facts reused, as after the window's or `verify --checks`'s pass). The outputs go to
`--out-dir` (default: beside the inputs) and are removed after each run; the result stores are
made under `--store-dir` (default: the system's temporary folder) and removed at the end.

Each run's CPU seconds (the command's and its workers', user and system) are printed beside its
wall time: on a shared machine the wall time moves with the load, the CPU time much less. The big
copy is bound by the disk, so the disk alone is measured first (`--no-disk` skips it): the same
bytes written in 8 MB blocks and synced once at the end, as `dd bs=8M conv=fsync` does, into the
output folder's filesystem; the rewrite's rate is also given as a share of that.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_engine import make_big  # noqa: E402
from bench.bench_split import CPU, line, make_whole, tfrview  # noqa: E402


def disk_rate(where: Path, size: int) -> float | None:
    """MB/s of the disk alone: `size` bytes written in 8 MB blocks into a new file in `where`'s
    folder and synced once at the end, as `dd if=/dev/zero bs=8M conv=fsync` does; the file removed."""
    block = b"\x5a" * (8 << 20)
    path = where / ".bench-rewrite-disk"
    try:
        where.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            left = size
            while left > 0:
                left -= os.write(fd, block[: min(left, len(block))])
            os.fsync(fd)
        finally:
            os.close(fd)
        return size / (time.perf_counter() - t0) / 1e6
    except OSError as exc:
        print(f"  (the disk alone not measured: {exc})")
        return None
    finally:
        path.unlink(missing_ok=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--split-dir", default="/tmp/tfrview-bench")
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--big-bytes", type=int, default=2 << 30)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out-dir", default=None)
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--skip-small", action="store_true")
    ap.add_argument("--copy-only", action="store_true", help="no filter runs (each cold one is a deep pass)")
    ap.add_argument("--store-dir", default=None, help="where the runs' result stores are made")
    ap.add_argument("--no-disk", action="store_true", help="no measure of the disk alone")
    a = ap.parse_args()
    cores = os.cpu_count() or 1
    print(f"cores: {cores} (os.cpu_count()); load average: {os.getloadavg()[0]:.1f}")
    homes: list[str] = []

    def fresh() -> str:
        if a.store_dir:
            os.makedirs(a.store_dir, exist_ok=True)
        homes.append(tempfile.mkdtemp(prefix="tfrview-bench-rewrite-", dir=a.store_dir))
        return homes[-1]

    try:
        if not a.skip_big:
            d = Path(a.dir)
            d.mkdir(parents=True, exist_ok=True)
            big = d / f"big-{a.big_bytes}.tfrecord"
            if not big.exists():
                make_big(big, a.big_bytes)
            out = Path(a.out_dir or d) / "rewrite-bench-out"
            size = big.stat().st_size
            disk = None if a.no_disk else disk_rate(out.parent, size)
            if disk is not None:
                line(
                    f"the disk alone: {size / 1e9:.2f} GB written, synced",
                    f"{disk:.0f} MB/s",
                    "(the bound)",
                    None,
                )
            runs, cpus = [], []
            for _ in range(a.rounds):
                shutil.rmtree(out, ignore_errors=True)
                runs.append(tfrview("rewrite", str(big), "-o", str(out), "--shards", "16", home=fresh())[0])
                cpus.append(CPU[-1])
            shutil.rmtree(out, ignore_errors=True)
            best = min(runs)
            rate = size / best / 1e6
            line(
                f"rewrite {size / 1e9:.2f} GB of 250 KB records into 16 shards",
                f"{rate:.0f} MB/s" + (f" = {rate / disk:.0%} of disk" if disk else ""),
                ">= 300 MB/s",
                rate >= 300,
            )
            print(
                f"  (runs: {', '.join(f'{x:.2f} s wall, {c:.2f} s CPU' for x, c in zip(runs, cpus, strict=True))};"
                f" load average now {os.getloadavg()[0]:.1f})"
            )
        if not a.skip_small:
            whole = make_whole(Path(a.split_dir), a.records)
            out = Path(a.out_dir or whole.parent) / "rewrite-bench-small"
            verify = min(tfrview("verify", "--quiet", str(whole), home=fresh())[0] for _ in range(a.rounds))
            line(f"verify, {a.records:,} small records", f"{verify:.2f} s", "(the yardstick)", None)
            print(f"  (its CPU: {CPU[-1]:.2f} s)")
            words = ["--where", "label < 48", "--map-classes", "3=1"]
            cold, warm = [], []
            cpu: dict[str, list[float]] = {
                "filter + class map, facts stored": [],
                "filter + class map, cold store": [],
                "copy alone (no filter)": [],
            }
            for _ in range(0 if a.copy_only else a.rounds):
                home = fresh()
                shutil.rmtree(out, ignore_errors=True)
                cold.append(tfrview("rewrite", str(whole), "-o", str(out), *words, home=home)[0])
                cpu["filter + class map, cold store"].append(CPU[-1])
                shutil.rmtree(out, ignore_errors=True)
                warm.append(tfrview("rewrite", str(whole), "-o", str(out), *words, home=home)[0])
                cpu["filter + class map, facts stored"].append(CPU[-1])
            shutil.rmtree(out, ignore_errors=True)
            plain = []
            for _ in range(a.rounds):
                shutil.rmtree(out, ignore_errors=True)
                plain.append(tfrview("rewrite", str(whole), "-o", str(out), home=fresh())[0])
                cpu["copy alone (no filter)"].append(CPU[-1])
            shutil.rmtree(out, ignore_errors=True)
            for name, runs in (
                ("filter + class map, facts stored", warm),
                ("filter + class map, cold store", cold),
                ("copy alone (no filter)", plain),
            ):
                if not runs:
                    continue
                best = min(runs)
                line(
                    f"rewrite {a.records:,} small records, {name}",
                    f"{best:.2f} s = {best / verify:.1f}x verify",
                    f"<= 3x verify ({3 * verify:.2f} s)",
                    best <= 3 * verify,
                )
                print(
                    f"  (wall {', '.join(f'{x:.2f}' for x in runs)} s; CPU {', '.join(f'{c:.2f}' for c in cpu[name])} s)"
                )
            print(f"  (load average now {os.getloadavg()[0]:.1f})")
    finally:
        for h in homes:
            shutil.rmtree(h, ignore_errors=True)


if __name__ == "__main__":
    main()
