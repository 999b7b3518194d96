"""The Evaluation view: predictions against the ground truth, as the evaluation job measured them
(`analysis.evaluation.summary`'s plain data): the IoU and score thresholds, mAP, the confusion
matrix with its background row and column (a click on a cell asks for its records), and the
per-class table. A thin widget: the matrix is painted by the pure `paint_matrix` over the cells
`matrix_cells` lays out; what it shows is the summary as it came."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal, Slot
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

COLUMNS = ("class", "boxes", "TP", "FP", "FN", "precision", "recall", "AP@0.5", "AP@[.5:.95]")
FIELDS = ("class", "boxes", "tp", "fp", "fn", "precision", "recall", "ap50", "ap")


@dataclass(frozen=True)
class Room:
    """The matrix's drawing sizes in pixels (layout, not a bound on what is read)."""

    cell: float = 34.0  # a cell's side at least (a matrix of many classes scrolls)
    row_labels: float = 110.0  # room for the truth classes' names on the left
    column_labels: float = 90.0  # room for the predicted classes' names on top (turned)


ROOM = Room()


@dataclass(frozen=True)
class MatrixCells:
    """Where the matrix's cells are: a cell (i, j) at left + j * side, top + i * side."""

    left: float
    top: float
    side: float
    n: int

    def rect(self, i: int, j: int) -> QRectF:
        return QRectF(self.left + j * self.side, self.top + i * self.side, self.side, self.side)

    def at(self, x: float, y: float) -> tuple[int, int] | None:
        """The (row, column) under a point, or None outside the cells."""
        j = math.floor((x - self.left) / self.side) if self.side else -1
        i = math.floor((y - self.top) / self.side) if self.side else -1
        return (i, j) if 0 <= i < self.n and 0 <= j < self.n else None


def matrix_cells(width: float, height: float, n: int) -> MatrixCells:
    """The cells of an n x n matrix in a width x height widget, square, at least ROOM.cell wide."""
    room = min(width - ROOM.row_labels - 8, height - ROOM.column_labels - 8)
    side = max(ROOM.cell, room / max(n, 1))
    return MatrixCells(ROOM.row_labels, ROOM.column_labels, side, n)


def matrix_size(n: int) -> QSize:
    """The least size of the matrix widget (it scrolls when the dock is smaller)."""
    return QSize(int(ROOM.row_labels + n * ROOM.cell + 8), int(ROOM.column_labels + n * ROOM.cell + 8))


def cell_colour(count: int, row_total: int, diagonal: bool) -> QColor:
    """A cell's colour: its share of its truth row, green on the diagonal (right), red off it."""
    share = count / row_total if row_total else 0.0
    if count == 0:
        return QColor(250, 250, 250)
    base = (34, 197, 94) if diagonal else (239, 68, 68)
    a = 0.15 + 0.85 * share
    return QColor(*(round(255 - (255 - c) * a) for c in base))


