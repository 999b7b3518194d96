"""Grouping a dataset's image hashes into copies and near copies (issue 21): each figure beside its
target, on this machine's cores.

    python bench/bench_duplicates.py [--images 1000000] [--near-distance 12]

The words are random 64-bit DCT and difference hashes (the spread a large dataset of distinct
images has), with planted copies: 1 % exact (same pixel word) and 1 % near (1 to `near_distance`
bits flipped), so the groups found can be checked against the planted ones.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from tfrview.core.analysis.duplicates import group_hashes, plan  # noqa: E402

TARGET_S = 5.0


def line(name: str, value: str, target: str, ok: bool | None) -> None:
    mark = "" if ok is None else ("PASS" if ok else "MISS")
    print(f"{name:<58} {value:>16}   target {target:<22} {mark}", flush=True)


def planted(n: int, distance: int, seed: int = 0):
    r = np.random.default_rng(seed)
    pixel = r.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    phash = r.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    dhash = r.integers(-(2**63), 2**63 - 1, n, dtype=np.int64)
    k = n // 100
    src, exact, near = r.choice(n, 3 * k, replace=False).reshape(3, k)
    pixel[exact], phash[exact], dhash[exact] = pixel[src], phash[src], dhash[src]
    bits = r.integers(1, distance + 1, k)
    flips = np.zeros(k, np.uint64)
    for i, d in enumerate(bits):
        flips[i] = np.bitwise_or.reduce(np.uint64(1) << r.choice(64, d, replace=False).astype(np.uint64))
    phash[near] = phash[src] ^ flips.view(np.int64)
    dhash[near] = dhash[src] ^ (flips.view(np.int64) >> 3)
    return pixel, phash, dhash, src, exact, near, bits


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=1_000_000)
    ap.add_argument("--near-distance", type=int, default=12)
    ap.add_argument("--confirm-distance", type=int, default=22)
    a = ap.parse_args()
    print(f"cores: {os.cpu_count()}   images: {a.images:,}   near distance: {a.near_distance}")
    pixel, phash, dhash, src, exact, near, bits = planted(a.images, a.near_distance)
    t0 = time.perf_counter()
    g = group_hashes(pixel, phash, dhash, a.near_distance, a.confirm_distance)
    dt = time.perf_counter() - t0
    index = plan(a.images, a.near_distance)
    line(f"group {a.images:,} hashes (exact and near)", f"{dt:.2f} s", f"<= {TARGET_S:.0f} s", dt <= TARGET_S)
    found_exact = float(np.mean(g.group[exact] == g.group[src]) * 100)
    line("planted exact copies found", f"{found_exact:.1f} %", "100 %", found_exact == 100)
    sure = bits <= index.certain
    same = (g.group[near] == g.group[src]) & (g.group[src] >= 0)
    line(
        f"planted near copies within {index.certain} bits (certain) found",
        f"{same[sure].mean() * 100:.1f} %",
        "100 %",
        bool(same[sure].all()),
    )
    if (~sure).any():
        line(
            f"planted near copies {index.certain + 1}-{a.near_distance} bits apart found",
            f"{same[~sure].mean() * 100:.1f} %",
            "(by chance of agreeing bytes)",
            None,
        )
    planted_members = len(np.unique(np.concatenate([src, exact, near])))
    extra = int((g.group >= 0).sum()) - planted_members
    line("images grouped that were not planted", f"{max(extra, 0):,}", "0", extra <= 0)


if __name__ == "__main__":
    main()
