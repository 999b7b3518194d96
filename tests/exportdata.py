"""Small detection records for the export tests: JPEG (or raw pixel) Examples with boxes in the
Object Detection API's normalised corners, pixel corners or TFDS's [ymin, xmin, ymax, xmax]."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from tfrview.core.output.writer import write_records
from tfrview.core.records.proto import example_pb2

NAMES = {1: "cat", 2: "dog", 3: "bird"}


def jpeg(w: int, h: int, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    buf = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, (h, w, 3), dtype=np.uint8)).save(buf, "JPEG", quality=70)
    return buf.getvalue()


def example(features: dict) -> bytes:
    ex = example_pb2.Example()
    for k, v in features.items():
        f = ex.features.feature[k]
        if isinstance(v, bytes):
            v = [v]
        if isinstance(v, int | float | str):
            v = [v]
        v = list(v)
        if v and isinstance(v[0], str):
            f.bytes_list.value.extend(x.encode() for x in v)
        elif v and isinstance(v[0], bytes):
            f.bytes_list.value.extend(v)
        elif v and isinstance(v[0], float):
            f.float_list.value.extend(v)
        else:
            f.int64_list.value.extend(int(x) for x in v)
    return ex.SerializeToString()


def boxes_of(i: int) -> tuple[np.ndarray, list[int]]:
    """Record i's normalised corner boxes (x0, y0, x1, y1) and class ids: 0 to 3 boxes."""
    rng = np.random.default_rng(100 + i)
    n = i % 4
    x0 = rng.uniform(0, 0.5, n)
    y0 = rng.uniform(0, 0.5, n)
    b = np.stack([x0, y0, x0 + rng.uniform(0.1, 0.5, n), y0 + rng.uniform(0.1, 0.5, n)], axis=1)
    b = b.astype(np.float32).astype(np.float64)  # as the record holds them
    return b, [1 + (i + k) % 3 for k in range(n)]


def od_record(i: int, w: int = 64, h: int = 48, filename: bool = True) -> bytes:
    b, ids = boxes_of(i)
    feats = {
        "image/encoded": jpeg(w, h, i),
        "image/format": "jpeg",
        "image/width": w,
        "image/height": h,
        "image/source_id": f"src-{i}",
        "image/object/bbox/xmin": b[:, 0].tolist() or [],
        "image/object/bbox/ymin": b[:, 1].tolist(),
        "image/object/bbox/xmax": b[:, 2].tolist(),
        "image/object/bbox/ymax": b[:, 3].tolist(),
        "image/object/class/label": ids,
        "image/object/class/text": [NAMES[c] for c in ids],
    }
    if filename:
        feats["image/filename"] = f"img_{i:03d}.jpg"
    ex = example_pb2.Example()
    ex.ParseFromString(example(feats))
    for k in (
        "image/object/bbox/xmin",
        "image/object/bbox/ymin",
        "image/object/bbox/xmax",
        "image/object/bbox/ymax",
    ):
        ex.features.feature[k].float_list.SetInParent()  # an empty list stays a float list
    for k in ("image/object/class/label",):
        ex.features.feature[k].int64_list.SetInParent()
    for k in ("image/object/class/text",):
        ex.features.feature[k].bytes_list.SetInParent()
    return ex.SerializeToString()


def write_od(path: Path, n: int, **kw) -> Path:
    write_records(path, [od_record(i, **kw) for i in range(n)])
    return path


def label_map_text() -> str:
    return "".join(f'item {{\n  id: {i}\n  name: "{n}"\n}}\n' for i, n in NAMES.items())
