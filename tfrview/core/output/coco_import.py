"""Corrected COCO annotations (e.g. fixed in CVAT) back into a new TFRecord.

Each COCO image is joined to a record by file name (the name the record states, as the exports
name its image) or by `source_id` (the image's `source_id`, else its `id` as text: the Object
Detection API's `create_coco_tf_record` convention). A matched record's boxes and classes are
replaced: every per-object list (`image/object/...`, `objects/...`, and the keys its reading took
its boxes from) is removed, and `image/object/bbox/{xmin,ymin,xmax,ymax}` (normalised by the
image's size), `image/object/class/label` (the category id) and `image/object/class/text` (its
name) are written. Records not matched are copied as they are; damaged records are left out. The
report says what matched, what did not on either side, and the category names that do not match
the label map."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.limits import IMPORT_REPORT_LISTED, MAX_COCO_JSON_BYTES, too_large
from tfrview.core.output.annotated import (
    FILENAME_KEYS,
    SOURCE_ID_KEYS,
    Progress,
    file_name,
    first_text,
    image_of,
    safe_name,
)
from tfrview.core.output.atomic import atomic_write_text, check_new_output
from tfrview.core.output.words import JoinBy
from tfrview.core.output.writer import RecordWriter
from tfrview.core.records.images import ImageError, image_features
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.records.payload import decode
from tfrview.core.records.reading import OBJECT_PREFIXES, BoxSpec, ReadingContext, read_record
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)

BOX_KEYS = tuple(f"image/object/bbox/{c}" for c in ("xmin", "ymin", "xmax", "ymax"))


class CocoError(TfrviewError):
    """An annotations file that is not COCO instances JSON (one line)."""


@dataclass
class ImportReport:
    """What a re-import did: the counts, and the first `IMPORT_REPORT_LISTED` of each kind named."""

    matched: int = 0
    written: int = 0
    annotations: int = 0  # boxes written into matched records
    damaged: int = 0  # damaged records left out
    in_file_not_dataset: list[str] = field(default_factory=list)  # COCO images no record matched
    in_dataset_not_file: list[int] = field(default_factory=list)  # records no image matched (copied)
    unmatched_images: int = 0
    unmatched_records: int = 0
    category_mismatches: list[str] = field(default_factory=list)  # names not in the label map as given
    not_rewritten: list[int] = field(default_factory=list)  # matched but no Example (copied as is)
    orphan_annotations: int = 0  # annotations whose image_id names no image
    join: str = JoinBy.FILENAME.value

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1) + "\n"

    def line(self) -> str:
        return (
            f"{self.matched:,} records matched ({self.annotations:,} boxes), {self.unmatched_records:,} records "
            f"not in the annotations (copied as they were), {self.unmatched_images:,} annotated images not in "
            f"the dataset, {len(self.category_mismatches)} category names not in the label map"
            + (f", {self.damaged:,} damaged records left out" if self.damaged else "")
        )


@dataclass(frozen=True)
class CocoImage:
    key: str
    width: int | None
    height: int | None
    boxes: np.ndarray  # (n, 4) x, y, w, h in pixels
    category_ids: np.ndarray


def load_coco(path: Path) -> tuple[list[dict], dict[int, str], list[dict], int]:
    """(images, {category id: name}, annotations, orphan annotations) of a COCO instances file."""
    try:
        size = path.stat().st_size
        if size > MAX_COCO_JSON_BYTES:
            raise CocoError(
                too_large(f"{printable(str(path))}:", size, MAX_COCO_JSON_BYTES, name="MAX_COCO_JSON_BYTES")
            )
        doc = json.loads(path.read_bytes())
    except OSError as exc:
        raise CocoError(f"{printable(str(path))}: cannot read ({exc.strerror or exc})") from None
    except (ValueError, RecursionError) as exc:
        raise CocoError(f"{printable(str(path))}: not JSON ({str(exc)[:80]})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("images"), list):
        raise CocoError(f"{printable(str(path))}: not COCO instances JSON (no 'images' list)")
    try:
        cats = {int(c["id"]): str(c["name"]) for c in doc.get("categories", [])}
        images = [i for i in doc["images"] if isinstance(i, dict) and "id" in i]
        ids = {i["id"] for i in images}
        anns = [a for a in doc.get("annotations", []) if isinstance(a, dict)]
        orphans = sum(1 for a in anns if a.get("image_id") not in ids)
    except (KeyError, TypeError, ValueError) as exc:
        raise CocoError(f"{printable(str(path))}: not COCO instances JSON ({exc!r:.80})") from None
    return images, cats, anns, orphans


def _key_of_image(image: dict, join: JoinBy) -> str:
    if join is JoinBy.FILENAME:
        return safe_name(str(image.get("file_name", "")))
    sid = image.get("source_id")
    return str(sid if sid is not None else image["id"])


def coco_images(images: list[dict], anns: list[dict], join: JoinBy) -> dict[str, CocoImage]:
    """Each image's key (its file name or source_id) with its boxes, as arrays."""
    by_id: dict[object, list[dict]] = {}
    for a in anns:
        by_id.setdefault(a.get("image_id"), []).append(a)
    out: dict[str, CocoImage] = {}
    for im in images:
        mine = by_id.get(im["id"], [])
        boxes = np.array([[float(v) for v in a["bbox"][:4]] for a in mine], dtype=np.float64).reshape(-1, 4)
        cats = np.array([int(a["category_id"]) for a in mine], dtype=np.int64)
        w, h = im.get("width"), im.get("height")
        out[_key_of_image(im, join)] = CocoImage(
            _key_of_image(im, join), int(w) if w else None, int(h) if h else None, boxes, cats
        )
    return out


