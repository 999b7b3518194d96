"""Keys without end (issue 25.4): 100 Examples of 10,000 distinct keys each (1,000,000 keys in a
24 MB file) through `info`, `verify --checks` and `export --parquet`, each in its own process with
its own cache: wall time, CPU time and peak RSS beside the target.

    python bench/bench_keys.py [--records 100] [--keys 10000] [--dir /tmp/tfrview-bench-keys]

Before the bounds (limits.TRACKED_KEYS, FACT_KEYS), measured here on a shared, busy machine:
info 75.6 s and 1.49 GB, verify --checks 368 s and 2.66 GB, export --parquet 286 s and 2.66 GB.
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

PEAK_MB = 400
_RUN = (
    "import resource, sys; from tfrview.cli import main; code = main(sys.argv[1:]); "
    "u = resource.getrusage(resource.RUSAGE_SELF); "
    "print(u.ru_maxrss, u.ru_utime + u.ru_stime, file=sys.stderr); sys.exit(code)"
)


def build(path: Path, records: int, keys: int) -> None:
    from tfrview.core.output.writer import write_records
    from tfrview.core.records.proto import example_pb2

    def examples():
        for r in range(records):
            ex = example_pb2.Example()
            for i in range(keys):
                ex.features.feature[f"key{r:03d}_{i:05d}"].int64_list.value.append(i)
            yield ex.SerializeToString()

    write_records(path, examples())


def run(cache: Path, *args: str) -> tuple[float, float, int]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "TFRVIEW_NO_SPARE": "1", "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    r = subprocess.run(
        [sys.executable, "-c", _RUN, *args, "-j", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    rss, cpu = r.stderr.strip().splitlines()[-1].split()
    return wall, float(cpu), int(rss) // 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100)
    ap.add_argument("--keys", type=int, default=10_000)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    d = Path(a.dir or tempfile.mkdtemp(prefix="tfrview-bench-keys-"))
    d.mkdir(parents=True, exist_ok=True)
    path = d / "keys.tfrecord"
    build(path, a.records, a.keys)
    print(f"{a.records} x {a.keys:,} distinct keys, {path.stat().st_size / 1e6:.1f} MB")
    for i, cmd in enumerate(
        (["info"], ["verify", "--checks", "--json"], ["export", "--parquet", str(d / "k.parquet")])
    ):
        wall, cpu, mb = run(d / f"cache{i}", *cmd, str(path))
        ok = "PASS" if mb < PEAK_MB else "MISS"
        print(
            f"{' '.join(cmd[:2]):<24} {wall:7.1f} s wall {cpu:7.1f} s CPU {mb:6,} MB peak   target < {PEAK_MB} MB {ok}"
        )
    if a.dir is None:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
