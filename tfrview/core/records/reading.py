"""One reading of a record: what its features mean, decided once, in one place.

`read_record(payload, context)` finds the box keys and their convention, the boxes in their own
units and normalised, the image size the record states, the class ids and names (one fallback:
the record's class text, then the label map, then "id N"), the record-level label, the masks and
keypoints present, and the notes and limits hit. Every consumer (the deep pass, the checks, the
statistics, the fact table, row text, drawing, thumbnails, plots) reads that, so a record means
the same everywhere. `ReadingContext` holds what is decided for a whole dataset: the label map,
a box spec the person chose, and the roles of the feature layouts seen so far (no process-wide
memo: each pass, window or export owns its context).

The spec agreed by the first records: a context without a chosen spec reads each record's
convention from its keys and values, and notes the specs of the first `AGREEING_RECORDS` records
with boxes. When they all agree, the rest of the dataset is read by that spec: a record whose
values fit it and another convention too (pixel boxes that all happen to lie in [0, 1]) is read
by the agreed one. A record whose values contradict it (normalized agreed, values past 1) is still
read by its own values, and its notes say so. Until then, or when the first records disagree,
every record is read by its own values.

Conventions (detected from keys and value ranges, always reported):
- `od_normalized`: Object Detection API `.../bbox/{xmin,ymin,xmax,ymax}` in [0, 1];
- `pixel_corners`: the same four keys in pixels;
- `coco_xywh`: a `bbox` list of [x, y, width, height] in pixels (COCO);
- `tfds_yxyx`: a `bbox` list of normalized [ymin, xmin, ymax, xmax] (TensorFlow Datasets).

A TFDS prepared dataset says what its keys mean (`core/tfds/features.py`, carried by the context as
`tfds`): a `BBoxFeature` key is read as `tfds_yxyx` with the `ClassLabel` beside it as its class
ids, whatever its values (nothing is guessed; a box spec the person chose still wins); a
`ClassLabel` key outside any sequence is the record label; class ids are named by their
`ClassLabel`'s names (its `labels.txt`), before any label map; and 0 is a class like any other.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from tfrview.core.limits import AGREEING_RECORDS, MAX_BOXES_DRAWN, READING_LAYOUT_KEYS, READING_LAYOUTS
from tfrview.core.records.feature import BYTES_LIST, INT64_LIST, Feature
from tfrview.core.records.payload import Payload
from tfrview.core.records.predictions import DETECTION_PREFIX, Predictions, read_detections
from tfrview.core.tfds.features import ClassLabel, Features

log = logging.getLogger(__name__)


class BoxConvention(StrEnum):
    """How a record's numbers describe its boxes (equal to its word: `"coco_xywh" == COCO_XYWH`)."""

    OD_NORMALIZED = "od_normalized"
    PIXEL_CORNERS = "pixel_corners"
    COCO_XYWH = "coco_xywh"
    TFDS_YXYX = "tfds_yxyx"

    @property
    def normalized(self) -> bool:
        """Coordinates in [0, 1] of the image (else pixels)."""
        return self in (BoxConvention.OD_NORMALIZED, BoxConvention.TFDS_YXYX)

    @property
    def corners(self) -> bool:
        """Four lists, one a corner coordinate (else one flat list of four values a box)."""
        return self in (BoxConvention.OD_NORMALIZED, BoxConvention.PIXEL_CORNERS)

    @property
    def words(self) -> str:
        return _WORDS[self]


_WORDS = {
    BoxConvention.OD_NORMALIZED: "normalized xmin/ymin/xmax/ymax (Object Detection API)",
    BoxConvention.PIXEL_CORNERS: "pixel xmin/ymin/xmax/ymax",
    BoxConvention.COCO_XYWH: "pixel [x, y, width, height] (COCO)",
    BoxConvention.TFDS_YXYX: "normalized [ymin, xmin, ymax, xmax] (TFDS)",
}
CONVENTIONS = {c.value: c.words for c in BoxConvention}


