"""The record table view: Home/End jump to the first/last record (not the first/last column), and
typing never searches the rows.

Qt's type-ahead (`keyboardSearch` -> `QAbstractItemModel.match`) walks every row through Python
`data()`: one key press took 112 s on 2 M records. Here digits jump to that record number (typed
one after another they build the number) and any other printable key goes to the filter box (but
the window's one-letter shortcuts, B for boxes and L for labels, keep their meaning).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QListView, QTableView

_NUMBER_PAUSE_MS = 1200  # a pause this long starts a new number


def _plain_text(event) -> str:
    """The printable text a key press types, or '' (shortcuts, navigation keys)."""
    mods = event.modifiers() & ~(Qt.KeyboardModifier.ShiftModifier | Qt.KeyboardModifier.KeypadModifier)
    text = event.text()
    return text if text and text.isprintable() and not mods else ""


class NoTypeAhead:
    """For any item view: never walk the model to find typed text."""

    def keyboardSearch(self, search: str) -> None:
        pass


def selected_rows(selection: QItemSelection) -> np.ndarray:
    """The rows a selection covers, sorted, once each: from its ranges (Ctrl+A on 2,000,000 rows is
    one range), never from `selectedRows()`, which makes an index object for every row."""
    parts = [np.arange(r.top(), r.bottom() + 1, dtype=np.int64) for r in selection if r.isValid()]
    return np.unique(np.concatenate(parts)) if parts else np.empty(0, dtype=np.int64)


class HeaderApart:
    """For a table view: its headers keep a selection model of their own, always empty. A header
    that shares the table's asks `isColumnSelected` for each section it paints (Qt's
    `initStyleOptionForIndex`, whether sections are highlighted or not), and Qt answers it by
    walking every row of the selection (an index, with rowCount and columnCount in Python, for each
    cell): after Ctrl+A on 2,000,000 records each repaint of the header froze the window for ~13 s.
    The rows' own highlight says what is selected; a click on a header still sorts."""

    def setSelectionModel(self, selection_model) -> None:
        super().setSelectionModel(selection_model)
        model = self.model()
        for header in (self.horizontalHeader(), self.verticalHeader()):
            header.setSelectionModel(QItemSelectionModel(model, header))


class RecordTableView(HeaderApart, NoTypeAhead, QTableView):
    go_to_typed = Signal(object)  # the record number typed so far (int; may exceed 2^31)
    text_typed = Signal(str)  # other printable text, for the filter box

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._digits = ""
        self._pause = QTimer(self)
        self._pause.setSingleShot(True)
        self._pause.setInterval(_NUMBER_PAUSE_MS)
        self._pause.timeout.connect(self._forget_number)

    def _forget_number(self) -> None:
        self._digits = ""

    def keyPressEvent(self, event) -> None:
        text = _plain_text(event)
        if text.isdigit() and len(text) == 1:
            self._digits = (self._digits + text)[-20:]
            self._pause.start()
            self.go_to_typed.emit(int(self._digits))
            event.accept()
            return
        if text and not text.isspace():
            self._forget_number()
            self.text_typed.emit(text)
            event.accept()
            return
        super().keyPressEvent(event)

    def moveCursor(self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier):
        model = self.model()
        if model is not None and model.rowCount():
            col = max(self.currentIndex().column(), 0)
            if action == QAbstractItemView.CursorAction.MoveHome:
                return model.index(0, col)
            if action == QAbstractItemView.CursorAction.MoveEnd:
                return model.index(model.rowCount() - 1, col)
        return super().moveCursor(action, modifiers)


class QuietTableView(HeaderApart, NoTypeAhead, QTableView):
    """A table view without type-ahead (the Problems panel can hold a row per record) whose
    headers never walk the selection (the Shards panel can hold 10,000 rows)."""


def plain_rows(view: QTableView) -> None:
    """How the panels' tables look: whole rows, one at a time, no row numbers or grid, one line."""
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.verticalHeader().setVisible(False)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
    view.setWordWrap(False)
    view.setShowGrid(False)


class QuietListView(NoTypeAhead, QListView):
    """A list view without type-ahead (the gallery has a row per record)."""


class GalleryView(QuietListView):
    """The gallery: one wheel notch scrolls one row of thumbnails (Qt's default scrolled three
    items' worth of its own steps, more than a screen of rows in icon mode)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self._wheel_rest = 0  # eighths of a degree not yet scrolled (fine-grained wheels send less)

    def row_height(self) -> int:
        grid = self.gridSize()
        return (
            grid.height() if grid.isValid() and grid.height() > 0 else self.sizeHintForRow(0) + self.spacing()
        )

    def wheelEvent(self, event) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier or event.angleDelta().y() == 0:
            super().wheelEvent(event)
            return
        bar = self.verticalScrollBar()
        pixels = event.pixelDelta().y()
        if pixels:  # a touchpad says how far it moved
            bar.setValue(bar.value() - pixels)
        else:
            self._wheel_rest += event.angleDelta().y()
            notches = int(self._wheel_rest / 120)
            self._wheel_rest -= notches * 120
            bar.setValue(bar.value() - notches * self.row_height())
        event.accept()
