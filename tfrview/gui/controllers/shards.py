"""The Shards panel: per-file health of a dataset of many files (records, intact, damaged,
problems by severity) and each file's split, sortable; double-click shows that file's records in
the table (on its split: that split's records). A chooser narrows it to one split; the person
puts selected shards in a split from the context menu (the session keeps the splits, the next
analysis uses them)."""

from __future__ import annotations

import json
import time

import numpy as np
from PySide6.QtCore import QModelIndex, QObject, QPoint, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMenu,
    QVBoxLayout,
    QWidget,
)

from tfrview.core.analysis.shard_health import ShardHealth, shard_health
from tfrview.gui.controllers.filter import FilterController
from tfrview.gui.models.problems import ProblemsModel
from tfrview.gui.models.shards import NO_SPLIT, ShardsModel
from tfrview.gui.session import DatasetSession
from tfrview.gui.widgets.record_table_view import QuietTableView, plain_rows, selected_rows

REFRESH_MS = 1000  # while the figures change, and only while the panel is visible
FIRST_REFRESH_MS = 50  # after the scan's first progress: its rows have painted by then
REFRESH_COST_SHARE = 20  # ... and at least this many times what one refresh cost (5 % of the UI thread)


class ShardsController(QObject):
    shard_shown = Signal(int)  # the first record of the file now shown (to select it)

    def __init__(
        self, session: DatasetSession, problems: ProblemsModel, filtering: FilterController, window: QWidget
    ) -> None:
        super().__init__(window)
        self.session = session
        self.problems = problems
        self.filtering = filtering
        self.model = ShardsModel(self)
        view = self.view = QuietTableView(window)
        view.setModel(self.model)
        plain_rows(view)
        h = view.horizontalHeader()
        h.resizeSection(0, 300)
        for i in range(1, len(self.model.columns)):
            h.resizeSection(i, 80)
        h.resizeSection(self.model.columns.index("split"), 100)
        h.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        view.setSortingEnabled(True)
        view.activated.connect(self._on_activated)
        view.doubleClicked.connect(self._on_activated)
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        view.customContextMenuRequested.connect(self._on_menu)
        self.chooser = QComboBox(window)
        self.chooser.setObjectName("split_chooser")
        self.chooser.setToolTip("Show the shards of one split, or all")
        self.chooser.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.chooser.currentIndexChanged.connect(self._on_chosen)
        self.split_note = QLabel(window)
        top = QHBoxLayout()
        top.setContentsMargins(6, 2, 6, 2)
        top.addWidget(QLabel("Split:", window))
        top.addWidget(self.chooser)
        top.addWidget(self.split_note, 1)
        body = QWidget(window)
        lay = QVBoxLayout(body)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(top)
        lay.addWidget(view, 1)
        self.dock = QDockWidget("Shards", window)
        self.dock.setObjectName("shards")
        self.dock.setWidget(body)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self._refresh_if_changed)
        self.dock.visibilityChanged.connect(self._on_visible)
        self.changed = True  # set by the scan's progress and new problems; the timer refreshes
        self._names: list[str] | None = None
        self._first_shown = False  # the first show waits for the first rows (`_on_visible`)
        problems.arranged.connect(self.note_changed)
        session.index_progressed.connect(self.note_changed)
        session.scan_ended.connect(self.note_changed)
        session.splits_changed.connect(self._on_splits)
        self._on_splits()

    # splits --------------------------------------------------------------------------------------------

    @property
    def shown_split(self) -> str | None:
        """The split the panel is narrowed to (None: all; "" the files in none)."""
        return self.chooser.currentData()

    @Slot()
    def _on_splits(self) -> None:
        """The session's splits changed (or are first known): the chooser lists them (All first,
        the files in no split last), keeping the one chosen while it still exists."""
        names = self.session.split_names()
        keep = self.shown_split
        self.chooser.blockSignals(True)
        self.chooser.clear()
        self.chooser.addItem("All", None)
        for name in names:
            self.chooser.addItem(name, name)
        if names and any(not x for x in self.session.splits):
            self.chooser.addItem(NO_SPLIT, "")
        at = self.chooser.findData(keep) if keep is not None else 0
        self.chooser.setCurrentIndex(max(at, 0))
        self.chooser.blockSignals(False)
        self.chooser.setEnabled(bool(names))
        self._apply_split()

    @Slot(int)
    def _on_chosen(self, _index: int) -> None:
        self._apply_split()

    def choose_split(self, name: str | None) -> None:
        """Narrow the panel to one split (None: every file)."""
        at = self.chooser.findData(name)
        self.chooser.setCurrentIndex(at if at >= 0 else 0)

    def _apply_split(self) -> None:
        self.model.set_splits(self.session.splits, self.shown_split)
        counts = {}
        for x in self.session.splits:
            counts[x] = counts.get(x, 0) + 1
        self.split_note.setText(
            "  shards: " + " · ".join(f"{name or NO_SPLIT} {n:,}" for name, n in counts.items())
            if self.session.split_names()
            else "no splits named by the paths: right-click shards to put them in one"
        )
        self._set_title()

    def _set_title(self) -> None:
        total = len(self.session.ds.files)
        shown = self.model.rowCount()
        self.dock.setWindowTitle(
            f"Shards ({total:,})" if self.shown_split is None else f"Shards ({shown:,} of {total:,})"
        )

    def selected_files(self) -> list[int]:
        """The files of the rows selected (numpy over the selection's ranges)."""
        rows = selected_rows(self.view.selectionModel().selection())
        return [self.model.file_at(int(r)) for r in rows if r < len(self.model.order)]

    def assign_split(self, files: list[int], name: str) -> None:
        """Put these files in split `name` ("" none): the session's, for the next analysis."""
        self.session.set_split([f for f in files if f < len(self.session.splits)], name)

    @Slot(QPoint)
    def _on_menu(self, at: QPoint) -> None:
        files = self.selected_files()
        if not files:
            return
        menu = QMenu(self.view)
        what = f"{len(files):,} shard{'s' if len(files) != 1 else ''}"
        put = menu.addAction(f"Put {what} in Split…")
        out = menu.addAction(f"Take {what} out of Any Split")
        chosen = menu.exec(self.view.viewport().mapToGlobal(at))
        if chosen is put:
            names = self.session.split_names() or ["train", "validation", "test"]
            name, ok = QInputDialog.getItem(
                self.view, "Put in Split", f"The split of {what} (any word):", names, 0, True
            )
            if ok and name.strip():
                self.assign_split(files, name)
        elif chosen is out:
            self.assign_split(files, "")

    @Slot()
    def note_changed(self, *_args) -> None:
        self.changed = True

    def _refresh_if_changed(self) -> None:
        if self.changed:
            self.refresh()

    @Slot(bool)
    def _on_visible(self, visible: bool) -> None:
        if visible:
            if self._first_shown or self.session.index_progress is not None:
                self._first_shown = True
                self.refresh()
            else:  # the window's first show: the first rows paint first (10,000 shards: ~25-40 ms)
                self._first_shown = True
                self.session.index_progressed.connect(
                    self._after_first_rows, Qt.ConnectionType.SingleShotConnection
                )
            self.timer.start()  # (its first tick refreshes anyway: `changed` is set)
        else:
            self.timer.stop()

    @Slot()
    def _after_first_rows(self, *_args) -> None:
        """The scan's first progress: its rows go in and paint, then the panel's figures."""
        QTimer.singleShot(FIRST_REFRESH_MS, self._refresh_if_changed)

    @Slot()
    def refresh(self) -> None:
        """New figures from the index status bits and the problems so far (numpy over every file).
        On 10,000 files this costs the UI thread tens of ms: the timer then waits
        REFRESH_COST_SHARE times as long, so the panel never takes more than that share of it."""
        t0 = time.perf_counter()
        self.model.set_health(self.health())
        self._set_title()
        self.changed = False
        cost_ms = (time.perf_counter() - t0) * 1000
        self.timer.setInterval(max(REFRESH_MS, int(cost_ms * REFRESH_COST_SHARE)))

    def health(self) -> ShardHealth:
        """Every file's figures now (the Plot panel's shard plots draw them too)."""
        ds = self.session.ds
        if self._names is None or len(self._names) != len(ds.files):
            self._names = [f.path.name for f in ds.files]  # names do not change: taken once
        return shard_health(ds, self._names, self.problems.by_file)

    @Slot(QModelIndex)
    def _on_activated(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        fi = self.model.file_at(index.row())
        split = self.model.split_of(fi)
        if self.model.columns[index.column()] == "split" and split:
            self.filtering.run_text(f"split == {json.dumps(split)}")  # the split's records
            return
        self.show_shard(fi)

    def show_shard(self, fi: int) -> None:
        """The table shows one file's records: a filter on that file, its matches known at once
        (a file's records are one run of numbers), so no filter job reads anything."""
        ds = self.session.ds
        starts = ds.starts()
        first, stop = int(starts[fi]), int(starts[fi + 1])
        note = "" if self.session.scan_over else "this file's records so far"
        self.filtering.show_records(
            f"file == {json.dumps(ds.files[fi].path.name)}", np.arange(first, stop, dtype=np.int64), note
        )
        if stop > first:
            self.shard_shown.emit(first)
