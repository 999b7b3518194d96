"""Thumbnails for the gallery: a record's first image at reduced size with its boxes drawn on.
Pure function of the record's bytes; decoding uses JPEG draft mode (decode at 1/2, 1/4, 1/8)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tfrview.core.records.drawing import draw_overlay
from tfrview.core.records.images import ImageError, decode_image, find_images, image_features
from tfrview.core.records.overlays import Box, Overlay, compute_overlay
from tfrview.core.records.payload import decode
from tfrview.core.records.predlayer import IOU_THRESHOLD, SCORE_THRESHOLD, prediction_layer
from tfrview.core.records.reading import BoxSpec, chosen_spec


@dataclass(frozen=True)
class Thumbnail:
    pixels: np.ndarray | None  # uint8 RGB, at most `size` on its longer side
    caption: str  # e.g. "label: 3", "2 boxes · cat, dog", or why there is no image
    error: bool = False


def scale_overlay(ov: Overlay, s: float) -> Overlay:
    boxes = tuple(Box(b.x0 * s, b.y0 * s, b.x1 * s, b.y1 * s, b.index, b.class_id, b.name) for b in ov.boxes)
    keypoints = tuple((x * s, y * s, b) for x, y, b in ov.keypoints)
    return replace(ov, boxes=boxes, keypoints=keypoints)


def make_thumbnail(
    data: bytes,
    size: int = 160,
    label_map: dict[int, str] | None = None,
    boxes: bool = True,
    cell: tuple[int, int] | None = None,
    specs: tuple[BoxSpec, ...] = (),
    tfds=None,
    predictions=None,
    thresholds: tuple[float, float] = (IOU_THRESHOLD, SCORE_THRESHOLD),
) -> Thumbnail:
    """`cell` (width, height): the thumbnail fits inside it (default: size x size). `specs`: the box
    specs the person chose (`reading.chosen_spec`), so the gallery draws what the image panel draws;
    `tfds`: a TFDS dataset's features (tfds.features.Features), as the image panel reads them.
    `predictions` (`predlayer.Loaded`): loaded from a file for this record (else the record's own
    detection keys, if any), drawn dashed beside the ground truth, both coloured by
    outcome at `thresholds` (IoU, score), as the image panel draws them."""

    p = decode(data)
    feats = image_features(p)
    refs = find_images(feats)
    if not refs:
        return Thumbnail(None, f"no image ({p.kind.replace('_', ' ')})")
    try:
        img = decode_image(feats, refs[0], max_side=size)
        cw, ch = cell or (size, size)
        if img.width > cw or img.height > ch:  # a portrait image in a landscape cell
            img = _fit(img, cw, ch)
    except ImageError as exc:
        return Thumbnail(None, str(exc), error=True)
    full = img.full_size or (img.width, img.height)
    ov = compute_overlay(feats, full[0], full[1], label_map, chosen_spec(specs, feats), tfds)
    caption = ov.caption or ""
    if ov.boxes:
        names = sorted({b.label for b in ov.boxes})  # of the boxes drawn (MAX_BOXES_DRAWN at most)
        n = ov.count
        caption = (
            (caption + " · " if caption else "")
            + f"{n} box{'es' if n != 1 else ''} · "
            + ", ".join(names[:3])
        )
    pixels = img.pixels
    versus = ov.versus
    if versus is not None and predictions is not None:
        versus = versus.with_loaded(predictions, [b.label for b in ov.boxes])
    layer = (
        prediction_layer(versus, full[0], full[1], *thresholds)
        if boxes and versus is not None and versus.predictions is not None
        else None
    )
    if boxes and (ov.boxes or layer is not None):
        pixels = np.asarray(
            draw_overlay(
                pixels, scale_overlay(ov, img.scale), labels=False, layer=layer, layer_scale=img.scale
            )
        )
    elif pixels.ndim == 2 or pixels.shape[2] != 3:
        from PIL import Image  # heavy: PIL on first use only

        pixels = np.asarray(Image.fromarray(pixels).convert("RGB"))
    return Thumbnail(np.ascontiguousarray(pixels), caption)


def _fit(img, cw: int, ch: int):

    from PIL import Image  # heavy: PIL on first use only

    im = Image.fromarray(img.pixels)
    im.thumbnail((cw, ch))
    return replace(img, pixels=np.asarray(im))
