"""The Shards panel: per-file health of a dataset of many files (records, intact, damaged,
problems by severity), sortable; double-click shows that file's records in the table."""

from __future__ import annotations

import json
import time

import numpy as np
from PySide6.QtCore import QModelIndex, QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QDockWidget, QWidget

from tfrview.core.analysis.shard_health import ShardHealth, shard_health
from tfrview.gui.controllers.filter import FilterController
from tfrview.gui.models.problems import ProblemsModel
from tfrview.gui.models.shards import ShardsModel
from tfrview.gui.session import DatasetSession
from tfrview.gui.widgets.record_table_view import QuietTableView, plain_rows

REFRESH_MS = 1000  # while the figures change, and only while the panel is visible
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
        h.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        view.setSortingEnabled(True)
        view.activated.connect(self._on_activated)
        view.doubleClicked.connect(self._on_activated)
        self.dock = QDockWidget("Shards", window)
        self.dock.setObjectName("shards")
        self.dock.setWidget(view)
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self._refresh_if_changed)
        self.dock.visibilityChanged.connect(self._on_visible)
        self.changed = True  # set by the scan's progress and new problems; the timer refreshes
        self._names: list[str] | None = None
        problems.arranged.connect(self.note_changed)
        session.index_progressed.connect(self.note_changed)
        session.scan_ended.connect(self.note_changed)

    @Slot()
    def note_changed(self, *_args) -> None:
        self.changed = True

    def _refresh_if_changed(self) -> None:
        if self.changed:
            self.refresh()

    @Slot(bool)
    def _on_visible(self, visible: bool) -> None:
        if visible:
            self.refresh()
            self.timer.start()
        else:
            self.timer.stop()

    @Slot()
    def refresh(self) -> None:
        """New figures from the index status bits and the problems so far (numpy over every file).
        On 10,000 files this costs the UI thread tens of ms: the timer then waits
        REFRESH_COST_SHARE times as long, so the panel never takes more than that share of it."""
        t0 = time.perf_counter()
        self.model.set_health(self.health())
        self.dock.setWindowTitle(f"Shards ({len(self.session.ds.files):,})")
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
        if index.isValid():
            self.show_shard(self.model.file_at(index.row()))

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
