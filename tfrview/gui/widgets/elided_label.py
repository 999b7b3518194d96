"""A one-line label that never widens its window: it draws its text elided in the middle to the
room it has, and shows the whole text in its tooltip when it had to cut it."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QSizePolicy, QStyleOption


class ElidedLabel(QLabel):
    """`text()` stays the whole text (plain text only); what is painted is cut to fit."""

    def __init__(self, text: str = "", parent=None) -> None:
        super().__init__(text, parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._extra_tip = ""

    def set_extra_tip(self, tip: str) -> None:
        """More to say in the tooltip after the whole text (e.g. the missing shards' names)."""
        self._extra_tip = tip
        self._update_tip()

    def setText(self, text: str) -> None:
        super().setText(text)
        self._update_tip()

    def shown_text(self) -> str:
        """The text as painted in the label's present width."""
        room = max(self.contentsRect().width(), 0)
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, room)

    def is_elided(self) -> bool:
        return self.shown_text() != self.text()

    def _update_tip(self) -> None:
        tip = self.text() if self.is_elided() else ""
        self.setToolTip("\n\n".join(t for t in (tip, self._extra_tip) if t))

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance("…") * 4, super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(self.minimumSizeHint().width(), super().sizeHint().height())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._update_tip()

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        opt = QStyleOption()
        opt.initFrom(self)
        r = self.contentsRect()
        flags = (self.alignment() | Qt.AlignmentFlag.AlignVCenter).value
        self.style().drawItemText(
            p, r, flags, opt.palette, self.isEnabled(), self.shown_text(), self.foregroundRole()
        )
