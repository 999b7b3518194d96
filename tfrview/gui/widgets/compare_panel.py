"""The Compare view: pick two splits of the dataset (or this dataset and another folder), see per
feature the measures (drifted first) and, for the selected feature, the two sides' shares as bars
side by side; a click on a bar asks for that side's records behind it. A thin widget: what the
rows and bars say is `analysis.compare`'s `Comparison`, drawn as it is; pyqtgraph is imported
with the first chart."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

if TYPE_CHECKING:
    from tfrview.core.analysis.compare import Comparison, FeatureShift


def shift_words(f: FeatureShift, a: str, b: str) -> list[str]:
    """`analysis.compare.shift_words`, its module loaded with the first comparison shown (not
    with the window: ~30 ms of the first rows)."""
    from tfrview.core.analysis.compare import shift_words as words

    return words(f, a, b)


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
        self.chart_title.setWordWrap(True)
        self._chart_lay.addWidget(self.chart_title)
        self.legend = QLabel("", self.chart_box)  # above the plot: never over a bar
        self.legend.setTextFormat(Qt.TextFormat.RichText)
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
        """The two sides' shares of the feature's bars, A and B side by side, one row a category
        (or bin), its name to the left: names of any length stay readable, however many bars (a
        scroll past 12 or so), and the legend sits above the plot, never over a bar."""
        import pyqtgraph as pg  # heavy: on first use only

        self.feature = f
        if self.plot is None:
            pg.setConfigOptions(antialias=True, background="w", foreground="k")
            self.scroll = QScrollArea(self.chart_box)
            self.scroll.setWidgetResizable(True)
            self.scroll.setFrameShape(QFrame.Shape.NoFrame)
            self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            self.plot = pg.PlotWidget()
            self.plot.showGrid(x=True, alpha=0.3)
            self.plot.setMouseEnabled(x=False, y=False)  # a wheel scrolls the rows, never zooms
            self.plot.setMenuEnabled(False)
            self.plot.hideButtons()
            self.plot.getPlotItem().vb.invertY(True)  # the first bar (the largest difference) on top
            self.plot.getAxis("bottom").enableAutoSIPrefix(False)
            self.plot.scene().sigMouseClicked.connect(self._on_click)
            self.scroll.setWidget(self.plot)
            self._chart_lay.addWidget(self.legend)
            self._chart_lay.addWidget(self.scroll, 1)
        self.plot.clear()
        b = f.bars
        if b is None:
            self.legend.setText("")
            self.chart_title.setText(
                f"{f.key}: no values to chart ({', '.join(shift_words(f, 'A', 'B')) or 'alike'})"
            )
            return
        ca, cb = np.asarray(b.counts_a, float), np.asarray(b.counts_b, float)
        sa, sb = ca / max(ca.sum(), 1.0), cb / max(cb.sum(), 1.0)
        y = np.arange(len(ca), dtype=float)
        names = self.comparison.a, self.comparison.b
        self.plot.addItem(pg.BarGraphItem(x0=0.0, y=y - 0.2, height=0.4, width=sa, brush=COLOUR_A, pen="w"))
        self.plot.addItem(pg.BarGraphItem(x0=0.0, y=y + 0.2, height=0.4, width=sb, brush=COLOUR_B, pen="w"))
        self.legend.setText(
            f"<span style='color:{COLOUR_A}'>■</span> A {escape(names[0])} &nbsp; "
            f"<span style='color:{COLOUR_B}'>■</span> B {escape(names[1])}"
        )
        labels = bar_labels(b.names, b.edges)
        metrics = self.fontMetrics()
        shown = [metrics.elidedText(t, Qt.TextElideMode.ElideMiddle, LABEL_PX) for t in labels]
        left = self.plot.getAxis("left")
        left.setTicks([[(float(i), t) for i, t in enumerate(shown)]])
        left.setWidth(max((metrics.horizontalAdvance(t) for t in shown), default=20) + 12)  # cut to fit
        self.plot.setLabel("bottom", "share of values")
        top = float(max(sa.max(initial=0.0), sb.max(initial=0.0))) or 1.0
        self.plot.setXRange(0.0, top * 1.05, padding=0)
        self.plot.setYRange(-0.6, len(labels) - 0.4, padding=0)
        self.plot.setMinimumHeight(ROW_PX * len(labels) + 60)  # past the dock's height: it scrolls
        more = (
            f" (the {len(labels)} of {b.categories:,} categories that differ most)"
            if b.categories > len(labels)
            else ""
        )
        bins = "" if b.names else f" · {len(labels)} equal bins over both sides' range"
        measure = "" if f.measure is None else f" · {f.measure} {f.value:.4f} (threshold {f.threshold:g})"
        self.chart_title.setText(f"{f.key}{measure}{more}{bins} · click a bar to show its records")
        self.chart_title.setToolTip(self.chart_title.text())

    def _on_click(self, ev) -> None:
        if self.plot is None or self.feature is None or self.feature.bars is None:
            return
        at = self.plot.getPlotItem().vb.mapSceneToView(ev.scenePos())
        if at.x() < 0:
            return  # on the names, not a bar
        hit = self.bar_at(at.y())
        if hit is not None:
            self.bar_clicked.emit(*hit)

    def bar_at(self, y: float) -> tuple[str, int] | None:
        """The side and bar number at height y: A's bar above each row's centre, B's below it."""
        n = len(self.feature.bars.counts_a)
        i = round(y)
        if not 0 <= i < n or abs(y - i) > 0.4:
            return None
        return ("a" if y < i else "b"), i


LABEL_PX = 220  # a bar's name is cut in the middle past this width
ROW_PX = 24  # the height of one category's pair of bars


def bar_labels(names, edges) -> list[str]:
    """Each bar's name: its category, or a bin by its low edge."""
    return [str(n) for n in names] if names else [f"≥{lo:.3g}" for lo in list(edges)[:-1]]


def _pct(x: float | None) -> str:
    return "absent" if not x else f"{100 * x:.1f} %"