def paint_matrix(
    p: QPainter,
    cells: MatrixCells,
    labels: list[str],
    matrix: np.ndarray,
    selected: tuple[int, int] | None = None,
) -> None:
    """The matrix: rows the ground truth's classes, columns the predicted ones, the last of each
    the background (a prediction of no box: false positive; a box of no prediction: missed)."""
    n = cells.n
    font = QFont(p.font())
    font.setPointSizeF(8.5)
    p.setFont(font)
    fm = QFontMetricsF(font)
    totals = matrix.sum(axis=1) if n else np.zeros(0)
    for i in range(n):
        for j in range(n):
            r = cells.rect(i, j)
            count = int(matrix[i, j])
            back = i == n - 1 and j == n - 1
            c = QColor(230, 230, 230) if back else cell_colour(count, int(totals[i]), i == j)
            p.fillRect(r, c)
            p.setPen(QColor(200, 200, 200))
            p.drawRect(r)
            if count and not back:
                p.setPen(QColor("black") if c.lightnessF() > 0.5 else QColor("white"))
                p.drawText(
                    r,
                    Qt.AlignmentFlag.AlignCenter,
                    f"{count:,}" if count < 10_000 else f"{count / 1000:.0f}k",
                )
    if selected is not None and 0 <= selected[0] < n and 0 <= selected[1] < n:
        p.setPen(QColor(20, 20, 20))
        p.drawRect(cells.rect(*selected).adjusted(1, 1, -1, -1))
    p.setPen(QColor(40, 40, 40))
    for i, name in enumerate(labels[:n]):
        r = cells.rect(i, 0)
        text = fm.elidedText(name, Qt.TextElideMode.ElideRight, ROOM.row_labels - 8)
        p.drawText(
            QRectF(0, r.top(), ROOM.row_labels - 6, r.height()),
            Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
            text,
        )
        c = cells.rect(0, i)
        p.save()
        p.translate(QPointF(c.center().x() + fm.ascent() / 2 - 2, cells.top - 6))
        p.rotate(-90)
        p.drawText(QPointF(0, 0), fm.elidedText(name, Qt.TextElideMode.ElideRight, ROOM.column_labels - 20))
        p.restore()
    p.setPen(QColor(90, 90, 90))
    p.drawText(
        QRectF(0, 0, ROOM.row_labels, ROOM.column_labels - 4),
        Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignBottom,
        "truth ↓ predicted →",
    )


