"""The Compare view: pick two splits of the dataset (or this dataset and another folder), see per
feature the measures (drifted first) and, for the selected feature, the two sides' shares as bars
side by side; a click on a bar asks for that side's records behind it. A thin widget: what the
rows and bars say is `analysis.compare`'s `Comparison`, drawn as it is; pyqtgraph is imported
with the first chart."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tfrview.core.analysis.compare import Comparison, FeatureShift, shift_words

COLOUR_A, COLOUR_B = "#1f77b4", "#ff7f0e"
OTHER = "another dataset…"  # side B's last choice: a folder picked in a dialog
ALL = "all files"
COLUMNS = ("feature", "shift", "measure", "value", "threshold", "presence A", "presence B")


class ComparePanel(QWidget):
    compare_asked = Signal(str, str)  # side A's split ("" all files), side B's split or OTHER
    bar_clicked = Signal(str, int)  # side ("a" or "b"), bar number of the selected feature

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.side_a = QComboBox(self)
        self.side_b = QComboBox(self)
        self.go = QPushButton("Compare", self)
        self.go.clicked.connect(self._ask)
        self.status = QLabel("pick two splits, or a split and another dataset", self)
        bar.addWidget(QLabel("A:", self))
        bar.addWidget(self.side_a)
        bar.addWidget(QLabel("B:", self))
        bar.addWidget(self.side_b)
        bar.addWidget(self.go)
        bar.addWidget(self.status, 1)
        lay.addLayout(bar)
        self.split = QSplitter(Qt.Orientation.Horizontal, self)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        for j, w in enumerate((200, 150, 100, 70, 70, 80, 80)):  # fixed: never sized to contents
            self.table.setColumnWidth(j, w)
        self.table.itemSelectionChanged.connect(self._on_row)
        self.split.addWidget(self.table)
        self.chart_box = QWidget(self)
        self._chart_lay = QVBoxLayout(self.chart_box)
        self._chart_lay.setContentsMargins(0, 0, 0, 0)
        self.chart_title = QLabel("", self.chart_box)
        self._chart_lay.addWidget(self.chart_title)
        self.split.addWidget(self.chart_box)
        self.split.setSizes([520, 480])
        lay.addWidget(self.split, 1)
        self.plot = None
        self.comparison: Comparison | None = None
        self.feature: FeatureShift | None = None

    def set_splits(self, splits: list[str]) -> None:
        """The splits the dataset's paths name; A defaults to train, B to the next one."""
        splits = sorted(splits, key=lambda s: s != "train")  # train first, the others as they came
        self.side_a.clear()
        self.side_a.addItems([*splits, ALL])
        self.side_b.clear()
        self.side_b.addItems([*splits, OTHER])
        if len(splits) > 1:
            self.side_b.setCurrentIndex(1)
        else:
            self.side_b.setCurrentText(OTHER)

    @Slot()
    def _ask(self) -> None:
        a = self.side_a.currentText()
        self.compare_asked.emit("" if a == ALL else a, self.side_b.currentText())

    def show_running(self, what: str) -> None:
        self.status.setText(f"comparing {what}…")

    def show_error(self, text: str) -> None:
        self.status.setText(f"⚠ {text}")

    def show_comparison(self, c: Comparison) -> None:
        """Every feature compared, drifted first (as the comparison orders them); the pickers say
        which sides these are (a comparison asked for elsewhere too)."""
        self.comparison = c
        for combo, name in ((self.side_a, c.a), (self.side_b, c.b)):
            at = combo.findText(name)
            if at >= 0:
                combo.setCurrentIndex(at)
        self.table.setRowCount(len(c.features))
        for i, f in enumerate(c.features):
            cells = (
                f.key,
                ", ".join(shift_words(f, "A", "B")),
                "" if f.measure is None else str(f.measure),
                "" if f.value is None else f"{f.value:.4f}",
                "" if f.threshold is None else f"{f.threshold:g}",
                "" if f.derived else _pct(f.presence_a),
                "" if f.derived else _pct(f.presence_b),
            )
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if f.drifted:
                    item.setForeground(Qt.GlobalColor.darkRed)
                self.table.setItem(i, j, item)
        n = len(c.drifted)
        self.status.setText(
            f"A {c.a}: {c.records_a:,} records · B {c.b}: {c.records_b:,} records · "
            f"{n} of {len(c.features)} shifted"
        )
        if c.features:
            self.table.selectRow(0)

    @Slot()
    def _on_row(self) -> None:
        row = self.table.currentRow()  # a single selection: the current row is the one selected
        if self.comparison is None or not 0 <= row < len(self.comparison.features):
            return
        self.show_feature(self.comparison.features[row])

    def show_feature(self, f: FeatureShift) -> None:
        """The two sides' shares of the feature's bars, A and B side by side."""
        import pyqtgraph as pg  # heavy: on first use only

        self.feature = f
        if self.plot is None:
            pg.setConfigOptions(antialias=True, background="w", foreground="k")
            self.plot = pg.PlotWidget(self.chart_box)
            self.plot.showGrid(y=True, alpha=0.3)
            self.plot.getAxis("left").enableAutoSIPrefix(False)
            self.plot.scene().sigMouseClicked.connect(self._on_click)
            self.plot.addLegend(offset=(-10, 10))
            self._chart_lay.addWidget(self.plot, 1)
        self.plot.clear()
        b = f.bars
        if b is None:
            self.chart_title.setText(
                f"{f.key}: no values to chart ({', '.join(shift_words(f, 'A', 'B')) or 'alike'})"
            )
            return
        ca, cb = np.asarray(b.counts_a, float), np.asarray(b.counts_b, float)
        sa, sb = ca / max(ca.sum(), 1.0), cb / max(cb.sum(), 1.0)
        x = np.arange(len(ca), dtype=float)
        names = self.comparison.a, self.comparison.b
        self.plot.addItem(
            pg.BarGraphItem(x=x - 0.2, height=sa, width=0.4, brush=COLOUR_A, pen="w", name=f"A {names[0]}")
        )
        self.plot.addItem(
            pg.BarGraphItem(x=x + 0.2, height=sb, width=0.4, brush=COLOUR_B, pen="w", name=f"B {names[1]}")
        )
        labels = list(b.names) if b.names else [f"≥{lo:.3g}" for lo in b.edges[:-1]]  # a bin by its low edge
        step = max(1, len(labels) // 12)
        self.plot.getAxis("bottom").setTicks(
            [[(float(i), labels[i][:16]) for i in range(0, len(labels), step)]]
        )
        self.plot.setLabel("left", "share of values")
        top = float(max(sa.max(initial=0.0), sb.max(initial=0.0))) or 1.0
        self.plot.setYRange(0.0, top * 1.3, padding=0)  # room above the bars for the legend
        more = (
            f" (the {len(labels)} of {b.categories:,} categories that differ most)"
            if b.categories > len(labels)
            else ""
        )
        measure = "" if f.measure is None else f" · {f.measure} {f.value:.4f} (threshold {f.threshold:g})"
        if not b.names:
            self.plot.setLabel("bottom", f"{f.key}: {len(labels)} equal bins over both sides' range")
        else:
            self.plot.setLabel("bottom", "")
        self.chart_title.setText(f"{f.key}{measure}{more} · click a bar to show its records")

    def _on_click(self, ev) -> None:
        if self.plot is None or self.feature is None or self.feature.bars is None:
            return
        at = self.plot.getPlotItem().vb.mapSceneToView(ev.scenePos())
        hit = self.bar_at(at.x())
        if hit is not None:
            self.bar_clicked.emit(*hit)

    def bar_at(self, x: float) -> tuple[str, int] | None:
        """The side and bar number under x: A's bar left of each bar's centre, B's right of it."""
        n = len(self.feature.bars.counts_a)
        i = round(x)
        if not 0 <= i < n or abs(x - i) > 0.4:
            return None
        return ("a" if x < i else "b"), i


def _pct(x: float | None) -> str:
    return "absent" if not x else f"{100 * x:.1f} %"
