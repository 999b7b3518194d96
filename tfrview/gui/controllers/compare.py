"""The Compare view's controller: the splits the window's paths name (`tfrecord.splits`), one
`compare` job at a time for the pair picked (in a job process, never the window's thread), and a
`compare_select` job behind a click on a bar, whose records the table's filter shows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Slot
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow

from tfrview.core.procs.messages import Compared, Failed
from tfrview.core.procs.requests import CompareRequest, CompareSelectRequest
from tfrview.gui.session import DatasetSession
from tfrview.gui.workers.base import Worker
from tfrview.gui.workers.jobs import JobWorker, replace_job

if TYPE_CHECKING:  # the view loads when first shown, not with the window
    from tfrview.gui.widgets.compare_panel import ComparePanel


class CompareController(QObject):
    def __init__(self, session: DatasetSession, window: QMainWindow, filtering=None) -> None:
        super().__init__(window)
        self.session = session
        self.window = window
        self.filtering = filtering  # FilterController: a clicked bar's records in the table
        self._panel: ComparePanel | None = None  # made when first shown or used (`panel`)
        self.dock = QDockWidget("Compare", window)
        self.dock.setObjectName("compare")
        self.dock.visibilityChanged.connect(lambda on: on and self.panel)
        self.job: JobWorker | None = None
        self.request: CompareRequest | None = None  # the comparison shown
        self.selectable = False

    @property
    def panel(self) -> ComparePanel:
        """The view, made on first use (its module, Qt classes and the splits' walk of every file
        are no part of the window's start: most sessions never open it)."""
        if self._panel is None:
            from tfrview.gui.widgets.compare_panel import ComparePanel

            self._panel = p = ComparePanel(self.window)
            p.compare_asked.connect(self._on_asked)
            p.bar_clicked.connect(self._on_bar)
            self.refresh_splits()
            self.dock.setWidget(p)
        return self._panel

    def refresh_splits(self) -> None:
        """The splits of the files that opened, as the session reads them (`tfrecord.splits`, once
        for the window: 10,000 shards read twice cost ~0.2 s of CPU before the first rows)."""
        files, splits = self.session.ds.files, self.session.splits
        self.panel.set_splits(
            sorted({s for f, s in zip(files, splits, strict=True) if s and f.source is not None})
        )

    @Slot(str, str)
    def _on_asked(self, a: str, b: str) -> None:
        from tfrview.gui.widgets.compare_panel import OTHER

        other: tuple[str, ...] = ()
        if b == OTHER:
            folder = QFileDialog.getExistingDirectory(self.window, "Compare with the dataset in")
            if not folder:
                return
            other, b = (folder,), ""
        self.compare(a, b, other)

    def compare(self, a: str, b: str = "", other: tuple[str, ...] = ()) -> None:
        """Side A (a split, "" all files) against split `b` or the files at `other`."""
        self.request = self.session.request(CompareRequest, a=a, b=b, other=other)
        self.panel.show_running(f"{a or 'all files'} with {b or ', '.join(other)}")
        self.job = replace_job(self.job, JobWorker(self.request, self), self._on_items, None, self._on_error)

    def _on_items(self, worker: Worker, items: list) -> None:
        if worker is not self.job:
            return
        for msg in items:
            match msg:
                case Compared(comparison=c, selectable=selectable):
                    self.selectable = selectable
                    self.panel.show_comparison(c)
                case Failed(message=message):
                    self.panel.show_error(message)

    def _on_error(self, worker: Worker, message: str) -> None:
        if worker is self.job:
            self.panel.show_error(message)

    @Slot(str, int)
    def _on_bar(self, side: str, i: int) -> None:
        """A bar's records in the table (side B's only when they are the window's records)."""
        f, req = self.panel.feature, self.request
        if f is None or f.bars is None or req is None or self.filtering is None:
            return
        if not self.selectable or (side == "b" and req.other):
            self.window.statusBar().showMessage("those records are not in this window", 5000)
            return
        b = f.bars
        name = req.a if side == "a" else req.b
        if b.names:
            if b.values is None:
                self.window.statusBar().showMessage(f"{f.key}: these values cannot be asked for", 5000)
                return
            pick = {"category": b.values[i]}
            what = f"{f.key} = {b.names[i]} in {name or 'all files'}"
        else:
            last = i == len(b.edges) - 2
            pick = {"lo": b.edges[i], "hi": b.edges[i + 1], "closed": last}
            what = f"{f.key} in [{b.edges[i]:.4g}, {b.edges[i + 1]:.4g}{']' if last else ')'} in {name or 'all files'}"
        fields = {k: getattr(req, k) for k in ("a", "b", "other", "rules")}
        request = self.session.request(
            CompareSelectRequest, **fields, side=side, key=f.key, derived=f.derived, **pick
        )
        self.filtering.run_job(request, what=what)

    def shutdown(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.job.wait()
