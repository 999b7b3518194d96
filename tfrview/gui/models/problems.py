"""The problems of a dataset as a triage tree: sorted by any column, filtered by severity and kind,
repeats grouped under one row with a count, and (when asked) only the records the table's filter
shows.

The state is plain: every problem in `rows`, what the person asked for in a frozen
`ProblemsQuery`, and the arranged `entries` computed from both by the pure function `arrange`.
The model only shows `entries`; new problems are batched and arranged at most every 200 ms, so a
file with a hundred thousand problems never re-sorts per problem on the UI thread.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QFont

from tfrview.core.framing import Problem
from tfrview.core.problemgroups import group, group_key, group_title
from tfrview.gui.painting import SEVERITY_COLOURS

_SEVERITY_FG = {s: QBrush(c) for s, c in SEVERITY_COLOURS.items()}
SEVERITIES = ("error", "warning", "info")
_SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
_NO_TARGET = 1 << 62  # sorts problems with no record (file-level, end of file) last
_ARRANGE_MS = 200


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
        return (self.rank, self.place, self.problem.offset, str(self.problem.kind))

    @property
    def rank(self) -> int:
        return _SEVERITY_RANK.get(self.problem.kind.severity, len(SEVERITIES))

    @property
    def place(self) -> int:
        return self.target if self.target is not None else _NO_TARGET


@dataclass(frozen=True, slots=True)
class ProblemsQuery:
    """What the person asked the panel for."""

    sort: str = "severity"  # a column name
    descending: bool = False
    severities: frozenset[str] = frozenset(SEVERITIES)
    hidden_kinds: frozenset[str] = frozenset()  # new kinds show up; the person hides some
    grouped: bool = True
    follow_filter: bool = True


@dataclass(frozen=True, slots=True)
class ProblemEntry:
    """A top-level row: one problem, or a group of repeats (children: its problems)."""

    rows: tuple[ProblemRow, ...]
    title: str = field(default="")

    @property
    def first(self) -> ProblemRow:
        return self.rows[0]

    @property
    def key(self) -> tuple[str, str]:
        return group_key(self.first.problem)


def _entry_sort_key(column: str, file_names: list[str]):
    def key(e: ProblemEntry) -> tuple:
        r = e.first
        if column == "record":
            return (r.place, r.rank)
        if column == "file":
            return (file_names[r.file_no], r.place)
        if column == "kind":
            return (str(r.problem.kind), r.rank, r.place)
        if column == "count":
            return (len(e.rows), -r.rank, -r.place)
        if column == "message":
            return (e.title, r.place)
        return (r.rank, r.place)

    return key


def arrange(rows: list[ProblemRow], targets: np.ndarray, query: ProblemsQuery, matches: np.ndarray | None,
            file_names: list[str]) -> list[ProblemEntry]:  # fmt: skip
    """The entries the panel shows. `rows` is in the default order (`ProblemRow.sort_key`),
    `targets` their target records (-1 for none), `matches` the sorted record numbers of the
    table's filter (None: no filter)."""
    keep = [
        r
        for r in rows
        if r.problem.kind.severity in query.severities and str(r.problem.kind) not in query.hidden_kinds
    ]
    if query.follow_filter and matches is not None:
        shown = _in_sorted(targets, matches)
        ids = {id(r) for r, ok in zip(rows, shown, strict=True) if ok}
        # a problem of no record (a file that would not open) concerns every record: it stays
        keep = [r for r in keep if r.target is None or id(r) in ids]
    if query.grouped:
        entries = [
            ProblemEntry(tuple(g), group_title([r.problem.message for r in g]))
            for g in group(keep, lambda r: r.problem)
        ]
    else:
        entries = [ProblemEntry((r,), r.problem.message) for r in keep]
    entries.sort(key=_entry_sort_key(query.sort, file_names), reverse=query.descending)
    return entries


def _in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(sorted_set, values).clip(0, len(sorted_set) - 1)
    return sorted_set[at] == values


