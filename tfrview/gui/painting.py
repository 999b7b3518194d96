"""Painting as pure functions over frozen data: the image, its boxes and labels, its caption.

Each `render_*(painter, data, ctx)` draws one layer; the image view calls them back to front.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen

from tfrview.core.limits import MAX_BOX_LABELS_DRAWN, SMOOTH_BOXES
from tfrview.core.problems import Severity
from tfrview.core.records.drawing import place_labels
from tfrview.core.records.matching import BoxOutcome
from tfrview.core.records.overlays import Box, Overlay
from tfrview.core.records.palette import outcome_hex, palette_hex
from tfrview.core.records.predlayer import PredictionLayer
from tfrview.core.tags.words import TagWord

# Severity colours, one home for every panel: text in the Problems panel, badges on thumbnails.
SEVERITY_COLOURS = {
    Severity.ERROR: QColor(176, 0, 32),
    Severity.WARNING: QColor(200, 120, 0),
    Severity.INFO: QColor(60, 90, 140),
}
# Splits overlaid in a plot, in the order they are drawn: strong, apart from each other on white
# (class colours are pale for some words: `train` and `test` were two light yellows).
SPLIT_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f")


def split_colour(i: int) -> QColor:
    """The colour of the i-th split drawn in a plot."""
    return QColor(SPLIT_COLOURS[i % len(SPLIT_COLOURS)])


_BADGE_MARK = {Severity.ERROR: "!", Severity.WARNING: "!", Severity.INFO: "i"}


def paint_badge(p: QPainter, corner: QPointF, severity: str, diameter: float = 20.0) -> None:
    """A round mark of the severity's colour whose top-right corner is at `corner`: the record
    has a problem (what it is: the tooltip and the Problems panel)."""
    r = QRectF(corner.x() - diameter, corner.y(), diameter, diameter)
    p.save()
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(QPen(QColor(255, 255, 255), 2))
    p.setBrush(SEVERITY_COLOURS.get(severity, SEVERITY_COLOURS[Severity.ERROR]))
    p.drawEllipse(r)
    f = QFont(p.font())
    f.setBold(True)
    f.setPixelSize(int(diameter * 0.7))
    p.setFont(f)
    p.drawText(r, Qt.AlignmentFlag.AlignCenter, _BADGE_MARK.get(severity, "!"))
    p.restore()


# Tag colours, one home: the record table's Tag column and the gallery's tag badge.
TAG_COLOURS = {
    TagWord.DROP: QColor(190, 30, 45),
    TagWord.KEEP: QColor(30, 130, 70),
    TagWord.REVIEW: QColor(40, 100, 200),
}


def paint_tag_badge(p: QPainter, corner: QPointF, word: TagWord, height: float = 18.0) -> None:
    """The tag's word on a pill of its colour whose top-left corner is at `corner` (a thumbnail's
    top-left: the severity badge holds the top-right)."""
    f = QFont(p.font())
    f.setBold(True)
    f.setPixelSize(int(height * 0.66))
    text = str(word).upper()
    width = QFontMetricsF(f).horizontalAdvance(text) + height * 0.7
    r = QRectF(corner.x(), corner.y(), width, height)
    p.save()
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setPen(QPen(QColor(255, 255, 255), 1.5))
    p.setBrush(TAG_COLOURS[word])
    p.drawRoundedRect(r, height / 2, height / 2)
    p.setFont(f)
    p.drawText(r, Qt.AlignmentFlag.AlignCenter, text)
    p.restore()


def class_color(key: str) -> QColor:
    """The same colour for the same class in every record and every window (core's palette)."""
    return QColor(palette_hex(key))


@dataclass(frozen=True)
class RenderContext:
    """Maps image pixels to widget coordinates: widget = image * scale + offset."""

    scale: float
    offset_x: float
    offset_y: float
    show_boxes: bool = True
    show_labels: bool = True

    def to_widget(self, x: float, y: float) -> QPointF:
        return QPointF(x * self.scale + self.offset_x, y * self.scale + self.offset_y)


FIT_MARGIN = 8


def fit_scale(img_w: int, img_h: int, view_w: int, view_h: int) -> float:
    """The zoom at which an image fits a view (shared by the view and the decode worker's preview)."""
    return max(min((view_w - 2 * FIT_MARGIN) / img_w, (view_h - 2 * FIT_MARGIN) / img_h), 0.01)


def to_qimage(pixels: np.ndarray) -> QImage:
    """A QImage that owns a copy of the pixels (safe after the array is gone)."""
    image, _ = wrap_qimage(pixels)
    return image.copy()


def wrap_qimage(pixels: np.ndarray) -> tuple[QImage, np.ndarray]:
    """A QImage over the pixels without copying them (a 1080p copy costs the UI thread ~3 ms and
    fresh-page faults). The caller must keep the returned array alive as long as the image."""
    a = np.ascontiguousarray(pixels)
    h, w = a.shape[:2]
    if a.ndim == 2:
        fmt, bpl = QImage.Format.Format_Grayscale8, w
    elif a.shape[2] == 4:
        fmt, bpl = QImage.Format.Format_RGBA8888, 4 * w
    else:
        fmt, bpl = QImage.Format.Format_RGB888, 3 * w
    return QImage(a.data, w, h, bpl, fmt), a


def box_rect(box: Box, ctx: RenderContext) -> QRectF:
    x0, x1 = sorted((box.x0, box.x1))
    y0, y1 = sorted((box.y0, box.y1))
    return QRectF(ctx.to_widget(x0, y0), ctx.to_widget(x1, y1))


def render_image(p: QPainter, image: QImage, ctx: RenderContext) -> None:
    """Draws `image` (the record's image, or a copy already scaled to ctx.scale) where ctx puts it."""
    if ctx.scale < 1.0:  # pre-scaled by the caller: draw pixel for pixel
        p.drawImage(QPointF(ctx.offset_x, ctx.offset_y), image)
        return
    target = QRectF(ctx.offset_x, ctx.offset_y, image.width() * ctx.scale, image.height() * ctx.scale)
    p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, ctx.scale < 2)
    p.drawImage(target, image)


