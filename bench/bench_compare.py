"""`compare` of two 1,000,000-record splits from their stored facts (issue 21: target <= 1 s).

    python bench/bench_compare.py [--records 1000000] [--files 8] [--rounds 3]

Each split is `--files` fact tables as the deep pass stores them (a class-id list, a class text, a
float score, an int id, four box corner lists of one box a record, image width and height), the
second split shifted (another class mix, scores moved). The figure is `compare.compare` over the
two sides' tables; reading the tables back from Parquet (as the store keeps them) and joining
them into sides (`side_of`) are printed apart, beside no target (the issue's target counts the
comparison of facts in hand). The fastest of `--rounds` is taken; its CPU time is printed too (the
comparison runs on one thread, so on a busy machine the CPU time is what an idle core would take).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

TARGET_S = 1.0


def table(n: int, rng, shifted: bool) -> pa.Table:
    classes = rng.choice(5, n, p=[0.4, 0.3, 0.1, 0.1, 0.1] if shifted else [0.2] * 5)
    names = np.array(["cat", "dog", "car", "bus", "tree"])[classes]
    x0 = rng.random(n) * 0.5
    y0 = rng.random(n) * 0.5
    w = rng.random(n) * (0.5 if shifted else 0.4) + 0.05
    one = np.arange(n + 1, dtype=np.int32)

    def lists(v):
        return pa.ListArray.from_arrays(pa.array(one), pa.array(v.astype(np.float32)))

    return pa.table(
        {
            "record": pa.array(np.arange(n, dtype=np.int64)),
            "kind": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int8)), pa.array(["example"])),
            "image_width": pa.array(rng.choice([640, 800], n)),
            "image_height": pa.array(rng.choice([480, 600], n)),
            "image/object/bbox/xmin": lists(x0),
            "image/object/bbox/xmax": lists(x0 + w),
            "image/object/bbox/ymin": lists(y0),
            "image/object/bbox/ymax": lists(y0 + w),
            "image/object/class/label": pa.ListArray.from_arrays(pa.array(one), pa.array(classes + 1)),
            "image/object/class/text": pa.ListArray.from_arrays(pa.array(one), pa.array(names)),
            "score": pa.array(rng.normal(0.3 if shifted else 0.0, 1.0, n).astype(np.float32)),
            "id": pa.array(rng.integers(0, 10**9, n)),
        }
    )


class _R:
    """A stored deep result as `side_of` reads it: offsets, a summary, the schema's counts and the
    fact table."""

    def __init__(self, t: pa.Table) -> None:
        from collections import Counter

        from tfrview.core.analysis.checks import Schema
        from tfrview.core.analysis.datasummary import DatasetSummary
        from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST

        schema = Schema(records=t.num_rows)
        for f in t.schema:
            if f.name in ("record", "kind", "image_width", "image_height"):
                continue
            v = f.type.value_type if pa.types.is_list(f.type) else f.type
            word = (
                INT64_LIST
                if pa.types.is_integer(v)
                else FLOAT_LIST
                if pa.types.is_floating(v)
                else BYTES_LIST
            )
            schema.presence[f.name] = t.num_rows
            schema.types[f.name] = Counter({word: t.num_rows})
        self.offsets = np.zeros(t.num_rows, np.uint64)
        self.deep = type("Deep", (), {"facts": t, "summary": DatasetSummary(), "schema": schema})()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--files", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from tfrview.core.analysis.compare import compare, side_of

    rng = np.random.default_rng(0)
    per = args.records // args.files
    with tempfile.TemporaryDirectory() as d:
        for side in ("a", "b"):
            for k in range(args.files):
                pq.write_table(table(per, rng, side == "b"), Path(d) / f"{side}{k}.parquet")
        best_read = best_side = best = best_cpu = float("inf")
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            tabs = {s: [pq.read_table(Path(d) / f"{s}{k}.parquet") for k in range(args.files)] for s in "ab"}
            t1 = time.perf_counter()
            a = side_of("train", [_R(t) for t in tabs["a"]])
            b = side_of("validation", [_R(t) for t in tabs["b"]])
            a.class_keys = b.class_keys = ("image/object/class/text",)
            t2, c2 = time.perf_counter(), time.process_time()
            c = compare(a, b)
            t3 = time.perf_counter()
            best_cpu = min(best_cpu, time.process_time() - c2)
            best_read, best_side, best = min(best_read, t1 - t0), min(best_side, t2 - t1), min(best, t3 - t2)
    print(f"cores: {os.cpu_count()}")
    print(
        f"records: {per * args.files:,} a side in {args.files} files a side; {len(c.features)} features compared"
    )
    print(f"  drifted: {', '.join(f.key for f in c.drifted)}")
    ok = "OK" if best <= TARGET_S else "MISSED"
    print(f"compare of the two splits' facts: {best:.3f} s (target <= {TARGET_S:.1f} s) {ok}")
    load = os.getloadavg()[0]
    print(f"  its CPU time: {best_cpu:.3f} s (one thread: an idle core's wall time); load average {load:.1f}")
    print(
        f"  apart, no target: facts read from Parquet {best_read:.3f} s, joined into sides {best_side:.3f} s"
    )


if __name__ == "__main__":
    main()
