"""The image panel: the view, a strip of controls above it and a line of facts below it."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from tfrview.gui.painting import wrap_qimage
from tfrview.gui.widgets.image_view import ImageView
from tfrview.gui.workers.decode import RecordView


class ImagePanel(QWidget):
    image_chosen = Signal(int)  # which of the record's images to show
    pick_boxes = Signal()  # the person wants to choose the box keys

    def __init__(self, actions: dict[str, QAction], parent=None) -> None:
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
        bar.addStretch(1)
        for name in ("fit", "actual", "boxes", "labels", "box_keys", "save_image"):
            b = QToolButton(self)
            b.setDefaultAction(actions[name])
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
        lay.addWidget(self.facts)
        self.show_message("Select a record to see its image")

    def show_message(self, text: str) -> None:
        self.current = None
        self.qimage = None
        self.selector.clear()
        self.selector.setVisible(False)
        self.view.set_content(None, None, text)
        self.facts.setText("")

    def show_view(self, v: RecordView, damaged: str = "") -> None:
        """`damaged`: the record's problem, said above the facts (what is shown may be corrupt)."""
        self.current = v
        self.selector.clear()
        for ref in v.images:
            self.selector.addItem(ref.label)
        self.selector.setCurrentIndex(v.image_index)
        self.selector.setVisible(len(v.images) > 1)
        if not v.images:
            self.qimage = None
            kind = v.payload.kind.replace("_", " ")
            self.view.set_content(None, None, f"No image in this record ({kind})")
            self.facts.setText("")
            return
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
        self.view.set_content(self.qimage, v.overlay, preview=preview, keep=keep)
        img = v.decoded
        facts = [f"<b>{ref.key}</b> {ref.detail} {img.width}×{img.height}"]
        facts += [f"<i>{n}</i>" for n in img.notes]
        ov = v.overlay
        if ov is not None and ov.spec is not None:
            facts.append(f"{len(ov.boxes)} box{'es' if len(ov.boxes) != 1 else ''}: {ov.convention_text}")
            facts += [f"⚠ {n}" for n in ov.notes]
        else:
            facts.append("no boxes found")
        if damaged:
            facts.insert(0, f"<span style='color:#b00020'>⚠ damaged record ({damaged.split(':')[0]}): "
                            "the image may be corrupt</span>")  # fmt: skip
        self.facts.setText(" · ".join(facts))
