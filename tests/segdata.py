"""A small segmentation dataset built in the test: images with DeepLab masks, one mask of another
size than its image, one holding class ids between the classes (a mask resized with interpolation),
and a label map beside it naming classes 1 and 2."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from tfrview.core.output.writer import write_records
from tfrview.demo import _example

SMALL = 3  # the record whose mask is 100×80 under a 200×160 image
BLURRED = 1  # the record whose mask holds interpolated ids


def _png(a: np.ndarray) -> bytes:
    b = io.BytesIO()
    Image.fromarray(a).save(b, "PNG")
    return b.getvalue()


def build(d: Path, records: int = 5, labels: list[int] | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    recs = []
    for i in range(records):
        m = np.zeros((160, 200), np.uint8)
        m[10:60, 10:90] = 1
        m[80:150, 100:190] = 2
        if i == BLURRED:
            m = np.array(
                Image.fromarray(m * 100).resize((50, 40), Image.BILINEAR).resize((200, 160), Image.BILINEAR)
            )
        if i == SMALL:
            m = m[:80, :100]
        feats = {
            "image/encoded": _png(np.full((160, 200, 3), 30 * i, np.uint8)),
            "image/format": "png",
            "image/segmentation/class/encoded": _png(m),
            "image/segmentation/class/format": "png",
        }
        if labels is not None:
            feats["label"] = [labels[i % len(labels)]]
        recs.append(_example(**feats).SerializeToString())
    path = d / "seg.tfrecord"
    write_records(path, recs)
    (d / "labels.pbtxt").write_text("item { id: 1 name: 'road' }\nitem { id: 2 name: 'car' }\n")
    return path
