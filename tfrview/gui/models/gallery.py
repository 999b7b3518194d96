"""The gallery's model: the same rows as the record table (so filters apply), each shown as a
thumbnail with its boxes. Thumbnails come from a pool of worker threads and are cached."""

from __future__ import annotations

from collections import OrderedDict

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtGui import QColor, QPixmap

from tfrview.core.limits import GALLERY_CACHE
from tfrview.core.records.thumbs import Thumbnail
from tfrview.gui.models.record_table import RecordTableModel
from tfrview.gui.painting import to_qimage

THUMB = 160  # thumbnails fit THUMB x THUMB_H
THUMB_H = 120
BADGE_ROLE = Qt.ItemDataRole.UserRole + 1  # the worst severity among the record's problems, or None
TAG_ROLE = Qt.ItemDataRole.UserRole + 2  # the record's tag (tags.TagWord), or None


class GalleryModel(QAbstractListModel):
    def __init__(self, table: RecordTableModel, pool, parent=None) -> None:
        super().__init__(parent)
        self.table = table
        self.pool = pool  # ThumbnailPool: request(n), ready -> on_thumbnail
        self._pixmaps: OrderedDict[int, QPixmap] = OrderedDict()
        self._captions: dict[int, str] = {}
        self._errors: set[int] = set()
        self._stale: set[int] = set()  # tiles drawn before the thresholds moved: shown until redrawn
        self.placeholder = QPixmap(THUMB, THUMB_H)
        self.placeholder.fill(QColor(60, 60, 64))
        # mirror the table's rows exactly
        table.rowsAboutToBeInserted.connect(lambda _p, a, b: self.beginInsertRows(QModelIndex(), a, b))
        table.rowsInserted.connect(lambda *_: self.endInsertRows())
        table.modelAboutToBeReset.connect(self.beginResetModel)
        table.modelReset.connect(self.endResetModel)
        # the table sorted: its rows in a new order (the window puts the current item back)
        table.layoutAboutToBeChanged.connect(lambda *_: self.beginResetModel())
        table.layoutChanged.connect(lambda *_: self.endResetModel())

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.table.rowCount()

    def record_number(self, row: int) -> int:
        return self.table.record_number(row)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        n = self.table.record_number(index.row())
        if role == Qt.ItemDataRole.DecorationRole:
            pm = self._pixmaps.get(n)
            if pm is not None:
                self._pixmaps.move_to_end(n)
                if n in self._stale:  # drawn at old thresholds: asked again, the old one shown meanwhile
                    self._stale.discard(n)
                    self.pool.request(n)
                return pm
            if n not in self._captions:
                self.pool.request(n)
            return self.placeholder
        if role == Qt.ItemDataRole.DisplayRole:
            caption = self._captions.get(n, "")
            head = f"#{n}{self.table.score_text(n)}"
            return f"{head}  {caption}" if caption else head
        if role == BADGE_ROLE:
            return self.table.severity_of(n)
        if role == TAG_ROLE:
            return self.table.tag_of(n)
        if role == Qt.ItemDataRole.ToolTipRole:
            problems = self.table.problems_text(n)
            problems = f"\n\n{problems}" if problems else ""
            tag = self.table.tag_text(n)
            tag = f"\n\ntag: {tag}" if tag else ""
            return f"record {n}\n{self._captions.get(n, '')}{problems}{tag}"
        if role == Qt.ItemDataRole.ForegroundRole and n in self._errors:
            return QColor(176, 0, 32)
        if role == Qt.ItemDataRole.SizeHintRole:
            return QSize(THUMB + 16, THUMB_H + 40)
        return None

    def on_thumbnail(self, item) -> None:
        n, thumb = item
        thumb: Thumbnail
        self._captions[n] = thumb.caption
        if thumb.error:
            self._errors.add(n)
        if thumb.pixels is not None:
            self._pixmaps[n] = QPixmap.fromImage(to_qimage(thumb.pixels))
            if len(self._pixmaps) > GALLERY_CACHE:
                old, _ = self._pixmaps.popitem(last=False)
                self._captions.pop(old, None)
        r = self.table.row_of(n)
        if r is not None:
            idx = self.index(r, 0)
            self.dataChanged.emit(idx, idx)

    def redraw(self) -> None:
        """Every tile drawn again (the prediction thresholds moved): the tiles in view are asked
        again as they are painted, each keeping its old picture until the new one comes (no reset:
        the scroll position and the current tile stay)."""
        self._stale = set(self._pixmaps)
        if self.rowCount():
            self.dataChanged.emit(
                self.index(0, 0), self.index(self.rowCount() - 1, 0), [Qt.ItemDataRole.DecorationRole]
            )

    def clear(self) -> None:
        self._stale.clear()
        self.beginResetModel()
        self._pixmaps.clear()
        self._captions.clear()
        self._errors.clear()
        self.endResetModel()
