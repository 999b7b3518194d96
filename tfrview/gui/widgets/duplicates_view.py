"""The Duplicates view: each group of copies as a row of thumbnails with their split and record
number; a click on one shows that record in the table. Painting and hit-testing are pure functions
of a row's rectangle (`member_rects`, `paint_group`); the widget only routes events."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPixmap
from PySide6.QtWidgets import QAbstractItemView, QListView, QStyle, QStyledItemDelegate

from tfrview.gui.models.duplicates import GROUP_ROLE, CopyRow

CELL_W, CELL_H = 128, 96  # a member's thumbnail fits this
TITLE_H, CAPTION_H, GAP = 22, 18, 8
ROW_H = TITLE_H + CELL_H + CAPTION_H + GAP


def member_rects(row: QRect, count: int) -> list[QRect]:
    """Where each member's thumbnail goes in a row (as many as fit its width)."""
    fit = max(1, (row.width() - GAP) // (CELL_W + GAP))
    top = row.top() + TITLE_H
    return [QRect(row.left() + GAP + i * (CELL_W + GAP), top, CELL_W, CELL_H) for i in range(min(count, fit))]


def member_at(row_rect: QRect, row: CopyRow, x: int, y: int) -> int | None:
    """The member under a point of the row, or None."""
    for i, r in enumerate(member_rects(row_rect, len(row.members))):
        if r.adjusted(0, 0, 0, CAPTION_H).contains(x, y):
            return i
    return None


def paint_group(
    p: QPainter,
    rect: QRect,
    row: CopyRow,
    pixmaps: list[QPixmap | None],
    selected: bool,
    text: QColor,
    highlight: QColor,
) -> None:
    """A group's title, then each member's thumbnail (scaled to fit, a grey cell until it comes)
    with its split and record number under it; `+N more` where the row runs out. `text`,
    `highlight`: the view's palette colours."""
    p.save()
    if selected:
        shade = QColor(highlight)
        shade.setAlpha(50)
        p.fillRect(rect, shade)
    p.setPen(text)
    bold = QFont(p.font())
    bold.setBold(True)
    p.setFont(bold)
    p.drawText(
        rect.adjusted(GAP, 2, -GAP, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, row.title
    )
    p.setFont(QFont(p.font().family(), max(7, p.font().pointSize() - 1)))
    cells = member_rects(rect, len(row.members))
    for cell, m, pm in zip(cells, row.members, pixmaps, strict=False):
        p.fillRect(cell, QColor(60, 60, 64))
        if pm is not None and not pm.isNull():
            scaled = pm.scaled(
                cell.size(), Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation
            )
            x = cell.left() + (cell.width() - scaled.width()) // 2
            y = cell.top() + (cell.height() - scaled.height()) // 2
            p.drawPixmap(x, y, scaled)
        p.setPen(text)
        caption = QRect(cell.left(), cell.bottom() + 2, cell.width(), CAPTION_H)
        p.drawText(
            caption, Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, f"{m.split or '–'} · #{m.n:,}"
        )
    rest = len(row.members) - len(cells) + row.more
    if rest > 0 and cells:
        p.setPen(text)
        last = cells[-1]
        p.drawText(
            QRect(last.right() + GAP, last.top(), max(60, rect.right() - last.right() - GAP), CELL_H),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            f"+{rest:,} more",
        )
    p.restore()


class _GroupDelegate(QStyledItemDelegate):
    def paint(self, painter, option, index) -> None:
        row: CopyRow | None = index.data(GROUP_ROLE)
        if row is None:
            return
        model = index.model()
        cells = member_rects(option.rect, len(row.members))
        pixmaps = [model.pixmap(m.n) for m in row.members[: len(cells)]]
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        pal = option.palette
        paint_group(
            painter,
            option.rect,
            row,
            pixmaps,
            selected,
            pal.color(pal.ColorRole.Text),
            pal.color(pal.ColorRole.Highlight),
        )

    def sizeHint(self, option, index) -> QSize:
        return QSize(option.rect.width() or 800, ROW_H)


class DuplicatesView(QListView):
    """The list of groups; `record_chosen(n)` when a member is clicked."""

    record_chosen = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setItemDelegate(_GroupDelegate(self))
        self.setUniformItemSizes(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setMouseTracking(False)

    def mousePressEvent(self, event) -> None:
        super().mousePressEvent(event)
        pos = event.position().toPoint()
        index = self.indexAt(pos)
        row: CopyRow | None = index.data(GROUP_ROLE) if index.isValid() else None
        if row is None:
            return
        i = member_at(self.visualRect(index), row, pos.x(), pos.y())
        if i is not None:
            self.record_chosen.emit(row.members[i].n)