class ProblemsModel(QAbstractItemModel):
    arranged = Signal()  # entries were arranged anew (after the model reset)

    def __init__(self, file_names: list[str], parent=None) -> None:
        super().__init__(parent)
        self.file_names = file_names
        self.rows: list[ProblemRow] = []  # every problem, in the default order
        self._keys: list[tuple] = []
        self._targets = np.empty(0, dtype=np.int64)
        self.counts: Counter = Counter()  # by kind, over every problem
        self.by_file: dict[int, Counter] = {}  # severity counts of each file
        self.query = ProblemsQuery()
        self.matches: np.ndarray | None = None
        self.entries: list[ProblemEntry] = []
        self.columns = [
            "record",
            *(["file"] if len(file_names) > 1 else []),
            "kind",
            "severity",
            "count",
            "message",
        ]
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(_ARRANGE_MS)
        self._timer.timeout.connect(self.flush)
        self._dirty = False
        self.view_changed = False  # the last arrangement answered a new query or filter, not new problems
        self._view_pending = False

    # state -------------------------------------------------------------------------------------

    def add(self, row: ProblemRow) -> None:
        i = bisect.bisect_right(self._keys, row.sort_key)
        self.rows.insert(i, row)
        self._keys.insert(i, row.sort_key)
        self._targets = np.empty(0, dtype=np.int64)  # recomputed when arranged
        self.counts[str(row.problem.kind)] += 1
        self.by_file.setdefault(row.file_no, Counter())[row.problem.kind.severity] += 1
        self._soon()

    def remove_kinds(self, kinds: set[str]) -> None:
        """Drop the problems of some kinds (e.g. the QA checks, before they run again)."""
        self.rows = [r for r in self.rows if str(r.problem.kind) not in kinds]
        self._keys = [r.sort_key for r in self.rows]
        self._targets = np.empty(0, dtype=np.int64)
        self.counts = Counter(str(r.problem.kind) for r in self.rows)
        self.by_file = {}
        for r in self.rows:
            self.by_file.setdefault(r.file_no, Counter())[r.problem.kind.severity] += 1
        self.flush()

    def set_query(self, query: ProblemsQuery) -> None:
        if query != self.query:
            self.query = query
            self._view_pending = True
            self.flush()

    def set_matches(self, matches: np.ndarray | None) -> None:
        """The table's filter: the sorted numbers of its matching records so far (None: no filter)."""
        self.matches = matches
        if self.query.follow_filter:
            self._view_pending = True
            self._soon()

    def _soon(self) -> None:
        self._dirty = True
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Arrange now (the timer does it for batches)."""
        self._timer.stop()
        self._dirty = False
        if len(self._targets) != len(self.rows):
            self._targets = np.fromiter((-1 if r.target is None else r.target for r in self.rows), np.int64,
                                        len(self.rows))  # fmt: skip
        entries = arrange(self.rows, self._targets, self.query, self.matches, self.file_names)
        self.view_changed, self._view_pending = self._view_pending, False
        self.beginResetModel()
        self.entries = entries
        self.endResetModel()
        self.arranged.emit()

    @property
    def shown(self) -> int:
        return sum(len(e.rows) for e in self.entries)

    def severity_counts(self) -> Counter:
        return Counter(r.problem.kind.severity for r in self.rows)

    def leaves(self) -> list[ProblemRow]:
        """Every shown problem, in the panel's order (a group's problems in place of the group)."""
        return [r for e in self.entries for r in e.rows]

    def row_at(self, index: QModelIndex | QPersistentModelIndex) -> ProblemRow | None:
        """The problem a row stands for (a group stands for its first problem)."""
        if not index.isValid():
            return None
        if index.internalId():
            return self.entries[index.internalId() - 1].rows[index.row()]
        e = self.entries[index.row()]
        return e.first

    def is_group(self, index: QModelIndex | QPersistentModelIndex) -> bool:
        return index.isValid() and not index.internalId() and len(self.entries[index.row()].rows) > 1

    def index_of(self, row: ProblemRow) -> QModelIndex:
        """Where a problem is shown: its own row, or its row inside its group."""
        for i, e in enumerate(self.entries):
            if len(e.rows) == 1:
                if e.first is row:
                    return self.index(i, 0)
            elif e.key == group_key(row.problem):
                for j, r in enumerate(e.rows):
                    if r is row:
                        return self.index(j, 0, self.index(i, 0))
        return QModelIndex()

    def group_index(self, key: tuple[str, str]) -> QModelIndex:
        for i, e in enumerate(self.entries):
            if len(e.rows) > 1 and e.key == key:
                return self.index(i, 0)
        return QModelIndex()

    # Qt ----------------------------------------------------------------------------------------

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        if parent.isValid():
            return self.createIndex(row, column, parent.row() + 1)
        return self.createIndex(row, column, 0)

    def parent(self, index: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid() or not index.internalId():
            return QModelIndex()
        return self.createIndex(index.internalId() - 1, 0, 0)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return len(self.entries)
        if parent.internalId() or parent.column() != 0:
            return 0
        e = self.entries[parent.row()]
        return len(e.rows) if len(e.rows) > 1 else 0

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        horizontal = orientation == Qt.Orientation.Horizontal
        if role == Qt.ItemDataRole.DisplayRole and horizontal and 0 <= section < len(self.columns):
            return self.columns[section]
        return None

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        if 0 <= column < len(self.columns):
            descending = order == Qt.SortOrder.DescendingOrder
            self.set_query(replace(self.query, sort=self.columns[column], descending=descending))

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        col = self.columns[index.column()]
        child = bool(index.internalId())
        entry = self.entries[index.internalId() - 1 if child else index.row()]
        grouped = len(entry.rows) > 1 and not child
        row = entry.rows[index.row()] if child else entry.first
        p = row.problem
        if role == Qt.ItemDataRole.DisplayRole:
            if col == "record":
                if grouped:
                    ends = min(entry.rows, key=lambda r: r.place), max(entry.rows, key=lambda r: r.place)
                    return f"{_place(ends[0])} … {_place(ends[1])}"
                return _place(row)
            if col == "file":
                return self.file_names[row.file_no]
            if col == "kind":
                return str(p.kind)
            if col == "severity":
                return p.kind.severity
            if col == "count":
                return f"{len(entry.rows):,}" if grouped else ("" if child else "1")
            return entry.title if grouped else p.message
        if role == Qt.ItemDataRole.ForegroundRole and col == "severity":
            return _SEVERITY_FG.get(p.kind.severity)
        if role == Qt.ItemDataRole.FontRole and grouped and col == "count":
            f = QFont()
            f.setBold(True)
            return f
        if role == Qt.ItemDataRole.TextAlignmentRole and col == "count":
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            if grouped:
                return f"{len(entry.rows):,} × {entry.title}\n(expand to see each; F8 steps through them)"
            extra = (
                f"\nbytes {p.offset:,}..{p.offset + p.length:,}" if p.length else f"\nat byte {p.offset:,}"
            )
            return p.message + extra
        return None


def _place(row: ProblemRow) -> str:
    if row.record is not None:
        return str(row.record)
    if row.problem.kind == "unreadable_file":
        return "file"
    if row.target is None:
        return "at the end"
    return f"{'after' if row.after else 'before'} {row.target}"
