"""Boxes and labels of a record drawn on its image, as frozen dataclasses in image pixel space,
built from the record's reading (`reading.read_record`: where its conventions are decided)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.limits import MAX_BOXES_DRAWN
from tfrview.core.records.feature import Feature
from tfrview.core.records.predlayer import Versus
from tfrview.core.records.reading import (
    CONVENTIONS,
    BoxSpec,
    ReadingContext,
    RecordReading,
    class_name,
    read_features,
)
from tfrview.core.tfds.features import Features

__all__ = ["CONVENTIONS", "Box", "BoxSpec", "Overlay", "compute_overlay", "overlay_of"]


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
        return class_name(self.class_id) if self.class_id is not None else f"box {self.index}"

    @property
    def color_key(self) -> str:
        return str(self.class_id) if self.class_id is not None else (self.name or "")


@dataclass(frozen=True)
class Overlay:
    spec: BoxSpec | None
    boxes: tuple[Box, ...] = ()  # the first MAX_BOXES_DRAWN boxes at most: see `total`
    caption: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    keypoints: tuple[tuple[float, float, int], ...] = ()  # (x, y) in pixels and the box they belong to
    total: int | None = None  # the record's boxes when more than `boxes` holds (a limit was hit)
    limit: str | None = None  # that limit, in words (also among `notes`)
    # the record's predictions and ground truth in [0, 1], matched at the window's thresholds when
    # drawn (`predlayer.prediction_layer`); None: the record has no boxes and no predictions
    versus: Versus | None = field(default=None, compare=False, repr=False)

    @property
    def convention_text(self) -> str:
        return CONVENTIONS.get(self.spec.convention, self.spec.convention) if self.spec else "no boxes found"

    @property
    def count(self) -> int:
        """Every box of the record, drawn or not."""
        return len(self.boxes) if self.total is None else self.total


def compute_overlay(
    features: Mapping[str, Feature],
    width: int,
    height: int,
    label_map: Mapping[int, str] | None = None,
    spec: BoxSpec | None = None,
    tfds: Features | None = None,
) -> Overlay:
    """Boxes in pixels of a width x height image, with class names, plus the record's caption
    (the features read once, with `spec` when the person chose one, and what a TFDS dataset's
    features.json declares)."""
    return overlay_of(read_features(features, ReadingContext(label_map, spec, tfds=tfds)), width, height)


def overlay_of(r: RecordReading, width: int, height: int) -> Overlay:
    """A record's reading drawn on a width x height image: the first limits.MAX_BOXES_DRAWN boxes
    as objects (the rest counted, never built), named as the reading names them."""
    caption = r.caption
    versus = versus_of(r)
    if r.spec is None:
        return Overlay(None, (), caption, versus=versus)
    notes = list(r.notes)
    n = r.box_count
    shown = min(n, MAX_BOXES_DRAWN)
    px = r.boxes_in(width, height, shown)  # the reading's scaling, of the boxes drawn only
    texts = r.class_texts
    ids_list = r.class_ids[:shown].tolist()
    boxes = []
    for i, (a, b, c, d) in enumerate(px.tolist()):
        cid = ids_list[i] if i < len(ids_list) else None
        named = cid is not None or (i < len(texts) and texts[i])  # else the box is "box i", uncoloured
        boxes.append(Box(a, b, c, d, i, cid, r.box_name(i) if named else None))
    keypoints = _keypoints(r, width, height, n, shown)
    limit = r.limit
    return Overlay(
        r.spec, tuple(boxes), caption, tuple(notes), keypoints, n if shown < n else None, limit, versus
    )


def versus_of(r: RecordReading) -> Versus:
    """What the record's predictions are matched against: its own (the OD API's detection keys) or
    none yet (predictions loaded from a file are put in by `Versus.with_predictions`), and its
    ground truth in [0, 1] with the class names the record and the label map give."""
    pred = r.predictions
    gt = r.normalized if r.spec is not None else np.empty((0, 4))
    ids = r.class_ids if r.spec is not None else np.empty(0, dtype=np.int64)
    if pred is None and not len(gt):
        return Versus(None, np.empty((0, 4)), np.empty(0, dtype=np.int64))
    names: dict[int, str] = {}
    for i, c in enumerate(ids[: min(len(ids), MAX_BOXES_DRAWN)].tolist()):
        names.setdefault(c, r.box_name(i))
    if pred is not None:
        for c in np.unique(pred.classes).tolist():
            if c not in names:
                names[c] = class_name(c, r.label_map)
    return Versus(pred, np.asarray(gt, dtype=np.float64).reshape(-1, 4), ids, names)


def _keypoints(r: RecordReading, width: int, height: int, boxes: int, shown: int) -> tuple:
    """The OD API's keypoints (normalised x and y, box after box, the same number for each box),
    in pixels; a keypoint marked invisible, negative or NaN is one the labeller did not place.
    Only those of the `shown` boxes drawn (at most MAX_BOXES_DRAWN when they belong to no box)."""
    if r.keypoints is None:  # none, or lists that do not pair up (the reading's notes say so)
        return ()
    xs, ys, visible = r.keypoints
    per = len(xs) // boxes if boxes and len(xs) % boxes == 0 else 0
    keep = per * shown if per else MAX_BOXES_DRAWN
    xs, ys = xs[:keep], ys[:keep]
    out = []
    for j, (x, y) in enumerate(zip(xs.tolist(), ys.tolist(), strict=True)):
        if not (np.isfinite(x) and np.isfinite(y)) or x < 0 or y < 0 or not visible[j]:
            continue
        out.append((x * width, y * height, j // per if per else -1))
    return tuple(out)