@dataclass(frozen=True, slots=True)
class BoxSpec:
    """Which keys hold boxes and how to read them (detected, or chosen by the person)."""

    convention: BoxConvention
    keys: tuple[str, ...]  # 4 corner keys (xmin, ymin, xmax, ymax) or 1 list key
    class_text: str | None = None
    class_id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.convention, BoxConvention):  # a word from a person or a stored spec
            object.__setattr__(self, "convention", BoxConvention(self.convention))

    def to_json(self) -> str:
        return json.dumps(
            {
                "convention": self.convention.value,
                "keys": list(self.keys),
                "class_text": self.class_text,
                "class_id": self.class_id,
            }
        )

    @staticmethod
    def from_json(text: str | bytes) -> BoxSpec:
        d = json.loads(text)
        return BoxSpec(
            BoxConvention(d["convention"]), tuple(d["keys"]), d.get("class_text"), d.get("class_id")
        )


def chosen_spec(specs: Iterable[BoxSpec], features: Mapping[str, Feature]) -> BoxSpec | None:
    """The spec the person chose for this record's layout: the first of `specs` whose box keys the
    record holds (None: the record is read by its own keys and values). Thumbnails and exports
    take the person's choice this way, as the image panel does."""
    for s in specs:
        if all(k in features for k in s.keys):
            return s
    return None


