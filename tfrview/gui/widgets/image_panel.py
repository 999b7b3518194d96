"""The image panel: the view, a strip of controls above it and a line of facts below it."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSlider, QToolButton, QVBoxLayout, QWidget

from tfrview.core.limits import MAX_BOX_LABELS_DRAWN
from tfrview.core.records.palette import palette_hex
from tfrview.gui.painting import wrap_qimage
from tfrview.gui.widgets.filmstrip import Filmstrip
from tfrview.gui.widgets.image_view import ImageView
from tfrview.gui.workers.decode import RecordView


class ImagePanel(QWidget):
    image_chosen = Signal(int)  # which of the record's images to show
    pick_boxes = Signal()  # the person wants to choose the box keys
    imageless = Signal(bool)  # whether the record shown has no image (its view is folded away)

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
        self.facts.setText("")

    def _on_opacity(self, value: int) -> None:
        self.view.mask_opacity = value / 100
        self.view.update()

    def show_view(self, v: RecordView, damaged: str = "") -> None:
        """`damaged`: the record's problem, said above the facts (what is shown may be corrupt)."""
        self.current = v
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
        self.facts.setText(" · ".join(facts))