def render_mask(p: QPainter, mask: QImage, ctx: RenderContext, opacity: float) -> None:
    """The coloured mask over the image (same size), at `opacity`; nearest-neighbour, so class
    edges stay crisp when zoomed in."""
    target = QRectF(ctx.offset_x, ctx.offset_y, mask.width() * ctx.scale, mask.height() * ctx.scale)
    p.save()
    p.setOpacity(opacity)
    p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
    p.drawImage(target, mask)
    p.restore()


def outcome_color(outcome: int) -> QColor:
    """A box's outcome's colour (matched, false positive, missed, wrong class: core's one home)."""
    return QColor(outcome_hex(outcome))


def box_color(box: Box, layer: PredictionLayer | None) -> QColor:
    """A ground-truth box's colour: its outcome's beside predictions, else its class's."""
    if layer is not None and box.index < len(layer.gt_outcome):
        return outcome_color(int(layer.gt_outcome[box.index]))
    return class_color(box.color_key)


def render_boxes(
    p: QPainter, overlay: Overlay | None, ctx: RenderContext, layer: PredictionLayer | None = None
) -> None:
    """The ground-truth boxes, solid: in their class's colour, or their outcome's beside predictions."""
    if overlay is None or not ctx.show_boxes:
        return
    # smooth edges cost 4x the time of crisp ones: 2,000 boxes took 0.4 s a repaint, 0.1 s crisp
    p.setRenderHint(QPainter.RenderHint.Antialiasing, len(overlay.boxes) <= SMOOTH_BOXES)
    p.setBrush(Qt.BrushStyle.NoBrush)
    by_colour: dict[str, list[QRectF]] = {}
    for box in overlay.boxes:  # one drawRects a colour and pen: half the time of a call a box (2,000 boxes)
        by_colour.setdefault(box_color(box, layer).name(), []).append(box_rect(box, ctx))
    for colour, rects in by_colour.items():
        p.setPen(QPen(QColor(0, 0, 0, 160), 4))
        p.drawRects(rects)
        p.setPen(QPen(QColor(colour), 2))
        p.drawRects(rects)


def prediction_rects(layer: PredictionLayer, ctx: RenderContext) -> list[QRectF]:
    """Every prediction's rectangle in widget coordinates (hidden ones too: indices stay the layer's)."""
    b = layer.boxes * ctx.scale + np.array([ctx.offset_x, ctx.offset_y] * 2)
    x0, x1 = np.minimum(b[:, 0], b[:, 2]), np.maximum(b[:, 0], b[:, 2])
    y0, y1 = np.minimum(b[:, 1], b[:, 3]), np.maximum(b[:, 1], b[:, 3])
    return [QRectF(a, c, e - a, f - c) for a, c, e, f in zip(x0, y0, x1, y1, strict=True)]