def corners(convention: BoxConvention, cols: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """The one coordinate rule: x0, y0, x1, y1 in the convention's own units (pixels or [0, 1])
    from the four corner lists (xmin, ymin, xmax, ymax: cut to the shortest) or from the one flat
    list (its whole quadruples). The reading of a record and the plots of the fact table use it."""
    if convention.corners:
        n = min(len(c) for c in cols)
        return tuple(c[:n] for c in cols)
    v = cols[0]
    n = len(v) // 4
    q = v[: n * 4].reshape(n, 4)
    if convention == BoxConvention.COCO_XYWH:
        return q[:, 0], q[:, 1], q[:, 0] + q[:, 2], q[:, 1] + q[:, 3]
    return q[:, 1], q[:, 0], q[:, 3], q[:, 2]  # TFDS: ymin, xmin, ymax, xmax


@dataclass
class ReadingContext:
    """What a dataset decides once for all its records: the label map, a box spec the person
    chose (None: each record's keys and values tell), and the roles of the feature layouts met so
    far (at most limits.READING_LAYOUTS of them; a layout of many keys is not remembered)."""

    label_map: Mapping[int, str] | None = None
    spec: BoxSpec | None = None
    _roles: dict = field(default_factory=dict, repr=False)
    agreed: BoxSpec | None = None  # the spec the first records with boxes agreed on (module docstring)
    chosen: tuple[BoxSpec, ...] = ()  # specs the person chose, one a layout (`chosen_spec`)
    _seen: list = field(default_factory=list, repr=False)  # their specs, AGREEING_RECORDS at most
    tfds: Features | None = field(default=None, repr=False)  # a TFDS dataset's features.json, read as data

    def settle(self, spec: BoxSpec | None, has_boxes: bool) -> tuple[BoxSpec | None, str | None]:
        """The spec a record whose own values say `spec` is read by, and a note when its values
        contradict the spec the first records agreed on (a record without boxes agrees)."""
        if spec is None:
            return None, None
        a = self.agreed
        if not has_boxes:
            same = a is not None and (spec.keys, spec.class_text, spec.class_id) == (
                a.keys,
                a.class_text,
                a.class_id,
            )
            return (a if same else spec), None
        if a is None:
            if len(self._seen) < AGREEING_RECORDS:
                self._seen.append(spec)
                if len(self._seen) == AGREEING_RECORDS and len(set(self._seen)) == 1:
                    self.agreed = spec
                    log.info(
                        "the first %d records with boxes agree on %s", AGREEING_RECORDS, spec.convention.words
                    )
            return spec, None
        if spec == a or (spec.keys, spec.class_text, spec.class_id) != (a.keys, a.class_text, a.class_id):
            return spec, None  # the agreed spec, or other keys: nothing to agree on
        if not a.convention.normalized and spec.convention == _NORMALIZED_TWIN[a.convention]:
            return a, None  # values in [0, 1] fit pixels too: read as the dataset's pixels
        return spec, (
            f"boxes read as {spec.convention.words} by their values, not as the first "
            f"{AGREEING_RECORDS} records' {a.convention.words}"
        )

    def roles(self, features: Mapping[str, Feature]):
        layout = tuple((k, f.type) for k, f in features.items())
        if len(layout) > READING_LAYOUT_KEYS:  # 1,024 layouts of 10,000 keys would hold 10 M tuples
            return _roles(layout)
        got = self._roles.get(layout, _UNKNOWN)
        if got is _UNKNOWN:
            got = _roles(layout)
            if len(self._roles) >= READING_LAYOUTS:  # a dataset of ever new layouts: start again, never grow
                log.info(
                    "limits.READING_LAYOUTS: %d feature layouts met; their box roles are found again",
                    READING_LAYOUTS,
                )
                self._roles.clear()
            self._roles[layout] = got
        return got


_UNKNOWN = object()
_NORMALIZED_TWIN = {
    BoxConvention.PIXEL_CORNERS: BoxConvention.OD_NORMALIZED,
    BoxConvention.COCO_XYWH: BoxConvention.TFDS_YXYX,
}  # what a pixel convention's keys are detected as when every value lies in [0, 1]
_CORNERS = ("xmin", "ymin", "xmax", "ymax")
# the record-level label: the first found wins
LABEL_KEYS = (
    "label",
    "labels",
    "image/class/label",
    "image/label",
    "class",
    "category_id",
    "class_id",
    "label/id",
    "image/class/text",
    "label/text",
    "class_name",
    "category",
    "digit",
    "species",
    "target",
)
KEYPOINT_KEYS = ("image/object/keypoint/x", "image/object/keypoint/y", "image/object/keypoint/visibility")
_KEYPOINT_KEYS = KEYPOINT_KEYS
OBJECT_PREFIXES = ("image/object/", "objects/")  # the prefixes of per-object lists: OD API, TFDS
_EMPTY_F = np.empty(0, dtype=np.float64)
_EMPTY_I = np.empty(0, dtype=np.int64)


def class_name(class_id: int, label_map: Mapping[int, str] | None = None) -> str:
    """A class id's name when the record gives no text: the label map's, else "id N" (the one
    place this fallback is built)."""
    name = label_map.get(class_id) if label_map else None
    return name if name else f"id {class_id}"


def label_candidates(
    types: Mapping[str, str | None], tfds: Features | None = None
) -> tuple[tuple[str, str], ...]:
    """The keys of a layout ({key: list type}) that may hold the record-level label, in LABEL_KEYS
    order after a TFDS dataset's record-level ClassLabels: a record's `label_key` is the first of
    these holding 1 to 8 values. The deep pass's column path decides these once per layout, and
    applies the same first-wins rule per record."""
    keys = dict.fromkeys((*tfds.record_labels, *LABEL_KEYS)) if tfds is not None else LABEL_KEYS
    return tuple((k, t) for k in keys if (t := types.get(k)) in (BYTES_LIST, INT64_LIST))


def label_names(
    key: str, tfds: Features | None, label_map: Mapping[int, str] | None
) -> Mapping[int, str] | None:
    """The names a record label under `key` is shown with (`RecordReading.label_text`'s rule): its
    TFDS ClassLabel's own names (or none) when the features declare the key, else the label map."""
    if tfds is not None and tfds.lookup(key) is not None:
        return tfds.class_names(key)
    return label_map


def label_text(list_type: str, values, label_map: Mapping[int, str] | None = None) -> str:
    """A record label's values as text, e.g. '3 (cat)' or 'cat, dog' (the one place it is built:
    the caption prefixes its key; the dataset summary counts this text)."""
    if list_type == BYTES_LIST:
        return ", ".join(v.decode("utf-8", "replace") for v in values)
    parts = []
    for v in values:
        name = label_map.get(int(v)) if label_map else None
        parts.append(f"{int(v)} ({name})" if name else str(int(v)))
    return ", ".join(parts)


class _once:
    """A property computed on first use and kept in the instance (functools.cached_property, less
    its lock: Python 3.11 takes a lock a first use, ~5 us a record in the deep pass's hot loop;
    a reading belongs to one thread)."""

    def __init__(self, fn) -> None:
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)  # found in the instance from now on
        return value


