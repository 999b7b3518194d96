"""The per-shard health table: one row per file, sortable by any column (numpy argsort over the
columns of a `ShardHealth`, never a walk through `data()`), each file's split beside it, and
narrowed to one split when the person chooses one."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from tfrview.core.analysis.shard_health import ShardHealth
from tfrview.core.tfrecord.status import RecordStatus
from tfrview.core.units import human_bytes
from tfrview.gui.models.base import ColumnsModel

COLUMNS = [
    "file",
    "split",
    "records",
    "ok",
    "damaged",
    "unverified",
    "errors",
    "warnings",
    "notes",
    "size",
]  # record status words
_BAD = QBrush(QColor(176, 0, 32))
_WARN = QBrush(QColor(150, 90, 0))
_DIM = QBrush(QColor(130, 130, 130))
_NUMERIC = set(COLUMNS) - {"file", "split"}
NO_SPLIT = "(none)"  # how a file in no split shows


class ShardsModel(ColumnsModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.columns = COLUMNS
        self.health: ShardHealth | None = None
        self.order = np.empty(0, dtype=np.int64)  # row -> file number
        self.sort_column = "file"
        self.descending = False
        self.splits: list[str] = []  # each file's split ("" none)
        self.only_split: str | None = None  # the split shown (None: every file)

    def set_splits(self, splits: list[str], only: str | None) -> None:
        """Each file's split, and the one split to show (None: all): the rows are made again."""
        self.beginResetModel()
        self.splits = list(splits)
        self.only_split = only
        if self.health is not None:
            self.order = self._order(self.health)
        self.endResetModel()

    def split_of(self, f: int) -> str:
        return self.splits[f] if f < len(self.splits) else ""

    def _order(self, health: ShardHealth) -> np.ndarray:
        """Row -> file number: sorted by the column asked (the split by its name, then the file's
        name), narrowed to the split chosen."""
        if self.sort_column == "split":
            names = health.order("file")
            code = np.array([self.split_of(int(f)) for f in names], dtype=object)
            order = names[np.argsort(code, kind="stable")]
            order = order[::-1] if self.descending else order
        else:
            order = health.order(self.sort_column, self.descending)
        if self.only_split is not None:
            keep = np.array([self.split_of(int(f)) == self.only_split for f in order], dtype=bool)
            order = order[keep] if len(order) else order
        return order

    def set_health(self, health: ShardHealth) -> None:
        """New figures: same files, so rows keep their place unless the sort order changes them."""
        if self.health is None or len(self.health) != len(health):
            self.beginResetModel()
            self.health = health
            self.order = self._order(health)
            self.endResetModel()
            return
        self.health = health
        order = self._order(health)
        if np.array_equal(order, self.order):
            self.dataChanged.emit(self.index(0, 1), self.index(len(order) - 1, len(COLUMNS) - 1))
            return
        self.layoutAboutToBeChanged.emit()
        before = self.order
        self.order = order
        row_of_file = np.full(len(health), -1, dtype=np.int64)
        row_of_file[order] = np.arange(len(order))
        for pi in self.persistentIndexList():  # the selected shard stays selected
            r = pi.row()
            moved = int(row_of_file[before[r]]) if 0 <= r < len(before) else -1
            self.changePersistentIndex(pi, self.index(moved, pi.column()) if moved >= 0 else QModelIndex())
        self.layoutChanged.emit()

    def file_at(self, row: int) -> int:
        return int(self.order[row])

    def row_of(self, file_no: int) -> int:
        hits = np.flatnonzero(self.order == file_no)
        return int(hits[0]) if len(hits) else -1

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if 0 <= column < len(COLUMNS):
            self.sort_column = COLUMNS[column]
            self.descending = order == Qt.SortOrder.DescendingOrder
            if self.health is not None:
                self.set_health(self.health)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() or self.health is None else len(self.order)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        h = self.health
        if h is None or not index.isValid():
            return None
        f = int(self.order[index.row()])
        col = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            if col == "file":
                return h.names[f]
            if col == "split":
                return self.split_of(f) or NO_SPLIT
            if h.errors_text[f]:
                return ("missing" if h.missing and h.missing[f] else "unreadable") if col == "records" else ""
            return _number(h, f, col)
        if role == Qt.ItemDataRole.TextAlignmentRole and col in _NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            if col == "split" and not self.split_of(f):
                return _DIM
            if h.errors_text[f] or (col in (RecordStatus.DAMAGED, "errors") and int(h.column(col)[f])):
                return _BAD
            if col == "warnings" and h.column("warnings")[f]:
                return _WARN
        if role == Qt.ItemDataRole.ToolTipRole:
            return h.errors_text[f] or f"{h.names[f]}: double-click to show its records"
        return None


def _number(h: ShardHealth, f: int, col: str) -> str:
    v = int(h.column(col)[f])
    if col == "size":
        return "" if v < 0 else human_bytes(v)
    return f"{v:,}"
