"""The Plot panel's controller: which plots there are (numeric features from the analysis' summary,
the boxes' measures and centres, image sizes, class balance, shards), one `series` job at a time
for the chosen one, a `select` job behind a click, and the plot of a TensorBoard event file shown
at once."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QObject, Qt, Slot
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow

from tfrview.core.analysis.plot_names import (
    BOX_CENTRES,
    BOX_MEASURES,
    IMAGE_SCORES,
    IMAGE_SIZES,
    PLOTS,
    scalar_to_show,
)
from tfrview.core.output.atomic import atomic_write_bytes
from tfrview.core.procs.messages import Failed, Plot
from tfrview.core.procs.requests import SelectRequest, SeriesRequest
from tfrview.core.records.palette import palette_hex
from tfrview.gui.models.record_table import file_labels
from tfrview.gui.session import DatasetSession
from tfrview.gui.settings import remember_write, write_dir
from tfrview.gui.widgets.plot_panel import PlotPanel
from tfrview.gui.workers.base import Worker
from tfrview.gui.workers.jobs import JobWorker, replace_job

NUMERIC = ("float_list", "int64_list")  # the summary's type names
CLASSES = "class balance"
SHARD_PLOTS = {"records per shard": "records", "problems per shard": "problems"}
HISTOGRAMS = (*BOX_MEASURES, CLASSES, *SHARD_PLOTS)  # plots that are never a series


class PlotController(QObject):
    def __init__(
        self, session: DatasetSession, window: QMainWindow, data_dir, filtering=None, shards=None
    ) -> None:
        super().__init__(window)
        self.session = session
        self.window = window
        self.data_dir = data_dir
        self.filtering = filtering  # FilterController: the table's filter, for a clicked bar
        self.shards = shards  # ShardsController: per-file health, and a shard's records for a click
        self.panel = PlotPanel(window)
        self.panel.range_clicked.connect(self._on_range)
        self.panel.area_clicked.connect(self._on_area)
        self.panel.category_clicked.connect(self._on_category)
        self.dock = QDockWidget("Plot", window)
        self.dock.setObjectName("plot")
        self.dock.setWidget(self.panel)
        self.job: JobWorker | None = None
        self._keys: list[str] = []
        self._summary: dict = {}
        self._ready: dict[str, Plot] = {}  # a plot sent with the analysis, by key: no job for it
        self._prefer: str | None = None
        self._filled = False
        self.dock.visibilityChanged.connect(self._on_visible)
        self.panel.key_chosen.connect(self.plot)
        self.panel.save_requested.connect(self.save_png)
        session.summary_ready.connect(self._on_summary)
        session.plot_ready.connect(self._on_plot_ready)
        session.analysis_started.connect(self._ready.clear)
        session.splits_changed.connect(self._on_splits)
        self._on_splits()

    @Slot()
    def _on_splits(self) -> None:
        """The splits to plot one of, or overlay: the session's (named by paths or the person)."""
        self.panel.set_splits(self.session.split_names())

    @Slot(object)
    def _on_plot_ready(self, msg: Plot) -> None:
        key = msg.series_key
        if key:  # an event file's scalar: drawn at once, before the summary fills the panel's keys
            self._ready[key] = msg
            if not self.dock.isVisible():  # shown now; its keys are filled when the summary comes
                self._filled = True  # (so showing it does not fill it with nothing)
                self._reveal()
                self._filled = False
            self.panel.show_series(msg.data["series"])

    @Slot(object, bool)
    def _on_summary(self, summary: dict, partial: bool) -> None:
        if partial:
            return
        self._summary = summary
        feats = summary.get("keys", {})
        keys = sorted(k for k, v in feats.items() if set(v.get("types", ())) & set(NUMERIC))
        if summary.get("boxes"):  # the readings found boxes, in whatever convention (DatasetSummary.box_keys)
            keys += [*BOX_MEASURES, BOX_CENTRES]  # the boxes themselves
        if any("image" in k or k.endswith("encoded") for k in feats):
            keys.append(IMAGE_SIZES)
            keys += list(IMAGE_SCORES)  # each image's quality scores (records.imagesignals), by name
        if summary.get("classes", {}).get("counts"):
            keys.append(CLASSES)
        if len(self.session.ds.files) > 1 and self.shards is not None:
            keys += list(SHARD_PLOTS)
        events = summary.get("kinds", {}).get("event", 0) > 0 and not self.dock.isVisible()
        self._keys = keys
        self._prefer = scalar_to_show(summary)
        self._filled = False
        if self.dock.isVisible():
            self._fill()
        elif events and keys:  # a TensorBoard event file: its scalars are what people came to see
            self._reveal()

    def _reveal(self) -> None:
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
        if key in HISTOGRAMS and not self.panel.histogram:  # bars, never a series: say so
            self.panel.mode.blockSignals(True)
            self.panel.mode.setCurrentIndex(1)
            self.panel.mode.blockSignals(False)
        self.panel.mode.setEnabled(key not in PLOTS and key not in HISTOGRAMS)
        if key == CLASSES:
            self._show_classes()
            return
        if key in SHARD_PLOTS:
            self._show_shards(key)
            return
        histogram = self.panel.histogram
        split, by_split = self.panel.split_choice
        if not histogram and key in self._ready and split is None and not by_split:
            if self.job is not None:
                self.job.cancel()
            self.job = None
            self._on_items(None, [self._ready[key]])
            return
        request = self.session.request(
            SeriesRequest, key=key, histogram=histogram, split=split, by_split=by_split
        )
        self.job = replace_job(self.job, JobWorker(request, self), self._on_items, None, self._on_error)

    def _on_items(self, worker: Worker | None, items: list) -> None:
        if worker is not self.job:
            return
        for msg in items:
            match msg:
                case Plot(data={"overlay": parts}):
                    self.panel.show_overlay(parts)
                case Plot(data={"series": series}):
                    self.panel.show_series(series)
                case Plot(data={"histogram": histogram}):
                    self.panel.show_histogram(histogram)
                case Plot(data={"heatmap": heatmap}):
                    self.panel.show_heatmap(heatmap)
                case Plot(data={"scatter": scatter}):
                    self.panel.show_scatter(scatter)
                case Failed(message=message):
                    self.panel.show_error(message)

    def _on_error(self, worker: Worker, message: str) -> None:
        if worker is self.job:
            self.panel.show_error(message)

    def _show_classes(self) -> None:
        c = self._summary.get("classes", {})
        names = [str(n) for n, _ in c.get("counts", [])]
        filterable = any(self._class_filter(n) for n in names[:50])

        keys = c.get("colour_keys") or {}
        self.panel.show_categories(
            {
                "key": CLASSES,
                "names": names,
                "counts": [v for _, v in c["counts"]],
                "colours": [palette_hex(keys.get(n, n)) for n in names],
                "title": f"{c['title']} ({len(names):,})",
                "x_name": "class",
                "y_name": c.get("counted", "records"),
                "filterable": filterable,
            }
        )

    def _class_filter(self, name: str) -> str | None:
        """The filter that shows a class's records: by its text, or by its id; the keys and ids
        come with the classes chart's data (`DatasetSummary.to_json`), never from a bar's title."""

        c = self._summary.get("classes", {})
        if c.get("counted") != "objects":
            return None  # record labels: no key carried to filter by
        if c.get("text_key"):
            return f"{json.dumps(c['text_key'])} == {json.dumps(name)}"
        i = (c.get("ids") or {}).get(name)
        key = c.get("id_key")
        return f"{json.dumps(key)} == {int(i)}" if key and i is not None else None

    def _show_shards(self, key: str) -> None:

        h = self.shards.health()
        values = h.records if SHARD_PLOTS[key] == "records" else h.problems.sum(axis=1)
        names = file_labels([f.path for f in self.session.ds.files])  # as the table's file column says them
        self.panel.show_categories(
            {
                "key": key,
                "names": names,
                "counts": values.tolist(),
                "title": f"{key} ({len(h):,} files)",
                "x_name": "shard",
                "y_name": SHARD_PLOTS[key],
                "colour": "#1f77b4" if SHARD_PLOTS[key] == "records" else "#d62728",
            }
        )

    @Slot(str, int)
    def _on_category(self, key: str, i: int) -> None:
        if key in SHARD_PLOTS and self.shards is not None:
            self.shards.show_shard(i)
        elif key == CLASSES:
            self.filter_class(self.panel._cats["names"][i])

    @Slot(str)
    def filter_class(self, name: str) -> None:
        """A class's records in the table: a bar of the class balance, here or in the Summary."""
        text = self._class_filter(name) if self._summary else None
        if text and self.filtering is not None:
            self.filtering.run_text(text)
        else:
            self.window.statusBar().showMessage(f"no feature says which records hold {name!r}", 5000)

    @Slot(str, float, float, bool)
    def _on_range(self, key: str, lo: float, hi: float, closed: bool) -> None:
        """A clicked bar: the table shows the records with a value in it."""

        if self.filtering is None:
            return
        if key in PLOTS:  # a box measure: no feature of its own to filter on, a job finds the records
            self._select(key, [lo], [hi], closed, f"{key} in [{lo:.4g}, {hi:.4g}{']' if closed else ')'}")
            return
        k = json.dumps(key)
        split, _ = self.panel.split_choice
        of = "" if split is None else f" and split == {json.dumps(split)}"  # a bar of that split's plot
        self.filtering.run_text(f"{k} >= {lo:.10g} and {k} {'<=' if closed else '<'} {hi:.10g}{of}")

    @Slot(str, list, list)
    def _on_area(self, key: str, lo: list, hi: list) -> None:
        if key == IMAGE_SIZES:
            what = f"image {lo[0]:.0f} × {lo[1]:.0f}"
        else:
            what = f"a box centred in x {lo[0]:.3g}–{hi[0]:.3g}, y {lo[1]:.3g}–{hi[1]:.3g}"
        self._select(key, lo, hi, False, what)

    def _select(self, key: str, lo: list, hi: list, closed: bool, what: str) -> None:
        if self.filtering is not None:
            split, _ = self.panel.split_choice
            request = self.session.request(
                SelectRequest, plot=key, lo=tuple(lo), hi=tuple(hi), closed=closed, split=split
            )
            self.filtering.run_job(request, what=what)

    @Slot()
    def save_png(self) -> None:

        if self.panel.plot is None:
            return

        path, _ = QFileDialog.getSaveFileName(
            self.window, "Save plot", str(Path(write_dir()) / "plot.png"), "PNG (*.png)"
        )
        if path:
            remember_write(path)
            self.write_png(Path(path))

    def write_png(self, path) -> None:

        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        self.panel.plot.grab().save(buf, "PNG")
        atomic_write_bytes(path, bytes(buf.data()))

    def shutdown(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.job.wait()
