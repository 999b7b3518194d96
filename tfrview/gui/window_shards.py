"""The Shards panel: per-file health of a dataset of many files (records, intact, damaged,
problems by severity), sortable; double-click shows that file's records in the table."""

from __future__ import annotations

import json

import numpy as np
from PySide6.QtCore import QModelIndex, Qt, QTimer, Slot
from PySide6.QtWidgets import QDockWidget

from tfrview.core.analysis.shards import shard_health
from tfrview.gui.models.shards import ShardsModel
from tfrview.gui.widgets.record_table_view import QuietTableView, plain_rows

_REFRESH_MS = 1000  # while indexing or verifying, and only while the panel is visible


class ShardsMixin:
    """Mixed into MainWindow; uses its attributes."""

    def _build_shards_dock(self) -> None:
        self.shards = ShardsModel(self)
        view = self.shards_view = QuietTableView(self)
        view.setModel(self.shards)
        plain_rows(view)
        h = view.horizontalHeader()
        h.resizeSection(0, 300)
        for i in range(1, len(self.shards.columns)):
            h.resizeSection(i, 80)
        h.setSortIndicator(0, Qt.SortOrder.AscendingOrder)
        view.setSortingEnabled(True)
        view.activated.connect(self._on_shard_activated)
        view.doubleClicked.connect(self._on_shard_activated)
        self.shards_dock = QDockWidget("Shards", self)
        self.shards_dock.setObjectName("shards")
        self.shards_dock.setWidget(view)
        self.shards_timer = QTimer(self)
        self.shards_timer.setInterval(_REFRESH_MS)
        self.shards_timer.timeout.connect(self._refresh_shards_if_changed)
        self.shards_dock.visibilityChanged.connect(self._on_shards_visible)
        self.shards_changed = True  # set by index progress and new problems; the timer refreshes
        self.problems.arranged.connect(self._note_shards_changed)

    def _note_shards_changed(self) -> None:
        self.shards_changed = True

    def _refresh_shards_if_changed(self) -> None:
        if self.shards_changed:
            self.refresh_shards()

    def _on_shards_visible(self, visible: bool) -> None:
        if visible:
            self.refresh_shards()
            self.shards_timer.start()
        else:
            self.shards_timer.stop()

    @Slot()
    def refresh_shards(self) -> None:
        """New figures from the index status bits and the problems so far (numpy per file)."""
        labels = [f.path.name for f in self.ds.files]
        self.shards.set_health(shard_health(self.ds, labels, self.problems.by_file))
        self.shards_dock.setWindowTitle(f"Shards ({len(labels):,})")
        self.shards_changed = False

    @Slot(QModelIndex)
    def _on_shard_activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.show_shard(self.shards.file_at(index.row()))

    def show_shard(self, fi: int) -> None:
        """The table shows one file's records: a filter on that file, its matches known at once
        (a file's records are one run of numbers), so no filter job reads anything."""
        starts = self.ds.starts()
        first, stop = int(starts[fi]), int(starts[fi + 1])
        self._stop_filter()
        self.filter_edit.blockSignals(True)
        self.filter_edit.setText(f"file == {json.dumps(self.ds.files[fi].path.name)}")
        self.filter_edit.blockSignals(False)
        self._set_filter_error(None)
        self.model.set_filter()
        self.model.add_matches(np.arange(first, stop, dtype=np.int64))
        self.problems.set_matches(self.model.filter_rows[: self.model.match_count])
        self.filter_state = "" if self.index_handled else "this file's records so far"
        self._show_filter_state()
        if stop > first:
            self.select_record(first)
        self.table.setFocus()
