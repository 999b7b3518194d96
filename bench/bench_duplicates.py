"""Grouping a dataset's image hashes into copies and near copies (issue 21): each figure beside its
target, on this machine's cores.

    python bench/bench_duplicates.py [--images 1000000] [--near-distance 12]
    python bench/bench_duplicates.py --planted 3000

--planted N: false pairs on real images instead (issue 21: <= 0.5 % of images): N JPEGs of the
tests' planted scenes (tests/core/test_duplicates.py: fields of one palette with red boxes), a fifth
of them near copies of others (re-encoded, resized to 50-90 %, cropped <= 5 %, brightness <= 10 %, in
turn), hashed as the pass hashes them (checks.inspect_image's draft) and grouped with the default
rules; an image grouped with one it is no copy of is a false image.

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


def planted_images(n: int, seed: int = 7):
    """(signals of n images, each image's original's index): originals first, then copies."""

    from tests.core.test_duplicates import KINDS, jpeg, near_copy, scene
    from tfrview.core.analysis.checks import inspect_image
    from tfrview.core.records.images import ImageRef

    r = np.random.default_rng(seed)
    copies = n // 5
    originals = n - copies
    ref = ImageRef("image/encoded", 0, "encoded", "JPEG")
    sigs, source = [], []
    scenes = {}
    for i in range(originals):
        a = scene(i)
        if i < copies:
            scenes[i] = a
        sigs.append(inspect_image(jpeg(a), ref, True).signals)
        source.append(i)
    for i in range(copies):
        sigs.append(inspect_image(near_copy(scenes[i], KINDS[i % len(KINDS)], r), ref, True).signals)
        source.append(i)
    return sigs, np.array(source)


def false_pairs(n: int, near_distance: int) -> None:
    import inspect

    from tfrview.core.analysis.rules import DuplicateRules

    rules = DuplicateRules()
    t0 = time.perf_counter()
    sigs, source = planted_images(n)
    made = time.perf_counter() - t0
    print(
        f"cores: {os.cpu_count()}   planted images: {n:,} ({len(source) - len(set(source.tolist())):,} near copies), made and hashed in {made:.1f} s"
    )
    words = {c: np.array([getattr(s, c) for s in sigs], np.int64) for c in ("pixel_hash", "phash", "dhash")}
    extra = {}
    if "colour" in inspect.signature(group_hashes).parameters:  # the colour confirmation (issue 21)
        extra = {
            "colour": np.array([[s.colour_top, s.colour_bottom] for s in sigs], np.int64),
            "colour_steps": rules.colour_distance,
        }
    g = group_hashes(
        words["pixel_hash"],
        words["phash"],
        words["dhash"],
        near_distance,
        rules.confirm_distance,
        True,
        **extra,
    )
    copies = np.flatnonzero(np.bincount(source)[source] > 1)
    found = float(
        np.mean([g.group[i] >= 0 and (g.group[source == source[i]] == g.group[i]).all() for i in copies])
        * 100
    )
    line("planted near copies grouped with their original", f"{found:.1f} %", "100 %", found == 100)
    from tests.core.test_duplicates import KINDS
    from tfrview.core.records.imagesignals import hamming

    originals = n - n // 5
    for j in range(originals, n):  # each missed copy: its kind and how far its hashes are
        i = source[j]
        if g.group[j] < 0 or g.group[j] != g.group[i]:
            far = f"phash {int(hamming(words['phash'][i], words['phash'][j]))} bits, dhash {int(hamming(words['dhash'][i], words['dhash'][j]))}"
            if extra:
                from tfrview.core.records.imagesignals import colour_distance

                c = extra["colour"]
                far += f", colour {int(colour_distance(c[i : i + 1], c[j : j + 1])[0])} steps"
            print(f"  missed: a {KINDS[(j - originals) % len(KINDS)]} copy of image {i}: {far}")
    false = 0
    for i in np.flatnonzero(g.group >= 0):
        false += bool((source[g.group == g.group[i]] != source[i]).any())
    share = false / n * 100
    line("images grouped with one they are no copy of", f"{false} ({share:.2f} %)", "<= 0.5 %", share <= 0.5)
    line("  confirmed by colour too", "yes" if extra else "no (grey hashes only)", "", None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=1_000_000)
    ap.add_argument("--near-distance", type=int, default=12)
    ap.add_argument("--confirm-distance", type=int, default=22)
    ap.add_argument("--planted", type=int, default=0, help="false pairs on N planted real images instead")
    a = ap.parse_args()
    if a.planted:
        false_pairs(a.planted, a.near_distance)
        return
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
