"""Background jobs' figures: the filter over 1,000,000 small Examples (target: done in seconds),
and the analysis pass (QA checks and summary) throughput, each in its own child process as the window
runs them.

    python bench/bench_jobs.py [--dir /tmp/tfrview-bench] [--records 1000000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tfrview.core.procs.launch import read_lines, spawn  # noqa: E402
from tfrview.core.procs.messages import Failed, Matches, ProblemFound, Summary  # noqa: E402
from tfrview.core.procs.requests import AnalyzeRequest, FilterRequest, Request  # noqa: E402


def run(request: Request) -> tuple[float, float | None, int]:
    """(seconds to finish, seconds to the first result, results)."""
    t0 = time.perf_counter()
    first = None
    count = 0
    for msg in read_lines(spawn(request)):
        if isinstance(msg, Failed):
            raise SystemExit(f"job failed: {msg.message}")
        got = len(msg.matches) if isinstance(msg, Matches) else int(isinstance(msg, (ProblemFound, Summary)))
        if got and first is None:
            first = time.perf_counter() - t0
        count += got
    return time.perf_counter() - t0, first, count


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--records", type=int, default=1_000_000)
    a = ap.parse_args()
    path = Path(a.dir) / f"small-{a.records}.tfrecord"
    if not path.exists():
        from bench.bench_engine import make_small

        Path(a.dir).mkdir(parents=True, exist_ok=True)
        make_small(path, a.records)
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass
    print(f"{a.records:,} small Examples ({path.stat().st_size / 1e6:.0f} MB), each job in a child process:")
    for expr in ("label == 3 and len(x) > 9", 'id contains "00042" or not label'):
        total, first, n = run(FilterRequest(paths=(str(path),), expr=expr))
        ok = total < 10
        print(
            f"  filter {expr!r:<38} {total:5.1f} s ({a.records / total / 1e3:.0f} k rec/s), first matches "
            f"after {first or 0:.2f} s, {n:,} matches   target: seconds  {'PASS' if ok else 'MISS'}"
        )
    sub = Path(a.dir) / "small-200000.tfrecord"
    if not sub.exists():
        from bench.bench_engine import make_small

        make_small(sub, 200_000)
    import os
    import tempfile

    os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tfrview-bench-cache-")  # nothing stored: it runs
    total, _, _ = run(AnalyzeRequest(paths=(str(sub),)))
    print(
        f"  analysis (QA checks and summary in one pass) over 200,000 small Examples   {total:5.1f} s "
        f"({200_000 / total / 1e3:.0f} k rec/s; index and CRC pass included)"
    )


if __name__ == "__main__":
    main()
