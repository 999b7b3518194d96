"""The label rules across the dataset (issue 21, item 4) over a million boxes: each figure beside
its target, on this machine's cores.

    python bench/bench_labelrules.py [--records 100000] [--boxes 10] [--files 8]

Fact tables as the pass stores them (the Object Detection API's box lists, class texts and ids,
image sizes, the box spec in the schema metadata), `--files` of them, `--records` records in all
with `--boxes` boxes each at random places and sizes, 20 classes of skewed sizes; the step runs over
them as after the merge (`labelrules.step`), its parts timed apart: reading the boxes out of the
tables (`gather`), the box rules, the pairs within records, the class rules. The peak of Python's
allocations (tracemalloc) is printed beside the boxes' count: arrays, never an object a box.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

TARGET_SECONDS = 5.0  # the whole step over 1,000,000 boxes (as grouping 1,000,000 hashes, issue 21)
TARGET_BYTES_A_BOX = 200  # peak Python allocations a box: arrays (a Python object a box costs more)


def fact_table(first: int, records: int, boxes: int, rng) -> pa.Table:
    n = records * boxes
    w = rng.uniform(0.02, 0.3, n).astype(np.float32)
    h = (w * rng.uniform(0.5, 2.0, n)).astype(np.float32)
    x0 = (rng.random(n) * (1 - w)).astype(np.float32)
    y0 = (rng.random(n) * np.clip(1 - h, 0, None)).astype(np.float32)
    cls = np.minimum(rng.zipf(1.5, n), 20).astype(np.int64)
    offsets = pa.array(np.arange(0, n + 1, boxes, dtype=np.int32))
    names = pa.array([f"class{i}" for i in range(21)]).take(pa.array(cls))
    cols = {
        "record": pa.array(np.arange(first, first + records, dtype=np.int64)),
        "image_width": pa.array(np.full(records, 640, dtype=np.int64)),
        "image_height": pa.array(np.full(records, 480, dtype=np.int64)),
    }
    p = "image/object/"
    for key, v in (("bbox/xmin", x0), ("bbox/ymin", y0), ("bbox/xmax", x0 + w), ("bbox/ymax", y0 + h)):
        cols[p + key] = pa.ListArray.from_arrays(offsets, pa.array(v))
        cols[p + key + "#len"] = pa.array(np.full(records, boxes, dtype=np.int64))
    cols[p + "class/label"] = pa.ListArray.from_arrays(offsets, pa.array(cls))
    cols[p + "class/text"] = pa.ListArray.from_arrays(offsets, names)
    return od_table(cols, p)


def od_table(cols: dict, p: str) -> pa.Table:
    """A fact table of these columns whose stored box spec is the OD API's keys under prefix `p`."""
    from tfrview.core.analysis.facts import BOX_META
    from tfrview.core.records.reading import BoxConvention, BoxSpec

    spec = BoxSpec(
        BoxConvention.OD_NORMALIZED,
        tuple(p + "bbox/" + c for c in ("xmin", "ymin", "xmax", "ymax")),
        p + "class/text",
        p + "class/label",
    )
    return pa.table(cols, metadata={BOX_META: spec.to_json().encode()})


def shard(table: pa.Table) -> SimpleNamespace:
    """A merged file's result as the dataset step reads it: its fact table and its records."""
    from tfrview.core.analysis.results import picked

    deep = SimpleNamespace(
        facts=table, parts=None, stored_key=None, read_facts=lambda pick=None: picked(table, pick)
    )
    return SimpleNamespace(deep=deep, offsets=np.zeros(table.num_rows, np.uint64))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=100_000)
    ap.add_argument("--boxes", type=int, default=10)
    ap.add_argument("--files", type=int, default=8)
    args = ap.parse_args()

    from tfrview.core.analysis import labelrules
    from tfrview.core.analysis.datasetqa import DatasetQA
    from tfrview.core.analysis.rules import DatasetRules
    from tfrview.core.tfrecord.groups import DatasetGroup

    rng = np.random.default_rng(0)
    per = args.records // args.files

    shards = [shard(fact_table(0, per, args.boxes, rng)) for _ in range(args.files)]
    half = args.files // 2
    analysis = SimpleNamespace(
        shards=shards,
        groups=[
            DatasetGroup("train-*", tuple(range(half))),
            DatasetGroup("val-*", tuple(range(half, args.files))),
        ],
        splits=["train"] * half + ["validation"] * (args.files - half),
    )
    n_boxes = per * args.files * args.boxes
    lr = DatasetRules().labels
    print(
        f"{os.cpu_count()} cores; {args.files} fact tables, {per * args.files:,} records, {n_boxes:,} boxes"
    )

    tracemalloc.start()
    t0 = time.perf_counter()
    got = labelrules.gather(analysis)
    t1 = time.perf_counter()
    tiny = labelrules.tiny_boxes(got, lr)
    out = labelrules.size_outliers(got, lr, labelrules._file_groups(analysis))
    t2 = time.perf_counter()
    pairs = labelrules.box_pairs(got, lr)
    t3 = time.perf_counter()
    classes = labelrules.imbalance(got, lr, labelrules._file_groups(analysis), analysis.splits, analysis)
    table = labelrules.class_table(got, analysis.splits)
    t4 = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    whole = time.perf_counter()
    found = labelrules.step(analysis, DatasetRules(), DatasetQA())
    whole = time.perf_counter() - whole

    print(f"gather (boxes out of the fact tables) {t1 - t0:6.2f} s")
    print(f"tiny boxes and size outliers          {t2 - t1:6.2f} s  ({len(tiny):,} + {len(out):,} findings)")
    print(f"pairs within records (IoU)            {t3 - t2:6.2f} s  ({len(pairs):,} findings)")
    print(
        f"class balance and the class table     {t4 - t3:6.2f} s  ({len(classes):,} findings, {len(table['rows'])} classes)"
    )
    scale = 1_000_000 / n_boxes
    print(
        f"whole step: {whole:.2f} s ({len(found):,} findings); at 1,000,000 boxes ~{whole * scale:.2f} s, "
        f"target <= {TARGET_SECONDS:g} s: {'OK' if whole * scale <= TARGET_SECONDS else 'MISSED'}"
    )
    print(
        f"peak Python allocations {peak / 2**20:.0f} MB, {peak / n_boxes:.0f} bytes a box, "
        f"target <= {TARGET_BYTES_A_BOX}: {'OK' if peak / n_boxes <= TARGET_BYTES_A_BOX else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
