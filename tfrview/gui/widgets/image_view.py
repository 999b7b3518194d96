"""The image view: an image with its overlay layers; wheel zoom around the cursor, drag to pan,
fit or 1:1. Painting is delegated to the pure functions in gui.painting, back to front."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from tfrview.core.records.overlays import Overlay
from tfrview.core.records.predlayer import PredictionLayer, describe_prediction, describe_truth
from tfrview.gui.painting import (
    RenderContext,
    box_rect,
    fit_scale,
    prediction_rects,
    render_boxes,
    render_caption,
    render_image,
    render_keypoints,
    render_labels,
    render_legend,
    render_mask,
    render_predictions,
)


class ImageView(QWidget):
    zoom_changed = Signal(float)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(160, 120)
        self.setMouseTracking(True)
        self.image: QImage | None = None
        self.overlay: Overlay | None = None
        self.layer: PredictionLayer | None = (
            None  # the predictions beside the boxes, matched (panel's thresholds)
        )
        self.message = "Select a record"
        self.show_boxes = True
        self.show_labels = True
        self._fit = True
        self._scale = 1.0
        self._offset = QPointF(0, 0)
        self._drag: QPointF | None = None
        self._scaled: QImage | None = None
        self._scaled_key: tuple | None = None
        self._preview: tuple | None = None
        self.mask = None  # QImage of the coloured mask (records.masks), drawn over the image
        self.mask_opacity = 0.5
        self.unlabelled = np.empty(0, dtype=np.int64)  # boxes whose label found no free slot, last paint
        self.layers = (
            self._paint_image,
            self._paint_mask,
            self._paint_boxes,
            self._paint_predictions,
            self._paint_keypoints,
            self._paint_labels,
            self._paint_caption,
            self._paint_legend,
        )

    def sizeHint(self) -> QSize:
        return QSize(480, 360)

    # content ------------------------------------------------------------------------------------------

    def set_content(
        self,
        image: QImage | None,
        overlay: Overlay | None,
        message: str = "",
        preview: tuple | None = None,
        keep: list | None = None,
    ) -> None:
        """`preview` = (QImage already scaled by the decode worker, its scale), used at that zoom.
        `keep`: the arrays the images wrap without a copy; held exactly as long as the images."""
        self.image = image
        self._preview = preview
        self._keep = keep
        self.overlay = overlay
        self.layer = None  # the panel sets the predictions' layer of this overlay after
        self.unlabelled = np.empty(0, dtype=np.int64)  # of the last overlay: said again at the next paint
        self.message = message
        if self._fit or image is None:
            self._fit = True
            self._apply_fit()
        self.update()

    # geometry -------------------------------------------------------------------------------------------

    @property
    def scale(self) -> float:
        return self._scale

    def context(self) -> RenderContext:
        return RenderContext(
            self._scale, self._offset.x(), self._offset.y(), self.show_boxes, self.show_labels
        )

    def fit(self) -> None:
        self._fit = True
        self._apply_fit()
        self.update()

    def actual_size(self) -> None:
        if self.image is None:
            return
        self._fit = False
        self._scale = 1.0
        self._center()
        self.zoom_changed.emit(self._scale)
        self.update()

    def _apply_fit(self) -> None:
        if self.image is None or self.image.isNull():
            return
        self._scale = fit_scale(self.image.width(), self.image.height(), self.width(), self.height())
        self._center()
        self.zoom_changed.emit(self._scale)

    def _center(self) -> None:
        w, h = self.image.width() * self._scale, self.image.height() * self._scale
        self._offset = QPointF((self.width() - w) / 2, (self.height() - h) / 2)

    def zoom_at(self, factor: float, at: QPointF) -> None:
        if self.image is None:
            return
        new = min(max(self._scale * factor, 0.02), 64.0)
        f = new / self._scale
        self._offset = at - (at - self._offset) * f
        self._scale = new
        self._fit = False
        self.zoom_changed.emit(self._scale)
        self.update()

    # events ----------------------------------------------------------------------------------------------

    def resizeEvent(self, event) -> None:
        if self._fit:
            self._apply_fit()
        super().resizeEvent(event)

    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120
        if steps:
            self.zoom_at(1.25**steps, event.position())

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.image is not None:
            self._drag = event.position()
            self.setCursor(Qt.CursorShape.ClosedHandCursor)

    def mouseMoveEvent(self, event) -> None:
        if self._drag is None and self.layer is not None and self.show_boxes:
            lines = self.boxes_at(event.position())
            if lines:
                QToolTip.showText(event.globalPosition().toPoint(), "\n".join(lines[:20]), self)
            else:
                QToolTip.hideText()
        elif self._drag is None and len(self.unlabelled):
            names = self.labels_at(event.position())
            if names:
                QToolTip.showText(event.globalPosition().toPoint(), "\n".join(names[:20]), self)
            else:
                QToolTip.hideText()
        if self._drag is not None:
            self._offset += event.position() - self._drag
            self._drag = event.position()
            self._fit = False
            self.update()

    def mouseReleaseEvent(self, event) -> None:
        self._drag = None
        self.unsetCursor()

    def mouseDoubleClickEvent(self, event) -> None:
        if self._fit:
            self.zoom_at(2.0, event.position())
        else:
            self.fit()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:  # an exception must not leave the painter open: Qt would crash destroying the widget
            p.fillRect(self.rect(), QColor(48, 48, 52))
            if self.image is None:
                p.setPen(QColor(200, 200, 200))
                p.drawText(
                    QRectF(self.rect()).adjusted(12, 12, -12, -12),
                    Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                    self.message,
                )
            else:
                ctx = self.context()
                for layer in self.layers:
                    layer(p, ctx)
        finally:
            p.end()

    # layers, back to front
    def _paint_image(self, p: QPainter, ctx: RenderContext) -> None:
        render_image(p, self._scaled_for(ctx.scale), ctx)

    def _scaled_for(self, scale: float) -> QImage:
        """When zoomed out, scale the image once per zoom level instead of on every paint (a
        smooth scale of a 1080p image costs ~10 ms, every repaint)."""
        if scale >= 1.0 or self.image is None:
            return self.image
        if self._preview is not None and abs(self._preview[1] - scale) < 1e-9:
            return self._preview[0]
        key = (id(self.image), round(scale, 6))
        if self._scaled_key != key:
            w = max(1, round(self.image.width() * scale))
            h = max(1, round(self.image.height() * scale))
            self._scaled = self.image.scaled(
                w, h, Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation
            )
            self._scaled_key = key
        return self._scaled

    def _paint_mask(self, p: QPainter, ctx: RenderContext) -> None:
        if self.mask is not None and self.mask_opacity > 0:
            render_mask(p, self.mask, ctx, self.mask_opacity)

    def _paint_boxes(self, p: QPainter, ctx: RenderContext) -> None:
        render_boxes(p, self.overlay, ctx, self.layer)

    def _paint_predictions(self, p: QPainter, ctx: RenderContext) -> None:
        render_predictions(p, self.layer, ctx)

    def _paint_legend(self, p: QPainter, ctx: RenderContext) -> None:
        if self.show_boxes:
            render_legend(p, self.layer, self.width(), self.height())

    def boxes_at(self, at: QPointF) -> list[str]:
        """What the tooltip says of the boxes under a point beside predictions: each shown
        prediction's class, score, IoU and outcome, each ground-truth box's class and outcome."""
        layer = self.layer
        if layer is None:
            return []
        ctx = self.context()
        rects = prediction_rects(layer, ctx)
        out = [describe_prediction(layer, i) for i in layer.shown.tolist() if rects[i].contains(at)]
        if self.overlay is not None:
            out += [
                describe_truth(layer, b.index, b.label)
                for b in self.overlay.boxes
                if box_rect(b, ctx).contains(at)
            ]
        return out

    def _paint_keypoints(self, p: QPainter, ctx: RenderContext) -> None:
        render_keypoints(p, self.overlay, ctx)

    def _paint_labels(self, p: QPainter, ctx: RenderContext) -> None:
        self.unlabelled = render_labels(p, self.overlay, ctx, self.layer)

    def labels_at(self, at: QPointF) -> list[str]:
        """The labels of the boxes under a point whose label had no free slot (left out so that
        labels never overlap): the tooltip says them."""
        if self.overlay is None or not len(self.unlabelled) or not (self.show_boxes and self.show_labels):
            return []
        ctx = self.context()
        boxes = self.overlay.boxes
        return [boxes[i].label for i in self.unlabelled if box_rect(boxes[i], ctx).contains(at)]

    def _paint_caption(self, p: QPainter, ctx: RenderContext) -> None:
        render_caption(p, self.overlay.caption if self.overlay else None, self.width())