def _record_keys(p, number: int, join: JoinBy) -> list[str]:
    """The keys a record may be known by in the annotations: its stated file name (and the forms
    the exports give it: `r{number}_name` when two records share a name, `r{number}.jpg/.png`
    without one), or its source_id."""
    if join is JoinBy.SOURCE_ID:
        sid = first_text(p.features, SOURCE_ID_KEYS)
        return [sid] if sid is not None else []
    key = f"r{number:09d}"
    own = first_text(p.features, FILENAME_KEYS)
    names = dict.fromkeys(file_name(own, key, ext) for ext in ("jpg", "png"))  # as the exports name it
    return [*names, *(f"{key}_{n}" for n in names if own)]


def rewritten(
    p, spec: BoxSpec | None, coco: CocoImage, names: Mapping[int, str], size: tuple[int, int]
) -> bytes:
    """The record's Example with its per-object lists replaced by the COCO image's boxes."""
    from tfrview.core.records.proto import example_pb2  # heavy: protobuf on first use only

    ex = example_pb2.Example.FromString(p.raw)
    feats = ex.features.feature
    gone = set(spec.keys) | {spec.class_text, spec.class_id} if spec is not None else set()
    for k in list(feats):
        if k in gone or k.startswith(OBJECT_PREFIXES):
            del feats[k]
    w, h = coco.width or size[0], coco.height or size[1]
    b = coco.boxes
    x0, y0 = b[:, 0] / w, b[:, 1] / h
    x1, y1 = (b[:, 0] + b[:, 2]) / w, (b[:, 1] + b[:, 3]) / h
    for k, v in zip(BOX_KEYS, (x0, y0, x1, y1), strict=True):
        feats[k].float_list.value.extend(v.tolist())
    feats["image/object/class/label"].int64_list.value.extend(coco.category_ids.tolist())
    feats["image/object/class/text"].bytes_list.value.extend(
        names.get(int(c), f"id {int(c)}").encode() for c in coco.category_ids.tolist()
    )
    return ex.SerializeToString()


def import_coco(
    annotations: Path,
    items: Iterable[tuple[int, bytes | None, str]],
    out: Path,
    *,
    join: JoinBy = JoinBy.FILENAME,
    label_map: Mapping[int, str] | None = None,
    specs: tuple[BoxSpec, ...] = (),
    tfds=None,
    inputs: list[Path] = (),
    force: bool = False,
    compression: str = "none",
    progress: Progress | None = None,
    report_path: Path | None = None,
) -> ImportReport:
    """Write `out`: the records of `items` ((number, payload or None for a damaged record, split))
    with the boxes of their COCO images. The report goes to `report_path` (JSON) too. Nothing is
    written when the annotations cannot be read or match no record (one-line errors)."""
    join = JoinBy(join)
    out = Path(out)
    check_new_output(out, list(inputs), force)
    if report_path is not None:
        check_new_output(report_path, list(inputs), force)
    images, cats, anns, orphans = load_coco(Path(annotations))
    by_key = coco_images(images, anns, join)
    rep = ImportReport(orphan_annotations=orphans, join=join.value)
    if label_map:
        rep.category_mismatches = sorted(
            f"{i}: {name}" for i, name in cats.items() if label_map.get(i) != name
        )[:IMPORT_REPORT_LISTED]
    context = ReadingContext(label_map=label_map, chosen=tuple(specs), tfds=tfds)
    seen: set[str] = set()
    with RecordWriter(out, compression) as w:
        for done, (number, data, _split) in enumerate(items, 1):
            if progress is not None and not progress(done):
                raise Cancelled("import cancelled")
            if data is None:
                rep.damaged += 1
                continue
            p = decode(data)
            hit = None
            if p.kind == PayloadKind.EXAMPLE and p.full_size is None:
                hit = next((k for k in _record_keys(p, number, join) if k in by_key and k not in seen), None)
            if hit is None:
                rep.unmatched_records += 1
                if len(rep.in_dataset_not_file) < IMPORT_REPORT_LISTED:
                    rep.in_dataset_not_file.append(number)
                w.write(data)
                continue
            coco = by_key[hit]
            size = (coco.width or 0, coco.height or 0)
            if not (coco.width and coco.height):
                try:
                    got = image_of(image_features(p))
                except ImageError:
                    got = None
                if got is None:
                    rep.not_rewritten.append(number)
                    w.write(data)
                    continue
                size = (got[2], got[3])
            seen.add(hit)
            r = read_record(p, context)
            w.write(rewritten(p, r.spec, coco, cats, size))
            rep.matched += 1
            rep.annotations += len(coco.boxes)
        if rep.matched == 0:  # raised inside the writer: its temporary file is dropped
            raise CocoError(
                f"{printable(str(annotations))}: no image matched a record by {join.value} "
                f"({len(by_key):,} images, {rep.unmatched_records:,} records); nothing written"
            )
    rep.written = w.count
    missing = [k for k in by_key if k not in seen]
    rep.unmatched_images = len(missing)
    rep.in_file_not_dataset = missing[:IMPORT_REPORT_LISTED]
    if report_path is not None:
        atomic_write_text(report_path, rep.to_json())
    log.info("%s: %s", printable(str(out)), rep.line())
    return rep
