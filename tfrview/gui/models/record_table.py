"""The record table: a virtual model over a Dataset's index.

Cheap columns come straight from the numpy index; kind and summary come from a bounded LRU of
per-row display tuples, filled only for rows Qt asks about (the visible ones). Rows grow when the
window calls `refresh()` on its timer, never per chunk. Above ROW_CAP rows the model pages.
"""

from __future__ import annotations

import time
from collections import OrderedDict

import numpy as np
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont

from tfrview.core.errors import SourceError
from tfrview.core.limits import CACHE_ROWS, ROW_CAP
from tfrview.core.problems import QA_KINDS, SEVERITIES, Problem, Severity
from tfrview.core.records.rowtext import row_text
from tfrview.core.tags.words import TagWord
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.groups import SHARD_NAME, one_set
from tfrview.core.tfrecord.order import LAZY, SORTABLE, column_key, score_key, sort_order
from tfrview.core.tfrecord.status import RecordStatus, record_status
from tfrview.gui.models.base import ColumnsModel
from tfrview.gui.painting import TAG_COLOURS

PENDING = ("…", "…")
FULL_WALK_S = 2.0  # the longest a file framed out of order waits for its rows (`_update_starts`)

_DAMAGED_BG = QBrush(QColor(255, 214, 214))
_GAP_BG = QBrush(QColor(255, 236, 196))  # next to unreadable bytes, a cut or trailing garbage
_QA_BG = QBrush(QColor(255, 250, 205))  # a QA check found something (boxes, image, labels, values)
_UNVERIFIED_FG = QBrush(QColor(120, 120, 120))


def _bold() -> QFont:
    """The Tag column's font (made on first use: a QFont wants the application made first)."""
    global _BOLD
    if _BOLD is None:
        _BOLD = QFont()
        _BOLD.setBold(True)
    return _BOLD


_BOLD: QFont | None = None


def number_text(value: int) -> str:
    """How the #, offset and size columns write a number: with thousands separators."""
    return f"{value:,}"


def file_labels(paths) -> list[str]:
    """Short names for the file column: the shard number of one shard set; of several sets (a
    split's `train-00000-of-00016` and `validation-00000-of-00004`), what tells them apart, the
    name before the number with it (`train-00000`, `validation-00000`); else the file name."""
    names = [p.name for p in paths]
    nums = _one_set_numbers(names)
    if nums is not None:
        return nums
    match = SHARD_NAME.match
    m = [match(n) for n in names]
    if len(paths) > 1 and all(m):
        if len({x.group("prefix", "total", "suffix") for x in m}) == 1:
            return [x.group("num") for x in m]
        if len({x["prefix"] for x in m}) > 1:
            return _told_apart([x["prefix"] for x in m], [x["num"] for x in m])
        return [f"{x['num']}-of-{x['total']}" for x in m]
    return [p.name for p in paths]


def _one_set_numbers(names: list[str]) -> list[str] | None:
    """The shard numbers of names that differ only in them (one set's 10,000 shards: `one_set`);
    None when they are not such names (then `file_labels` matches each)."""
    span = one_set(names)
    if span is None:
        return None
    a, b = span
    return [n[a:b] for n in names]


_SEPARATORS = "-_."


def _shared_start(words: list[str]) -> str:
    """The characters every word starts with (of names, not paths: cut at a separator after)."""
    first, last = min(words), max(words)
    n = 0
    while n < len(first) and first[n] == last[n]:
        n += 1
    return first[:n]


def _told_apart(prefixes: list[str], nums: list[str]) -> list[str]:
    """What tells shard sets apart, with each shard's number: the words they share at either end
    left out, cut at a separator (TFDS's `mnist-train.tfrecord-` and `mnist-test.tfrecord-` give
    `train-00000` and `test-00000`; `train-` and `validation-` keep their words)."""
    head = _shared_start(prefixes)
    head = head[: max(head.rfind(c) for c in _SEPARATORS) + 1]
    tail = _shared_start([s[::-1] for s in prefixes])[::-1]
    cuts = [i for i in (tail.find(c) for c in _SEPARATORS) if i >= 0]
    tail = tail[min(cuts) :] if cuts else ""
    out = []
    for prefix, num in zip(prefixes, nums, strict=True):
        core = prefix[len(head) : len(prefix) - len(tail)].strip(_SEPARATORS)
        out.append(f"{core}-{num}" if core else num)
    return out


