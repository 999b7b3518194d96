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
    save_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.keys = QComboBox(self)
        self.keys.setMinimumContentsLength(24)
        self.keys.currentTextChanged.connect(self._on_key)
        self.status = QLabel("the plot comes from the analysis", self)
        self.save_button = QPushButton("Save PNG…", self)
        self.save_button.clicked.connect(self.save_requested)
        bar.addWidget(QLabel("feature:", self))
        bar.addWidget(self.keys)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.save_button)
        lay.addLayout(bar)
        self._lay = lay
        self.plot = None  # pyqtgraph.PlotWidget, made with the first series
        self._x = np.empty(0)
        self._records = np.empty(0, dtype=np.int64)

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

    def show_series(self, s: dict) -> None:
        import pyqtgraph as pg

        if self.plot is None:
            pg.setConfigOptions(antialias=True, background="w", foreground="k")
            self.plot = pg.PlotWidget(self)
            self.plot.showGrid(x=True, y=True, alpha=0.3)
            self.plot.scene().sigMouseClicked.connect(self._on_click)
            self._lay.addWidget(self.plot, 1)
        self._x = np.asarray(s["x"], dtype=np.float64)
        self._records = np.asarray(s["records"], dtype=np.int64)
        self.plot.clear()
        self.plot.plot(self._x, np.asarray(s["y"], dtype=np.float64), pen=pg.mkPen("#1f77b4", width=1.5),
                       symbol="o" if len(self._x) <= 200 else None, symbolSize=4)  # fmt: skip
        self.plot.setLabel("bottom", s["x_name"])
        self.plot.setLabel("left", s["key"])
        every = f", every {s['stride']}th shown" if s["stride"] > 1 else ""
        self.status.setText(f"{s['points']:,} values{every} · click a point to show its record")

    def show_error(self, text: str) -> None:
        self.status.setText(f"⚠ {text}")

    def _on_click(self, ev) -> None:
        if self.plot is None or not len(self._x):
            return
        at = self.plot.getPlotItem().vb.mapSceneToView(ev.scenePos())
        self.record_clicked.emit(self.record_at(at.x()))

    def record_at(self, x: float) -> int:
        """The record of the point nearest to x on the plot's x axis."""
        return int(self._records[int(np.argmin(np.abs(self._x - x)))])
