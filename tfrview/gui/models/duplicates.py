"""The Duplicates view's model: a row a group of copies the analysis found (`messages.DuplicateGroups`),
each member a record number in the dataset, its split and a thumbnail from the gallery's pool."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPixmap

from tfrview.core.limits import GALLERY_CACHE
from tfrview.core.procs.messages import DuplicateGroups
from tfrview.core.records.thumbs import Thumbnail
from tfrview.gui.painting import to_qimage

GROUP_ROLE = Qt.ItemDataRole.UserRole + 1  # the row's CopyRow


@dataclass(frozen=True)
class CopyMember:
    n: int  # the record's number in the dataset
    record: int  # its number in its file
    split: str


@dataclass(frozen=True)
class CopyRow:
    """One group as the view paints it."""

    number: int
    exact: bool
    members: tuple[CopyMember, ...]
    more: int

    @property
    def title(self) -> str:
        how = "exact copies" if self.exact else "copies and near copies"
        size = len(self.members) + self.more
        splits = sorted({m.split or "no split" for m in self.members})
        return f"group {self.number} · {size} {how} · {', '.join(splits)}"


class DuplicatesModel(QAbstractListModel):
    def __init__(self, pool, parent=None) -> None:
        super().__init__(parent)
        self.pool = pool  # the gallery's ThumbnailPool: request(n); its result -> on_thumbnail
        self.rows: list[CopyRow] = []
        self.total = 0
        self._rows_of: dict[int, list[int]] = {}  # record number -> the rows it is in
        self._pixmaps: OrderedDict[int, QPixmap] = OrderedDict()
        self._asked: set[int] = set()

    def set_groups(self, msg: DuplicateGroups, number: Callable[[int, int], int]) -> None:
        """The analysis's groups; `number(file, record)`: the record's number in the dataset."""
        self.beginResetModel()
        self.rows = [
            CopyRow(g.number, g.exact, tuple(CopyMember(number(f, r), r, s) for f, r, s in g.members), g.more)
            for g in msg.groups
        ]
        self.total = msg.total
        self._rows_of = {}
        for i, row in enumerate(self.rows):
            for m in row.members:
                self._rows_of.setdefault(m.n, []).append(i)
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self.rows, self.total, self._rows_of = [], 0, {}
        self._pixmaps.clear()
        self._asked.clear()
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.row() >= len(self.rows):
            return None
        row = self.rows[index.row()]
        if role == GROUP_ROLE:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            return row.title
        if role == Qt.ItemDataRole.ToolTipRole:
            return "\n".join(f"record {m.n:,} ({m.split or 'no split'})" for m in row.members)
        return None

    def pixmap(self, n: int) -> QPixmap | None:
        """The member's thumbnail, asked of the pool the first time it is painted."""
        pm = self._pixmaps.get(n)
        if pm is not None:
            self._pixmaps.move_to_end(n)
            return pm
        if n not in self._asked:
            self._asked.add(n)
            self.pool.request(n)
        return None

    def on_thumbnail(self, item) -> None:
        n, thumb = item
        thumb: Thumbnail
        rows = self._rows_of.get(n)
        if not rows:
            return  # the gallery's, not ours
        if thumb.pixels is not None:
            self._pixmaps[n] = QPixmap.fromImage(to_qimage(thumb.pixels))
            if len(self._pixmaps) > GALLERY_CACHE:
                old, _ = self._pixmaps.popitem(last=False)
                self._asked.discard(old)
        for r in rows:
            idx = self.index(r, 0)
            self.dataChanged.emit(idx, idx)