def render_predictions(p: QPainter, layer: PredictionLayer | None, ctx: RenderContext) -> None:
    """The predictions at or above the score threshold: dashed (the ground truth is solid), each in
    its outcome's colour, over a dark dashed line that shows on any image."""
    if layer is None or not ctx.show_boxes:
        return
    shown = layer.shown
    if not len(shown):
        return
    p.setRenderHint(QPainter.RenderHint.Antialiasing, len(shown) <= SMOOTH_BOXES)
    p.setBrush(Qt.BrushStyle.NoBrush)
    rects = prediction_rects(layer, ctx)
    by_outcome: dict[int, list[QRectF]] = {}
    for i in shown.tolist():
        by_outcome.setdefault(int(layer.outcome[i]), []).append(rects[i])
    for outcome, group in by_outcome.items():
        under = QPen(QColor(0, 0, 0, 160), 4, Qt.PenStyle.DashLine)
        p.setPen(under)
        p.drawRects(group)
        pen = QPen(outcome_color(outcome), 2, Qt.PenStyle.DashLine)
        p.setPen(pen)
        p.drawRects(group)


LEGEND = (
    (BoxOutcome.MATCHED, "matched"),
    (BoxOutcome.FALSE_POSITIVE, "false positive"),
    (BoxOutcome.MISSED, "missed"),
    (BoxOutcome.WRONG_CLASS, "wrong class"),
)


def render_legend(p: QPainter, layer: PredictionLayer | None, width: float, height: float) -> None:
    """What the styles and colours mean, in a band at the bottom left of the view: the ground
    truth solid, predictions dashed (at or above the threshold), one swatch an outcome."""
    if layer is None:
        return
    font = QFont(p.font())
    font.setPointSizeF(8.5)
    p.setFont(font)
    fm = QFontMetricsF(font)
    h = fm.height() + 8
    items: list[tuple[str, QColor | None, Qt.PenStyle | None]] = [
        ("truth", QColor(230, 230, 230), Qt.PenStyle.SolidLine),
        (f"prediction ≥ {layer.score_threshold:.2f}", QColor(230, 230, 230), Qt.PenStyle.DashLine),
    ]
    items += [(words, outcome_color(o), None) for o, words in LEGEND]
    line = 22.0
    total = 8 + sum(line + 4 + fm.horizontalAdvance(t) + 10 for t, _, _ in items)
    band = QRectF(0, height - h, min(width, total), h)
    p.save()
    p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
    p.fillRect(band, QColor(0, 0, 0, 180))
    x = band.left() + 8
    mid = band.center().y()
    for text, colour, style in items:
        if style is not None:
            p.setPen(QPen(colour, 2, style))
            p.drawLine(QPointF(x, mid), QPointF(x + line, mid))
        else:
            p.fillRect(QRectF(x + 4, mid - 5, line - 8, 10), colour)
        x += line + 4
        p.setPen(QColor("white"))
        p.drawText(QPointF(x, mid + fm.ascent() / 2 - 1), text)
        x += fm.horizontalAdvance(text) + 10
    p.restore()


def render_keypoints(p: QPainter, overlay: Overlay | None, ctx: RenderContext) -> None:
    """Each keypoint a dot in its box's class colour, ringed in black to show on any image."""
    if overlay is None or not ctx.show_boxes or not overlay.keypoints:
        return
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    for x, y, b in overlay.keypoints:
        box = overlay.boxes[b] if 0 <= b < len(overlay.boxes) else None
        c = class_color(box.color_key) if box is not None else QColor(255, 255, 255)
        at = QPointF(ctx.offset_x + x * ctx.scale, ctx.offset_y + y * ctx.scale)
        p.setPen(QPen(QColor(0, 0, 0, 200), 1.5))
        p.setBrush(c)
        p.drawEllipse(at, 3.5, 3.5)


def render_labels(
    p: QPainter, overlay: Overlay | None, ctx: RenderContext, layer: PredictionLayer | None = None
) -> np.ndarray:
    """The labels of the first MAX_BOX_LABELS_DRAWN boxes, none over another (`place_labels`):
    above a box, else inside its top edge, else at its bottom; a label with no free slot is left
    out. Returns the indices of the boxes whose label was left out (the view says them on hover).
    Beside predictions the ground truth's labels take their outcome's colour, and the shown
    predictions' labels ("cat 0.87") are placed after them, in theirs."""
    if layer is not None and ctx.show_boxes and ctx.show_labels and len(layer.shown):
        return _labels_with_predictions(p, overlay, ctx, layer)
    if overlay is None or not ctx.show_boxes or not ctx.show_labels or not overlay.boxes:
        return np.empty(0, dtype=np.int64)
    fm, th, baseline = _label_font(p)
    looks: dict[tuple[str, str], tuple[float, QColor, QColor]] = {}  # a few classes, measured once each
    boxes = overlay.boxes[:MAX_BOX_LABELS_DRAWN]  # the image panel says when others go unlabelled
    for box in boxes:
        if (box.label, box.color_key) not in looks:
            c = class_color(box.color_key)
            ink = QColor("black") if c.lightnessF() > 0.55 else QColor("white")
            looks[(box.label, box.color_key)] = (fm.horizontalAdvance(box.label) + 8, c, ink)
    corners = np.array([(b.x0, b.y0, b.x1, b.y1) for b in boxes], dtype=np.float64)
    corners = corners * ctx.scale + np.array([ctx.offset_x, ctx.offset_y] * 2)
    widths = np.array([looks[(b.label, b.color_key)][0] for b in boxes], dtype=np.float64)
    places = place_labels(corners, widths, th)
    for box, (x, y) in zip(boxes, places, strict=True):
        if x != x:  # NaN: no free slot
            continue
        tw, c, ink = looks[(box.label, box.color_key)]
        p.fillRect(QRectF(x, y, tw, th), c)
        p.setPen(ink)
        p.drawText(QPointF(x + 4, y + baseline), box.label)
    return np.flatnonzero(np.isnan(places[:, 0]))


