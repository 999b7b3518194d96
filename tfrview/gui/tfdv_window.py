"""A TFDV file (TFX's FeatureStats.pb, schema.pbtxt, SchemaDiff.pb / anomalies) in a window of its
own, as a read-only table: the rows `core.tfdv.files.table` makes, a line saying what the file
holds above them. A thin view: the core reads the file and makes every cell's value."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtWidgets import QLabel, QMainWindow, QVBoxLayout, QWidget

from tfrview.core.tfdv.files import Table
from tfrview.gui.widgets.record_table_view import QuietTableView, plain_rows

# a column's width in characters, by its name (numbers: 7)
_CHARS = {
    "top values": 40,
    "description": 40,
    "domain": 40,
    "kind": 36,
    "presence": 26,
    "short description": 26,
    "feature": 20,
}


class TfdvTableModel(QAbstractTableModel):
    """The table's rows as they are (numbers right-aligned); a cell's whole text as its tooltip."""

    def __init__(self, table: Table, parent=None) -> None:
        super().__init__(parent)
        self.table = table

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 (Qt's signature)
        return 0 if parent.isValid() else len(self.table.rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.table.columns)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        value = self.table.rows[index.row()][index.column()]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return (
                f"{value:,}"
                if isinstance(value, int)
                else f"{value:g}"
                if isinstance(value, float)
                else value
            )
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, (int, float)):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section: int, orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self.table.columns[section]
        return None


class TfdvWindow(QMainWindow):
    """One TFDV file's table. `open_requested` and `demo` as the dataset window has them, so the
    app keeps and replaces it the same way."""

    open_requested = Signal(list)
    demo = False

    def __init__(self, path: Path, table: Table, parent=None) -> None:
        super().__init__(parent)
        self.path, self.table = path, table
        self.setWindowTitle(f"{path.name} — {table.kind.title} — tfrview")
        body = QWidget(self)
        lay = QVBoxLayout(body)
        self.summary = QLabel(f"{table.kind.title}: {table.summary}  ·  {path}", body)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(self.summary)
        self.view = QuietTableView(body)
        self.model = TfdvTableModel(table, self.view)
        self.view.setModel(self.model)
        plain_rows(self.view)
        self.view.setShowGrid(True)
        self.view.setAlternatingRowColors(True)
        header = self.view.horizontalHeader()
        width = self.fontMetrics().horizontalAdvance("0")
        for i, name in enumerate(table.columns):  # from the column's words, never by walking the rows
            wide = _CHARS.get(name, 7)
            header.resizeSection(i, (max(len(name), wide) + 2) * width)
        header.setStretchLastSection(True)
        lay.addWidget(self.view)
        self.setCentralWidget(body)
        self.resize(1400, 700)
