"""Gallery figure against the QA issue's target: thumbnails per second of 1080p JPEG records,
made the way the gallery makes them (two worker threads, JPEG draft decode, boxes drawn).

    python bench/bench_gallery.py [--dir /tmp/tfrview-bench] [--count 600]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tfrview.core.records.thumbs import make_thumbnail  # noqa: E402
from tfrview.core.tfrecord.dataset import Dataset  # noqa: E402


def run(ds: Dataset, numbers: list[int], threads: int) -> float:
    lock = threading.Lock()
    todo = list(numbers)

    def work() -> None:
        while True:
            with lock:
                if not todo:
                    return
                n = todo.pop()
            t = make_thumbnail(ds.read(n), 160, cell=(160, 120))
            assert t.pixels is not None

    ts = [threading.Thread(target=work) for _ in range(threads)]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return len(numbers) / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--count", type=int, default=600)
    a = ap.parse_args()
    path = Path(a.dir) / "jpeg-2GB.tfrecord"
    if not path.exists():
        from bench.bench_gui import make_jpeg_file

        print(f"making {path} ...", flush=True)
        make_jpeg_file(path, 2 << 30)
    with Dataset.open([str(path)]) as ds:
        for _ in ds.scan():
            pass
        numbers = list(range(min(a.count, ds.count)))
        for n in numbers[:50]:  # warm the page cache for what is measured
            ds.read(n)
        one = run(ds, numbers[: a.count // 3], 1)
        two = run(ds, numbers, 2)
    print(f"1080p JPEG thumbnails (160x120, boxes drawn), {len(numbers)} records:")
    print(f"  1 thread   {one:7.0f} thumbnails/s")
    print(f"  2 threads  {two:7.0f} thumbnails/s   target >= 100/s  {'PASS' if two >= 100 else 'MISS'}")


if __name__ == "__main__":
    main()
