"""Training-format exports' throughput (issue 23): COCO and YOLO of the 2 GB file of ~1080p JPEG
Object Detection records, through the CLI's path (framing and verify, the one reading, the images
copied as stored). Issue 23 sets no target for exports; the rewrite's (>= 300 MB/s) is printed
beside them for scale.

    python bench/bench_exports.py [--dir /tmp/tfrview-bench] [--size-mb 2048] [--runs 1]
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

from bench.timing import best  # noqa: E402
from tfrview.core.output.formats import ExportFormat, dataset_items, export_annotated  # noqa: E402
from tfrview.core.tfrecord.dataset import Dataset  # noqa: E402

REWRITE_TARGET_MB_S = 300  # issue 23's rewrite target, for scale only


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/tfrview-bench")
    ap.add_argument("--size-mb", type=int, default=2048, help="the JPEG file's size (2048: the 2 GB file)")
    ap.add_argument("--runs", type=int, default=1)
    a = ap.parse_args()
    name = "jpeg-2GB.tfrecord" if a.size_mb == 2048 else f"jpeg-{a.size_mb}MB.tfrecord"
    path = Path(a.dir) / name
    if not path.exists():
        from bench.bench_gui import make_jpeg_file

        print(f"making {path} ...", flush=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        make_jpeg_file(path, a.size_mb << 20)
    size = path.stat().st_size
    print(f"{path.name}: {size / 1e6:,.0f} MB, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    out_root = Path(tempfile.mkdtemp(prefix="tfrview-bench-exports-", dir=a.dir))
    try:
        for fmt in (ExportFormat.COCO, ExportFormat.YOLO):
            out = out_root / fmt.value
            box = {}

            def once(fmt=fmt, out=out, box=box):
                shutil.rmtree(out, ignore_errors=True)
                with Dataset.open([str(path)]) as ds:
                    ds.frame_and_verify()
                    box["r"] = export_annotated(fmt, dataset_items(ds, range(ds.count)), out, inputs=[path])

            s = best(once, a.runs)
            n = box["r"].written
            print(
                f"  {fmt.value:<5} {size / 1e6 / s:7.0f} MB/s  {n / s:7.0f} images/s  ({n:,} images, {s:.1f} s; "
                f"framing and CRCs included)   no target (rewrite's: >= {REWRITE_TARGET_MB_S} MB/s)"
            )
    finally:
        shutil.rmtree(out_root, ignore_errors=True)


if __name__ == "__main__":
    main()
