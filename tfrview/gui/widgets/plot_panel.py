"""The Plot panel: one numeric feature over the dataset (over `step` for TensorBoard events and
training logs, else over the record number), drawn by pyqtgraph; a click selects the nearest
record; Save PNG… writes the plot. pyqtgraph is imported when the first plot is drawn, not at
start-up (it costs a few hundred milliseconds)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal, Slot
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget


class PlotPanel(QWidget):
    key_chosen = Signal(str)
    record_clicked = Signal(int)
    range_clicked = Signal(str, float, float, bool)  # key, low, high, high included: a bar's records
    save_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.keys = QComboBox(self)
        self.keys.setMinimumContentsLength(24)
        self.keys.currentTextChanged.connect(self._on_key)
        self.mode = QComboBox(self)
        self.mode.addItems(["over step or record", "histogram"])
        self.mode.currentTextChanged.connect(lambda _t: self._on_key(self.keys.currentText()))
        self.status = QLabel("the plot comes from the analysis", self)
        self.save_button = QPushButton("Save PNG…", self)
        self.save_button.clicked.connect(self.save_requested)
        bar.addWidget(QLabel("feature:", self))
        bar.addWidget(self.keys)
        bar.addWidget(self.mode)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.save_button)
        lay.addLayout(bar)
        self._lay = lay
        self.plot = None  # pyqtgraph.PlotWidget, made with the first series
        self._x = np.empty(0)
        self._records = np.empty(0, dtype=np.int64)
        self._edges: np.ndarray | None = None  # a histogram's bar edges, when one is shown
        self._hist_key = ""
        self._hist_filterable = True

    def set_keys(self, keys: list[str], prefer: str | None = None) -> None:
        current = self.keys.currentText()
        self.keys.blockSignals(True)
        self.keys.clear()
        self.keys.addItems(keys)
        self.keys.blockSignals(False)
        want = current if current in keys else (prefer if prefer in keys else (keys[0] if keys else ""))
        if want:
            self.keys.setCurrentText(want)
            if want != current:
                self.key_chosen.emit(want)

    @Slot(str)
    def _on_key(self, key: str) -> None:
        if key:
            self.status.setText(f"reading {key}…")
            self.key_chosen.emit(key)

    @property
    def histogram(self) -> bool:
        return self.mode.currentIndex() == 1

    def _ensure_plot(self):
        import pyqtgraph as pg

        if self.plot is None:
            pg.setConfigOptions(antialias=True, background="w", foreground="k")
            self.plot = pg.PlotWidget(self)
            self.plot.showGrid(x=True, y=True, alpha=0.3)
            self.plot.scene().sigMouseClicked.connect(self._on_click)
            self._lay.addWidget(self.plot, 1)
        return pg

    def show_series(self, s: dict) -> None:
        pg = self._ensure_plot()
        self._edges = None
        self._x = np.asarray(s["x"], dtype=np.float64)
        self._records = np.asarray(s["records"], dtype=np.int64)
        self.plot.clear()
        self.plot.plot(self._x, np.asarray(s["y"], dtype=np.float64), pen=pg.mkPen("#1f77b4", width=1.5),
                       symbol="o" if len(self._x) <= 200 else None, symbolSize=4)  # fmt: skip
        self.plot.setLabel("bottom", s["x_name"])
        self.plot.setLabel("left", s["key"])
        every = f", every {s['stride']}th shown" if s["stride"] > 1 else ""
        self.status.setText(f"{s['points']:,} values{every} · click a point to show its record")

    def show_histogram(self, h: dict) -> None:
        """Bars of a feature's values; a click on a bar filters the table to its records."""
        pg = self._ensure_plot()
        self._edges = np.asarray(h["edges"], dtype=np.float64)
        self._hist_key = h["key"]
        self._x = np.empty(0)
        counts = np.asarray(h["counts"], dtype=np.float64)
        self.plot.clear()
        self.plot.addItem(pg.BarGraphItem(x0=self._edges[:-1], x1=self._edges[1:], height=counts,
                                          brush="#1f77b4", pen="w"))  # fmt: skip
        self.plot.setLabel("bottom", h["key"])
        self.plot.setLabel("left", "values")
        self._hist_filterable = h.get("filterable", True)
        click = " · click a bar to filter the table to it" if self._hist_filterable else ""
        self.status.setText(f"{h['values']:,} values in {len(counts)} bars{click}")

    def show_error(self, text: str) -> None:
        self.status.setText(f"⚠ {text}")

    def _on_click(self, ev) -> None:
        if self.plot is None or (not len(self._x) and self._edges is None):
            return
        at = self.plot.getPlotItem().vb.mapSceneToView(ev.scenePos())
        if self._edges is not None:
            hit = self.bar_at(at.x())
            if hit is not None and self._hist_filterable:
                self.range_clicked.emit(self._hist_key, *hit)
            return
        self.record_clicked.emit(self.record_at(at.x()))

    def bar_at(self, x: float) -> tuple[float, float, bool] | None:
        """The bar under x: (low, high, whether high is included: the last bar's is)."""
        e = self._edges
        if e is None or not len(e) or x < e[0] or x > e[-1]:
            return None
        i = min(int(np.searchsorted(e, x, side="right")) - 1, len(e) - 2)
        return float(e[i]), float(e[i + 1]), i == len(e) - 2

    def record_at(self, x: float) -> int:
        """The record of the point nearest to x on the plot's x axis."""
        return int(self._records[int(np.argmin(np.abs(self._x - x)))])
