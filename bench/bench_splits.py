"""Splits over a fact table of 1,000,000 records (800,000 train, 100,000 validation, 100,000 test):
the filter on `split` (vfilter, as the window's filter job runs it over the stored facts), one
split's rows for a plot (`plots.of_split`) and the splits overlaid (`plots.overlay`).

    python bench/bench_splits.py [--records 1000000] [--runs 5]

Targets: the filter's "1,000,000 records in tens of ms" (analysis.vfilter): a split compared once
per word of its dictionary, never per record: <= 100 ms; one split's rows <= 100 ms; a histogram
of each of three splits <= 500 ms.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pyarrow as pa

from bench.timing import best
from tfrview.core.analysis.filterexpr import parse
from tfrview.core.analysis.plots import of_split, overlay
from tfrview.core.analysis.vfilter import match


def table(n: int) -> pa.Table:
    sizes = [n * 8 // 10, n // 10, n - n * 8 // 10 - n // 10]
    codes = np.repeat(np.arange(3, dtype=np.int32), sizes)
    rng = np.random.default_rng(0)
    return pa.table(
        {
            "n": np.arange(n, dtype=np.int64),
            "size": np.full(n, 40, np.int64),
            "label": rng.integers(0, 10, n),
            "split": pa.DictionaryArray.from_arrays(
                pa.array(codes), pa.array(["train", "validation", "test"])
            ),
        }
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    t = table(a.records)
    print(f"{a.records:,} records, {os.cpu_count()} cores, best of {a.runs}")
    for what, fn, target in (
        ('filter split == "val"', lambda: match(t, parse('split == "val"')), 100),
        (
            'filter split != "train" and size > 3',
            lambda: match(t, parse('split != "train" and size > 3')),
            100,
        ),
        ("one split's rows (plots.of_split)", lambda: of_split(t, "validation"), 100),
        ("label histogram of each split (plots.overlay)", lambda: overlay(t, "label", True), 500),
    ):
        ms = best(fn, a.runs) * 1000
        print(f"  {what:<48} {ms:8.1f} ms   target <= {target} ms   {'OK' if ms <= target else 'MISSED'}")


if __name__ == "__main__":
    main()
