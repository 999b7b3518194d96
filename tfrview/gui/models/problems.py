"""The problems of a dataset as a triage tree: sorted by any column, filtered by severity and kind,
repeats grouped under one row with a count, and (when asked) only the records the table's filter
shows.

The state is plain: every problem as columns (`ProblemColumns`, numpy), what the person asked
for in a frozen `ProblemsQuery`, and the `Arrangement` computed from both by the pure function
`arrange` (array operations: 20,000 problems arrange in milliseconds). New problems are batched
and arranged at most every 200 ms; errors come first by default, so 671 duplicate-image notes
never bury 19 errors.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QFont

from tfrview.core.analysis.problemgroups import Repeats
from tfrview.core.problems import SEVERITIES, Problem, ProblemKind
from tfrview.gui.painting import SEVERITY_COLOURS

_SEVERITY_FG = {s: QBrush(c) for s, c in SEVERITY_COLOURS.items()}
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
    def rank(self) -> int:
        return self.problem.kind.severity_rank

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
    key: tuple[str, str] = ("", "")

    @property
    def first(self) -> ProblemRow:
        return self.rows[0]


@dataclass(frozen=True)
class ProblemColumns:
    """Every problem as columns, in the order they came (numpy: arranging 100,000 problems is a few
    array operations, not a Python sort per batch)."""

    rank: np.ndarray  # severity rank (errors first)
    place: np.ndarray  # the target record (_NO_TARGET when none)
    has_target: np.ndarray  # bool
    offset: np.ndarray
    file_no: np.ndarray
    kind: np.ndarray  # codes into the kinds' names
    group: np.ndarray  # codes of core.problemgroups.Repeats


@dataclass(frozen=True)
class Arrangement:
    """What the panel shows: entries as runs of `members` (indices into the problems in the order
    they came), entry i being members[starts[i]:starts[i + 1]]."""

    members: np.ndarray
    starts: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.starts)

    def __len__(self) -> int:
        return len(self.starts) - 1


EMPTY = Arrangement(np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64))


@dataclass(frozen=True)
class Lines:
    """The table's lines: one per entry, plus one per repeat of each open group. A flat table, so
    the view asks only for the lines on screen, however many repeats an open group has."""

    entry: np.ndarray  # the entry each line shows
    child: np.ndarray  # which of its repeats (-1: the entry's own line)
    first: np.ndarray  # the line of each entry

    @classmethod
    def of(cls, a: Arrangement, is_open: np.ndarray) -> Lines:
        counts = 1 + np.where(is_open, a.sizes, 0)
        first = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        entry = np.repeat(np.arange(len(a), dtype=np.int64), counts)
        child = np.arange(len(entry), dtype=np.int64) - first[entry] - 1
        return cls(entry, child, first)


def default_order(c: ProblemColumns) -> np.ndarray:
    """Errors first, then warnings, then notes; within each in the order of the data."""
    return np.lexsort((c.offset, c.place, c.rank))


def arrange(
    c: ProblemColumns,
    order: np.ndarray,
    query: ProblemsQuery,
    matches: np.ndarray | None,
    kind_names: list[str],
    file_names: list[str],
    titles,
) -> Arrangement:
    """The panel's entries. `order` is `default_order(c)`, `matches` the sorted record numbers of the
    table's filter (None: no filter), `titles(group)` a group's title (sorting by message)."""
    if not len(order):
        return EMPTY
    sev_ok = np.array([s in query.severities for s in SEVERITIES] + [True])
    kind_ok = np.array([k not in query.hidden_kinds for k in kind_names] + [True])
    keep = sev_ok[c.rank] & kind_ok[c.kind]
    if query.follow_filter and matches is not None:
        # a problem of no record (a file that would not open) concerns every record: it stays
        keep &= ~c.has_target | _in_sorted(c.place, matches)
    ordered = order[keep[order]]
    if query.grouped and len(ordered):
        g = c.group[ordered]
        _, first = np.unique(g, return_index=True)
        first.sort()
        entry_of = np.empty(int(c.group.max()) + 1, dtype=np.int64)
        entry_of[g[first]] = np.arange(len(first))
        e = entry_of[g]
        members = ordered[np.argsort(e, kind="stable")]
        starts = np.concatenate([[0], np.cumsum(np.bincount(e, minlength=len(first)))])
    else:
        members, starts = ordered, np.arange(len(ordered) + 1)
    sizes = np.diff(starts)
    f = members[starts[:-1]]
    col = query.sort
    if col == "record":
        o = np.lexsort((c.rank[f], c.place[f]))
    elif col == "file":
        by_name = np.argsort(np.argsort(np.array(file_names, dtype=object), kind="stable"))
        o = np.lexsort((c.place[f], by_name[c.file_no[f]]))
    elif col == "kind":
        by_name = np.argsort(np.argsort(np.array(kind_names, dtype=object), kind="stable"))
        o = np.lexsort((c.place[f], c.rank[f], by_name[c.kind[f]]))
    elif col == "count":
        o = np.lexsort((-c.place[f], -c.rank[f], sizes))
    elif col == "message":
        text = np.array(
            [titles(int(c.group[i])) if n > 1 else "" for i, n in zip(f, sizes, strict=True)], dtype=object
        )
        o = np.argsort(text, kind="stable")
    else:
        o = np.arange(len(f))  # the default order already
    if query.descending:
        o = o[::-1]
    lens = sizes[o]
    new_starts = np.concatenate([[0], np.cumsum(lens)])
    take = np.repeat(starts[:-1][o] - new_starts[:-1], lens) + np.arange(int(new_starts[-1]))
    return Arrangement(members[take], new_starts)


def _in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    if not len(sorted_set):
        return np.zeros(len(values), dtype=bool)
    at = np.searchsorted(sorted_set, values).clip(0, len(sorted_set) - 1)
    return sorted_set[at] == values


class ProblemsModel(QAbstractTableModel):
    arranged = Signal()  # entries were arranged anew (after the model reset)

    def __init__(self, file_names: list[str], parent=None) -> None:
        super().__init__(parent)
        self.file_names = file_names
        self._all: list[ProblemRow] = []  # every problem, in the order they came
        self._cols: dict[str, list[int]] = {k: [] for k in ProblemColumns.__dataclass_fields__}
        self._kinds: dict[str, int] = {}
        self.repeats = Repeats()
        self._columns: ProblemColumns | None = None
        self._order = np.empty(0, dtype=np.int64)
        self._sorted_rows: list[ProblemRow] | None = None
        self._where: np.ndarray | None = None  # position of each problem in the arrangement
        self.counts: Counter = Counter()  # by kind, over every problem
        self.by_file: dict[int, Counter] = {}  # severity counts of each file
        self.query = ProblemsQuery()
        self.matches: np.ndarray | None = None
        self.arrangement = EMPTY
        self.open_groups: set[int] = set()  # group numbers (Repeats) the person opened
        self._lines = Lines.of(EMPTY, np.zeros(0, dtype=bool))
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
        self.view_changed = False  # the last arrangement answered a new query or filter, not new problems
        self._view_pending = False

    # state -------------------------------------------------------------------------------------

    def add(self, row: ProblemRow) -> None:
        kind = str(row.problem.kind)
        c = self._cols
        c["rank"].append(row.rank)
        c["place"].append(row.place)
        c["has_target"].append(row.target is not None)
        c["offset"].append(row.problem.offset)
        c["file_no"].append(row.file_no)
        c["kind"].append(self._kinds.setdefault(kind, len(self._kinds)))
        c["group"].append(self.repeats.add(row.problem))
        self._all.append(row)
        self._columns = None
        self.counts[kind] += 1
        self.by_file.setdefault(row.file_no, Counter())[row.problem.kind.severity] += 1
        self._soon()

    def set_cause(self, file_no: int, kind: str, offset: int, text: str) -> None:
        """Why a problem the scan found happened, named by the analysis (tfrecord.forensics)."""
        for i, r in enumerate(self._all):
            if r.file_no == file_no and r.problem.offset == offset and str(r.problem.kind) == kind:
                self._all[i] = replace(r, problem=replace(r.problem, cause=text))
                self._sorted_rows = None
                self._soon()
                return

    def remove_kinds(self, kinds: set[str]) -> None:
        """Drop the problems of some kinds (e.g. the QA checks, before they run again)."""
        gone = {self._kinds[k] for k in kinds if k in self._kinds}
        if not gone:
            return
        codes = np.array(self._cols["kind"], dtype=np.int64)
        keep = ~np.isin(codes, list(gone))
        self._all = [r for r, k in zip(self._all, keep, strict=True) if k]
        self._cols = {name: np.array(v)[keep].tolist() for name, v in self._cols.items()}
        self._columns = None
        self.counts = Counter({k: n for k, n in self.counts.items() if k not in kinds})
        self.by_file = {}
        for r in self._all:
            self.by_file.setdefault(r.file_no, Counter())[r.problem.kind.severity] += 1
        self.flush()

    def remove_rows(self, drop) -> None:
        """Drop the problems `drop(row)` is true of (a file framed again: its framing problems)."""
        keep = np.array([not drop(r) for r in self._all], dtype=bool)
        if keep.all():
            return
        self._all = [r for r, k in zip(self._all, keep, strict=True) if k]
        self._cols = {name: np.array(v)[keep].tolist() for name, v in self._cols.items()}
        self._columns = None
        self.counts = Counter(str(r.problem.kind) for r in self._all)
        self.by_file = {}
        for r in self._all:
            self.by_file.setdefault(r.file_no, Counter())[r.problem.kind.severity] += 1
        self.flush()

    @property
    def rows(self) -> list[ProblemRow]:
        """Every problem, errors first, then warnings, then notes, each in the order of the data."""
        self._columns_now()
        if self._sorted_rows is None:
            self._sorted_rows = [self._all[i] for i in self._order]
        return self._sorted_rows

    def _columns_now(self) -> ProblemColumns:
        if self._columns is None:
            c = self._cols
            self._columns = ProblemColumns(
                **{k: np.array(v, dtype=bool if k == "has_target" else np.int64) for k, v in c.items()}
            )
            self._order = default_order(self._columns)
            self._sorted_rows = None
        return self._columns

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
        if not self._timer.isActive():
            self._timer.start()

    def flush_pending(self) -> None:
        """Arrange now if problems or a filter are waiting for the timer."""
        if self._timer.isActive():
            self.flush()

    def flush(self) -> None:
        """Arrange now (the timer does it for batches)."""
        self._timer.stop()
        c = self._columns_now()
        kind_names = sorted(self._kinds, key=self._kinds.__getitem__)
        arrangement = arrange(
            c, self._order, self.query, self.matches, kind_names, self.file_names, self.repeats.title
        )
        self.view_changed, self._view_pending = self._view_pending, False
        self.beginResetModel()
        self.arrangement = arrangement
        self._lines = Lines.of(arrangement, self._is_open(arrangement))
        self._where = None
        self.endResetModel()
        self.arranged.emit()

    def _is_open(self, a: Arrangement) -> np.ndarray:
        if not self.open_groups or not len(a):
            return np.zeros(len(a), dtype=bool)
        gids = self._columns_now().group[a.members[a.starts[:-1]]]
        return (a.sizes > 1) & np.isin(gids, list(self.open_groups))

    def set_open(self, line: int, opened: bool) -> None:
        """Open (or close) the group on `line`: its repeats appear below it, one line each."""
        e, child = int(self._lines.entry[line]), int(self._lines.child[line])
        if child >= 0 or self._size(e) < 2 or self.is_open(line) == opened:
            return
        gid = self._group_of(e)
        n = self._size(e)
        (self.open_groups.add if opened else self.open_groups.discard)(gid)
        self.dataChanged.emit(self.index(line, 0), self.index(line, 0))  # its ▸ / ▾
        if opened:
            self.beginInsertRows(QModelIndex(), line + 1, line + n)
        else:
            self.beginRemoveRows(QModelIndex(), line + 1, line + n)
        self._lines = Lines.of(self.arrangement, self._is_open(self.arrangement))
        self.endInsertRows() if opened else self.endRemoveRows()

    def _group_of(self, e: int) -> int:
        return int(self._cols["group"][int(self.arrangement.members[self.arrangement.starts[e]])])

    def is_open(self, line: int) -> bool:
        e = int(self._lines.entry[line])
        return bool(
            self._lines.child[line] < 0 and self._size(e) > 1 and self._group_of(e) in self.open_groups
        )

    @property
    def shown(self) -> int:
        return len(self.arrangement.members)

    def severity_counts(self) -> Counter:
        ranks = np.bincount(self._columns_now().rank, minlength=len(SEVERITIES) + 1)
        return Counter({s: int(ranks[i]) for i, s in enumerate(SEVERITIES)})

    def leaves(self) -> list[ProblemRow]:
        """Every shown problem, in the panel's order (a group's problems in place of the group)."""
        return [self._all[i] for i in self.arrangement.members]

    def _entry_rows(self, e: int) -> np.ndarray:
        a = self.arrangement
        return a.members[a.starts[e] : a.starts[e + 1]]

    def _size(self, e: int) -> int:
        a = self.arrangement
        return int(a.starts[e + 1] - a.starts[e])

    def _title(self, e: int) -> str:
        return self.repeats.title(self._group_of(e))

    def entry(self, e: int) -> ProblemEntry:
        rows = tuple(self._all[i] for i in self._entry_rows(e))
        gid = int(self._cols["group"][int(self.arrangement.members[self.arrangement.starts[e]])])
        title = self.repeats.title(gid) if len(rows) > 1 else rows[0].problem.message
        return ProblemEntry(rows, title, self.repeats.keys[gid])

    @property
    def entries(self) -> list[ProblemEntry]:
        """The entries as objects (for tests and tools; the view reads the arrays)."""
        return [self.entry(e) for e in range(len(self.arrangement))]

    def groups(self) -> np.ndarray:
        """The entries that are groups of repeats."""
        return np.flatnonzero(self.arrangement.sizes > 1)

    def row_at(self, index: QModelIndex | QPersistentModelIndex) -> ProblemRow | None:
        """The problem a line stands for (a group's line stands for its first problem)."""
        if not index.isValid() or index.row() >= len(self._lines.entry):
            return None
        e, child = int(self._lines.entry[index.row()]), int(self._lines.child[index.row()])
        a = self.arrangement
        return self._all[int(a.members[a.starts[e] + max(child, 0)])]

    def records_at(self, index: QModelIndex | QPersistentModelIndex) -> np.ndarray:
        """The records a line stands for (a group's line: every problem's record in the group; a
        problem of no record: none), as sorted global record numbers (what Edit › Tag tags)."""
        if not index.isValid() or index.row() >= len(self._lines.entry):
            return np.empty(0, np.int64)
        e, child = int(self._lines.entry[index.row()]), int(self._lines.child[index.row()])
        members = self._entry_rows(e) if child < 0 else [self._entry_rows(e)[child]]
        found = [self._all[int(i)].record for i in members]
        return np.unique(np.array([r for r in found if r is not None], dtype=np.int64))

    def is_group(self, index: QModelIndex | QPersistentModelIndex) -> bool:
        if not index.isValid() or index.row() >= len(self._lines.entry):
            return False
        return self._lines.child[index.row()] < 0 and self._size(int(self._lines.entry[index.row()])) > 1

    def group_line(self, index: QModelIndex | QPersistentModelIndex) -> int:
        """The line of the group a repeat's line belongs to (its own line for anything else)."""
        return int(self._lines.first[int(self._lines.entry[index.row()])])

    def index_of(self, row: ProblemRow, open_group: bool = False) -> QModelIndex:
        """The line that shows a problem: its own, or (its group closed) its group's line; with
        `open_group`, its group opens to show it."""
        try:
            i = next(k for k in range(len(self._all) - 1, -1, -1) if self._all[k] is row)
        except StopIteration:
            return QModelIndex()
        a = self.arrangement
        if self._where is None:
            self._where = np.full(len(self._all), -1, dtype=np.int64)
            self._where[a.members] = np.arange(len(a.members))
        pos = int(self._where[i]) if i < len(self._where) else -1
        if pos < 0:
            return QModelIndex()
        e = int(np.searchsorted(a.starts, pos, side="right")) - 1
        line = int(self._lines.first[e])
        if self._size(e) == 1:
            return self.index(line, 0)
        if open_group:
            self.set_open(line, True)
        if not self.is_open(line):
            return self.index(line, 0)
        return self.index(line + 1 + pos - int(a.starts[e]), 0)

    # Qt ----------------------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._lines.entry)

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
        line = index.row()
        if line >= len(self._lines.entry):
            return None
        e, c = int(self._lines.entry[line]), int(self._lines.child[line])
        child = c >= 0
        size = self._size(e)
        grouped = size > 1 and not child
        row = self.row_at(index)
        if row is None:
            return None
        p = row.problem
        if role == Qt.ItemDataRole.DisplayRole:
            if col == "record":
                if grouped:
                    members = self._entry_rows(e)
                    place = self._columns_now().place[members]
                    first, last = (
                        self._all[int(members[place.argmin()])],
                        self._all[int(members[place.argmax()])],
                    )
                    return f"{'▾' if self.is_open(line) else '▸'} {_place(first)} … {_place(last)}"
                return f"{'      ' if child else ''}{_place(row)}"
            if col == "file":
                return self.file_names[row.file_no]
            if col == "kind":
                return str(p.kind)
            if col == "severity":
                return p.kind.severity
            if col == "count":
                return f"{size:,}" if grouped else ("" if child else "1")
            return self._title(e) if grouped else p.text + (f"  — cause: {p.cause}" if p.cause else "")
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
                return f"{size:,} × {self._title(e)}\n(Enter or → opens the group; F8 steps through them)"
            extra = (
                f"\nbytes {p.offset:,}..{p.offset + p.length:,}" if p.length else f"\nat byte {p.offset:,}"
            )
            return (
                p.message
                + (f"\ndetail: {p.detail}" if p.detail else "")
                + extra
                + (f"\ncause: {p.cause}" if p.cause else "")
            )
        return None


def _place(row: ProblemRow) -> str:
    if row.record is not None:
        return str(row.record)
    if row.problem.kind == ProblemKind.UNREADABLE_FILE:
        return "file"
    if row.target is None:
        return "at the end"
    return f"{'after' if row.after else 'before'} {row.target}"
