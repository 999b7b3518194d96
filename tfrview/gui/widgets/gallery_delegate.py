"""The gallery's cells: Qt's own painting of the thumbnail and caption, plus a badge on the
thumbnail of a record with a warning or an error (notes get none, so a badge always means
something even when most records carry a note), and the person's tag as a word on its top-left."""

from __future__ import annotations

from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from tfrview.gui.models.gallery import BADGE_ROLE, TAG_ROLE
from tfrview.gui.painting import paint_badge, paint_tag_badge

BADGED = ("error", "warning")


class GalleryDelegate(QStyledItemDelegate):
    def paint(self, painter, option, index) -> None:
        super().paint(painter, option, index)
        severity = index.data(BADGE_ROLE)
        tag = index.data(TAG_ROLE)
        if severity not in BADGED and tag is None:
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        style = opt.widget.style() if opt.widget is not None else None
        if style is None:
            return
        icon = style.subElementRect(QStyle.SubElement.SE_ItemViewItemDecoration, opt, opt.widget)
        pm = opt.icon.actualSize(opt.decorationSize) if not opt.icon.isNull() else opt.decorationSize
        # the pixmap is centred in the decoration rect: the badge sits on its top-right corner
        right = icon.center().x() + pm.width() / 2 - 2
        top = icon.center().y() - pm.height() / 2 + 2
        if severity in BADGED:
            paint_badge(painter, QPointF(right, top), severity)
        if tag is not None:
            paint_tag_badge(painter, QPointF(icon.center().x() - pm.width() / 2 + 2, top), tag)