class MatrixView(QWidget):
    """The confusion matrix; a click on a cell says its (row, column)."""

    cell_clicked = Signal(int, int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.labels: list[str] = []
        self.matrix = np.zeros((0, 0), dtype=np.int64)
        self.selected: tuple[int, int] | None = None
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_matrix(self, labels: list[str], matrix: np.ndarray) -> None:
        self.labels, self.matrix = list(labels), np.asarray(matrix, dtype=np.int64)
        self.selected = None
        self.setMinimumSize(matrix_size(len(self.labels)))
        self.update()

    @property
    def cells(self) -> MatrixCells:
        return matrix_cells(self.width(), self.height(), len(self.labels))

    def cell_center(self, i: int, j: int) -> QPointF:
        return self.cells.rect(i, j).center()

    def paintEvent(self, _event) -> None:
        p = QPainter(self)
        try:
            p.fillRect(self.rect(), QColor(255, 255, 255))
            if len(self.labels):
                paint_matrix(p, self.cells, self.labels, self.matrix, self.selected)
        finally:
            p.end()

    def mouseMoveEvent(self, event) -> None:
        at = self.cells.at(event.position().x(), event.position().y())
        if at is None:
            self.setToolTip("")
            return
        i, j = at
        n = int(self.matrix[i, j])
        self.setToolTip(
            f"{n:,} boxes: truth {self.labels[i]}, predicted {self.labels[j]} (a click shows them)"
        )

    def mousePressEvent(self, event) -> None:
        at = self.cells.at(event.position().x(), event.position().y())
        if at is not None and event.button() == Qt.MouseButton.LeftButton:
            self.selected = at
            self.update()
            self.cell_clicked.emit(*at)


class EvaluationPanel(QWidget):
    thresholds_changed = Signal(float, float)  # IoU, score
    cell_clicked = Signal(int, int)  # the matrix's row (truth) and column (predicted)
    curves_asked = Signal()  # the PR curves in the Plot panel
    details_asked = Signal()  # the join's details (predictions loaded from a file)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.iou = QDoubleSpinBox(self)
        self.iou.setRange(0.05, 0.95)
        self.iou.setSingleStep(0.05)
        self.iou.setDecimals(2)
        self.iou.setValue(0.5)
        self.iou.setToolTip("IoU a prediction needs with a box of its class to match it")
        self.score = QDoubleSpinBox(self)
        self.score.setRange(0.0, 1.0)
        self.score.setSingleStep(0.05)
        self.score.setDecimals(2)
        self.score.setValue(0.5)
        self.score.setToolTip("Score under which predictions are left out of the matrix and the counts")
        for box in (self.iou, self.score):
            box.valueChanged.connect(self._on_threshold)
        self.status = QLabel(
            "load predictions (File › Load Predictions…) or open records that hold detections", self
        )
        self.status.setTextFormat(Qt.TextFormat.RichText)
        self.curves = QPushButton("PR curves", self)
        self.curves.setToolTip("Precision against recall of each class, in the Plot panel")
        self.curves.clicked.connect(self.curves_asked)
        self.curves.setEnabled(False)
        self.details = QPushButton("Join details…", self)
        self.details.setToolTip("How the predictions file joined the records, and why some did not")
        self.details.clicked.connect(self.details_asked)
        self.details.setVisible(False)
        bar.addWidget(QLabel("IoU ≥", self))
        bar.addWidget(self.iou)
        bar.addWidget(QLabel("score ≥", self))
        bar.addWidget(self.score)
        bar.addWidget(self.status, 1)
        bar.addWidget(self.details)
        bar.addWidget(self.curves)
        lay.addLayout(bar)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        self.matrix = MatrixView(self)
        self.matrix.cell_clicked.connect(self.cell_clicked)
        scroll = QScrollArea(self)
        scroll.setWidget(self.matrix)
        scroll.setWidgetResizable(True)
        split.addWidget(scroll)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        for j, w in enumerate((130, 60, 55, 55, 55, 70, 60, 65, 85)):  # fixed: never sized to contents
            self.table.setColumnWidth(j, w)
        split.addWidget(self.table)
        split.setSizes([460, 640])
        lay.addWidget(split, 1)
        self.summary: dict | None = None

    def sizeHint(self) -> QSize:
        return QSize(1100, 380)

    @Slot(float)
    def _on_threshold(self, _v: float) -> None:
        self.thresholds_changed.emit(self.iou.value(), self.score.value())

    def set_thresholds(self, iou: float, score: float) -> None:
        """Show these thresholds without asking again (another control moved them)."""
        for box, v in ((self.iou, iou), (self.score, score)):
            box.blockSignals(True)
            box.setValue(v)
            box.blockSignals(False)

    def show_running(self, what: str) -> None:
        self.status.setText(f"measuring {what}…")

    def show_error(self, text: str) -> None:
        self.status.setText(f"<span style='color:#b00020'>{text}</span>")

    def show_summary(self, s: dict) -> None:
        """The evaluation's plain data: thresholds, mAP, the classes' rows and the matrix."""
        self.summary = s
        conf = s.get("confusion") or {}
        labels = list(conf.get("labels") or [])
        matrix = np.asarray(conf.get("matrix") or np.zeros((0, 0)), dtype=np.int64).reshape(
            len(labels), len(labels)
        )
        self.matrix.set_matrix(labels, matrix)
        rows = s.get("classes") or []
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, f in enumerate(FIELDS):
                v = row.get(f)
                text = (
                    "–"
                    if v is None
                    else (f"{v:.3f}" if isinstance(v, float) else f"{v:,}" if isinstance(v, int) else str(v))
                )
                item = QTableWidgetItem(text)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(i, j, item)
        self.curves.setEnabled(bool(rows))
        self.status.setText(status_words(s))


def status_words(s: dict) -> str:
    """The line above the matrix: mAP, and what was measured."""

    def num(v) -> str:
        return "–" if v is None else f"{v:.3f}"

    return (
        f"<b>mAP@[.5:.95] {num(s.get('map'))}</b> · mAP@0.5 {num(s.get('map50'))} · "
        f"{s.get('images', 0):,} images, {s.get('boxes', 0):,} boxes, {s.get('predictions', 0):,} predictions "
        f"({s.get('source', '')})"
    )
