"""`tfrview rewrite` against the targets of issue 23: the 2 GB file of JPEG-like records into 16
shards (>= 300 MB/s), and 2,000,000 small records with a filter and a class map (<= 3x `verify` of
the same file).

    python bench/bench_rewrite.py [--dir /tmp/tfrview-bench] [--split-dir /tmp/tfrview-bench]
                                  [--rounds 2] [--out-dir DIR] [--skip-big] [--skip-small]

Each figure is the `tfrview` command's wall time (start-up, verification of the inputs, the write,
the read-back of every shard, the rename), the fastest of `--rounds`, with a fresh result store for
each run; the filter's run is shown cold (the analysis pass reads every record first) and warm (its
stored facts reused, as after the window's or `verify --checks`'s pass). The outputs go to
`--out-dir` (default: beside the inputs) and are removed after each run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_engine import make_big  # noqa: E402
from bench.bench_split import line, make_whole, tfrview  # noqa: E402


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
    a = ap.parse_args()
    cores = os.cpu_count() or 1
    print(f"cores: {cores} (os.cpu_count()); load average: {os.getloadavg()[0]:.1f}")
    homes: list[str] = []

    def fresh() -> str:
        homes.append(tempfile.mkdtemp(prefix="tfrview-bench-rewrite-"))
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
            runs = []
            for _ in range(a.rounds):
                shutil.rmtree(out, ignore_errors=True)
                runs.append(tfrview("rewrite", str(big), "-o", str(out), "--shards", "16", home=fresh())[0])
            shutil.rmtree(out, ignore_errors=True)
            best = min(runs)
            rate = size / best / 1e6
            line(
                f"rewrite {size / 1e9:.2f} GB of 250 KB records into 16 shards",
                f"{rate:.0f} MB/s",
                ">= 300 MB/s",
                rate >= 300,
            )
            print(
                f"  (runs: {', '.join(f'{x:.2f}' for x in runs)} s; load average now {os.getloadavg()[0]:.1f})"
            )
        if not a.skip_small:
            whole = make_whole(Path(a.split_dir), a.records)
            out = Path(a.out_dir or whole.parent) / "rewrite-bench-small"
            verify = min(tfrview("verify", "--quiet", str(whole), home=fresh())[0] for _ in range(a.rounds))
            line(f"verify, {a.records:,} small records", f"{verify:.2f} s", "(the yardstick)", None)
            words = ["--where", "label < 48", "--map-classes", "3=1"]
            cold, warm = [], []
            for _ in range(0 if a.copy_only else a.rounds):
                home = fresh()
                shutil.rmtree(out, ignore_errors=True)
                cold.append(tfrview("rewrite", str(whole), "-o", str(out), *words, home=home)[0])
                shutil.rmtree(out, ignore_errors=True)
                warm.append(tfrview("rewrite", str(whole), "-o", str(out), *words, home=home)[0])
            shutil.rmtree(out, ignore_errors=True)
            plain = []
            for _ in range(a.rounds):
                shutil.rmtree(out, ignore_errors=True)
                plain.append(tfrview("rewrite", str(whole), "-o", str(out), home=fresh())[0])
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
            print(f"  (load average now {os.getloadavg()[0]:.1f})")
    finally:
        for h in homes:
            shutil.rmtree(h, ignore_errors=True)


if __name__ == "__main__":
    main()
