"""Planted detection datasets for the window's predictions tests (issue 24): records with an image,
ground-truth boxes and the OD API's detection keys, whose outcomes are known by construction, and
COCO results files joined to records without detections."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image

from tests.core.test_payload import make_example
from tfrview.core.output.writer import write_records

OD = "image/object/bbox/"
DET = "image/detection/bbox/"
NAMES = {1: "cat", 2: "dog", 3: "bird"}
W, H = 320, 240


def _png(w: int = W, h: int = H, shade: int = 90) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (shade, shade, shade + 10)).save(buf, "PNG")
    return buf.getvalue()


def planted_record(i: int, detections: bool = True, png: bytes | None = None) -> bytes:
    """Record i: two ground-truth boxes, a cat left and a dog right. Its detections: the cat found
    (score 0.9), a false positive bird at the top right (score 0.6 + (i % 4) / 10, so the most
    confident false positive differs by record), a faint dog under 0.5 (hidden at the default
    threshold) that misses the dog box, so the dog is missed at 0.5."""
    feats: dict = {
        "image/encoded": [png or _png()],
        "image/format": [b"png"],
        "image/width": [W],
        "image/height": [H],
        "image/source_id": [f"img{i:05d}".encode()],
        "image/filename": [f"img{i:05d}.png".encode()],
        OD + "xmin": [0.05, 0.55],
        OD + "ymin": [0.30, 0.40],
        OD + "xmax": [0.40, 0.95],
        OD + "ymax": [0.90, 0.95],
        "image/object/class/label": [1, 2],
        "image/object/class/text": [b"cat", b"dog"],
    }
    if detections:
        feats.update(
            {
                DET + "xmin": [0.06, 0.70, 0.10],
                DET + "ymin": [0.31, 0.02, 0.02],
                DET + "xmax": [0.41, 0.95, 0.20],
                DET + "ymax": [0.88, 0.20, 0.12],
                "image/detection/label": [1, 3, 2],
                "image/detection/score": [0.9, 0.6 + (i % 4) / 10, 0.3],
            }
        )
    return make_example(**feats)


def planted_file(path: Path, n: int = 8, detections: bool = True) -> Path:
    png = _png()
    write_records(path, (planted_record(i, detections, png) for i in range(n)))
    return path


def coco_results(path: Path, n: int = 8, unmatched: int = 0) -> Path:
    """A COCO results file for `planted_file(detections=False)`: per image the cat found and a
    false positive dog at the top right, joined by file name (`image_id` as the file's name);
    `unmatched` more results name images no record has."""
    out = []
    for i in range(n):
        name = f"img{i:05d}.png"
        out.append(
            {
                "image_id": name,
                "category_id": 1,
                "bbox": [0.06 * W, 0.31 * H, 0.35 * W, 0.57 * H],
                "score": 0.9,
            }
        )
        out.append(
            {
                "image_id": name,
                "category_id": 2,
                "bbox": [0.7 * W, 0.02 * H, 0.25 * W, 0.18 * H],
                "score": 0.8,
            }
        )
    for j in range(unmatched):
        out.append({"image_id": f"nowhere{j}.png", "category_id": 1, "bbox": [1, 1, 5, 5], "score": 0.5})
    path.write_text(json.dumps(out))
    return path


def big_file(path: Path, n: int = 10_000, seed: int = 0) -> Path:
    """n records of random boxes and detections (for looking at the window at scale)."""
    rng = np.random.default_rng(seed)
    pngs = [_png(160, 120, s) for s in (60, 110, 160)]

    def rec(i: int) -> bytes:
        g = int(rng.integers(1, 8))
        x0, y0 = rng.random(g) * 0.7, rng.random(g) * 0.7
        w, h = 0.1 + rng.random(g) * 0.25, 0.1 + rng.random(g) * 0.25
        cls = rng.integers(1, 4, g)
        keep = rng.random(g) < 0.8
        jit = rng.normal(0, 0.02, (g, 4))
        px0, py0 = (x0 + jit[:, 0])[keep], (y0 + jit[:, 1])[keep]
        px1, py1 = (x0 + w + jit[:, 2])[keep], (y0 + h + jit[:, 3])[keep]
        pcls = np.where(rng.random(keep.sum()) < 0.9, cls[keep], rng.integers(1, 4, keep.sum()))
        f = int(rng.integers(0, 3))
        fx, fy = rng.random(f) * 0.8, rng.random(f) * 0.8
        return make_example(
            **{
                "image/encoded": [pngs[i % 3]],
                "image/format": [b"png"],
                "image/source_id": [f"big{i:06d}".encode()],
                OD + "xmin": x0.tolist(),
                OD + "ymin": y0.tolist(),
                OD + "xmax": (x0 + w).tolist(),
                OD + "ymax": (y0 + h).tolist(),
                "image/object/class/label": cls.tolist(),
                DET + "xmin": [*px0.tolist(), *fx.tolist()] or [0.0],
                DET + "ymin": [*py0.tolist(), *fy.tolist()] or [0.0],
                DET + "xmax": [*px1.tolist(), *(fx + 0.15).tolist()] or [0.01],
                DET + "ymax": [*py1.tolist(), *(fy + 0.15).tolist()] or [0.01],
                "image/detection/label": [*pcls.tolist(), *rng.integers(1, 4, f).tolist()] or [1],
                "image/detection/score": (rng.random(int(keep.sum()) + f) * 0.6 + 0.4).tolist() or [0.01],
            }
        )

    write_records(path, (rec(i) for i in range(n)))
    return path
