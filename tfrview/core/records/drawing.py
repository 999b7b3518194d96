"""Boxes and labels drawn on an image (exports, thumbnails), in the colours of `palette`."""

from __future__ import annotations

import numpy as np

from tfrview.core.limits import MAX_BOX_LABELS_DRAWN
from tfrview.core.records.overlays import Overlay
from tfrview.core.records.palette import outcome_rgb, palette_rgb
from tfrview.core.records.predlayer import PredictionLayer


def place_labels(boxes: np.ndarray, widths: np.ndarray, height: float, top: float = 0.0) -> np.ndarray:
    """Where each box's label goes so that no two labels overlap: (n, 2) top-left corners, NaN for
    a label with no free slot (the window says it on hover). `boxes` are (n, 4) x0, y0, x1, y1 in
    the drawing's coordinates, `widths` the labels' widths, `height` theirs; a label lies above
    its box's top edge, else inside it under that edge when the slot above is taken or off the
    image (above `top`), else below the bottom edge, else inside above it. Earlier boxes choose
    first. Each slot is checked against the labels placed so far by array operations."""
    n = len(boxes)
    out = np.full((n, 2), np.nan)
    if not n:
        return out
    b = np.asarray(boxes, dtype=np.float64)
    x0 = np.minimum(b[:, 0], b[:, 2])
    y0, y1 = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    w = np.asarray(widths, dtype=np.float64)
    px0, py0, px1, py1 = (np.empty(n) for _ in range(4))  # the labels placed so far
    k = 0
    for i in range(n):
        for cy in (y0[i] - height, y0[i], y1[i], y1[i] - height):
            if cy < top:
                continue
            cx = x0[i]
            if k and np.any(
                (cx < px1[:k]) & (cx + w[i] > px0[:k]) & (cy < py1[:k]) & (cy + height > py0[:k])
            ):
                continue
            out[i] = cx, cy
            px0[k], py0[k], px1[k], py1[k] = cx, cy, cx + w[i], cy + height
            k += 1
            break
    return out


def _font(size: int):
    from PIL import ImageFont  # heavy: PIL on first use only

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


MASK_OPACITY = 0.5  # a mask drawn over an image in an export, as the window's slider starts


def dash_segments(x0: float, y0: float, x1: float, y1: float, dash: float) -> np.ndarray:
    """The dashes of a rectangle's outline, (k, 4) x0, y0, x1, y1 each: `dash` on, `dash` off along
    every side (a prediction's outline: the ground truth's is solid). Pure, for any drawer."""
    out = []
    for ax, ay, bx, by in ((x0, y0, x1, y0), (x1, y0, x1, y1), (x1, y1, x0, y1), (x0, y1, x0, y0)):
        length = abs(bx - ax) + abs(by - ay)
        starts = np.arange(0.0, max(length, 1e-9), 2 * dash)
        ends = np.minimum(starts + dash, length)
        t0, t1 = starts / max(length, 1e-9), ends / max(length, 1e-9)
        seg = np.stack(
            [ax + (bx - ax) * t0, ay + (by - ay) * t0, ax + (bx - ax) * t1, ay + (by - ay) * t1], 1
        )
        out.append(seg)
    return np.concatenate(out) if out else np.empty((0, 4))


def _draw_predictions(d, layer: PredictionLayer, width: int, scale: float) -> None:
    """The predictions at or above the score threshold: dashed, in their outcome's colour."""
    dash = max(3.0, 3 * width)
    for i in layer.shown.tolist():
        x0, y0, x1, y1 = (layer.boxes[i] * scale).tolist()
        x0, x1 = sorted((x0, x1))
        y0, y1 = sorted((y0, y1))
        c = outcome_rgb(int(layer.outcome[i]))
        for a, b, e, f in dash_segments(x0, y0, x1, y1, dash).tolist():
            d.line([a, b, e, f], fill=(0, 0, 0), width=width + 2)
            d.line([a, b, e, f], fill=c, width=width)


def draw_overlay(
    pixels: np.ndarray,
    overlay: Overlay | None,
    labels: bool = True,
    mask_rgba: np.ndarray | None = None,
    layer: PredictionLayer | None = None,
    layer_scale: float = 1.0,
):
    """A PIL image of the pixels with a mask (RGBA, the image's size), the boxes, their keypoints
    and labels drawn on: what the window shows, for exports. With predictions (`layer`, its boxes
    times `layer_scale` in these pixels): the ground truth solid and the predictions dashed, each
    in the colour of its outcome (`palette.outcome_hex`) rather than its class's."""
    from PIL import Image, ImageDraw  # heavy: PIL on first use only

    im = Image.fromarray(pixels).convert("RGB")
    if mask_rgba is not None and mask_rgba.shape[:2] == (im.height, im.width):
        coloured = Image.fromarray(mask_rgba, "RGBA")
        alpha = np.asarray(coloured.getchannel("A"), dtype=np.float32) * MASK_OPACITY
        coloured.putalpha(Image.fromarray(alpha.astype(np.uint8)))
        im = Image.alpha_composite(im.convert("RGBA"), coloured).convert("RGB")
    has_layer = layer is not None and len(layer.shown)
    if (overlay is None or not overlay.boxes) and not has_layer:
        return im
    d = ImageDraw.Draw(im)
    width = max(2, round(max(im.size) / 400))
    font = _font(max(11, round(max(im.size) / 60)))
    if overlay is None:
        overlay = Overlay(None)

    def colour(b) -> tuple[int, int, int]:
        if layer is not None and b.index < len(layer.gt_outcome):
            return outcome_rgb(int(layer.gt_outcome[b.index]))
        return palette_rgb(b.color_key)

    if layer is not None:
        _draw_predictions(d, layer, width, layer_scale)
    for b in overlay.boxes:
        c = colour(b)
        x0, x1 = sorted((b.x0, b.x1))
        y0, y1 = sorted((b.y0, b.y1))
        d.rectangle([x0, y0, x1, y1], outline=(0, 0, 0), width=width + 2)
        d.rectangle([x0, y0, x1, y1], outline=c, width=width)
    if labels:  # as the window labels them: the first MAX_BOX_LABELS_DRAWN, none over another
        labelled = overlay.boxes[:MAX_BOX_LABELS_DRAWN]
        extents = [d.textbbox((0, 0), b.label, font=font) for b in labelled]
        th = max((btm - t for _, t, _, btm in extents), default=0) + 4
        corners = [(b.x0, b.y0, b.x1, b.y1) for b in labelled]
        widths = np.array([r - left + 6 for left, _, r, _ in extents], dtype=np.float64)
        places = place_labels(np.array(corners, dtype=np.float64).reshape(-1, 4), widths, th)
        for b, (left, t, _, _), w, (lx, ly) in zip(labelled, extents, widths, places, strict=True):
            if np.isnan(lx):
                continue
            c = colour(b)
            d.rectangle([lx, ly, lx + w, ly + th], fill=c)
            lum = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2]
            d.text(
                (lx + 3 - left, ly + 2 - t),
                b.label,
                fill=(0, 0, 0) if lum > 140 else (255, 255, 255),
                font=font,
            )
    r = max(3, round(max(im.size) / 200))
    for x, y, b in overlay.keypoints:
        c = palette_rgb(overlay.boxes[b].color_key) if 0 <= b < len(overlay.boxes) else (255, 255, 255)
        d.ellipse([x - r, y - r, x + r, y + r], fill=c, outline=(0, 0, 0))
    return im
