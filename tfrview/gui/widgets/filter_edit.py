"""The filter box: completes the word being typed from the dataset's feature keys and the
language's own words (`image/wi` offers `image/width`; `width` offers it too, keys match anywhere).

Completion filters the list in Qt (QCompleter over a QStringListModel), never in Python per key
press, so a schema of 10,000 keys types as fast as one of ten.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QEvent, QStringListModel, Qt
from PySide6.QtWidgets import QCompleter, QLineEdit

from tfrview.core.analysis.stepcolumns import NAMES as STEP_COLUMNS

_WORD_BEFORE_CURSOR = re.compile(r'"?([A-Za-z_][\w/.\-]*)$')
_LANGUAGE = ("and", "or", "not", "contains", "len(", "any(", "all(")


class FilterEdit(QLineEdit):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._words = QStringListModel(self)
        self.completer_ = QCompleter(self._words, self)
        self.completer_.setWidget(self)
        self.completer_.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.completer_.setFilterMode(Qt.MatchFlag.MatchContains)
        self.completer_.setCompletionMode(QCompleter.CompletionMode.PopupCompletion)
        self.completer_.setMaxVisibleItems(12)
        self.completer_.activated.connect(self._insert)
        self.textEdited.connect(self._complete)
        self.completer_.popup().installEventFilter(self)  # after the completer's own: runs first
        # the clear button shows only over text: switched on with the first text, its icon is no
        # part of the window's start (~7 ms)
        self.textChanged.connect(self._with_clear_button, Qt.ConnectionType.SingleShotConnection)
        self.set_keys(())

    def _with_clear_button(self, _text: str = "") -> None:
        self.setClearButtonEnabled(True)

    def set_keys(self, keys) -> None:
        """The feature keys to offer (the facts, the image scores and the dataset step's columns
        of the analysis, and the words of the language are always offered). The list is made
        when the first word is typed: the filter's and the image scores' modules load then, not
        with the window (~10-20 ms of its start)."""
        self._keys: list[str] | None = sorted(keys)

    def _offered(self) -> None:
        """The completer's words, made once for the keys last set."""
        if self._keys is None:
            return
        from tfrview.core.analysis.filterexpr import FACTS
        from tfrview.core.records.imagesignals import SCORE_COLUMNS

        computed = sorted(set(SCORE_COLUMNS) | set(STEP_COLUMNS))
        self._words.setStringList(self._keys + sorted(FACTS) + computed + list(_LANGUAGE))
        self._keys = None

    def word_at_cursor(self) -> str:
        m = _WORD_BEFORE_CURSOR.search(self.text()[: self.cursorPosition()])
        return m.group(1) if m else ""

    def _complete(self, _text: str) -> None:
        word = self.word_at_cursor()
        popup = self.completer_.popup()
        self._offered()
        if not word:
            popup.hide()
            return
        self.completer_.setCompletionPrefix(word)
        only = self.completer_.completionCount() == 1 and self.completer_.currentCompletion() == word
        if self.completer_.completionCount() == 0 or only:
            popup.hide()
            return
        rect = self.cursorRect()
        rect.setWidth(max(320, popup.sizeHintForColumn(0) + 30))
        self.completer_.complete(rect)
        popup.setCurrentIndex(popup.model().index(-1, 0))  # Enter still applies the filter as typed

    def _insert(self, word: str) -> None:
        """Replace the word being typed with the chosen one."""
        typed = self.word_at_cursor()
        pos = self.cursorPosition()
        start = pos - len(typed)
        self.setText(self.text()[:start] + word + self.text()[pos:])
        self.setCursorPosition(start + len(word))

    def eventFilter(self, watched, event) -> bool:
        """Enter or Tab on a chosen word completes it, and that is all: the completer would also
        hand the key on to this box, applying a filter the person has not finished."""
        popup = self.completer_.popup()
        keys = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab)
        if watched is popup and event.type() == QEvent.Type.KeyPress and event.key() in keys:
            current = popup.currentIndex()
            if current.isValid():
                popup.hide()
                self._insert(current.data())
                return True
        return super().eventFilter(watched, event)
