"""QA checks: each a small pure function from a record's values to findings.

Record checks need only the record (boxes, images, labels, values). Dataset checks compare a record
with the rest (payload kind, missing features, feature types, duplicate images) and so need a
`Schema` inferred over the whole dataset first. `run_checks` does both passes over a source.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.limits import FACT_KEYS, IMAGE_KEY_ODD_TRACKED, TRACKED_KEYS
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.records import imagesignals
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST, TYPE_SHORT, Feature
from tfrview.core.records.images import (
    ImageRef,
    _raw_shape,
    check_decoded_size,
    find_images,
    open_image,
    sniff_image_format,
)
from tfrview.core.records.imagesignals import ImageSignals
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.records.payload import Payload, decode
from tfrview.core.records.reading import (
    OBJECT_PREFIXES,
    BoxConvention,
    ReadingContext,
    RecordReading,
    read_record,
    stated_size,
)
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import OVERHEAD
from tfrview.core.tfrecord.payload_bytes import bounded_payload


@dataclass(frozen=True, slots=True)
class Finding:
    kind: ProblemKind
    message: str
    feature: str = ""  # the key it is about: findings group by kind and feature, never by message
    detail: str = ""  # the data it quotes (bytes, a text), which differs from record to record

    def at(self, offset: int, data_length: int, record: int) -> Problem:
        """The finding as a problem of the record framed at `offset` (its whole frame's bytes)."""
        return Problem(
            self.kind,
            int(offset),
            int(data_length) + OVERHEAD,
            record,
            self.message,
            "",
            self.feature,
            self.detail,
        )


MOST = 0.9  # "present in most records": in at least this share of them


# --- boxes ------------------------------------------------------------------------------------------


def _vals(features: dict[str, Feature], key: str | None) -> np.ndarray:
    f = features.get(key) if key else None
    return np.asarray(f.values, dtype=np.float64) if f is not None and f.type != BYTES_LIST else np.empty(0)


def image_size_from_features(features: dict[str, Feature]) -> tuple[int, int] | None:
    """(width, height) as the record states them (`reading.stated_size`: the one rule)."""
    return stated_size(features)


def check_boxes(r: RecordReading, size: tuple[int, int] | None) -> list[Finding]:
    """Coordinates out of range, inverted or zero-area boxes, box and class lists of unequal lengths
    (of the boxes the reading found, in their own units)."""
    spec = r.spec
    if spec is None:
        return []
    features = r.features
    out: list[Finding] = []
    lens = r.list_lengths
    if len(lens) == 4 and len(set(lens)) > 1:
        names = ", ".join(f"{k.rsplit('/', 1)[-1]} {n}" for k, n in zip(spec.keys, lens, strict=True))
        out.append(Finding(ProblemKind.BOX_LIST_LENGTHS, f"box lists differ in length ({names})"))
    elif len(lens) == 1 and lens[0] % 4:
        out.append(
            Finding(ProblemKind.BOX_LIST_LENGTHS, f"{spec.keys[0]} has {lens[0]} values, not a multiple of 4")
        )
    n = r.box_count
    x0, y0, x1, y1 = r.corner_arrays
    normalized = spec.convention.normalized
    if normalized:
        limit_w = limit_h = 1.0
    elif size is not None:
        limit_w, limit_h = float(size[0]), float(size[1])
    else:
        limit_w = limit_h = math.inf
    eps = 1e-6 if normalized else 0.5
    # every box checked by array operations: a record of a million boxes costs arrays, not objects
    with np.errstate(invalid="ignore", over="ignore"):
        # NaN or inf: said once, as nan_or_inf
        finite = np.isfinite(x0) & np.isfinite(x1) & np.isfinite(y0) & np.isfinite(y1)
        low = np.minimum(np.minimum(x0, x1), np.minimum(y0, y1)) < -eps
        outside = np.flatnonzero(
            finite & (low | (np.maximum(x0, x1) > limit_w + eps) | (np.maximum(y0, y1) > limit_h + eps))
        )
        inverted = np.flatnonzero((x0 > x1) | (y0 > y1)) if spec.convention != BoxConvention.COCO_XYWH else ()
        zero = np.flatnonzero((x0 == x1) | (y0 == y1))
    if len(outside):
        where = "[0, 1]" if normalized else f"the {int(limit_w)}×{int(limit_h)} image"
        i = int(outside[0])
        out.append(
            Finding(
                ProblemKind.BOX_OUT_OF_BOUNDS,
                f"{len(outside)} box(es) outside {where}, e.g. box {i}: "
                f"x {x0[i]:.4g}..{x1[i]:.4g}, y {y0[i]:.4g}..{y1[i]:.4g}",
            )
        )
    if len(inverted):
        i = int(inverted[0])
        out.append(
            Finding(
                ProblemKind.BOX_INVERTED,
                f"{len(inverted)} box(es) with xmin > xmax or ymin > ymax, e.g. box {i}: "
                f"x {x0[i]:.4g}..{x1[i]:.4g}, y {y0[i]:.4g}..{y1[i]:.4g}",
            )
        )
    if len(zero):
        out.append(
            Finding(ProblemKind.BOX_ZERO_AREA, f"{len(zero)} box(es) of zero area, e.g. box {int(zero[0])}")
        )
    for key in (spec.class_text, spec.class_id):
        f = features.get(key) if key else None
        if f is not None and len(f.values) != n:
            out.append(
                Finding(ProblemKind.CLASS_LIST_LENGTH, f"{key} has {len(f.values)} values for {n} boxes")
            )
    return out


# --- images -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImageFacts:
    ref: ImageRef
    width: int
    height: int
    bands: int
    orientation: int
    signals: ImageSignals | None = None  # its hashes and scores, when asked (records.imagesignals)


def inspect_image(b: bytes, ref: ImageRef, signals: bool = False) -> ImageFacts:
    """Header facts and a reduced decode (JPEG draft) that fails on truncated or corrupt data.
    `signals`: the hashes and quality scores of that same small image too (no second decode)."""

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Pillow's "Corrupt EXIF data" and the like: not for stderr
        with open_image(b) as im:
            w, h = im.size
            orientation = int(im.getexif().get(0x0112, 1) or 1)
            bands = len(im.getbands())
            if im.format == "JPEG":
                # RGB, not as stored (YCbCr): libjpeg's SIMD colour conversion made the decode
                # faster than its YCbCr output saved the signals (1.18 against 1.21-1.26 ms)
                im.draft(im.mode, (max(1, w // 8), max(1, h // 8)))
            check_decoded_size(im)
            im.load()
            sig = _signals_of(im, (w, h)) if signals else None
    return ImageFacts(ref, w, h, bands, orientation, sig)


# The longer side an image without a draft (PNG, WebP...) is reduced to, at least, before its signals
# are taken: as small as a JPEG's draft of a large photo, and past every working scale the scores use.
SIGNAL_SIDE = 256


def _signals_of(im, full: tuple[int, int]) -> ImageSignals:
    """`imagesignals.signals` of a loaded Pillow image: 8-bit grey or RGB pixels (16-bit grey
    scaled to 8 bits, palette and CMYK as RGB, alpha dropped), its luma by Pillow's own "L"."""
    signals = imagesignals.signals
    k = max(im.size) // SIGNAL_SIDE  # a PNG has no draft: 7,000 x 7,000 16-bit pixels as floats cost 1.3 GB
    if k > 1:
        w, h = im.size
        small = (max(1, w // k), max(1, h // k))
        reducible = im.mode not in ("P", "1") and not im.mode.startswith("I;16")
        from PIL import Image  # start-up: kept off the CLI's path

        im = im.reduce(k) if reducible else im.resize(small, Image.Resampling.NEAREST)
    mode = im.mode
    if mode == "L":
        a = _array(im)
        return signals(a, full, a)
    if mode == "RGB":
        return signals(_array(im), full, _array(im.convert("L")))
    if mode == "YCbCr":  # its band 0 is the luma
        return signals(_array(im), full, ycc=True)
    if mode in ("I", "F") or mode.startswith("I;16"):
        a = np.asarray(im, dtype=np.float64)
        top = 65535.0 if mode.startswith("I") and a.size and a.max() > 255 else 255.0
        g = np.clip(np.rint(a * (255.0 / top)), 0, 255).astype(np.uint8)
        return signals(g, full, g)
    if len(im.getbands()) in (1, 2) and mode != "P":  # 1, LA, La: grey (and alpha)
        g = np.asarray(im.convert("L"))
        return signals(g, full, g)
    rgb = im.convert("RGB")
    return signals(np.asarray(rgb), full, np.asarray(rgb.convert("L")))


def _array(im) -> np.ndarray:
    """An 8-bit L or three-band image's pixels (read-only): one copy of its bytes, without the
    array interface's detour (np.asarray(im) cost twice as much on a draft's few thousand pixels)."""
    w, h = im.size
    shape = (h, w) if im.mode == "L" else (h, w, len(im.getbands()))
    return np.frombuffer(im.tobytes(), np.uint8).reshape(shape)


def check_images(features: dict[str, Feature]) -> tuple[list[Finding], tuple[int, int] | None]:
    """Undecodable images, stated sizes that differ from the image, EXIF rotations that swap width
    and height. Also returns the first image's (width, height) for box checks."""
    found, size, _ = look_at_images(features)
    return found, size


def look_at_images(
    features: dict[str, Feature], signals: bool = False
) -> tuple[list[Finding], tuple[int, int] | None, ImageSignals | None]:
    """`check_images`, and (`signals`) the hashes and scores of the first image that decodes, the
    one its (width, height) is of; None when no encoded image decodes (never a blank's scores)."""
    out: list[Finding] = []
    size = None
    sig = None
    stated = image_size_from_features(features)
    chans = next(
        (
            int(f.values[0])
            for k, f in features.items()
            if f.type == INT64_LIST and len(f.values) == 1 and k.rsplit("/", 1)[-1] in ("channels", "depth")
        ),
        None,
    )
    for ref in find_images(features):
        if ref.storage != "encoded":
            continue
        try:
            facts = inspect_image(features[ref.key].values[ref.index], ref, signals and size is None)
        except Exception as exc:  # Pillow raises many types for broken data
            from tfrview.core.records.images import ImageError, decode_error_text

            why = (
                str(exc) if isinstance(exc, ImageError) else f"bytes do not decode ({decode_error_text(exc)})"
            )
            out.append(Finding(ProblemKind.IMAGE_UNDECODABLE, f"{ref.key}: {ref.detail} {why}", ref.key))
            continue
        if size is None:
            size = (facts.width, facts.height)
            sig = facts.signals
            if stated and stated != size:
                out.append(
                    Finding(
                        ProblemKind.IMAGE_SIZE_MISMATCH,
                        f"{ref.key} is {facts.width}×{facts.height} but the record says "
                        f"{stated[0]}×{stated[1]}",
                    )
                )
            if chans and chans != facts.bands:
                out.append(
                    Finding(
                        ProblemKind.IMAGE_SIZE_MISMATCH,
                        f"{ref.key} has {facts.bands} channel(s) but the record says {chans}",
                    )
                )
            if facts.orientation in (5, 6, 7, 8):
                out.append(
                    Finding(
                        ProblemKind.IMAGE_EXIF_ROTATION,
                        f"{ref.key} has EXIF orientation {facts.orientation}: viewers show it rotated "
                        f"({facts.height}×{facts.width}), TensorFlow's decoders do not",
                    )
                )
    return out, size or stated, sig


# Formats `*/format` names, as Pillow's sniffing (records.sniff) calls them; "raw" and the like
# mean the key holds pixels, not a file.
_FORMAT_WORDS = {
    "jpeg": "jpeg",
    "jpg": "jpeg",
    "png": "png",
    "gif": "gif",
    "bmp": "bmp",
    "webp": "webp",
    "tiff": "tiff",
    "tif": "tiff",
}


def image_slots(features: dict[str, Feature]) -> list[tuple[str, str | None]]:
    """Keys that should hold encoded images by convention, with the format their `*/format`
    sibling names (None if it names none): OD API and TFDS keys (`image/encoded`, any
    `*/encoded` beside a `*/format`, `image`), never keys of raw pixels (format "raw")."""
    out = []
    for key, f in features.items():
        if f.type != BYTES_LIST:
            continue
        base = key.rsplit("/", 1)
        prefix = base[0] if len(base) == 2 else ""
        fmt_key = f"{prefix}/format" if prefix else "format"
        fmt_feat = features.get(fmt_key)
        fmt_word = None
        if fmt_feat is not None and fmt_feat.type == BYTES_LIST and len(fmt_feat.values):
            raw = fmt_feat.values[0]
            fmt_word = (
                (raw.decode("ascii", "replace") if isinstance(raw, bytes) else str(raw)).strip().lower()
            )
        named = _FORMAT_WORDS.get(fmt_word) if fmt_word else None
        if fmt_word and named is None:
            continue  # "raw", "uint8", "npy": pixels or tensors, not a file
        conventional = key in ("image/encoded", "image") or (
            base[-1] == "encoded" and ("image" in prefix or named)
        )
        if conventional:
            out.append((key, named))
    return out


def check_image_slots(features: dict[str, Feature]) -> list[Finding]:
    """An image key that holds no image: empty bytes, a file name or other text, noise, or bytes
    of another format than its `*/format` says. (Bytes that look like an image are checked by
    `check_images`; raw pixel arrays of the stated size are images too.)"""
    from tfrview.core.tfrecord.sniff import sniff_image_format

    out: list[Finding] = []
    for key, named in image_slots(features):
        for i, b in enumerate(features[key].values[:64]):
            where = key if len(features[key].values) == 1 else f"{key}[{i}]"
            if not isinstance(b, bytes):
                continue
            if not b:
                out.append(Finding(ProblemKind.IMAGE_NOT_IMAGE, f"{where} is empty (0 bytes)", key))
                continue
            fmt = sniff_image_format(b)
            if fmt is None:
                if _raw_shape(features, key, len(b)):
                    continue  # pixels of the stated height x width
                words, detail = _what_it_holds(b)
                out.append(
                    Finding(ProblemKind.IMAGE_NOT_IMAGE, f"{where} {words}, not an image", key, detail)
                )
            elif named is not None and _FORMAT_WORDS.get(fmt.lower(), fmt.lower()) != named:
                fmt_key = key.rsplit("/", 1)[0] + "/format" if "/" in key else "format"
                out.append(
                    Finding(
                        ProblemKind.IMAGE_FORMAT_MISMATCH,
                        f"{where} holds {fmt.upper()} bytes but {fmt_key} says {named}",
                        key,
                    )
                )
    return out


MOSTLY_IMAGES = 0.8  # share of a key's records whose value is an image that makes it an image key


@dataclass
class ImageKeys:
    """Bytes keys no convention names as images, and how often their value is one: a key that
    holds an image in most records should hold one in all (the dataset says so, not the key's
    name). Mergeable across files; at most IMAGE_KEY_ODD_TRACKED odd values kept a key a file."""

    images: Counter = field(default_factory=Counter)  # key -> records whose value is an image
    seen: Counter = field(default_factory=Counter)  # key -> records holding one bytes value
    # key -> (record, what it holds, detail)
    odd: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)

    def add(self, n: int, features: dict[str, Feature]) -> None:
        slots = None
        for key, f in features.items():
            if f.type != BYTES_LIST or len(f.values) != 1 or not isinstance(f.values[0], bytes):
                continue
            if slots is None:
                slots = {k for k, _ in image_slots(features)}  # checked record by record already
            if key in slots:
                continue
            if key not in self.seen and len(self.seen) >= TRACKED_KEYS:
                continue  # a key past the limit (said by the schema's other keys)
            b = f.values[0]
            self.seen[key] += 1
            if sniff_image_format(b) is not None:
                self.images[key] += 1
                continue
            odd = self.odd.setdefault(key, [])
            if len(odd) < IMAGE_KEY_ODD_TRACKED:
                odd.append((n, *(("is empty (0 bytes)", "") if not b else _what_it_holds(b))))

    def merge(self, o: ImageKeys) -> None:
        if len(self.seen) + len(o.seen) > TRACKED_KEYS:  # keys past the limit are not followed
            keep = [k for k in o.seen if k in self.seen]
            keep += [k for k in o.seen if k not in self.seen][: max(0, TRACKED_KEYS - len(self.seen))]
            o = ImageKeys(
                Counter({k: o.images[k] for k in keep if k in o.images}),
                Counter({k: o.seen[k] for k in keep}),
                {k: o.odd[k] for k in keep if k in o.odd},
            )
        self.images.update(o.images)
        self.seen.update(o.seen)
        for k, v in o.odd.items():
            self.odd.setdefault(k, []).extend(v)

    def image_keys(self) -> dict[str, str]:
        """Keys that hold an image in most records, each with the words that say so."""
        return {
            k: f"the key holds an image in {100 * n / self.seen[k]:.0f}% of the {self.seen[k]:,} records that have it"
            for k, n in self.images.items()
            if n >= 5 and n >= MOSTLY_IMAGES * self.seen[k]
        }


def image_key_findings(keys: ImageKeys, dataset: ImageKeys) -> list[tuple[int, Finding]]:
    """A file's values that are no image, of keys the whole dataset holds images in."""
    out = []
    for key, why in dataset.image_keys().items():
        for n, words, *detail in keys.odd.get(key, ()):
            out.append(
                (
                    n,
                    Finding(
                        ProblemKind.IMAGE_NOT_IMAGE,
                        f"{key} {words}, not an image: {why}",
                        key,
                        detail[0] if detail else "",
                    ),
                )
            )
    return out


def _what_it_holds(b: bytes) -> tuple[str, str]:
    """A few words on bytes that are not an image, and the data they quote apart (a detail: the
    words of every such record are the same, so they group): text (a file name written where the
    image should be), or so many bytes that start with what."""
    head = b[:64]
    try:
        text = b.decode("utf-8") if len(b) <= 256 else ""
    except UnicodeDecodeError:
        text = ""
    if text and text.isprintable():
        shown = printable(text if len(text) <= 60 else text[:57] + "…")
        looks = " (a file name?)" if "." in text and " " not in text.strip() and len(text) < 256 else ""
        return f"holds a text{looks}", f"the text {shown!r}"
    return "holds bytes that no image format starts with", f"{len(b):,} bytes, starting {head[:8].hex(' ')}"


# --- masks --------------------------------------------------------------------------------------------


def check_masks(
    features: dict[str, Feature],
    image_size: tuple[int, int] | None,
    boxes: int | None,
    label_map: dict[int, str] | None,
) -> list[Finding]:
    """Segmentation and instance masks: a size other than the image's, class ids the label map
    does not name (0 background and 255 'ignore' excepted), a count of instance masks other than
    the boxes', an instance mask with no pixel set."""
    out: list[Finding] = []
    from tfrview.core.records.masks import mask_keys, mask_pixels  # start-up: kept off the CLI's path

    for key in mask_keys(features):
        px = mask_pixels(features[key].values[0])
        if px is None:
            continue
        h, w = px.shape[:2]
        if image_size and (w, h) != tuple(image_size):
            out.append(
                Finding(
                    ProblemKind.MASK_SIZE_MISMATCH,
                    f"{key} is {w}×{h} but the image is {image_size[0]}×{image_size[1]}",
                )
            )
        if label_map:
            ids = [int(i) for i in np.unique(px) if int(i) not in (0, 255) and int(i) not in label_map]
            if ids:
                out.append(
                    Finding(
                        ProblemKind.MASK_CLASS_NOT_IN_MAP,
                        f"{key} holds class ids the label map does not name: {ids[:10]}",
                    )
                )
    inst = features.get("image/object/mask")
    if inst is not None and len(inst.values):
        if inst.type == BYTES_LIST:
            masks = [mask_pixels(b) for b in inst.values[:256]]
            n = len(inst.values)
        elif inst.type == FLOAT_LIST and image_size and image_size[0] * image_size[1]:
            per = image_size[0] * image_size[1]
            n = len(inst.values) // per if len(inst.values) % per == 0 else -1
            if n < 0:
                out.append(
                    Finding(
                        ProblemKind.MASK_COUNT_MISMATCH,
                        f"image/object/mask has {len(inst.values):,} values, not a whole number of "
                        f"{image_size[0]}×{image_size[1]} masks",
                    )
                )
                return out
            vals = np.asarray(inst.values[: per * 256])
            masks = [
                vals[i * per : (i + 1) * per].reshape(image_size[1], image_size[0])
                for i in range(min(n, 256))
            ]
        else:
            return out
        if boxes is not None and n != boxes:
            out.append(
                Finding(ProblemKind.MASK_COUNT_MISMATCH, f"image/object/mask has {n} masks for {boxes} boxes")
            )
        empty = [i for i, m in enumerate(masks) if m is not None and not np.any(m)]
        if empty:
            out.append(
                Finding(
                    ProblemKind.MASK_EMPTY,
                    f"{len(empty)} instance mask(s) with no pixel set, e.g. mask {empty[0]}",
                )
            )
        for i, m in enumerate(masks):
            if m is not None and image_size and (m.shape[1], m.shape[0]) != tuple(image_size):
                out.append(
                    Finding(
                        ProblemKind.MASK_SIZE_MISMATCH,
                        f"image/object/mask {i} is {m.shape[1]}×{m.shape[0]} but the image is "
                        f"{image_size[0]}×{image_size[1]}",
                    )
                )
                break
    return out


# --- labels -------------------------------------------------------------------------------------------


def check_labels(r: RecordReading, label_map: dict[int, str] | None, od_dataset: bool) -> list[Finding]:
    """Class ids missing from the label map, id 0 in an Object Detection API dataset, class names that
    disagree with the label map (the boxes' class ids and texts the reading found)."""
    out: list[Finding] = []
    spec = r.spec
    id_key = spec.class_id if spec else None
    ids = r.class_ids
    texts = r.class_texts
    if od_dataset and (ids == 0).any():
        out.append(label_zero_finding(id_key))
    if label_map:
        known = np.fromiter(label_map, dtype=np.int64, count=len(label_map))
        distinct = np.unique(ids)  # array operations: a million boxes cost no object a box
        unknown = distinct[~np.isin(distinct, known)][:10].tolist()
        if unknown:
            out.append(
                Finding(
                    ProblemKind.LABEL_NOT_IN_MAP, f"{id_key} ids not in the label map", id_key, f"{unknown}"
                )
            )
        accepts = getattr(label_map, "accepts", lambda i, t: label_map.get(i) == t)
        n = min(len(ids), len(texts))
        pairs = _id_text_pairs(ids[:n], texts[:n])
        bad = [(i, b.decode("utf-8", "replace"), k) for i, b, k in pairs if i in label_map]
        bad = [(i, t, k) for i, t, k in bad if not accepts(i, t)]
        near = [(i, t, k) for i, t, k in bad if _same_words(t, label_map, i)]
        far = [(i, t, k) for i, t, k in bad if not _same_words(t, label_map, i)]
        for kind, found in ((ProblemKind.LABEL_TEXT_MISMATCH, far), (ProblemKind.LABEL_TEXT_CASE, near)):
            if found:
                i, t, _ = found[0]  # the first box's
                more = sum(k for _, _, k in found) - 1
                out.append(
                    Finding(
                        kind,
                        f"{spec.class_text} differs from the label map's name"
                        + (" (only case or spacing differ)" if kind == ProblemKind.LABEL_TEXT_CASE else ""),
                        spec.class_text,
                        f"class text {t!r} for id {i}, which the label map names {label_map[i]!r}"
                        + (f" (+{more} more)" if more else ""),
                    )
                )
    return out


def _id_text_pairs(ids: np.ndarray, texts) -> list[tuple[int, bytes, int]]:
    """(class id, class text, boxes) of each distinct pair, in the order the boxes first show them:
    found by array operations over codes of the texts (the record's own bytes objects), so a million
    boxes of a few classes cost arrays and a few tuples."""
    if not len(ids):
        return []
    codes: dict = {}
    c = np.fromiter((codes.setdefault(b, len(codes)) for b in texts), dtype=np.int64, count=len(texts))
    by_code = list(codes)
    lo, m = int(ids.min()), len(codes)
    if (int(ids.max()) - lo + 1) * m < 1 << 62:  # one int64 key a pair: a flat unique, ~5x faster
        key, first, counts = np.unique((ids - lo) * m + c, return_index=True, return_counts=True)
        pairs = np.stack([key // m + lo, key % m], axis=1)
    else:
        pairs, first, counts = np.unique(
            np.stack([ids, c], axis=1), axis=0, return_index=True, return_counts=True
        )
    return [
        (int(pairs[j, 0]), by_code[int(pairs[j, 1])], int(counts[j]))
        for j in np.argsort(first, kind="stable")
    ]


def label_zero_finding(id_key: str | None) -> Finding:
    return Finding(
        ProblemKind.LABEL_ZERO,
        f"{id_key} holds 0, which the Object Detection API reserves for background",
        id_key or "",
    )


def class_zero_key(r: RecordReading) -> str | None:
    """The class-id key of a record whose class ids include 0 (else None): an error only in an Object
    Detection API dataset, which is known once every file is read."""
    return r.class_zero_key


def _same_words(text: str, label_map, i: int) -> bool:
    """Do `text` and a name of item i differ only by case or white space?"""

    def norm(s: str) -> str:
        return " ".join(s.split()).casefold()

    names = (label_map[i], *getattr(label_map, "names", {}).get(i, ()))
    return any(norm(text) == norm(n) for n in names)


def check_size_types(features: dict[str, Feature]) -> list[Finding]:
    """image/height and image/width stored as floats: the Object Detection API's and TFDS's parsers
    read them as int64 and fail on such a record, so this is a schema error, not a detail."""
    return [
        Finding(
            ProblemKind.IMAGE_SIZE_TYPE,
            f"{k} is stored as float; parsers of the Object Detection API and TFDS read it as int64 and fail",
            k,
        )
        for k, f in features.items()
        if f.type == FLOAT_LIST and k.rsplit("/", 1)[-1] in ("height", "width") and "image" in k
    ]


# --- values -------------------------------------------------------------------------------------------


def check_values(features: dict[str, Feature]) -> list[Finding]:
    out = []
    for k, f in features.items():
        if f.type == FLOAT_LIST and len(f.values):
            bad = int(np.count_nonzero(~np.isfinite(f.values)))
            if bad:
                out.append(
                    Finding(
                        ProblemKind.NAN_OR_INF,
                        f"{k} has {bad} NaN or infinite value(s) of {len(f.values)}",
                        k,
                    )
                )
    return out


# --- dataset-level ---------------------------------------------------------------------------------------


@dataclass
class Schema:
    """What most records look like: payload kind, and each feature's presence and type.

    At most limits.TRACKED_KEYS distinct keys are tracked (the first seen, in record and file
    order); a non-empty feature of any further key is counted in `other`, so a dataset of a million
    distinct keys costs a few MB here, not gigabytes, and `other_keys_finding` says so once."""

    records: int = 0
    kinds: Counter = field(default_factory=Counter)
    presence: Counter = field(default_factory=Counter)
    types: dict[str, Counter] = field(default_factory=dict)
    od: int = 0  # records with Object Detection API box keys
    other: int = 0  # features of keys past TRACKED_KEYS (a key counted once a record)
    first_other: int = -1  # the first record (of this file) holding such a key, -1 if none

    def add(self, p: Payload, reading: RecordReading | None = None) -> None:
        """Count one record (`reading`: its reading, when the caller has it)."""
        if p.full_size is not None:
            return  # too large to decode: only its head is known, which says nothing of the schema
        self.records += 1
        self.kinds[p.kind] += 1
        for k, f in p.features.items():
            if not len(f.values):
                continue  # an empty list of any type is a missing value (TFX writes them so)
            c = self.types.get(k)
            if c is None:  # not setdefault: it would build a Counter for every feature of every record
                if len(self.types) >= TRACKED_KEYS:
                    self.other += 1
                    continue
                c = self.types[k] = Counter()
            self.presence[k] += 1
            c[f.type] += 1
        spec = (reading or read_record(p)).spec if p.features else None
        if spec is not None and spec.convention == BoxConvention.OD_NORMALIZED:
            self.od += 1

    def merge(self, other: Schema) -> None:
        """Add another file's schema counts (schemas of shards merge in any order)."""
        self.records += other.records
        self.kinds.update(other.kinds)
        self.other += other.other
        for k, c in other.types.items():
            mine = self.types.get(k)
            if mine is None:
                if len(self.types) >= TRACKED_KEYS:  # the first keys of the first files are kept
                    self.other += other.presence[k]
                    continue
                mine = self.types[k] = Counter()
            mine.update(c)
            self.presence[k] += other.presence[k]
        self.od += other.od
        if other.first_other >= 0 and (self.first_other < 0 or other.first_other < self.first_other):
            self.first_other = other.first_other  # the parts of one file: record numbers of the file
        for cache in ("_main_kind", "_expected", "_main_types"):
            self.__dict__.pop(cache, None)

    @property
    def main_kind(self) -> str | None:
        cache = self.__dict__.get("_main_kind")
        if cache is None or cache[0] != self.records:
            cache = (self.records, self.kinds.most_common(1)[0][0] if self.kinds else None)
            self.__dict__["_main_kind"] = cache
        return cache[1]

    @property
    def od_dataset(self) -> bool:
        return self.records > 0 and self.od >= self.records / 2

    def expected_keys(self) -> list[str]:
        if self.records < 5:
            return []
        cache = self.__dict__.get("_expected")
        if cache is None or cache[0] != self.records:
            cache = (self.records, [k for k, n in self.presence.items() if n >= MOST * self.records])
            self.__dict__["_expected"] = cache
        return cache[1]

    def main_type(self, key: str) -> str | None:
        cache = self.__dict__.setdefault("_main_types", {})  # the schema is final once checks start
        if key not in cache:
            c = self.types.get(key)
            cache[key] = c.most_common(1)[0][0] if c else None
        return cache[key]


def check_against_schema(p: Payload, schema: Schema) -> list[Finding]:
    out: list[Finding] = []
    main = schema.main_kind
    if main and p.kind != main and schema.kinds[main] >= 2 * schema.records / 3 and schema.records >= 3:
        out.append(
            Finding(
                ProblemKind.UNEXPECTED_PAYLOAD,
                f"payload is {p.kind.replace('_', ' ')}, not {main.replace('_', ' ')} like "
                f"{schema.kinds[main]:,} of {schema.records:,} records",
            )
        )
        return out
    if p.kind not in (PayloadKind.EXAMPLE, PayloadKind.SEQUENCE_EXAMPLE):
        return out
    missing = [k for k in schema.expected_keys() if k not in p.features or not len(p.features[k].values)]
    if missing:
        missing = [k for k in missing if not _no_objects(k, p.features)]
    if missing:
        out.append(
            Finding(
                ProblemKind.MISSING_FEATURE,
                f"missing {', '.join(missing[:5])}{' …' if len(missing) > 5 else ''} "
                f"(present in ≥{int(MOST * 100)}% of records)",
            )
        )
    for k, f in p.features.items():
        t = schema.main_type(k)
        if t and len(f.values) and f.type != t and schema.types[k][t] >= MOST * schema.presence[k]:
            out.append(
                Finding(
                    ProblemKind.FEATURE_TYPE_MISMATCH,
                    f"{k} is {TYPE_SHORT[f.type]} here but {TYPE_SHORT[t]} in "
                    f"{schema.types[k][t]:,} other records",
                    k,
                )
            )
    return out


_OBJECT_PREFIXES = OBJECT_PREFIXES  # per-object lists: the reading's conventions (OD API, TFDS)


def _no_objects(key: str, features: dict[str, Feature]) -> bool:
    """Is `key` a per-object list of a record that holds no objects at all (a negative image of the
    OD API: zero boxes, so none of the box lists), where its absence is no missing feature?"""
    prefix = next((x for x in _OBJECT_PREFIXES if key.startswith(x)), None)
    return prefix is not None and not any(k.startswith(prefix) and len(f.values) for k, f in features.items())


Signature = tuple[str, tuple[tuple[str, str], ...], bool]  # kind, (key, type) of each non-empty
# tracked feature, and whether the record holds features of keys past the tracked ones

_STAND_IN = {BYTES_LIST: [b""], FLOAT_LIST: np.zeros(1, np.float32), INT64_LIST: np.zeros(1, np.int64)}


def signature(p: Payload, tracked: Container[str] | None = None) -> Signature | None:
    """All the schema checks look at in a record (None: too large to judge). Most records of a
    dataset share one, so the checks run once per signature, not once per record. Only `tracked`
    keys (the schema's: limits.TRACKED_KEYS at most) enter it, so it stays bounded too."""
    if p.full_size is not None:
        return None
    keys = [(k, f.type) for k, f in p.features.items() if len(f.values)]
    if tracked is None:
        return p.kind, tuple(sorted(keys)), False
    mine = [kt for kt in keys if kt[0] in tracked]
    return p.kind, tuple(sorted(mine)), len(mine) < len(keys)


def check_signature(sig: Signature, schema: Schema, maybe: Iterable[str] = ()) -> list[Finding]:
    """`check_against_schema` for every record with this signature. `maybe`: keys such a record
    may hold among its untracked ones (it is not said to miss them)."""
    kind, keys = sig[0], sig[1]
    features = {k: Feature(t, _STAND_IN[t]) for k, t in keys}
    for k in maybe:
        t = schema.main_type(k)
        if k not in features and t is not None:
            features[k] = Feature(t, _STAND_IN[t])
    return check_against_schema(Payload(kind, features=features), schema)


def other_keys_finding(schema: Schema, fact_keys: int) -> Finding | None:
    """Said once for a dataset of more distinct keys than the pass tracks (None if it has not)."""

    if schema.other:
        return Finding(
            ProblemKind.LIMIT_EXCEEDED,
            f"more than {TRACKED_KEYS:,} distinct feature keys (limits.TRACKED_KEYS): the schema checks "
            f"and statistics track the first {TRACKED_KEYS:,} and the fact table the first {FACT_KEYS:,} "
            f"(limits.FACT_KEYS); {schema.other:,} features of further keys are counted as other keys",
        )
    if fact_keys > FACT_KEYS:
        return Finding(
            ProblemKind.LIMIT_EXCEEDED,
            f"{fact_keys:,} distinct feature keys: the fact table (filter, plots, Parquet export) keeps "
            f"the first {FACT_KEYS:,} (limits.FACT_KEYS); the others are counted as other keys",
        )
    return None


def image_digests(features: dict[str, Feature]) -> list[tuple[str, bytes]]:
    """(key, 16-byte hash) of every encoded image a record holds: duplicates share a hash."""
    out = []
    for k, f in features.items():
        if f.type != BYTES_LIST:
            continue
        for b in f.values[:16]:
            if len(b) >= 64 and sniff_image_format(b):
                out.append((k, hashlib.blake2b(b, digest_size=16).digest()))
    return out


def duplicate_finding(key: str, record: int, where: str) -> Finding:
    return Finding(ProblemKind.DUPLICATE_IMAGE, f"{key} is the same image as in record {record}{where}", key)


class DuplicateImages:
    """Remembers a hash of every image's bytes to report the same image stored twice."""

    def __init__(self, limit: int = 5_000_000) -> None:
        self.first: dict[bytes, tuple[int, int]] = {}  # hash -> (file, record) where first seen
        self.limit = limit

    def check(
        self, features: dict[str, Feature], record: tuple[int, int], names: list[str] | None = None
    ) -> list[Finding]:
        out = []
        for k, h in image_digests(features):
            seen = self.first.get(h)
            if seen is None:
                if len(self.first) < self.limit:
                    self.first[h] = record
            elif seen != record:
                where = f" of {names[seen[0]]}" if names and seen[0] != record[0] else ""
                out.append(duplicate_finding(k, seen[1], where))
        return out


# --- running them all ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordLook:
    """What the checks learnt of a record on the way, for the fact table."""

    image_size: tuple[int, int] | None = None
    boxes: int = 0
    class_zero_key: str | None = None
    signals: ImageSignals | None = None  # the first decodable image's hashes and scores (if asked)


def check_record(
    p: Payload,
    record: tuple[int, int],
    schema: Schema | None,
    label_map: dict[int, str] | None,
    duplicates: DuplicateImages | None,
    names: list[str] | None = None,
    od_dataset: bool | None = None,
) -> list[Finding]:
    """Every check on one decoded record. `od_dataset` overrides the schema's say (the one-pass
    analysis passes False and judges class id 0 once every file is read)."""
    return look_and_check(p, record, schema, label_map, duplicates, names, od_dataset)[0]


def look_and_check(
    p: Payload,
    record: tuple[int, int],
    schema: Schema | None,
    label_map: dict[int, str] | None,
    duplicates: DuplicateImages | None,
    names: list[str] | None = None,
    od_dataset: bool | None = None,
    reading: RecordReading | None = None,
    signals: bool = False,
) -> tuple[list[Finding], RecordLook]:
    """`check_record`, and what it learnt of the record (image size, box count, class id 0; with
    `signals`, its first image's hashes and quality scores, from the decode the checks make).
    `reading`: the record's reading when the caller has it (else read here, with the label map)."""
    out: list[Finding] = [
        Finding(ProblemKind.LIMIT_EXCEEDED, f"not every value was checked: {note}") for note in p.limits
    ]
    if p.full_size is not None:
        return out, RecordLook()  # only its head was read
    if schema is not None:
        out += check_against_schema(p, schema)
    if p.kind not in (PayloadKind.EXAMPLE, PayloadKind.SEQUENCE_EXAMPLE):
        return out, RecordLook()
    feats = p.features
    r = reading if reading is not None else read_record(p, ReadingContext(label_map))
    spec = r.spec
    img_findings, size, sig = look_at_images(feats, signals)
    out += check_image_slots(feats)
    out += img_findings
    out += check_boxes(r, size)
    n_boxes = None
    if spec is not None and spec.keys[0] in feats:  # the first box list's own count (as the masks count)
        n_boxes = feats[spec.keys[0]].count // (4 if len(spec.keys) == 1 else 1)
    out += check_masks(feats, size, n_boxes, label_map)
    od = od_dataset if od_dataset is not None else (schema.od_dataset if schema else bool(spec))
    out += check_labels(r, label_map, od)
    out += check_values(feats)
    out += check_size_types(feats)
    if duplicates is not None:
        out += duplicates.check(feats, record, names)
    # the fact table's `boxes` is the reading's count (what is drawn), not the first list's
    return out, RecordLook(size, r.box_count, r.class_zero_key, sig)


@dataclass(frozen=True)
class CheckTarget:
    """One file's intact records, as the checks see them."""

    name: str
    read: Callable[[int], bytes]  # local record number -> payload (bounded: see limits)
    offsets: np.ndarray
    lengths: np.ndarray
    numbers: np.ndarray  # which records to check (the intact ones)


def check_target(path, source, index) -> CheckTarget:
    """The intact records of one verified file as a check target; payloads over the decode limit are
    read as their head only (and reported as such)."""
    from tfrview.core.tfrecord.report import intact_numbers  # start-up: kept off the CLI's path

    offs, lens, read = index.offsets, index.lengths, source.bulk_reader()
    return CheckTarget(
        str(path),
        lambda n: bounded_payload(read, int(offs[n]), int(lens[n])),
        offs,
        lens,
        intact_numbers(index),
    )


def run_checks(
    targets: list[CheckTarget],
    label_map: dict[int, str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[tuple[int, Problem]]:
    """Two passes over every target: the dataset's schema, then every check. Yields (target, problem)."""
    total = sum(len(t.numbers) for t in targets)
    schema = Schema()
    ctx = ReadingContext(label_map)  # the dataset's: feature layouts read once, not once a record
    done = 0
    for t in targets:
        for n in t.numbers:
            p = decode(t.read(int(n)))
            schema.add(p, read_record(p, ctx))
            done += 1
            if progress and done % 256 == 0:
                progress("schema", done, total)
            if cancelled():
                return
    dups = DuplicateImages()
    names = [t.name for t in targets]
    done = 0
    for ti, t in enumerate(targets):
        for n in t.numbers:
            n = int(n)
            p = decode(t.read(n))
            found, _ = look_and_check(p, (ti, n), schema, label_map, dups, names, reading=read_record(p, ctx))
            for f in found:
                yield ti, f.at(t.offsets[n], t.lengths[n], n)
            done += 1
            if progress and done % 64 == 0:
                progress("checks", done, total)
            if cancelled():
                return
