"""The dataset summary: the schema inferred over every record, and the label distribution as bars."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetricsF, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from tfrview.core.records.feature import TYPE_SHORT
from tfrview.gui.painting import class_color

COLUMNS = ["key", "type", "present", "values/record", "min", "max", "mean", "NaN", "most frequent"]


def bar_at(y: float, top: float, font_height: float, bars: int) -> int | None:
    """Which bar of `render_bars` a point at height y is on (the title is the first line)."""
    line = font_height + 6
    i = int((y - top - line) // line)
    return i if 0 <= i < bars and y >= top + line else None


def render_bars(
    p: QPainter,
    rect: QRectF,
    title: str,
    counts: list[tuple[str, int]],
    max_bars: int = 30,
    colour_keys: dict[str, str] | None = None,
) -> None:
    """A horizontal bar per label, longest first, in the class colours the image view uses (a
    class's boxes are coloured by its id: `colour_keys` maps its name to that)."""
    fm = QFontMetricsF(p.font())
    line = fm.height() + 6
    p.setPen(QColor(30, 30, 30))
    p.drawText(QRectF(rect.left(), rect.top(), rect.width(), line), Qt.AlignmentFlag.AlignLeft, title)
    shown = counts[:max_bars]
    if not shown:
        p.drawText(
            QRectF(rect.left(), rect.top() + line, rect.width(), line),
            Qt.AlignmentFlag.AlignLeft,
            "(no labels found)",
        )
        return
    label_w = min(max(fm.horizontalAdvance(str(k)) for k, _ in shown) + 12, rect.width() * 0.4)
    count_w = fm.horizontalAdvance(f"{max(c for _, c in shown):,}") + 10
    bar_w = max(rect.width() - label_w - count_w, 10)
    top = max(c for _, c in shown)
    y = rect.top() + line
    for k, c in shown:
        r = QRectF(rect.left(), y, label_w - 6, line - 4)
        p.setPen(QColor(30, 30, 30))
        p.drawText(
            r,
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            fm.elidedText(str(k), Qt.TextElideMode.ElideRight, label_w - 8),
        )
        w = bar_w * c / top
        p.fillRect(
            QRectF(rect.left() + label_w, y + 1, max(w, 1), line - 6),
            class_color((colour_keys or {}).get(str(k), str(k))),
        )
        p.drawText(
            QRectF(rect.left() + label_w + w + 4, y, count_w, line - 4),
            Qt.AlignmentFlag.AlignVCenter,
            f"{c:,}",
        )
        y += line
    if len(counts) > max_bars:
        p.drawText(
            QRectF(rect.left(), y, rect.width(), line),
            Qt.AlignmentFlag.AlignLeft,
            f"… {len(counts) - max_bars} more",
        )


class BarChart(QWidget):
    class_clicked = Signal(str)  # the label of the clicked bar: the table filters to it

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.title = ""
        self.counts: list[tuple[str, int]] = []
        self.colour_keys: dict[str, str] = {}
        self.setMinimumWidth(220)
        self.setToolTip("Click a bar to filter the table to its records")

    def mousePressEvent(self, event) -> None:
        i = bar_at(event.position().y(), 6, QFontMetricsF(self.font()).height(), min(len(self.counts), 30))
        if i is not None:
            self.class_clicked.emit(str(self.counts[i][0]))

    def set_data(
        self, title: str, counts: list[tuple[str, int]], colour_keys: dict[str, str] | None = None
    ) -> None:
        self.title, self.counts, self.colour_keys = title, counts, colour_keys or {}
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(320, int((min(len(self.counts), 30) + 2) * (self.fontMetrics().height() + 6)))

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.fillRect(self.rect(), QColor(250, 250, 250))
        render_bars(
            p,
            QRectF(self.rect()).adjusted(8, 6, -8, -6),
            self.title,
            self.counts,
            colour_keys=self.colour_keys,
        )
        p.end()


def _num(x: float) -> str:
    return f"{x:.4g}"


class SummaryPanel(QWidget):
    split_chosen = Signal(object)  # the split whose summary to show (None: the whole dataset)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.status = QLabel("The summary is computed after the QA checks.", self)
        self.status.setContentsMargins(6, 4, 6, 4)
        self.split_box = QComboBox(self)  # the whole dataset, or one split (shown when it has splits)
        self.split_box.setObjectName("summary_split")
        self.split_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.split_box.addItem("All splits", None)
        self.split_box.setVisible(False)
        self.split_box.currentIndexChanged.connect(
            lambda _i: self.split_chosen.emit(self.split_box.currentData())
        )
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        for i, w in enumerate((220, 56, 70, 90, 70, 70, 70, 50)):
            self.table.setColumnWidth(i, w)
        self.chart = BarChart(self)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(self.table)
        split.addWidget(self.chart)
        split.setSizes([800, 320])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 6, 0)
        top.addWidget(self.status, 1)
        top.addWidget(self.split_box)
        lay.addLayout(top)
        lay.addWidget(split, 1)

    def set_splits(self, names: list[str]) -> None:
        """The splits whose summaries can be shown (none: the chooser hides), keeping the one
        chosen while it is still there."""
        keep = self.split_box.currentData()
        self.split_box.blockSignals(True)
        self.split_box.clear()
        self.split_box.addItem("All splits", None)
        for name in names:
            self.split_box.addItem(f"Split: {name or '(none)'}", name)
        at = self.split_box.findData(keep) if keep is not None else 0
        self.split_box.setCurrentIndex(max(at, 0))
        self.split_box.blockSignals(False)
        self.split_box.setVisible(bool(names))

    @property
    def shown_split(self) -> str | None:
        return self.split_box.currentData()

    def show_summary(self, s: dict, partial: bool) -> None:
        records = s["records"]
        kinds = ", ".join(
            f"{k.replace('_', ' ')} {v:,}" for k, v in sorted(s["kinds"].items(), key=lambda kv: -kv[1])
        )
        split = self.shown_split
        of = "" if split is None else f"split {split or '(none)'}: "
        self.status.setText(
            f"{'so far: ' if partial else ''}{of}{records:,} intact records ({kinds}), {len(s['keys'])} feature keys"
        )
        self.table.setRowCount(len(s["keys"]))
        for r, (key, k) in enumerate(s["keys"].items()):
            types = "/".join(TYPE_SHORT.get(t, t) for t in k["types"])
            lo, hi = k["values_per_record"]
            cells = [
                key,
                types,
                f"{100 * k['presence']:.0f}%",
                f"{lo}" if lo == hi else f"{lo}–{hi}",
                _num(k["min"]) if "min" in k else "",
                _num(k["max"]) if "max" in k else "",
                _num(k["mean"]) if "mean" in k else "",
                str(k["nan"]) if k["nan"] else "",
                ", ".join(f"{v} ×{c:,}" for v, c in k["top"]),
            ]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if c in (2, 3, 4, 5, 6, 7):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if c == 2 and k["presence"] < 1:
                    item.setForeground(QColor(150, 90, 0))
                if c == 7 and k["nan"]:
                    item.setForeground(QColor(176, 0, 32))
                item.setToolTip(text)
                self.table.setItem(r, c, item)
        self.chart.set_data(
            s["classes"]["title"],
            [(str(k), int(v)) for k, v in s["classes"]["counts"]],
            s["classes"].get("colour_keys"),
        )

    def show_progress(self, text: str) -> None:
        self.status.setText(text)
