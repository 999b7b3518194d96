"""The problems of a dataset as a table: record, kind, severity, message (and file when several)."""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from tfrview.core.framing import Problem
from tfrview.gui.models.base import ColumnsModel

_SEVERITY_FG = {
    "error": QBrush(QColor(176, 0, 32)),
    "warning": QBrush(QColor(150, 90, 0)),
    "info": QBrush(QColor(60, 90, 140)),
}


_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class ProblemRow:
    file_no: int
    record: int | None  # global record number the problem belongs to
    target: int | None  # global record to jump to (the record itself, or the one next to a damaged region)
    problem: Problem
    after: bool = False  # the damage lies after `target` (at the end of its file), not before it

    @property
    def sort_key(self) -> tuple:
        """Errors first, then warnings, then notes (671 duplicate-image notes must not bury 19
        errors); within each, in the order of the data."""
        return (
            _SEVERITY_RANK.get(self.problem.kind.severity, 3),
            self.target if self.target is not None else 1 << 62,
            self.problem.offset,
            str(self.problem.kind),
        )


class ProblemsModel(ColumnsModel):
    def __init__(self, file_names: list[str], parent=None) -> None:
        super().__init__(parent)
        self.file_names = file_names
        self.rows: list[ProblemRow] = []
        self._keys: list[tuple] = []
        self.counts: Counter = Counter()
        self.columns = ["record", *(["file"] if len(file_names) > 1 else []), "kind", "severity", "message"]

    def add(self, row: ProblemRow) -> None:
        key = row.sort_key
        i = bisect.bisect_right(self._keys, key)
        self.beginInsertRows(QModelIndex(), i, i)
        self.rows.insert(i, row)
        self._keys.insert(i, key)
        self.endInsertRows()
        self.counts[str(row.problem.kind)] += 1

    def remove_kinds(self, kinds: set[str]) -> None:
        """Drop the problems of some kinds (e.g. the QA checks, before they run again)."""
        keep = [r for r in self.rows if str(r.problem.kind) not in kinds]
        self.beginResetModel()
        self.rows = keep
        self._keys = [r.sort_key for r in keep]
        self.counts = Counter(str(r.problem.kind) for r in keep)
        self.endResetModel()

    def next_target(self, current: int | None, backwards: bool = False) -> int | None:
        """The next (or previous) record with a problem, after (or before) `current`."""
        targets = sorted({r.target for r in self.rows if r.target is not None})
        if not targets:
            return None
        if current is None:
            return targets[-1] if backwards else targets[0]
        if backwards:
            i = bisect.bisect_left(targets, current) - 1
            return targets[i] if i >= 0 else targets[-1]
        i = bisect.bisect_right(targets, current)
        return targets[i] if i < len(targets) else targets[0]

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row = self.rows[index.row()]
        col = self.columns[index.column()]
        p = row.problem
        if role == Qt.ItemDataRole.DisplayRole:
            if col == "record":
                if row.record is not None:
                    return str(row.record)
                if p.kind == "unreadable_file":
                    return "file"
                if row.target is None:
                    return "at the end"
                return f"{'after' if row.after else 'before'} {row.target}"
            if col == "file":
                return self.file_names[row.file_no]
            if col == "kind":
                return str(p.kind)
            if col == "severity":
                return p.kind.severity
            return p.message
        if role == Qt.ItemDataRole.ForegroundRole and col == "severity":
            return _SEVERITY_FG.get(p.kind.severity)
        if role == Qt.ItemDataRole.ToolTipRole:
            extra = (
                f"\nbytes {p.offset:,}..{p.offset + p.length:,}" if p.length else f"\nat byte {p.offset:,}"
            )
            return p.message + extra
        return None