@dataclass(frozen=True)
class RecordReading:
    """What one record means (see the module's docstring). Arrays are computed on first use,
    once: a record of a million boxes costs arrays, never an object a box."""

    kind: str
    features: Mapping[str, Feature] = field(repr=False)
    spec: BoxSpec | None
    label_map: Mapping[int, str] | None = field(default=None, repr=False)
    spec_note: str | None = None  # the record's values contradict the spec its dataset agreed on
    tfds: Features | None = field(default=None, repr=False)  # what a TFDS dataset's features.json says

    @_once
    def stated_size(self) -> tuple[int, int] | None:
        """(width, height) the record states (`stated_size`: the one rule)."""
        return stated_size(self.features)

    @_once
    def label_key(self) -> str | None:
        """The key of the record-level label: a TFDS ClassLabel outside any sequence, else the first
        of LABEL_KEYS holding 1 to 8 ints or texts."""
        keys = (*self.tfds.record_labels, *LABEL_KEYS) if self.tfds is not None else LABEL_KEYS
        for k in keys:
            f = self.features.get(k)
            if f is not None and 0 < len(f.values) <= 8 and f.type in (BYTES_LIST, INT64_LIST):
                return k
        return None

    @_once
    def keypoints(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The OD API's keypoints: normalised x, y and visibility, box after box (None without both
        lists, or when they differ in length or are empty: `notes` says so)."""
        f = self.features
        if KEYPOINT_KEYS[0] not in f or KEYPOINT_KEYS[1] not in f:
            return None
        xs, ys = _floats(f, KEYPOINT_KEYS[0]), _floats(f, KEYPOINT_KEYS[1])
        if len(xs) != len(ys) or not len(xs):
            return None
        vis = f.get(KEYPOINT_KEYS[2])
        visible = (
            np.asarray(vis.values) if vis is not None and len(vis.values) == len(xs) else np.ones(len(xs))
        )
        return xs, ys, visible

    @_once
    def predictions(self) -> Predictions | None:
        """The record's own predicted boxes: the OD API's `image/detection/bbox/{ymin,xmin,ymax,xmax}`,
        `image/detection/label` and `image/detection/score` (None: the record holds none). They are
        never read as ground truth (`_roles` leaves the detection keys out)."""
        return read_detections(self.features)

    @property
    def keypoint_keys(self) -> tuple[str, ...]:
        return tuple(k for k in _KEYPOINT_KEYS if k in self.features)

    @property
    def convention(self) -> BoxConvention | None:
        return self.spec.convention if self.spec else None

    @_once
    def list_lengths(self) -> tuple[int, ...]:
        """Values in each box key (four corner lists, or the one flat list)."""
        if self.spec is None:
            return ()
        return tuple(len(self.features[k].values) if k in self.features else 0 for k in self.spec.keys)

    @property
    def box_count(self) -> int:
        """Every box of the record (whole quadruples, or the shortest corner list)."""
        lens = self.list_lengths
        if not lens:
            return 0
        return min(lens) if len(lens) == 4 else lens[0] // 4

    @_once
    def corner_arrays(self) -> tuple[np.ndarray, ...]:
        """x0, y0, x1, y1 of every box: four arrays in the convention's own units (pixels or [0, 1])."""
        if self.spec is None:
            return (_EMPTY_F,) * 4
        return corners(self.spec.convention, [_floats(self.features, k) for k in self.spec.keys])

    @_once
    def boxes(self) -> np.ndarray:
        """(n, 4) x0, y0, x1, y1 of every box in the convention's own units (pixels or [0, 1])."""
        return np.stack(self.corner_arrays, axis=1).reshape(-1, 4)

    def boxes_in(self, width: float | None, height: float | None, first: int | None = None) -> np.ndarray:
        """(n, 4) boxes in pixels of a width x height image (normalised ones scaled; pixel ones as
        they are); None for a size: normalised units (pixel boxes divided by the stated size, NaN
        without one). `first`: only the first boxes (the drawing's, without scaling a million)."""
        if first is not None and width is not None and height is not None:
            b = self.boxes[:first]
            if self.spec is None or not len(b) or not self.spec.convention.normalized:
                return b
            return b * np.array([width, height, width, height], dtype=np.float64)
        b = self.boxes
        if self.spec is None or not len(b):
            return b
        if width is not None and height is not None:
            return b * np.array([width, height, width, height]) if self.spec.convention.normalized else b
        return self.normalized

    @_once
    def normalized(self) -> np.ndarray:
        """(n, 4) boxes in [0, 1] units of the image (NaN: pixel boxes of a record stating no size)."""
        b = self.boxes
        if self.spec is None or self.spec.convention.normalized or not len(b):
            return b
        if self.stated_size is None:
            return np.full(b.shape, np.nan)
        w, h = self.stated_size
        return b / np.array([w, h, w, h], dtype=np.float64)

    @_once
    def class_ids(self) -> np.ndarray:
        """Each box's class id, as the record holds them (may be more or fewer than the boxes)."""
        k = self.spec.class_id if self.spec else None
        f = self.features.get(k) if k else None
        return np.asarray(f.values, dtype=np.int64) if f is not None and len(f.values) else _EMPTY_I

    @property
    def class_texts(self) -> list:
        """Each box's class text (bytes, as the record holds them)."""
        k = self.spec.class_text if self.spec else None
        f = self.features.get(k) if k else None
        return f.values if f is not None else []

    def box_name(self, i: int) -> str:
        """Box i's class name: its text, else its id through the label map, else "id N" ("box i" without either)."""
        texts = self.class_texts
        if i < len(texts) and texts[i]:
            return texts[i].decode("utf-8", "replace")
        ids = self.class_ids
        return class_name(int(ids[i]), self.label_map) if i < len(ids) else f"box {i}"

    @_once
    def class_counts(self) -> Counter:
        """name -> boxes of each class (the class texts; else the ids, named as `class_name`), counted
        by C's Counter and numpy's unique: a million boxes build an object a class, not a box."""
        out: Counter = Counter()
        texts = self.class_texts
        if len(texts):
            for b, k in Counter(texts).items():
                out[b.decode("utf-8", "replace")] += k
        elif len(self.class_ids):
            ids, counts = np.unique(self.class_ids, return_counts=True)
            for i, k in zip(ids.tolist(), counts.tolist(), strict=True):
                out[class_name(i, self.label_map)] += k
        return out

    @_once
    def notes(self) -> tuple[str, ...]:
        """What does not add up in the boxes, and the limit on those drawn (`limit`)."""
        out = [self.spec_note] if self.spec_note else []
        lens, n = self.list_lengths, self.box_count
        if len(lens) == 4 and len(set(lens)) > 1:
            out.append(f"box lists have different lengths {list(lens)}; drawing {n}")
        n_texts, n_ids = len(self.class_texts), len(self.class_ids)
        if n_texts and n_texts != n:
            out.append(f"{n_texts} class names for {n} boxes")
        if n_ids and n_ids != n:
            out.append(f"{n_ids} class ids for {n} boxes")
        if self.limit:
            out.append(self.limit)
        f = self.features
        if self.keypoints is None and KEYPOINT_KEYS[0] in f and KEYPOINT_KEYS[1] in f:
            nx, ny = len(f[KEYPOINT_KEYS[0]].values), len(f[KEYPOINT_KEYS[1]].values)
            out.append(f"keypoint lists differ in length ({nx} x, {ny} y): not drawn")
        return tuple(out)

    @property
    def limit(self) -> str | None:
        """limits.MAX_BOXES_DRAWN, in words, when the record has more boxes (None: all are drawn)."""
        n = self.box_count
        if n <= MAX_BOXES_DRAWN:
            return None
        return (
            f"{n:,} boxes, over the limit of {MAX_BOXES_DRAWN:,}; the first {MAX_BOXES_DRAWN:,} are drawn "
            "(limits.MAX_BOXES_DRAWN)"
        )

    @property
    def label(self) -> Feature | None:
        return self.features[self.label_key] if self.label_key else None

    @property
    def label_ids(self) -> list[int]:
        f = self.label
        return [int(v) for v in f.values] if f is not None and f.type == INT64_LIST else []

    @property
    def label_text(self) -> str | None:
        """The record-level label's values as text, e.g. '3 (cat)' (`label_text`)."""
        f = self.label
        if f is None:
            return None
        return label_text(f.type, f.values, label_names(self.label_key, self.tfds, self.label_map))

    @property
    def caption(self) -> str | None:
        """The record-level label, e.g. 'label: 3 (cat)'."""
        text = self.label_text
        return None if text is None else f"{self.label_key}: {text}"

    @property
    def class_zero_key(self) -> str | None:
        """The class-id key when the boxes' ids include 0 (reserved for background by the OD API)."""
        k = self.spec.class_id if self.spec else None
        declared = self.tfds.lookup(k) if self.tfds is not None and k else None
        if declared is not None and isinstance(declared.spec, ClassLabel):
            return None  # a TFDS ClassLabel counts from 0: no id is background
        if k and k in self.features and self.features[k].type == INT64_LIST and (self.class_ids == 0).any():
            return k
        return None

    @_once
    def mask_keys(self) -> tuple[str, ...]:
        from tfrview.core.records.masks import mask_keys  # start-up: kept off the CLI's path

        keys = mask_keys(self.features, self.tfds)
        inst = self.features.get("image/object/mask")
        if inst is not None and len(inst.values):
            keys.append("image/object/mask")
        return tuple(keys)

    @property
    def dataset_class_ids(self) -> list[int]:
        """The class ids the record holds: its boxes' (each once) and its integer record label."""
        ids = self.class_ids
        if len(ids) <= 64:  # most records: a set of a few ints costs less than numpy's unique
            return sorted(set(ids.tolist())) + self.label_ids
        return np.unique(ids).tolist() + self.label_ids