def has_splits(splits) -> bool:
    """Whether the record table shows a Split column: some file is in a split."""
    return any(splits)


def problem_line(problem: Problem, where: str = "") -> str:
    """The one line a person reads for a record's problem ("kind: text", after where the damage
    lies when it is beside the record): made to be shown, never read back."""
    return f"{where + ': ' if where else ''}{problem.kind}: {problem.text}"


class RecordTableModel(ColumnsModel):
    sort_refused = Signal(str)  # a column that cannot be sorted was clicked: why

    def __init__(self, dataset: Dataset, parent=None, splits: list[str] | None = None) -> None:
        super().__init__(parent)
        self.ds = dataset
        # each file's split (`tfrecord.splits`, or the person's choice: `set_splits`)
        self.splits: list[str] = list(splits) if splits is not None else [""] * len(dataset.files)
        self.label_map: dict[int, str] | None = None
        self.page_start = 0
        self.row_cap = ROW_CAP
        self.filter_rows: np.ndarray | None = None  # matching record numbers while a filter is on
        self._filter_n = 0
        self._rows = 0
        self._starts = np.zeros(1, dtype=np.int64)
        self._cache: OrderedDict[int, tuple[str, str]] = OrderedDict()
        # each record's problems as data (`Problem`s); their text is made only to be shown (problem_line)
        self._problem_at: dict[tuple[int, int], list[Problem]] = {}
        self._gap_at: dict[
            tuple[int, int], list[tuple[str, Problem]]
        ] = {}  # damaged regions next to a record
        self._qa_at: dict[tuple[int, int], list[Problem]] = {}  # findings of the QA checks
        self._qa_severity: dict[tuple[int, int], Severity] = {}  # the worst of them, per record
        self.multi_file = len(dataset.files) > 1
        self._single = not self.multi_file
        self._status_painted = 0.0
        self.columns = [
            "#",
            *(["file"] if self.multi_file else []),
            *(["split"] if self.multi_file and has_splits(self.splits) else []),
            "offset",
            "size",
            "status",
            "tag",
            "kind",
            "summary",
        ]
        self._file_labels = file_labels([f.path for f in dataset.files])
        self.summaries = None  # a RowTextWorker, set by the window
        # sorting: rows -> positions among the unsorted rows (a permutation), and back; None: unsorted
        self.sort_key: tuple[str, bool] | None = None  # (column, descending)
        self._perm: np.ndarray | None = None
        self._inv: np.ndarray | None = None
        self.scores: dict[str, np.ndarray] = {}  # a score by which the rows may be sorted (sort_by_score)
        # the person's tags (controllers.tags.TagBook: word_at(file, record), note_at); None: none shown
        self.tags = None

    # growth -----------------------------------------------------------------------------------------

    def total(self) -> int:
        return int(self._starts[-1])

    def _update_starts(self, full: bool = False) -> None:
        """Each file's first record number. Files framed whole (and files that did not open) keep
        their count: only those after the first still being framed are asked again (walking
        10,000 files at every growth of the table took 30 ms of the UI thread each time), up to
        the first not framed at all: the scan frames files in order, so those after it hold no
        records yet (a reopened split's 10,000 files taken one by one were walked at every tick).
        Every file is asked when `full` (the scan's end) and at least every `FULL_WALK_S`."""
        files = self.ds.files
        counts, settled = getattr(self, "_counts", None), getattr(self, "_counts_settled", 0)
        if counts is None or len(counts) != len(files):
            counts, settled = np.zeros(len(files), dtype=np.int64), 0
        full = full or self._full_walk_due("_starts_walked")
        for i in range(settled, len(files)):
            f = files[i]
            idx = f.index
            final = f.source is None or idx.done  # read before the count: a count read after is final
            c = counts[i] = idx.count
            if final and i == settled:
                settled += 1
            elif not c and not final and not full:
                break
        self._counts, self._counts_settled = counts, settled
        self._starts = np.concatenate([[0], np.cumsum(counts)])

    def _full_walk_due(self, name: str) -> bool:
        """Whether a walk of every file is due (at most every `FULL_WALK_S`): one stopped at the first
        file not framed yet misses a file framed out of order until then."""
        now = time.monotonic()
        if now - getattr(self, name, 0.0) < FULL_WALK_S:
            return False
        setattr(self, name, now)
        return True

    def refresh(self, full: bool = False) -> None:
        """Pick up records the indexer framed since the last call (called on a UI timer); `full`:
        every file asked (`_update_starts`)."""
        self._update_starts(full)
        if self.filter_rows is not None:
            want = min(int(np.searchsorted(self.filter_rows[: self._filter_n], self.total())), self.row_cap)
        else:
            want = max(0, min(self.total() - self.page_start, self.row_cap))
        if want > self._rows:
            self.beginInsertRows(QModelIndex(), self._rows, want - 1)
            if self._perm is not None:  # rows framed after the sort come after the sorted ones
                more = np.arange(self._rows, want, dtype=np.int64)
                self._perm = np.concatenate([self._perm, more])
                self._inv = np.concatenate([self._inv, more])
            self._rows = want
            self.endInsertRows()

    def widest_numbers(self, full: bool = False) -> dict[str, int]:
        """The largest value each number column shows ('#', 'offset', 'size'), from the index arrays
        (offsets grow within a file: its last; sizes: a running maximum over the rows added since
        the last call), so the window sizes those columns without walking the model. The files
        framed whole since the last call are folded in with one maximum over all of them (a
        reopened split's 10,000 files at once: 10,000 maxima took ~0.1 s of the UI thread)."""
        seen = getattr(self, "_size_max_seen", None)
        files = self.ds.files
        if seen is None or len(seen) != len(files):
            seen = self._size_max_seen = [(0, 0)] * len(files)
            self._widest_settled = (0, 0, 0)  # files before the first are framed whole, folded in
        first, offset, size = self._widest_settled
        ends: list = []  # the files framed whole from `first` on: each one's last offset and lengths
        lengths: list[np.ndarray] = []
        while first < len(files):
            idx = files[first].index
            if not (files[first].source is None or idx is None or idx.done):
                break
            n = idx.count if idx is not None else 0  # (framed whole: its arrays hold its count)
            if n:
                ends.append(idx.offsets[n - 1])
                lengths.append(idx.lengths)
            first += 1
        if ends:
            offset = max(offset, int(np.max(np.asarray(ends, dtype=np.uint64))))
            size = max(size, int(np.concatenate(lengths).max()))
            ends, lengths = [], []
        self._widest_settled = (first, offset, size)
        full = full or self._full_walk_due("_widest_walked")
        for i in range(first, len(files)):
            idx = files[i].index
            count = idx.count if idx is not None else 0
            if not count:  # not framed yet: those after it neither (the scan's order), unless `full`
                if full:
                    continue
                break
            if idx.done and seen[i][0] != -1:  # framed whole past the fold (taken while the fold ran):
                ends.append(idx.offsets[count - 1])  # folded with the others, not one maximum each
                lengths.append(idx.lengths)
                seen[i] = (-1, 0)  # (folded: never again)
                continue
            if seen[i][0] == -1:
                continue
            # the arrays may lag the count for a moment while the indexer grows them: read what is there
            n = min(count, len(idx.offsets), len(idx.lengths))
            if not n:
                continue
            offset = max(offset, int(idx.offsets[n - 1]))
            done, top = seen[i]
            if n < done:  # framed again: from the start
                done, top = 0, 0
            if n > done:
                top = max(top, int(np.max(idx.lengths[done:n])))
                seen[i] = (n, top)
            size = max(size, top)
        if ends:  # (files framed whole past the first not framed whole: a reopened split mid-sweep)
            offset = max(offset, int(np.max(np.asarray(ends, dtype=np.uint64))))
            size = max(size, int(np.concatenate(lengths).max()))
            self._widest_settled = (first, offset, size)
        return {"#": max(self.total() - 1, 0), "offset": offset, "size": size}

    def status_changed(self, force: bool = False) -> None:
        """Verify results arrived: repaint the status column, at most twice a second (each repaint
        costs the UI thread a few ms of data() calls)."""
        now = time.monotonic()
        if not force and now - self._status_painted < 0.5:
            return
        self._status_painted = now
        if self._rows:
            col = self.columns.index("status")
            self.dataChanged.emit(self.index(0, col), self.index(self._rows - 1, col))

    def set_page(self, start: int) -> None:
        self._counts = self._size_max_seen = None  # a file framed again: every count asked again
        self.beginResetModel()
        self.page_start = max(0, start)
        self._rows = 0
        self._perm = self._inv = None
        self.endResetModel()
        self.refresh()
        self.resort()

    def note_problem(self, file_no: int, problem) -> tuple[int | None, int | None, bool]:
        """Record problems go on their row; damaged regions on the row after them (or the last row).
        Returns (the global record it belongs to or None, the global record to jump to, whether the
        damage lies after that record rather than before it)."""
        if problem.kind not in QA_KINDS:
            # framing problems come while the index grows: number them with the files' counts as
            # they are now, not as the rows timer last saw them ("after 78" for "after 158")
            self._update_starts()
        if problem.record is not None:
            key = (file_no, problem.record)
            table = self._qa_at if problem.kind in QA_KINDS else self._problem_at
            table.setdefault(key, []).append(problem)
            if problem.kind in QA_KINDS:
                worst = self._qa_severity.get(key)
                if worst is None or problem.kind.severity_rank < SEVERITIES.index(worst):
                    self._qa_severity[key] = problem.kind.severity
            n = self.global_number(file_no, problem.record)
            self._repaint_record(n)
            return n, n, False
        idx = self.ds.files[file_no].index
        if not idx.count:
            return None, None, False
        k = int(np.searchsorted(idx.offsets[: idx.count], np.uint64(problem.offset), side="left"))
        if k < idx.count:
            key, where = (file_no, k), "before this record"
        else:
            key, where = (file_no, idx.count - 1), "after this record"
        self._gap_at.setdefault(key, []).append((where, problem))
        n = self.global_number(file_no, key[1])
        self._repaint_record(n)
        return None, n, k >= idx.count

    def forget_problems(self, from_file: int) -> None:
        """Forget the framing problems noted on the records of file `from_file` and the files after
        it (it was framed again: its records and theirs are numbered anew)."""
        for table in (self._problem_at, self._gap_at):
            for key in [k for k in table if k[0] >= from_file]:
                del table[key]
        self._cache.clear()

    def clear_qa(self) -> None:
        self._qa_at.clear()
        self._qa_severity.clear()
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(self._rows - 1, len(self.columns) - 1))

    def _repaint_record(self, n: int) -> None:
        r = self.row_of(n)
        if r is not None:
            self.dataChanged.emit(self.index(r, 0), self.index(r, len(self.columns) - 1))

    def global_number(self, file_no: int, local: int) -> int:
        return int(self._starts[file_no]) + local if file_no < len(self._starts) else local

    def severity_of(self, n: int) -> Severity | None:
        """The worst severity among record n's problems: damage (its own, or unreadable bytes
        beside it) is an error; QA findings have their own."""
        if self.status_of(n) not in (RecordStatus.OK, RecordStatus.UNVERIFIED):
            return Severity.ERROR
        if not (self._gap_at or self._qa_severity):
            return None
        key = self.locate(n)
        return Severity.ERROR if key in self._gap_at else self._qa_severity.get(key)

    def problem_lines(self, n: int) -> list[str]:
        """Every problem of record n, a line each: its own, the damage beside it, QA findings."""
        key = self.locate(n)
        return [
            *(problem_line(p) for p in self._problem_at.get(key, ())),
            *(problem_line(p, where) for where, p in self._gap_at.get(key, ())),
            *(problem_line(p) for p in self._qa_at.get(key, ())),
        ]

    def problems_text(self, n: int) -> str:
        """Every problem of record n, one per line ('' if none): for a tooltip, never read back."""
        return "\n".join(self.problem_lines(n))

    def problems_at(self, file_no: int, record: int) -> list[Problem]:
        """The record's own framing and CRC problems, as data (a copy)."""
        return list(self._problem_at.get((file_no, record), ()))

    def set_label_map(self, label_map: dict[int, str] | None, schema=None) -> None:
        """The label map (and the person's schema) that summaries are written with: every row anew."""
        self.label_map = label_map
        self._cache.clear()
        if self.summaries is not None:
            self.summaries.reset(label_map, schema)
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(self._rows - 1, len(self.columns) - 1))

    # mapping ---------------------------------------------------------------------------------------

    def record_number(self, row: int) -> int:
        if self._perm is not None:
            row = int(self._perm[row])
        if self.filter_rows is not None:
            return int(self.filter_rows[row])
        return self.page_start + row

    def record_numbers(self, rows: np.ndarray) -> np.ndarray:
        """`record_number` of many rows at once (a selection of millions), by array operations."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._perm is not None:
            rows = self._perm[rows]
        if self.filter_rows is not None:
            return np.asarray(self.filter_rows, dtype=np.int64)[rows]
        return self.page_start + rows

    def row_of(self, number: int) -> int | None:
        if self.filter_rows is not None:
            r = int(np.searchsorted(self.filter_rows[: self._rows], number))
            r = r if r < self._rows and self.filter_rows[r] == number else None
        else:
            r = number - self.page_start
            r = r if 0 <= r < self._rows else None
        return r if r is None or self._inv is None else int(self._inv[r])

    # sorting: a permutation of the rows, from array operations over the index (never cell by cell) ----

    def _unsorted_numbers(self) -> np.ndarray:
        if self.filter_rows is not None:
            return self.filter_rows[: self._rows]
        return np.arange(self.page_start, self.page_start + self._rows, dtype=np.int64)

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        """Qt's sort: the rows ordered by a column known for every record (#, file, offset, size,
        status); kind and summary are read lazily as rows show, so they are never sorted."""
        if not 0 <= column < len(self.columns):
            return
        name = self.columns[column]
        if name == "tag":
            self.sort_refused.emit('tags are picked out by the filter (tag == "drop"), not sorted')
            return
        if name in LAZY:
            self.sort_refused.emit(f"{name} is read from each record as its row shows: it cannot be sorted")
            return
        descending = order == Qt.SortOrder.DescendingOrder
        self._sort(None if (name == "#" and not descending) else (name, descending))

    def sort_by_score(self, name: str, values: np.ndarray, descending: bool = False) -> None:
        """The rows ordered by a score every record has (`values`, a float a record of the
        dataset, NaN for none: an image quality score of the analysis's facts), records with none
        last; the gallery follows."""
        self.scores = {name: np.asarray(values, dtype=np.float64)}
        self._sort((name, descending))

    def score_text(self, n: int) -> str:
        """What the score the rows are sorted by says of record n (" · blur 31.2"; "" when the rows
        are not sorted by a score): the gallery's caption shows why an image stands where it does."""
        if self.sort_key is None or self.sort_key[0] not in self.scores:
            return ""
        name, values = self.sort_key[0], self.scores[self.sort_key[0]]
        v = float(values[n]) if 0 <= n < len(values) else float("nan")
        return f" · {name} {'none' if v != v else f'{v:.3g}'}"

    def set_splits(self, splits: list[str]) -> None:
        """Each file's split changed (the person chose some): the split column says it, a sort by
        it sorts again."""
        self.splits = list(splits)
        if "split" in self.columns and self._rows:
            c = self.columns.index("split")
            self.dataChanged.emit(self.index(0, c), self.index(self._rows - 1, c))
        if self.sort_key is not None and self.sort_key[0] == "split":
            self.resort()

    def resort(self) -> None:
        """The sort again, over the rows there are now (the scan ended, a filter changed the rows)."""
        if self.sort_key is not None and self._rows:
            self._sort(self.sort_key)

    def _sort(self, key: tuple[str, bool] | None) -> None:
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        numbers = [self.record_number(i.row()) if i.isValid() else None for i in old]
        self.sort_key = key
        if key is None or not self._rows:
            self._perm = self._inv = None
        else:
            numbers_now = self._unsorted_numbers()
            if key[0] in self.scores:  # a score of every record (the gallery's Sort by)
                keys = score_key(self.scores[key[0]], numbers_now, key[1])
            else:
                keys = column_key([f.index for f in self.ds.files], numbers_now, key[0], self.splits)
            self._perm = sort_order(keys, key[1]).astype(np.int64)
            self._inv = np.empty_like(self._perm)
            self._inv[self._perm] = np.arange(len(self._perm), dtype=np.int64)
        new = []
        for i, n in zip(old, numbers, strict=True):
            r = None if n is None else self.row_of(n)
            new.append(QModelIndex() if r is None else self.index(r, i.column()))
        self.changePersistentIndexList(old, new)
        self.layoutChanged.emit()

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.ToolTipRole and orientation == Qt.Orientation.Horizontal:
            name = self.columns[section] if 0 <= section < len(self.columns) else ""
            if name in SORTABLE:
                return f"Click to sort by {name}"
            if name in LAZY:
                return f"{name}: read from each record as its row shows, so not sortable"
        return super().headerData(section, orientation, role)

    # filtering: rows become the matching record numbers, in order -------------------------------------

    def set_filter(self) -> None:
        """Start showing only matches (none yet); `add_matches` grows them."""
        self.beginResetModel()
        self.filter_rows = np.empty(1024, dtype=np.int64)
        self._filter_n = 0
        self._rows = 0
        self._perm = self._inv = None if self.sort_key is None else np.empty(0, dtype=np.int64)
        self.endResetModel()

    def add_matches(self, numbers) -> None:
        """More matching record numbers (a list or an array), after those there are."""
        if self.filter_rows is None or len(numbers) == 0:
            return
        need = self._filter_n + len(numbers)
        if need > len(self.filter_rows):
            bigger = np.empty(max(need, 2 * len(self.filter_rows)), dtype=np.int64)
            bigger[: self._filter_n] = self.filter_rows[: self._filter_n]
            self.filter_rows = bigger
        self.filter_rows[self._filter_n : need] = numbers
        self._filter_n = need
        self.refresh()

    def clear_filter(self) -> None:
        self.beginResetModel()
        self.filter_rows = None
        self._filter_n = 0
        self._rows = 0
        self._perm = self._inv = None
        self.endResetModel()
        self.refresh()
        self.resort()

    @property
    def match_count(self) -> int:
        return self._filter_n

    def locate(self, n: int) -> tuple[int, int]:
        if self._single:  # the common case, and data() asks this several times per cell
            return 0, n
        fi = int(np.searchsorted(self._starts, n, side="right")) - 1
        return fi, n - int(self._starts[fi])

    def tag_of(self, n: int) -> TagWord | None:
        """The person's tag on record n (None: none, or no tags shown)."""
        if self.tags is None:
            return None
        fi, k = self.locate(n)
        return self.tags.word_at(fi, k)

    def tag_text(self, n: int) -> str:
        """Record n's tag and note as a person reads them ("" none): for tooltips."""
        word = self.tag_of(n)
        if word is None:
            return ""
        note = self.tags.note_at(*self.locate(n))
        return f"{word}: {note}" if note else str(word)

    def tags_changed(self) -> None:
        """Tags were set, cleared, undone or loaded: repaint the Tag column (the gallery follows)."""
        if self._rows:
            c = self.columns.index("tag")
            self.dataChanged.emit(self.index(0, c), self.index(self._rows - 1, c))

    def status_of(self, n: int) -> RecordStatus:
        """The record's status word, as every output says it (`tfrecord.status`)."""
        fi, k = self.locate(n)
        return record_status(int(self.ds.files[fi].index.status[k]))

    def _parsed(self, n: int) -> tuple[str, str]:
        """Kind and summary from the cache; a miss asks the row-text worker and shows a placeholder
        (parsing here would stall the UI thread: ~3 ms per image record)."""
        hit = self._cache.get(n)
        if hit is not None:
            self._cache.move_to_end(n)
            return hit
        if self.summaries is None:  # no worker (tests of the model alone): compute here
            try:
                value = row_text(self.ds.read(n), self.label_map)
            except SourceError as exc:
                value = ("?", str(exc))
            self._store(n, value)
            return value
        self.summaries.request(n)
        return PENDING

    def _store(self, n: int, value: tuple[str, str]) -> None:
        self._cache[n] = value
        if len(self._cache) > CACHE_ROWS:
            self._cache.popitem(last=False)

    def on_summaries(self, item) -> None:
        """Results from the row-text worker: cache them and repaint just those rows."""
        epoch, batch = item
        if self.summaries is None or epoch != self.summaries.epoch:
            return
        rows = []
        for n, kind, text in batch:
            self._store(n, (kind, text))
            r = self.row_of(n)
            if r is not None:
                rows.append(r)
        if rows:
            c0 = self.columns.index("kind")
            self.dataChanged.emit(self.index(min(rows), c0), self.index(max(rows), c0 + 1))

    # Qt model interface ------------------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self._rows

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        n = self.record_number(index.row())
        col = self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._display(n, col)
        if role == Qt.ItemDataRole.BackgroundRole:
            if self.status_of(n) not in (RecordStatus.OK, RecordStatus.UNVERIFIED):
                return _DAMAGED_BG
            if self._gap_at or self._qa_at:
                key = self.locate(n)
                if key in self._gap_at:
                    return _GAP_BG
                if (
                    self._qa_severity.get(key, Severity.INFO) != Severity.INFO
                ):  # notes keep the row plain: a tint
                    return _QA_BG  # then still means something when most records carry a note
            return None
        if role == Qt.ItemDataRole.ForegroundRole and col == "tag":
            word = self.tag_of(n)
            return TAG_COLOURS[word] if word is not None else None
        if role == Qt.ItemDataRole.FontRole and col == "tag":
            return _bold()
        if (
            role == Qt.ItemDataRole.ForegroundRole
            and col == "status"
            and self.status_of(n) == RecordStatus.UNVERIFIED
        ):
            return _UNVERIFIED_FG
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = self.problems_text(n)
            if tip:
                return tip
            fi, _ = self.locate(n)
            if col == "tag":
                return self.tag_text(n) or None
            if col == "summary":
                return self._parsed(n)[1]
            if col == "file":
                return str(self.ds.files[fi].path)
            if col == "status" and self.status_of(n) == RecordStatus.UNVERIFIED:
                return "data CRC not checked yet"
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and col in ("#", "offset", "size"):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _display(self, n: int, col: str) -> str:
        if col == "#":
            return str(n)
        fi, k = self.locate(n)
        f = self.ds.files[fi]
        if col == "offset":
            return number_text(int(f.index.offsets[k]))
        if col == "size":
            return number_text(int(f.index.lengths[k]))
        if col == "status":
            return str(self.status_of(n))
        if col == "file":
            return self._file_labels[fi]
        if col == "split":
            return self.splits[fi] if fi < len(self.splits) else ""
        if col == "tag":
            word = self.tags.word_at(fi, k) if self.tags is not None else None
            if word is None:
                return ""
            return f"{word} ✎" if self.tags.note_at(fi, k) else str(word)
        kind, summary = self._parsed(n)
        return kind.replace("_", " ") if col == "kind" else summary
