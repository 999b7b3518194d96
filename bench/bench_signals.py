"""The image signals alone (issue 21): time per image of `records.imagesignals` over the same 500
decoded JPEG drafts, each figure beside the core count. A per-image figure of one process in its CPU time (process_time), best of
5 rounds: robust to a loaded machine, unlike the deep pass's (bench/bench_analysis.py --signals).

    python bench/bench_signals.py [--images 500] [--profile] [--pass-share]

--pass-share: also the share the signals add to the deep pass's per-record work on one of
bench_analysis.py's JPEG shards (decode, read_record, look_and_check; without the signals the byte
digests the pass then keeps, as analysis.shard does), in this process's CPU time, best of 3
interleaved: the figure of `bench_analysis.py --signals` without its start-up, framing and facts,
and robust to a loaded machine where that one's wall-clock time is not.

The drafts are 640x480 JPEGs (quality 85) decoded at 1/8 scale as the pass decodes them: smooth
colour fields of random hue with grain and a few flat boxes, each image its own.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from tfrview.core.analysis.checks import _signals_of  # noqa: E402
from tfrview.core.records import imagesignals  # noqa: E402


def line(name: str, value: str, target: str = "") -> None:
    print(f"{name:<58} {value:>16}   {target}", flush=True)


def drafts(n: int, seed: int = 5) -> list[Image.Image]:
    """n distinct 640x480 JPEGs, loaded as the pass loads them (draft at 1/8)."""
    r = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        small = r.random((4, 5, 3)) * 255
        field = Image.fromarray(small.astype(np.uint8)).resize((640, 480), Image.Resampling.BICUBIC)
        a = np.asarray(field).astype(np.float32) + r.normal(0, 12, (480, 640, 1)).astype(np.float32)
        for _ in range(3):
            x, y, s = r.integers(0, 560), r.integers(0, 400), r.integers(20, 80)
            a[y : y + s, x : x + s] = r.integers(0, 256, 3)
        b = io.BytesIO()
        Image.fromarray(a.clip(0, 255).astype(np.uint8)).save(b, "JPEG", quality=85)
        im = Image.open(io.BytesIO(b.getvalue()))
        im.draft(im.mode, (80, 60))
        im.load()
        out.append(im)
    return out


def best_of(fn, items, rounds: int = 5) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for x in items:
            fn(x)
        best = min(best, time.process_time() - t0)
    return best / len(items)


def pass_share(rounds: int = 3) -> None:
    from bench.bench_analysis import make_jpeg_shards
    from tfrview.core.analysis.checks import image_digests, look_and_check
    from tfrview.core.records.payload import decode
    from tfrview.core.records.reading import ReadingContext, read_record
    from tfrview.core.tfrecord.framing import OVERHEAD

    path = make_jpeg_shards(Path("/tmp/tfrview-bench") / "jpeg-32x1000", 32, 1000)[0]
    data, records, at = path.read_bytes(), [], 0
    while at + OVERHEAD <= len(data):
        n = int.from_bytes(data[at : at + 8], "little")
        records.append(data[at + 12 : at + 12 + n])
        at += n + OVERHEAD
    ctx = ReadingContext(None)

    def run(signals: bool) -> float:
        t0 = time.process_time()
        for n, rec in enumerate(records):
            p = decode(rec)
            r = read_record(p, ctx)
            _, look = look_and_check(
                p, (0, n), None, None, None, od_dataset=False, reading=r, signals=signals
            )
            if look.signals is None:
                image_digests(p.features)
        return time.process_time() - t0

    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for on in (False, True):
            times[on].append(run(on))
    without, with_s = min(times[False]) / len(records), min(times[True]) / len(records)
    line(f"per-record pass work, {len(records):,} JPEG records, no signals", f"{without * 1e3:.3f} ms")
    line("  with signals", f"{with_s * 1e3:.3f} ms")
    line("  the signals add", f"{(with_s / without - 1) * 100:+.1f} %", "target <= 15 % (of the whole pass)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--images", type=int, default=500)
    ap.add_argument("--profile", action="store_true", help="a cProfile of the signals of every draft")
    ap.add_argument("--pass-share", action="store_true", help="their share of the pass's per-record work")
    a = ap.parse_args()
    ims = drafts(a.images)
    print(
        f"cores: {os.cpu_count()}   drafts: {len(ims)} of 640x480 JPEGs "
        f"({ims[0].size[0]}x{ims[0].size[1]} {ims[0].mode})"
    )
    full = (640, 480)
    arrays = [(np.asarray(im), np.asarray(im.convert("L"))) for im in ims]

    def of_arrays(a):
        return imagesignals.signals(a[0], full, a[1])

    per = best_of(lambda im: _signals_of(im, full), ims)
    line("signals of a loaded draft (checks._signals_of)", f"{per * 1e3:.3f} ms")
    per = best_of(of_arrays, arrays)
    line("  of its arrays (imagesignals.signals)", f"{per * 1e3:.3f} ms")
    if a.profile:
        import cProfile
        import pstats

        with cProfile.Profile() as prof:
            for p in arrays:
                of_arrays(p)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    if a.pass_share:
        pass_share()


if __name__ == "__main__":
    main()