def _floats(features: Mapping[str, Feature], key: str) -> np.ndarray:
    f = features.get(key)
    return np.asarray(f.values, dtype=np.float64) if f is not None and f.type != BYTES_LIST else _EMPTY_F


def read_record(payload: Payload, context: ReadingContext | None = None) -> RecordReading:
    """The reading of a decoded record (its context features for a SequenceExample: read a frame
    with `read_features(frames.frame_features(p, t), ...)`)."""
    return read_features(payload.features, context, payload.kind)


def read_features(
    features: Mapping[str, Feature], context: ReadingContext | None = None, kind: str = "example"
) -> RecordReading:
    """The reading of a record's (or a frame's) features."""
    ctx = context if context is not None else ReadingContext()
    tfds = ctx.tfds
    if ctx.spec is not None:
        return RecordReading(kind, features, ctx.spec, _names(ctx, ctx.spec), tfds=tfds)
    if ctx.chosen and (mine := chosen_spec(ctx.chosen, features)) is not None:
        return RecordReading(kind, features, mine, _names(ctx, mine), tfds=tfds)
    if tfds is not None and (declared := tfds_spec(tfds, features)) is not None:
        return RecordReading(kind, features, declared, _names(ctx, declared), tfds=tfds)
    spec = _detect_spec(features, ctx) if features else None
    if spec is not None:
        f = features.get(spec.keys[0])
        spec, note = ctx.settle(spec, f is not None and len(f.values) > 0)
    else:
        note = None
    return RecordReading(kind, features, spec, _names(ctx, spec), note, tfds=tfds)


