"""The record table view: Home/End jump to the first/last record (not the first/last column)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QTableView


class RecordTableView(QTableView):
    def moveCursor(self, action: QAbstractItemView.CursorAction, modifiers: Qt.KeyboardModifier):
        model = self.model()
        if model is not None and model.rowCount():
            col = max(self.currentIndex().column(), 0)
            if action == QAbstractItemView.CursorAction.MoveHome:
                return model.index(0, col)
            if action == QAbstractItemView.CursorAction.MoveEnd:
                return model.index(model.rowCount() - 1, col)
        return super().moveCursor(action, modifiers)
