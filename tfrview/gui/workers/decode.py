"""The record decoder: the selected record's payload, image, overlay and thumbnails, computed
off the UI thread for the tree and the image panel."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field, replace

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.records.frames import frame_features, frame_keys, step_features, step_image_keys
from tfrview.core.records.images import (
    DecodedImage,
    ImageError,
    ImageRef,
    decode_image,
    find_images,
    image_features,
)
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.records.masks import instance_colours, is_mask_key, mask_overlay, mask_size_notes
from tfrview.core.records.overlays import BoxSpec, Overlay, compute_overlay
from tfrview.core.records.payload import Payload, decode
from tfrview.core.records.protoschema import decode_with
from tfrview.gui.workers.base import Worker

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DecodeRequest:
    number: int
    data: bytes | None  # None: the worker reads record `number` itself (never the UI thread)
    image: int  # which of the record's images
    label_map: dict[int, str] | None
    spec: BoxSpec | None
    fit: tuple[int, int] | None = None  # the image view's size, for a preview scaled to fit it
    schema: object = None  # records.schema.MessageSchema the person loaded, for custom payloads
    folder: str | None = None  # the record's file's folder: a TFDS dataset's features.json is read there
    arrayrecord: str | None = None  # the record's file, when it is a local ArrayRecord/Riegeli file


@dataclass(frozen=True)
class RecordView:
    """Everything the image panel needs for one record, computed off the UI thread."""

    number: int
    payload: Payload
    images: tuple[ImageRef, ...]
    image_index: int
    decoded: DecodedImage | None
    error: str | None
    overlay: Overlay | None
    thumbnails: dict = field(default_factory=dict)  # (key, index) -> small uint8 pixels, or an error string
    preview: tuple | None = None  # (pixels scaled to fit the view, that scale)
    read_error: str | None = None  # the record could not be read at all
    named: dict | None = None  # the record as the person's schema reads it (field names)
    named_type: str = ""  # that message's full name
    mask: object = None  # records.masks.MaskOverlay for the decoded image, if the record has one
    frames: tuple = ()  # a SequenceExample's filmstrip: (image index, small pixels, Overlay at that size)
    mask_notes: tuple[str, ...] = ()  # masks the record holds that are not drawn, and why (another size)
    tfds: object = None  # tfds.features.Features of the record's folder (read as data), or None
    declared: dict = field(
        default_factory=dict
    )  # key -> records.tfdsvalues.Declared: what features.json says
    # an ArrayRecord/Riegeli file's own words (chunks, writer options, its metadata chunk), or ()
    file_info: tuple[str, ...] = ()


THUMB = 48
FRAME_THUMB = 96


# (record key, label map, filmstrip): another frame of the record reuses it
_last_strip: tuple = (
    None,
    None,
    (),
)


def _cached_strip(req: DecodeRequest, p: Payload, feats, refs) -> tuple:
    """The filmstrip of the last record, if this is it again with the same label map (held here,
    compared by identity: a new map is never mistaken for the old one) and box keys."""
    global _last_strip
    key = (req.number, len(p.raw), req.spec, req.folder)
    last_key, last_map, strip = _last_strip
    if last_key == key and last_map is req.label_map:
        return strip
    strip = _filmstrip(p, feats, refs, req.label_map, req.spec, _tfds(req))
    _last_strip = (key, req.label_map, strip)
    return strip


def _tfds(req: DecodeRequest):
    """The features a TFDS dataset's features.json beside the record declares (read as data, one
    load a folder; None without one or when it cannot be read: the tree says why)."""
    if req.folder is None:
        return None
    from tfrview.core.tfds.features import features_of_folder  # start-up: off the window's first paint

    return features_of_folder(req.folder)


def _filmstrip(p: Payload, feats, refs, label_map, spec, tfds=None) -> tuple:
    """Each frame small, with its own boxes (computed at the thumbnail's size)."""

    tfds = _usable(tfds)
    steps = p.kind != PayloadKind.SEQUENCE_EXAMPLE  # a TFDS record's steps (RLDS), by its features
    keys = set(step_image_keys(p.features, tfds) if steps else frame_keys(p))
    out = []
    for i, ref in enumerate(refs):
        if ref.key not in keys:
            continue
        try:
            small = decode_image(feats, ref, max_side=FRAME_THUMB)
        except ImageError:
            out.append((i, None, None))
            continue
        own = step_features(p.features, tfds, ref.index) if steps else frame_features(p, ref.index)
        ov = compute_overlay(own, small.width, small.height, label_map, spec, tfds)
        out.append((i, small.pixels, ov))
    return tuple(out)


def _thumbnails(feats, refs) -> dict:
    out: dict = {}
    for ref in refs[:32]:
        if ref.storage != "encoded":
            continue
        try:
            out[(ref.key, ref.index)] = decode_image(feats, ref, max_side=THUMB).pixels
        except ImageError as exc:
            out[(ref.key, ref.index)] = str(exc)
    return out


def _mask_names(tfds, key: str, classes) -> dict:
    """A TFDS segmentation image's class names: its LabeledImage's ClassLabel names, if declared."""
    d = tfds.lookup(key) if tfds is not None else None
    label = getattr(d.spec, "label", None) if d is not None else None
    if label is None or not label.names:
        return {}
    return {c: label.names[c] for c, _ in classes if 0 <= c < len(label.names)}


def _usable(tfds):
    return tfds if tfds is not None and tfds.root is not None else None


_file_info_memo: dict[tuple, tuple[str, ...]] = {}
_file_info_lock = threading.Lock()


def file_info(path: str) -> tuple[str, ...]:
    """An ArrayRecord file's chunks and options and its metadata chunk's words (read as data: its
    file descriptors are named, never built), once a file and version (here, off the UI thread), in
    `info`'s words (`reader.info_lines`: printable, whatever the file says)."""
    import os

    from tfrview.core.arrayrecord.reader import info_lines, open_arrayrecord
    from tfrview.core.errors import one_line

    try:
        st = os.stat(path)
    except OSError:
        return ()
    key = (path, st.st_size, st.st_mtime_ns)
    with _file_info_lock:
        if key in _file_info_memo:
            return _file_info_memo[key]
        try:
            with open_arrayrecord(path) as f:
                info = f.info()
        except (TfrviewError, OSError) as exc:
            info = {"error": one_line(exc)}
        lines = [f"{label}: {text}" for label, text in info_lines(info)]
        if info.get("metadata", 0) is None:
            lines.append("metadata: no metadata chunk")
        if len(_file_info_memo) > 64:
            _file_info_memo.clear()
        _file_info_memo[key] = tuple(lines)
        return _file_info_memo[key]


def build_view(req: DecodeRequest, read=None) -> RecordView:
    view = _build_view(req, read)
    if req.arrayrecord is not None:
        view = replace(view, file_info=file_info(req.arrayrecord))
    tfds = _tfds(req)
    if tfds is not None:
        from tfrview.core.records.tfdsvalues import declared

        view = replace(view, tfds=tfds, declared=declared(_usable(tfds), view.payload.features))
    if req.schema is not None and view.read_error is None and view.payload.full_size is None:
        cut: list[str] = []
        named = decode_with(view.payload.raw, req.schema, cut)
        if named is not None:  # a list the schema's decode cut is a limit row, as an Example's is
            payload = replace(view.payload, limits=view.payload.limits + tuple(cut))
            view = replace(view, named=named, named_type=req.schema.name, payload=payload)
    return view


def _build_view(req: DecodeRequest, read=None) -> RecordView:
    data = req.data
    if data is None:
        try:
            data = read(req.number)
        except (TfrviewError, IndexError) as exc:
            return RecordView(req.number, decode(b""), (), 0, None, str(exc), None, read_error=str(exc))
    p = decode(data)
    feats = image_features(p)
    refs = tuple(find_images(feats))
    if not refs:
        return RecordView(req.number, p, refs, 0, None, None, None)
    i = min(max(req.image, 0), len(refs) - 1)
    thumbs = _thumbnails(feats, refs)
    tfds = _usable(_tfds(req))
    stepped = tfds is not None and bool(step_image_keys(p.features, tfds))
    strip = _cached_strip(req, p, feats, refs) if p.kind == PayloadKind.SEQUENCE_EXAMPLE or stepped else ()
    try:
        img = decode_image(feats, refs[i])
    except ImageError as exc:
        return RecordView(req.number, p, refs, i, None, str(exc), None, thumbnails=thumbs, frames=strip)

    if stepped and refs[i].key in step_image_keys(p.features, tfds):  # a TFDS step: its own values
        feats = step_features(p.features, tfds, refs[i].index)
    elif refs[i].key in p.feature_lists:  # a frame: its boxes are that step of the feature lists
        feats = frame_features(p, refs[i].index)

    shown_is_mask = is_mask_key(refs[i].key, feats, tfds)
    ov = compute_overlay(feats, img.width, img.height, req.label_map, req.spec, _usable(_tfds(req)))
    mask = None if shown_is_mask else mask_overlay(feats, img.width, img.height, instance_colours(ov), tfds)
    if mask is not None:  # the legend's names: the label map's, or each instance's box
        if mask.key == "image/object/mask":
            names = {b.index + 1: b.label for b in ov.boxes}
        else:
            names = {c: req.label_map[c] for c, _ in mask.classes if req.label_map and c in req.label_map}
            names.update(_mask_names(tfds, mask.key, mask.classes))
        mask = replace(mask, names=names)
    mask_notes = () if shown_is_mask else tuple(mask_size_notes(feats, img.width, img.height))
    if img.notes and any("EXIF" in n for n in img.notes) and ov.boxes:
        ov = replace(ov, notes=(*ov.notes, "boxes drawn on the EXIF-rotated image"))
    if ov.limit is not None:  # boxes past MAX_BOXES_DRAWN: a limit row in the tree, as a list cut is
        p = replace(p, limits=(*p.limits, f"boxes: {ov.limit}"))
    return RecordView(
        req.number,
        p,
        refs,
        i,
        img,
        None,
        ov,
        thumbnails=thumbs,
        preview=_preview(img, req.fit),
        mask=mask,
        frames=strip,
        mask_notes=mask_notes,
    )


def _preview(img: DecodedImage, fit: tuple[int, int] | None) -> tuple | None:
    """The image scaled to fit the view, by Pillow here (it releases the GIL), not by Qt on the UI thread."""
    if fit is None:
        return None
    from PIL import Image  # heavy: PIL on first use only

    from tfrview.gui.painting import fit_scale  # heavy: PySide6 on first use only

    s = fit_scale(img.width, img.height, fit[0], fit[1])
    if s >= 1.0:
        return None
    size = (max(1, round(img.width * s)), max(1, round(img.height * s)))
    return np.asarray(
        Image.fromarray(img.pixels).resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)
    ), s


class DecodeWorker(Worker):
    """Decodes the latest requested record; older requests still waiting are dropped, so scrolling
    fast through records never queues stale work. Each answer is a `result` (a RecordView)."""

    def __init__(self, parent=None, read=None) -> None:
        super().__init__(parent)
        self._read = read  # record number -> payload, for requests that carry no data
        self._cond = threading.Condition()
        self._pending: DecodeRequest | None = None

    def request(self, req: DecodeRequest) -> None:
        with self._cond:
            self._pending = req
            self._cond.notify()

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify()

    def work(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self.cancelled:
                    self._cond.wait()
                if self.cancelled:
                    return
                req, self._pending = self._pending, None
            try:
                view = build_view(req, self._read)
            except Exception as exc:  # a bug must not kill the panel: said, and logged
                log.exception("decoding record %s failed", req.number)
                view = RecordView(req.number, decode(b""), (), 0, None, f"internal error: {exc}", None)
            self.result.emit(view)