def tfds_spec(tfds: Features, features: Mapping[str, Feature]) -> BoxSpec | None:
    """The box spec a TFDS dataset's features declare for a record: its first BBoxFeature key the
    record holds, read as normalised [ymin, xmin, ymax, xmax], with the ClassLabel beside it."""
    for key, label in tfds.boxes:
        if key in features:
            return BoxSpec(BoxConvention.TFDS_YXYX, (key,), None, label if label in features else None)
    return None


def _names(ctx: ReadingContext, spec: BoxSpec | None) -> Mapping[int, str] | None:
    """The names of a record's box class ids: their TFDS ClassLabel's, else the label map."""
    if ctx.tfds is not None and spec is not None:
        names = ctx.tfds.class_names(spec.class_id)
        if names:
            return names
    return ctx.label_map


def stated_size(features: Mapping[str, Feature]) -> tuple[int, int] | None:
    """(width, height) as the record states them (the one rule: single int64 values of keys named
    `width` and `height`, e.g. image/width), or None."""
    w = h = None
    for k, f in features.items():
        if f.type == INT64_LIST and len(f.values) == 1:
            last = k.rsplit("/", 1)[-1]
            if last == "width":
                w = int(f.values[0])
            elif last == "height":
                h = int(f.values[0])
    return (w, h) if w and h else None