def _label_font(p: QPainter) -> tuple[QFontMetricsF, float, float]:
    """Set the box labels' font on `p`: its metrics, a label's height and its text's baseline in it
    (text drawn at a point, not laid out in a rectangle: 2,000 labels in half the time)."""
    font = QFont(p.font())
    font.setPointSizeF(9)
    font.setBold(True)
    p.setFont(font)
    fm = QFontMetricsF(font)
    return fm, fm.height() + 2, 1 + fm.ascent()


def _labels_with_predictions(
    p: QPainter, overlay: Overlay | None, ctx: RenderContext, layer: PredictionLayer
) -> np.ndarray:
    fm, th, baseline = _label_font(p)
    gt = overlay.boxes[:MAX_BOX_LABELS_DRAWN] if overlay is not None else ()
    shown = layer.shown[: max(0, MAX_BOX_LABELS_DRAWN - len(gt))]
    texts = [b.label for b in gt] + [layer.labels[i] for i in shown.tolist()]
    colours = [box_color(b, layer) for b in gt] + [
        outcome_color(int(layer.outcome[i])) for i in shown.tolist()
    ]
    offset = np.array([ctx.offset_x, ctx.offset_y] * 2)
    corners = np.concatenate(
        [
            np.array([(b.x0, b.y0, b.x1, b.y1) for b in gt], dtype=np.float64).reshape(-1, 4),
            layer.boxes[shown].reshape(-1, 4),
        ]
    )
    corners = corners * ctx.scale + offset
    widths = np.array([fm.horizontalAdvance(t) + 8 for t in texts], dtype=np.float64)
    places = place_labels(corners, widths, th)
    for text, c, w, (x, y) in zip(texts, colours, widths, places, strict=True):
        if x != x:  # NaN: no free slot
            continue
        p.fillRect(QRectF(x, y, w, th), c)
        p.setPen(QColor("black") if c.lightnessF() > 0.55 else QColor("white"))
        p.drawText(QPointF(x + 4, y + baseline), text)
    return np.flatnonzero(np.isnan(places[: len(gt), 0]))


def render_caption(p: QPainter, caption: str | None, width: float) -> None:
    """The record-level label, in a band across the top of the view (not scaled with the image)."""
    if not caption:
        return
    font = QFont(p.font())
    font.setPointSizeF(10)
    font.setBold(True)
    p.setFont(font)
    fm = QFontMetricsF(font)
    band = QRectF(0, 0, min(width, fm.horizontalAdvance(caption) + 16), fm.height() + 8)
    p.fillRect(band, QColor(0, 0, 0, 170))
    p.setPen(QColor("white"))
    p.drawText(band, Qt.AlignmentFlag.AlignCenter, caption)


def render_overlay_on_image(
    image: QImage,
    overlay: Overlay | None,
    show_labels: bool = True,
    mask: QImage | None = None,
    mask_opacity: float = 0.5,
    layer: PredictionLayer | None = None,
) -> QImage:
    """The image at its own size with the mask, boxes, predictions, keypoints and labels burned in
    (for saving): what the view shows."""
    out = image.convertToFormat(QImage.Format.Format_RGB32)
    p = QPainter(out)
    ctx = RenderContext(1.0, 0.0, 0.0, True, show_labels)
    if mask is not None:
        render_mask(p, mask, ctx, mask_opacity)
    render_boxes(p, overlay, ctx, layer)
    render_predictions(p, layer, ctx)
    render_keypoints(p, overlay, ctx)
    render_labels(p, overlay, ctx, layer)
    p.end()
    return out
