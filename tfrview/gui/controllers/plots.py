"""The Plot panel's controller: which numeric features there are (from the analysis' summary), one
`series` job at a time for the chosen one, and the plot of a TensorBoard event file shown at once."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow

from tfrview.core.procs.jobs import BOX_MEASURES
from tfrview.gui.session import DatasetSession
from tfrview.gui.widgets.plot_panel import PlotPanel
from tfrview.gui.workers.base import Worker
from tfrview.gui.workers.jobs import JobWorker, replace_job

NUMERIC = ("float_list", "int64_list")  # the summary's type names


class PlotController(QObject):
    def __init__(self, session: DatasetSession, window: QMainWindow, data_dir, apply_filter=None) -> None:
        super().__init__(window)
        self.session = session
        self.window = window
        self.data_dir = data_dir
        self.apply_filter = apply_filter  # (text) -> None: the table's filter, for a clicked bar
        self.panel = PlotPanel(window)
        self.panel.range_clicked.connect(self._on_range)
        self.dock = QDockWidget("Plot", window)
        self.dock.setObjectName("plot")
        self.dock.setWidget(self.panel)
        self.job: JobWorker | None = None
        self._keys: list[str] = []
        self._prefer: str | None = None
        self._filled = False
        self.dock.visibilityChanged.connect(self._on_visible)
        self.panel.key_chosen.connect(self.plot)
        self.panel.save_requested.connect(self.save_png)
        session.summary_ready.connect(self._on_summary)

    @Slot(object, bool)
    def _on_summary(self, summary: dict, partial: bool) -> None:
        if partial:
            return
        feats = summary.get("keys", {})
        keys = sorted(k for k, v in feats.items() if set(v.get("types", ())) & set(NUMERIC))
        if all(f"image/object/bbox/{c}" in feats for c in ("xmin", "xmax", "ymin", "ymax")):
            keys += list(BOX_MEASURES)  # histograms of the boxes themselves
        events = summary.get("kinds", {}).get("event", 0) > 0
        self._keys = keys
        self._prefer = next((k for k in keys if k != "step" and "/" not in k), None) if events else None
        self._filled = False
        if self.dock.isVisible():
            self._fill()
        elif events and keys:  # a TensorBoard event file: its scalars are what people came to see
            self.dock.show()
            self.dock.raise_()
            self.window.resizeDocks([self.dock], [max(300, self.window.height() // 3)], Qt.Orientation.Vertical)

    @Slot(bool)
    def _on_visible(self, visible: bool) -> None:
        if visible and not self._filled:
            self._fill()

    def _fill(self) -> None:
        """The combo gets the numeric keys (a plot job starts only while the panel is seen)."""
        self._filled = True
        if self._keys:
            self.panel.set_keys(self._keys, self._prefer)
        else:
            self.panel.show_error("no numeric feature to plot (yet: the plot comes from the analysis)")

    @Slot(str)
    def plot(self, key: str) -> None:
        if key in BOX_MEASURES and not self.panel.histogram:  # a box measure is a histogram: say so
            self.panel.mode.blockSignals(True)
            self.panel.mode.setCurrentIndex(1)
            self.panel.mode.blockSignals(False)
        histogram = self.panel.histogram
        spec = {**self.session.job_spec("series"), "key": key, "mode": "histogram" if histogram else "over"}
        self.job = replace_job(self.job, JobWorker(spec, self), self._on_items, None, self._on_error)

    def _on_items(self, worker: Worker, items: list[dict]) -> None:
        if worker is not self.job:
            return
        for obj in items:
            if "series" in obj:
                self.panel.show_series(obj["series"])
            elif "histogram" in obj:
                self.panel.show_histogram(obj["histogram"])
            elif "error" in obj:
                self.panel.show_error(obj["error"])

    def _on_error(self, worker: Worker, message: str) -> None:
        if worker is self.job:
            self.panel.show_error(message)

    @Slot(str, float, float, bool)
    def _on_range(self, key: str, lo: float, hi: float, closed: bool) -> None:
        """A clicked bar: the table shows the records with a value in it."""
        import json

        if self.apply_filter is not None:
            k = json.dumps(key)
            self.apply_filter(f"{k} >= {lo:.10g} and {k} {'<=' if closed else '<'} {hi:.10g}")

    @Slot()
    def save_png(self) -> None:
        from pathlib import Path


        if self.panel.plot is None:
            return
        path, _ = QFileDialog.getSaveFileName(self.window, "Save plot", str(Path(self.data_dir()) / "plot.png"), "PNG (*.png)")
        if path:
            self.write_png(Path(path))

    def write_png(self, path) -> None:
        from PySide6.QtCore import QBuffer, QIODevice

        from tfrview.core.output.atomic import atomic_write_bytes

        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        self.panel.plot.grab().save(buf, "PNG")
        atomic_write_bytes(path, bytes(buf.data()))

    def shutdown(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.job.wait()
