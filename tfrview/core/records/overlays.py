"""Boxes and labels found in an Example, as frozen dataclasses in image pixel space.

Conventions recognised (detected from keys and value ranges, always reported):
- `od_normalized`: Object Detection API `.../bbox/{xmin,ymin,xmax,ymax}` in [0, 1];
- `pixel_corners`: the same four keys in pixels;
- `coco_xywh`: a `bbox` list of [x, y, width, height] in pixels (COCO);
- `tfds_yxyx`: a `bbox` list of normalized [ymin, xmin, ymax, xmax] (TensorFlow Datasets).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from tfrview.core.limits import MAX_BOXES_DRAWN
from tfrview.core.records.payload import BYTES_LIST, INT64_LIST, Feature

CONVENTIONS = {
    "od_normalized": "normalized xmin/ymin/xmax/ymax (Object Detection API)",
    "pixel_corners": "pixel xmin/ymin/xmax/ymax",
    "coco_xywh": "pixel [x, y, width, height] (COCO)",
    "tfds_yxyx": "normalized [ymin, xmin, ymax, xmax] (TFDS)",
}


@dataclass(frozen=True, slots=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float
    index: int
    class_id: int | None = None
    name: str | None = None

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return f"class {self.class_id}" if self.class_id is not None else f"box {self.index}"

    @property
    def color_key(self) -> str:
        return str(self.class_id) if self.class_id is not None else (self.name or "")


@dataclass(frozen=True, slots=True)
class BoxSpec:
    """Which keys hold boxes and how to read them (detected, or chosen by the person)."""

    convention: str
    keys: tuple[str, ...]  # 4 corner keys (xmin, ymin, xmax, ymax) or 1 list key
    class_text: str | None = None
    class_id: str | None = None


@dataclass(frozen=True)
class Overlay:
    spec: BoxSpec | None
    boxes: tuple[Box, ...] = ()  # the first MAX_BOXES_DRAWN boxes at most: see `total`
    caption: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    keypoints: tuple[tuple[float, float, int], ...] = ()  # (x, y) in pixels and the box they belong to
    total: int | None = None  # the record's boxes when more than `boxes` holds (a limit was hit)
    limit: str | None = None  # that limit, in words (also among `notes`)

    @property
    def convention_text(self) -> str:
        return CONVENTIONS.get(self.spec.convention, self.spec.convention) if self.spec else "no boxes found"

    @property
    def count(self) -> int:
        """Every box of the record, drawn or not."""
        return len(self.boxes) if self.total is None else self.total


_CORNERS = ("xmin", "ymin", "xmax", "ymax")
_LABEL_KEYS = (
    "label", "labels", "image/class/label", "image/label", "class", "category_id", "class_id",
    "label/id", "image/class/text", "label/text", "class_name", "category", "digit", "species", "target",
)  # fmt: skip


_last_spec: tuple = (None, None)  # (features, spec) of the last call: the analysis asks thrice a record


def detect_spec(features: dict[str, Feature]) -> BoxSpec | None:
    """Find the box keys in a record; None if it has no boxes. Which keys play which role depends
    only on the feature layout (keys and types), so that part is cached; the convention is then
    read from the values. The last answer is kept for the same (unchanged, still alive) features."""
    global _last_spec
    last = _last_spec  # one read: another thread may set it meanwhile
    if last[0] is features:
        return last[1]
    spec = _detect_spec(features)
    _last_spec = (features, spec)
    return spec


def _detect_spec(features: dict[str, Feature]) -> BoxSpec | None:
    layout = tuple((k, f.type) for k, f in features.items())
    # Remembered only for layouts of a usual size: 1,024 remembered layouts of 10,000 keys each
    # would hold 10 M tuples (185 MB for 100 records of 10,000 distinct keys).
    roles = _roles(layout) if len(layout) <= _ROLES_CACHED_KEYS else _roles.__wrapped__(layout)
    if roles is None:
        return None
    kind, keys, prefix, text, ids = roles
    if kind == "corners":
        vals = np.concatenate([np.asarray(features[k].values, dtype=np.float64) for k in keys])
        if prefix.endswith("image/object/bbox/"):
            conv = "od_normalized"  # normalized by the OD API's definition, even when a value is out of range
        else:
            conv = "od_normalized" if vals.size == 0 or np.nanmax(np.abs(vals)) <= 1.0001 else "pixel_corners"
        return BoxSpec(conv, keys, text, ids)
    f = features[keys[0]]
    if len(f.values) % 4 or not len(f.values):
        return None
    vals = np.asarray(f.values, dtype=np.float64)
    conv = "tfds_yxyx" if np.nanmax(np.abs(vals)) <= 1.0001 else "coco_xywh"
    return BoxSpec(conv, keys, text, ids)


_ROLES_CACHED_KEYS = 256


@lru_cache(maxsize=1024)
def _roles(layout: tuple[tuple[str, str], ...]):
    """("corners" | "list", box keys, prefix, class text key, class id key) for a feature layout."""
    types = dict(layout)
    by_prefix: dict[str, dict[str, str]] = {}
    for k, t in layout:
        if t == BYTES_LIST or not k.endswith(_CORNERS):  # one call rules out most keys
            continue
        for c in _CORNERS:
            for sep in ("/", "_", "."):
                if k.endswith(sep + c) or k == c:
                    by_prefix.setdefault(k[: len(k) - len(c)], {})[c] = k
    for prefix, corners in sorted(by_prefix.items(), key=lambda kv: ("bbox" not in kv[0], kv[0])):
        if len(corners) == 4:
            text, ids = _class_keys(types, prefix)
            return "corners", tuple(corners[c] for c in _CORNERS), prefix, text, ids
    for k, t in sorted(layout):
        last = k.rsplit("/", 1)[-1]
        if t != BYTES_LIST and last in ("bbox", "bboxes", "boxes"):
            text, ids = _class_keys(types, k[: len(k) - len(last)])
            return "list", (k,), k[: len(k) - len(last)], text, ids
    return None


def _class_keys(types: dict[str, str], prefix: str) -> tuple[str | None, str | None]:
    """Per-box class text and id keys near the box keys (e.g. image/object/class/{text,label})."""
    root = prefix.rstrip("/_.")
    parent = root.rsplit("/", 1)[0] + "/" if "/" in root else ""
    text = ids = None
    for k, t in types.items():
        if not (k.startswith(parent) or not parent):
            continue
        last = k[len(parent) :]
        if t == BYTES_LIST and last in (
            "class/text",
            "class_text",
            "label/text",
            "text",
            "category",
            "name",
            "class/name",
            "label/string",  # MediaSequence's region/label/string
        ):
            text = text or k
        elif t == INT64_LIST and last in (
            "class/label",
            "label",
            "labels",
            "category_id",
            "class_id",
            "class/id",
            "label/index",  # MediaSequence's region/label/index
        ):
            ids = ids or k
    return text, ids


def _floats(features, key) -> np.ndarray:
    f = features.get(key)
    return np.asarray(f.values, dtype=np.float64) if f is not None else np.empty(0)


def compute_overlay(
    features: dict[str, Feature],
    width: int,
    height: int,
    label_map: dict[int, str] | None = None,
    spec: BoxSpec | None = None,
) -> Overlay:
    """Boxes in pixels of a width x height image, with class names, plus the record's caption."""
    spec = spec or detect_spec(features)
    caption = record_caption(features, label_map)
    if spec is None:
        return Overlay(None, (), caption)
    notes: list[str] = []
    if spec.convention in ("od_normalized", "pixel_corners"):
        cols = [_floats(features, k) for k in spec.keys]
        n = min(len(c) for c in cols)
        if len({len(c) for c in cols}) > 1:
            notes.append(f"box lists have different lengths {[len(c) for c in cols]}; drawing {n}")
        x0, y0, x1, y1 = (c[:n] for c in cols)
        if spec.convention == "od_normalized":
            x0, x1, y0, y1 = x0 * width, x1 * width, y0 * height, y1 * height
    else:
        v = _floats(features, spec.keys[0])
        n = len(v) // 4
        q = v[: n * 4].reshape(n, 4)
        if spec.convention == "coco_xywh":
            x0, y0, x1, y1 = q[:, 0], q[:, 1], q[:, 0] + q[:, 2], q[:, 1] + q[:, 3]
        else:
            y0, x0, y1, x1 = q[:, 0] * height, q[:, 1] * width, q[:, 2] * height, q[:, 3] * width
    n_texts = len(features[spec.class_text].values) if spec.class_text else 0
    n_ids = len(features[spec.class_id].values) if spec.class_id else 0
    if n_texts and n_texts != n:
        notes.append(f"{n_texts} class names for {n} boxes")
    if n_ids and n_ids != n:
        notes.append(f"{n_ids} class ids for {n} boxes")
    shown = min(n, MAX_BOXES_DRAWN)  # Python objects for these only: the rest are counted, never built
    limit = None
    if shown < n:
        limit = f"{n:,} boxes, over the limit of {MAX_BOXES_DRAWN:,}; the first {shown:,} are drawn (limits.MAX_BOXES_DRAWN)"
        notes.append(limit)
    texts = [b.decode("utf-8", "replace") for b in features[spec.class_text].values[:shown]] if n_texts else []
    ids = [int(x) for x in features[spec.class_id].values[:shown]] if n_ids else []
    corners = [c[:shown].tolist() for c in (x0, y0, x1, y1)]
    boxes = []
    for i, (a, b, c, d) in enumerate(zip(*corners, strict=True)):
        cid = ids[i] if i < len(ids) else None
        name = texts[i] if i < len(texts) else None
        if not name and cid is not None and label_map:
            name = label_map.get(cid)
        boxes.append(Box(a, b, c, d, i, cid, name))
    keypoints = _keypoints(features, width, height, n, shown, notes)
    return Overlay(spec, tuple(boxes), caption, tuple(notes), keypoints, n if shown < n else None, limit)


