"""Records as annotated images, the one shape every training-format export writes (COCO, YOLO,
VOC, Hugging Face Parquet, WebDataset): the image's bytes (JPEG and PNG as stored, anything else
encoded as PNG), its size, its boxes in pixels, their class ids and names, the record label, a
stable key and a file name.

Everything a record means comes from the one reading (`records.reading.read_record`): the box
convention, the keys, the class ids and names. Nothing here detects a convention again; boxes are
`RecordReading.boxes_in(width, height)` of the image actually stored.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.limits import EXPORT_NOTES_LISTED
from tfrview.core.records.feature import BYTES_LIST, INT64_LIST
from tfrview.core.records.images import ImageError, decode_image, find_images, image_features, open_image
from tfrview.core.records.masks import INSTANCE_MASK_KEY, is_mask_key, mask_pixels
from tfrview.core.records.payload import decode
from tfrview.core.records.reading import ReadingContext, class_name, label_names, read_record

log = logging.getLogger(__name__)

Progress = Callable[[int], bool]  # records done; False cancels (as `output.export.Progress`)

FILENAME_KEYS = ("image/filename", "filename", "image/file_name", "file_name", "image/id")
SOURCE_ID_KEYS = ("image/source_id", "source_id", "image/id", "id")
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
UNNAMED = "object"  # the class of boxes whose record names none


class NoImagesError(TfrviewError):
    """An export of images found none in the records (said in one line, nothing written)."""


@dataclass(frozen=True)
class Annotated:
    """One record as an annotated image. `boxes`: (n, 4) x0, y0, x1, y1 in pixels of the stored
    image; `class_ids`: (n,) int64 (boxes without a class: `UNNAMED`'s id)."""

    number: int  # the dataset's record number: COCO's image_id, the stable key
    key: str  # `r{number:09d}`: WebDataset's key, the stem of a file with no name of its own
    file_name: str  # the record's own file name (made safe, unique in the export), else key.ext
    source_id: str | None
    image: bytes
    ext: str  # "jpg" | "png"
    width: int
    height: int
    boxes: np.ndarray
    class_ids: np.ndarray
    class_names: tuple[str, ...]
    segmentations: tuple = ()  # each box's instance mask as COCO's uncompressed RLE (or None); () none
    label: int | None = None  # the record label's first id (an int label), for classification
    label_name: str | None = None
    split: str = ""

    @property
    def stem(self) -> str:
        return self.file_name.rsplit(".", 1)[0]


@dataclass
class Classes:
    """Every class id met and its name (label map or TFDS ClassLabel names first, then the records'
    texts): COCO's categories, YOLO's names, the HF ClassLabel. Class texts without ids get ids
    after the largest known one, in the order met."""

    names: dict[int, str] = field(default_factory=dict)
    by_name: dict[str, int] = field(default_factory=dict)

    def seed(self, names: Mapping[int, str] | None) -> None:
        for i, n in (names or {}).items():
            self.add(int(i), str(n))

    def add(self, i: int, name: str | None) -> None:
        if name and (i not in self.names or self.names[i].startswith("id ")):
            self.names[i] = name
            self.by_name.setdefault(name, i)
        elif i not in self.names:
            self.names[i] = class_name(i)

    def id_of(self, name: str) -> int:
        i = self.by_name.get(name)
        if i is None:
            i = max(self.names, default=0) + 1
            self.add(i, name)
        return i

    def ordered(self) -> list[tuple[int, str]]:
        return sorted(self.names.items())


@dataclass
class Tally:
    """What an export left out, and why (the first EXPORT_NOTES_LISTED named)."""

    skipped: int = 0
    damaged: int = 0
    notes: list[str] = field(default_factory=list)

    def skip(self, number: int, why: str) -> None:
        self.skipped += 1
        if len(self.notes) < EXPORT_NOTES_LISTED:
            self.notes.append(f"record {number}: {why}")

    def lines(self) -> tuple[str, ...]:
        out = []
        if self.damaged:
            out.append(f"left out {self.damaged:,} damaged record(s) (data CRC fails)")
        out += self.notes
        if self.skipped - self.damaged > len(self.notes):
            out.append(f"... and {self.skipped - self.damaged - len(self.notes):,} more skipped")
        return tuple(out)


def first_text(features, keys) -> str | None:
    for k in keys:
        f = features.get(k)
        if f is not None and len(f.values) and f.type in (BYTES_LIST, INT64_LIST):
            v = f.values[0]
            return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
    return None


def safe_name(name: str) -> str:
    """A file name from the data, safe in any folder: its last path part, odd characters as `_`."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    return _UNSAFE.sub("_", base).lstrip(".")[:200]


_IMAGE_SUFFIXES = {"jpg": "jpg", "jpeg": "jpg", "png": "png"}


def file_name(own: str | None, key: str, ext: str) -> str:
    """An image's file name in an export: the record's own (made safe; its suffix the bytes' own
    when it names another image format, added when it has none), else `key.ext`."""
    name = safe_name(own) if own else ""
    if not name:
        return f"{key}.{ext}"
    stem, dot, suffix = name.rpartition(".")
    if not dot or not stem:
        return f"{name}.{ext}"
    if _IMAGE_SUFFIXES.get(suffix.lower(), ext) != ext:
        return f"{stem}.{ext}"
    return name


def image_of(features) -> tuple[bytes, str, int, int] | None:
    """The record's first image that is no mask: (bytes, ext, width, height), JPEG and PNG as
    stored (their header gives the size), anything else decoded and encoded as PNG."""
    for ref in find_images(features):
        if is_mask_key(ref.key, features):
            continue
        if ref.storage == "encoded" and ref.detail in ("JPEG", "PNG"):
            b = features[ref.key].values[ref.index]
            w, h = open_image(b).size  # the header only: no pixel decoded
            return b, "jpg" if ref.detail == "JPEG" else "png", int(w), int(h)
        img = decode_image(features, ref)
        from PIL import Image  # heavy: PIL on first use only

        buf = io.BytesIO()
        Image.fromarray(img.pixels).save(buf, "PNG")
        return buf.getvalue(), "png", img.width, img.height
    return None


def annotated_records(
    items: Iterable[tuple[int, bytes | None, str]],
    context: ReadingContext,
    classes: Classes,
    tally: Tally,
    progress: Progress | None = None,
) -> Iterator[Annotated]:
    """Each (record number, payload or None for a damaged record, split) as an `Annotated`; a
    damaged record, one without an image or one whose image does not decode is counted in `tally`
    and left out. `classes` collects every class met (seeded by the caller with the label map)."""
    used: set[str] = set()
    for done, (number, data, split) in enumerate(items, 1):
        if progress is not None and not progress(done):
            raise Cancelled("export cancelled")
        if data is None:
            tally.damaged += 1
            tally.skip(number, "damaged (data CRC fails)")
            continue
        p = decode(data)
        if p.full_size is not None:
            tally.skip(number, "over the decode limit (limits.MAX_DECODE_BYTES): no image read")
            continue
        feats = image_features(p)
        try:
            got = image_of(feats)
        except ImageError as exc:
            tally.skip(number, str(exc))
            continue
        if got is None:
            tally.skip(number, f"no image ({p.kind})")
            continue
        image, ext, w, h = got
        r = read_record(p, context)
        n = r.box_count
        boxes = r.boxes_in(w, h) if n else np.empty((0, 4))
        ids = r.class_ids
        texts = r.class_texts
        names = tuple(r.box_name(i) for i in range(n))
        if len(ids) >= n:
            ids = ids[:n].astype(np.int64)
            named = len(texts) > 0 or bool(r.label_map)
            for i, name in zip(ids.tolist(), names, strict=True):
                classes.add(i, name if named else None)
        elif len(texts) >= n:
            ids = np.array([classes.id_of(name) for name in names], dtype=np.int64)
        else:  # boxes the record names no class for: one class, "object", so every format can say them
            ids = np.full(n, classes.id_of(UNNAMED), dtype=np.int64)
            names = (UNNAMED,) * n
        key = f"r{number:09d}"
        own = first_text(p.features, FILENAME_KEYS) if p.features else None
        name = file_name(own, key, ext)
        if name.rsplit(".", 1)[0].lower() in used:  # YOLO's and VOC's files go by the stem
            name = f"{key}_{name}"
        used.add(name.rsplit(".", 1)[0].lower())
        label = r.label_ids[0] if r.label_ids else None
        label_name = None
        if label is not None:
            names_of = label_names(r.label_key, r.tfds, r.label_map)
            label_name = names_of.get(label) if names_of else None
        segs = instance_rles(p.features, n, w, h) if p.features and INSTANCE_MASK_KEY in p.features else ()
        yield Annotated(
            number=number,
            key=key,
            file_name=name,
            source_id=first_text(p.features, SOURCE_ID_KEYS) if p.features else None,
            image=image,
            ext=ext,
            width=w,
            height=h,
            boxes=np.asarray(boxes, dtype=np.float64).reshape(-1, 4),
            class_ids=ids,
            class_names=names,
            segmentations=segs,
            label=label,
            label_name=label_name,
            split=split,
        )


SPLIT_FOLDERS = {"train": "train", "validation": "val", "test": "test", "": "all"}


def split_folder(split: str) -> str:
    """The folder word of a split in the exports (YOLO's and COCO's `val`; `all` for no split)."""
    return SPLIT_FOLDERS.get(split, safe_name(split) or "all")


def xywh(boxes: np.ndarray) -> np.ndarray:
    """(n, 4) corners x0, y0, x1, y1 as COCO's [x, y, width, height]."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return np.stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]], axis=1)


def rle(mask: np.ndarray) -> dict:
    """A binary mask as COCO's uncompressed RLE: run lengths in column-major order, zeros first."""
    h, w = mask.shape
    flat = np.asarray(mask, dtype=bool).T.reshape(-1)
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    counts = np.diff(np.concatenate([[0], change, [flat.size]])).tolist()
    return {"size": [int(h), int(w)], "counts": ([0] if flat.size and flat[0] else []) + counts}


def instance_rles(features, n: int, width: int, height: int) -> tuple:
    """Box i's instance mask (the OD API's `image/object/mask`: a PNG an object, or dense floats
    objects x height x width) as RLE, None where a mask is missing or of another size than the
    image; () when the masks do not go one to a box."""
    from tfrview.core.records.feature import FLOAT_LIST

    inst = features[INSTANCE_MASK_KEY]
    per = width * height
    if inst.type == BYTES_LIST and len(inst.values) == n:
        masks = [mask_pixels(b) for b in inst.values]
    elif inst.type == FLOAT_LIST and per and len(inst.values) == n * per:
        vals = np.asarray(inst.values, dtype=np.float32).reshape(n, height, width)
        masks = list(vals > 0.5)
    else:
        return ()
    return tuple(
        rle(m > 0) if m is not None and m.ndim == 2 and m.shape == (height, width) else None for m in masks
    )
