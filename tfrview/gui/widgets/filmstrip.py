"""A SequenceExample's frames in a row, each with its own boxes; a click shows that frame."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QIcon, QPixmap
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem

from tfrview.gui.painting import render_overlay_on_image, to_qimage

FRAME_ROLE = Qt.ItemDataRole.UserRole


class Filmstrip(QListWidget):
    frame_chosen = Signal(int)  # the image index (in the record's images) of the clicked frame

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setViewMode(QListView.ViewMode.IconMode)
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(False)
        self.setMovement(QListView.Movement.Static)
        self.setIconSize(QSize(96, 96))
        self.setFixedHeight(128)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setToolTip("The record's frames, each with its own boxes: click one to show it")
        self.itemClicked.connect(lambda item: self.frame_chosen.emit(int(item.data(FRAME_ROLE))))
        self._shown: tuple | None = None

    def show_frames(self, frames: tuple, current: int) -> None:
        """`frames`: (image index, small pixels or None, overlay) per frame, from the decode worker."""
        if frames is not self._shown:
            self._shown = frames
            self.clear()
            for t, (index, pixels, overlay) in enumerate(frames):
                item = QListWidgetItem(f"{t}")
                if pixels is not None:
                    item.setIcon(
                        QIcon(QPixmap.fromImage(render_overlay_on_image(to_qimage(pixels), overlay, False)))
                    )
                else:
                    item.setText(f"{t} ⚠")
                    item.setToolTip("this frame does not decode")
                item.setData(FRAME_ROLE, index)
                self.addItem(item)
        for row in range(self.count()):
            if int(self.item(row).data(FRAME_ROLE)) == current:
                self.setCurrentRow(row)
                self.scrollToItem(self.item(row))
                break