_KEYPOINT_KEYS = ("image/object/keypoint/x", "image/object/keypoint/y", "image/object/keypoint/visibility")


def _keypoints(features: dict[str, Feature], width: int, height: int, boxes: int, shown: int, notes: list[str]) -> tuple:
    """The OD API's keypoints (normalised x and y, box after box, the same number for each box),
    in pixels; a keypoint marked invisible, negative or NaN is one the labeller did not place.
    Only those of the `shown` boxes drawn (at most MAX_BOXES_DRAWN when they belong to no box)."""
    if _KEYPOINT_KEYS[0] not in features or _KEYPOINT_KEYS[1] not in features:
        return ()
    xs, ys = _floats(features, _KEYPOINT_KEYS[0]), _floats(features, _KEYPOINT_KEYS[1])
    if len(xs) != len(ys) or not len(xs):
        notes.append(f"keypoint lists differ in length ({len(xs)} x, {len(ys)} y): not drawn")
        return ()
    vis = features.get(_KEYPOINT_KEYS[2])
    visible = np.asarray(vis.values) if vis is not None and len(vis.values) == len(xs) else np.ones(len(xs))
    per = len(xs) // boxes if boxes and len(xs) % boxes == 0 else 0
    keep = per * shown if per else MAX_BOXES_DRAWN
    xs, ys = xs[:keep], ys[:keep]
    out = []
    for j, (x, y) in enumerate(zip(xs.tolist(), ys.tolist(), strict=True)):
        if not (np.isfinite(x) and np.isfinite(y)) or x < 0 or y < 0 or not visible[j]:
            continue
        out.append((x * width, y * height, j // per if per else -1))
    return tuple(out)


def box_class_counts(features: dict[str, Feature], spec: BoxSpec | None,
                     label_map: dict[int, str] | None = None) -> Counter:
    """name -> boxes of the record's box classes (class text, else the label map's name or 'class
    N'), counted over the values the record holds (C's Counter, numpy's unique), so a record of a
    million boxes builds an object a class, not a box."""
    out: Counter = Counter()
    if spec is None:
        return out
    if spec.class_text and spec.class_text in features:
        for b, k in Counter(features[spec.class_text].values).items():
            out[b.decode("utf-8", "replace")] += k
    elif spec.class_id and spec.class_id in features:
        ids, counts = np.unique(np.asarray(features[spec.class_id].values, dtype=np.int64), return_counts=True)
        for i, k in zip(ids.tolist(), counts.tolist(), strict=True):
            out[(label_map or {}).get(i, f"class {i}")] += k
    return out


def caption_key(features: dict[str, Feature]) -> str | None:
    """The key `record_caption` names the record's label by, or None."""
    for k in _LABEL_KEYS:
        f = features.get(k)
        if f is not None and 0 < len(f.values) <= 8 and f.type in (BYTES_LIST, INT64_LIST):
            return k
    return None


def record_caption(features: dict[str, Feature], label_map: dict[int, str] | None = None) -> str | None:
    """The record-level label, e.g. 'label: 3 (cat)'."""
    for k in _LABEL_KEYS:
        f = features.get(k)
        if f is None or not len(f.values) or len(f.values) > 8:
            continue
        if f.type == BYTES_LIST:
            return f"{k}: " + ", ".join(v.decode("utf-8", "replace") for v in f.values)
        if f.type == INT64_LIST:
            parts = []
            for v in f.values:
                name = label_map.get(int(v)) if label_map else None
                parts.append(f"{int(v)} ({name})" if name else str(int(v)))
            return f"{k}: " + ", ".join(parts)
    return None
