"""The image panel: the view, a strip of controls above it and a line of facts below it."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSlider, QToolButton, QVBoxLayout, QWidget

from tfrview.core.limits import MAX_BOX_LABELS_DRAWN
from tfrview.core.records.matching import BoxOutcome
from tfrview.core.records.palette import outcome_hex, palette_hex
from tfrview.core.records.predlayer import (
    IOU_THRESHOLD,
    SCORE_THRESHOLD,
    Loaded,
    PredictionLayer,
    prediction_layer,
)
from tfrview.gui.painting import wrap_qimage
from tfrview.gui.widgets.filmstrip import Filmstrip
from tfrview.gui.widgets.image_view import ImageView
from tfrview.gui.workers.decode import RecordView


class ImagePanel(QWidget):
    image_chosen = Signal(int)  # which of the record's images to show
    pick_boxes = Signal()  # the person wants to choose the box keys
    imageless = Signal(bool)  # whether the record shown has no image (its view is folded away)
    score_changed = Signal(float)  # the person moved the score threshold slider

    def __init__(self, tools: Sequence[QAction], parent=None) -> None:
        super().__init__(parent)
        self.view = ImageView(self)
        self.current: RecordView | None = None
        self.qimage = None
        self.selector = QComboBox(self)
        self.selector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.selector.setToolTip("Images found in this record")
        self.selector.activated.connect(self.image_chosen)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 2)
        bar.addWidget(self.selector)
        self.opacity = QSlider(Qt.Orientation.Horizontal, self)  # the mask's opacity, shown with a mask
        self.opacity.setRange(0, 100)
        self.opacity.setValue(50)
        self.opacity.setFixedWidth(100)
        self.opacity.setToolTip("Mask opacity")
        self.opacity.valueChanged.connect(self._on_opacity)
        self.opacity_label = QLabel("mask", self)
        bar.addWidget(self.opacity_label)
        bar.addWidget(self.opacity)
        self.opacity.setVisible(False)
        self.opacity_label.setVisible(False)
        # the score threshold: predictions under it are hidden (shown when the record has predictions)
        self.iou_threshold = IOU_THRESHOLD
        self.score_threshold = SCORE_THRESHOLD
        self.loaded: Callable[[int], Loaded | None] | None = None  # predictions loaded from a file
        self.score_label = QLabel(self)
        self.score = QSlider(Qt.Orientation.Horizontal, self)
        self.score.setRange(0, 100)
        self.score.setValue(round(SCORE_THRESHOLD * 100))
        self.score.setFixedWidth(120)
        self.score.setToolTip("Score threshold: predictions under it are hidden and not matched")
        self.score.valueChanged.connect(self._on_score)
        self._say_score()
        bar.addWidget(self.score_label)
        bar.addWidget(self.score)
        self.score.setVisible(False)
        self.score_label.setVisible(False)
        self._base_facts: list[str] = []
        bar.addStretch(1)
        for action in tools:  # the window's (fit, 1:1, boxes, labels, box keys, save image)
            b = QToolButton(self)
            b.setDefaultAction(action)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            bar.addWidget(b)
        self.facts = QLabel(self)
        self.facts.setWordWrap(True)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.facts.setContentsMargins(6, 2, 6, 4)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(bar)
        lay.addWidget(self.view, 1)
        self.filmstrip = Filmstrip(self)
        self.filmstrip.frame_chosen.connect(self.image_chosen)
        self.filmstrip.setVisible(False)
        lay.addWidget(self.filmstrip)
        lay.addWidget(self.facts)
        self._imageless = False
        self.show_message("Select a record to see its image")

    def _fold(self, imageless: bool) -> None:
        """A record without an image gives the view's room to its features (tabular data)."""
        self.view.setVisible(not imageless)
        if imageless != self._imageless:
            self._imageless = imageless
            self.imageless.emit(imageless)

    @property
    def is_folded(self) -> bool:
        return self._imageless

    def show_message(self, text: str) -> None:
        self._fold(False)
        self.current = None
        self.qimage = None
        self.selector.clear()
        self.selector.setVisible(False)
        self.filmstrip.setVisible(False)
        self.view.set_content(None, None, text)
        self._base_facts = []
        self.score.setVisible(False)
        self.score_label.setVisible(False)
        self.facts.setText("")

    # predictions --------------------------------------------------------------------------------------

    @property
    def layer(self) -> PredictionLayer | None:
        """The predictions drawn beside the record's boxes (None: it has none)."""
        return self.view.layer

    def _say_score(self) -> None:
        self.score_label.setText(f"score ≥ {self.score_threshold:.2f}")

    def _on_score(self, value: int) -> None:
        self.set_thresholds(self.iou_threshold, value / 100)
        self.score_changed.emit(self.score_threshold)

    def set_thresholds(self, iou: float, score: float) -> None:
        """Match the shown record's predictions again at these thresholds (one image: cheap)."""
        self.iou_threshold, self.score_threshold = iou, score
        if round(score * 100) != self.score.value():
            self.score.blockSignals(True)
            self.score.setValue(round(score * 100))
            self.score.blockSignals(False)
        self._say_score()
        self.relayer()

    def relayer(self) -> None:
        """The predictions' layer of the record shown, at the thresholds: the record's own
        detection keys, or those loaded from a file for it (`loaded`)."""
        v = self.current
        layer = None
        if v is not None and v.decoded is not None and v.overlay is not None and v.overlay.versus is not None:
            versus = v.overlay.versus
            got = self.loaded(v.number) if self.loaded is not None else None
            if got is not None:
                versus = versus.with_loaded(got, [b.label for b in v.overlay.boxes])
            if versus.predictions is not None:
                layer = prediction_layer(
                    versus, v.decoded.width, v.decoded.height, self.iou_threshold, self.score_threshold
                )
        self.view.layer = layer
        self.score.setVisible(layer is not None)
        self.score_label.setVisible(layer is not None)
        self._show_facts()
        self.view.update()

    def _show_facts(self) -> None:
        facts = list(self._base_facts)
        layer = self.view.layer
        if layer is not None and facts:
            counts = layer.counts()
            words = {o: o.words.replace("_", " ") for o in BoxOutcome}
            facts.append(
                f"{len(layer.scores):,} predictions ({html.escape(layer.source)}), "
                f"{len(layer.shown):,} ≥ {layer.score_threshold:.2f}, IoU ≥ {layer.iou_threshold:.2f}: "
                + " ".join(
                    f"<span style='color:{outcome_hex(o)}'>■</span> {counts[o]} {words[o]}"
                    for o in (
                        BoxOutcome.MATCHED,
                        BoxOutcome.FALSE_POSITIVE,
                        BoxOutcome.MISSED,
                        BoxOutcome.WRONG_CLASS,
                    )
                )
            )
        self.facts.setText(" · ".join(facts))

    def _on_opacity(self, value: int) -> None:
        self.view.mask_opacity = value / 100
        self.view.update()

    def show_view(self, v: RecordView, damaged: str = "") -> None:
        """`damaged`: the record's problem, said above the facts (what is shown may be corrupt)."""
        self.current = v
        self._base_facts = []
        self.view.layer = None
        self.score.setVisible(False)
        self.score_label.setVisible(False)
        self.view.mask = None
        has_mask = v.mask is not None and v.decoded is not None
        self.opacity.setVisible(has_mask)
        self.opacity_label.setVisible(has_mask)
        self.selector.clear()
        for ref in v.images:
            self.selector.addItem(ref.label)
        self.selector.setCurrentIndex(v.image_index)
        self.selector.setVisible(len(v.images) > 1)
        self.filmstrip.setVisible(bool(v.frames))
        if v.frames:
            self.filmstrip.show_frames(v.frames, v.image_index)
        if not v.images:
            self.qimage = None
            kind = v.payload.kind.replace("_", " ")
            self.view.set_content(None, None, f"No image in this record ({kind})")
            self.facts.setText(f"No image in this record ({kind}): its features are below.")
            self._fold(True)
            return
        self._fold(False)
        ref = v.images[v.image_index]
        if v.decoded is None:
            self.qimage = None
            self.view.set_content(None, None, f"⚠ {ref.key}: {v.error}")
            self.facts.setText(f"<b>Image does not decode</b>: {v.error}")
            return
        self.qimage, full = wrap_qimage(v.decoded.pixels)
        keep = [full]
        preview = None
        if v.preview is not None:
            small, arr = wrap_qimage(v.preview[0])
            preview = (small, v.preview[1])
            keep.append(arr)
        if has_mask:
            self.view.mask, mask_arr = wrap_qimage(v.mask.rgba)
            keep.append(mask_arr)
        self.view.set_content(self.qimage, v.overlay, preview=preview, keep=keep)
        img = v.decoded
        facts = [f"<b>{ref.key}</b> {ref.detail} {img.width}×{img.height}"]
        if v.frames and ref.key in v.payload.feature_lists:
            facts[0] = (
                f"<b>{ref.key}</b> frame {ref.index} of {len(v.payload.feature_lists[ref.key]):,} · {ref.detail} {img.width}×{img.height}"
            )
        facts += [f"<i>{n}</i>" for n in img.notes]
        ov = v.overlay
        if ov is not None and ov.spec is not None:
            facts.append(f"{ov.count:,} box{'es' if ov.count != 1 else ''}: {ov.convention_text}")
            if len(ov.boxes) > MAX_BOX_LABELS_DRAWN:
                facts.append(f"labels on the first {MAX_BOX_LABELS_DRAWN:,} (limits.MAX_BOX_LABELS_DRAWN)")
            facts += [f"⚠ {n}" for n in ov.notes]
        else:
            facts.append("no boxes found")
        if has_mask:  # the legend: each class's colour and share of the mask
            total = sum(n for _, n in v.mask.classes) or 1
            facts.append(
                f"{v.mask.key}: "
                + " ".join(
                    f"<span style='color:{palette_hex(str(c))}'>■</span> {html.escape(str(v.mask.names.get(c, c)))} "
                    f"({100 * n / total:.0f}%)"
                    for c, n in v.mask.classes[:12]
                )
            )
        facts += [f"<span style='color:#b00020'>⚠ {html.escape(n)}</span>" for n in v.mask_notes]
        if damaged:
            facts.insert(
                0,
                f"<span style='color:#b00020'>⚠ damaged record ({damaged.split(':')[0]}): "
                "the image may be corrupt</span>",
            )
        self._base_facts = facts
        self.relayer()