def _detect_spec(features: Mapping[str, Feature], ctx: ReadingContext) -> BoxSpec | None:
    """Find the box keys in a record; None if it has no boxes. Which keys play which role depends
    only on the feature layout (keys and types: remembered by the context); the convention is
    then read from the values."""
    roles = ctx.roles(features)
    if roles is None:
        return None
    kind, keys, prefix, text, ids = roles
    if kind == "corners":
        if prefix.endswith("image/object/bbox/"):
            # normalized by the OD API's definition, even when a value is out of range
            conv = BoxConvention.OD_NORMALIZED
        else:
            vals = np.concatenate([np.asarray(features[k].values, dtype=np.float64) for k in keys])
            conv = (
                BoxConvention.OD_NORMALIZED
                if vals.size == 0 or np.nanmax(np.abs(vals)) <= 1.0001
                else BoxConvention.PIXEL_CORNERS
            )
        return BoxSpec(conv, keys, text, ids)
    f = features[keys[0]]
    if len(f.values) % 4 or not len(f.values):
        return None
    vals = np.asarray(f.values, dtype=np.float64)
    conv = BoxConvention.TFDS_YXYX if np.nanmax(np.abs(vals)) <= 1.0001 else BoxConvention.COCO_XYWH
    return BoxSpec(conv, keys, text, ids)


def box_roles(layout: tuple[tuple[str, str], ...]):
    """The box roles of a feature layout ((key, list type) pairs), None when it holds no boxes: the
    one rule, which the deep pass's column path (`analysis.plain`) asks of a layout once."""
    return _roles(layout)


def _roles(layout: tuple[tuple[str, str], ...]):
    """("corners" | "list", box keys, prefix, class text key, class id key) for a feature layout."""
    types = dict(layout)
    by_prefix: dict[str, dict[str, str]] = {}
    for k, t in layout:
        if t == BYTES_LIST or not k.endswith(_CORNERS) or k.startswith(DETECTION_PREFIX):
            continue  # one call rules out most keys; the OD API's detections are predictions, never truth
        for c in _CORNERS:
            for sep in ("/", "_", "."):
                if k.endswith(sep + c) or k == c:
                    by_prefix.setdefault(k[: len(k) - len(c)], {})[c] = k
    for prefix, cs in sorted(by_prefix.items(), key=lambda kv: ("bbox" not in kv[0], kv[0])):
        if len(cs) == 4:
            text, ids = _class_keys(types, prefix)
            return "corners", tuple(cs[c] for c in _CORNERS), prefix, text, ids
    for k, t in sorted(layout):
        last = k.rsplit("/", 1)[-1]
        if t != BYTES_LIST and last in ("bbox", "bboxes", "boxes") and not k.startswith(DETECTION_PREFIX):
            text, ids = _class_keys(types, k[: len(k) - len(last)], siblings=True)
            return "list", (k,), k[: len(k) - len(last)], text, ids
    return None


# MediaSequence's region/label/string and region/label/index among them
_TEXT_KEYS = (
    "class/text",
    "class_text",
    "label/text",
    "text",
    "category",
    "name",
    "class/name",
    "label/string",
)
_ID_KEYS = ("class/label", "label", "labels", "category_id", "class_id", "class/id", "label/index")


def _class_keys(types: dict[str, str], prefix: str, siblings: bool = False) -> tuple[str | None, str | None]:
    """Per-box class text and id keys near the box keys: beside the corners' folder (e.g.
    image/object/class/{text,label} for image/object/bbox/xmin), or beside a flat box list
    (`siblings`: objects/label for TFDS's objects/bbox)."""
    root = prefix.rstrip("/_.")
    parent = prefix if siblings else (root.rsplit("/", 1)[0] + "/" if "/" in root else "")
    text = ids = None
    for k, t in types.items():
        if not (k.startswith(parent) or not parent):
            continue
        last = k[len(parent) :]
        if t == BYTES_LIST and last in _TEXT_KEYS:
            text = text or k
        elif t == INT64_LIST and last in _ID_KEYS:
            ids = ids or k
    return text, ids
