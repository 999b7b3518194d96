"""The person's tags in the window: D drop, K keep, R review, N a note, Backspace clears; on the
selected rows of the record table, the gallery's current record, the Problems panel's selected
problem or group, the Duplicates view's selected group, or (Edit › Tag › Filter Result) every
record the filter matched. Ctrl+Z / Ctrl+Shift+Z undo and redo, a bulk tag one step.

State is a plain object (`TagBook`: the store, each file's tags as arrays, the undo history); the
controller is the Qt around it. Each action is one SQLite transaction in the window's process: a
selection's records cost one 4-byte read each (their stored data CRC) and the store's write
(~10 us a record), so a few thousand are milliseconds; a filter result of a million records is
~10 s here, and the window says so before it starts."""

from __future__ import annotations

import logging

import numpy as np
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QInputDialog, QMessageBox, QWidget

from tfrview.core.errors import TfrviewError, one_line
from tfrview.core.tags import FileKey, FileTags, Marks, TagError, TagStore, TagWord, file_key, stored_crcs
from tfrview.core.tags.history import TagHistory
from tfrview.core.tags.words import word_of_code
from tfrview.core.tfrecord.dataset import Dataset

log = logging.getLogger(__name__)

ASK_ABOVE = 200_000  # records tagged at once past which the window asks first (seconds of work)


class TagBook:
    """The window's tags as data, no Qt: the store, each file's tags for its content as it is now
    (`FileTags`, loaded on first ask), and the undo history."""

    def __init__(self, ds: Dataset, store: TagStore) -> None:
        self.ds = ds
        self.store = store
        self.history = TagHistory(store)
        self._files: dict[int, FileTags] = {}
        self._keys: dict[int, FileKey | None] = {}
        self.stale = 0  # tags of files whose content changed, no longer matching: not applied

    def key(self, fi: int) -> FileKey | None:
        if fi not in self._keys:
            self._keys[fi] = file_key(self.ds.files[fi].path)
        return self._keys[fi]

    def file_tags(self, fi: int) -> FileTags:
        ft = self._files.get(fi)
        if ft is None:
            f = self.ds.files[fi]
            key = self.key(fi)
            if key is None or f.source is None:
                ft = FileTags(key, np.empty(0, np.int64), np.empty(0, np.int8), {})
            else:
                ft = self.store.file_tags(f.path, key, f.source.read)
                self.stale += ft.stale
            self._files[fi] = ft
        return ft

    def _offset(self, fi: int, k: int) -> int | None:
        idx = self.ds.files[fi].index
        return int(idx.offsets[k]) if idx is not None and 0 <= k < idx.count else None

    def word_at(self, fi: int, k: int) -> TagWord | None:
        """The tag of record k of file fi (None: none)."""
        ft = self.file_tags(fi)
        if not len(ft):
            return None
        o = self._offset(fi, k)
        if o is None:
            return None
        i = int(np.searchsorted(ft.offsets, o))
        return word_of_code(int(ft.codes[i])) if i < len(ft.offsets) and ft.offsets[i] == o else None

    def note_at(self, fi: int, k: int) -> str:
        ft = self.file_tags(fi)
        o = self._offset(fi, k) if ft.notes else None
        return ft.notes.get(o, "") if o is not None else ""

    def marks(self, numbers: np.ndarray, starts: np.ndarray) -> tuple[list[Marks], int]:
        """The records (global numbers over files that start at `starts`) as the store's marks, file
        by file, and how many could not be tagged (a file that is no local file)."""
        numbers = np.unique(np.asarray(numbers, dtype=np.int64))
        fis = np.searchsorted(starts, numbers, side="right") - 1
        out: list[Marks] = []
        left_out = 0
        for fi in np.unique(fis).tolist():
            ks = numbers[fis == fi] - int(starts[fi])
            f = self.ds.files[fi]
            key = self.key(fi)
            if key is None or f.source is None or f.index is None:
                left_out += len(ks)
                continue
            ks = ks[ks < f.index.count]
            offs = np.asarray(f.index.offsets[ks], dtype=np.int64)
            lens = np.asarray(f.index.lengths[ks], dtype=np.int64)
            out.append(Marks(key, str(f.path), offs, lens, stored_crcs(f.source.read, offs, lens)))
        return out, left_out

    def act(self, marks: list[Marks], word: TagWord | None, note: str | None = None):
        """Tag (`word`), clear (None) or annotate (`note` alone) the marked records: one step."""
        if word is not None:
            change = self.store.tag(marks, word, note)
        elif note is not None:
            change = self.store.annotate(marks, note)
        else:
            change = self.store.clear(marks)
        self.history.did(change)
        self.reload()
        return change

    def undo(self):
        change = self.history.undo()
        self.reload()
        return change

    def redo(self):
        change = self.history.redo()
        self.reload()
        return change

    def reload(self) -> None:
        """Read each file's tags again when next asked (after a write: several files may share a
        content, and so their tags)."""
        self._files.clear()
        self.stale = 0

    def forget(self, fi: int) -> None:
        """File fi was framed again (or changed): its key and tags are read again."""
        self._keys.pop(fi, None)
        self._files.pop(fi, None)


class TagsController(QObject):
    """The Qt around a `TagBook`: which records an action means, the dialogs, the repaint."""

    changed = Signal()  # tags were set, cleared, undone or redone: repaint what shows them
    said = Signal(str)  # a line for the status bar

    def __init__(self, window, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.w = window
        self.book: TagBook | None = None
        self.unavailable = ""  # why there are no tags (a store that cannot be opened), said once
        # whether this window has said yet that letters tag and / filters
        self._letters_said = False

    def start(self) -> None:
        """Open the store and show the tags (at the window's start; a damaged store kept aside is
        said in the status bar)."""
        try:
            store = TagStore.open()
        except TagError as exc:
            self.unavailable = one_line(exc)
            self.said.emit(f"tags are off: {self.unavailable}")
            log.warning("tags are off: %s", self.unavailable)
            return
        self.book = TagBook(self.w.ds, store)
        self.w.model.tags = self.book
        if store.note:
            self.said.emit(store.note)
        self.changed.emit()

    def close(self) -> None:
        if self.book is not None:
            self.book.store.close()
            self.book = None
            self.w.model.tags = None

    # which records ------------------------------------------------------------------------------

    def target(self) -> tuple[np.ndarray, str]:
        """The records the focused part of the window means, and a word for them: the Problems
        panel's selected line (a group: all its records), the Duplicates view's selected group, the
        gallery's current record, else the record table's selected rows (or its current row)."""
        from tfrview.gui.models.duplicates import GROUP_ROLE
        from tfrview.gui.widgets.record_table_view import selected_rows

        w = self.w
        focus = w.focusWidget()

        def within(widget: QWidget) -> bool:
            return focus is not None and (focus is widget or widget.isAncestorOf(focus))

        if within(w.problems_view):
            return w.problems.records_at(w.problems_view.currentIndex()), "the problem's records"
        if within(w.duplicates_view):
            row = w.duplicates_view.currentIndex().data(GROUP_ROLE)
            if row is None:
                return np.empty(0, np.int64), "a group of copies"
            return np.array([m.n for m in row.members], np.int64), f"copies of group {row.number}"
        if within(w.gallery):
            cur = w.gallery.currentIndex()
            if not cur.isValid():
                return np.empty(0, np.int64), "the gallery's record"
            return np.array([w.gallery_model.record_number(cur.row())], np.int64), "the gallery's record"
        rows = selected_rows(w.table.selectionModel().selection())
        if not len(rows):
            cur = w.table.currentIndex()
            rows = np.array([cur.row()] if cur.isValid() else [], np.int64)
        return w.model.record_numbers(rows), "the selection"

    def filter_result(self) -> np.ndarray | None:
        """Every record the filter matched (None: no filter on)."""
        m = self.w.model
        if m.filter_rows is None:
            return None
        return np.asarray(m.filter_rows[: m.match_count], dtype=np.int64)

    # actions --------------------------------------------------------------------------------------

    def tag(self, word: TagWord | None, key: str = "") -> None:
        """D, K, R (None: Backspace, clear) on what the focused part means. `key`: the letter
        pressed; the first time a letter acts in this window its line says that letters tag here
        and / filters (a person typing to find a row gets a tag, and is told why once)."""
        numbers, what = self.target()
        self.apply(numbers, word, None, what, key)

    def _say(self, text: str, key: str = "") -> None:
        """`text` in the status bar; `key`: the letter that started the action ("D": a letter a
        person may have typed to find a row), said with what letters do the first time."""
        if key and not self._letters_said:
            self._letters_said = True
            text = f"{key}: {text} · the letters D, K and R tag here; press / to filter"
        self.said.emit(text)

    def note(self) -> None:
        """N: a note on what the focused part means (asked in a dialog)."""
        numbers, what = self.target()
        if not len(numbers):
            self.said.emit(f"no record to note: select {what}")
            return
        text, ok = QInputDialog.getText(
            self.w, "Note", f"A note on {len(numbers):,} record(s) (empty removes it):"
        )
        if ok:
            self.apply(numbers, None, text, what)

    def tag_filter(self, word: TagWord | None) -> None:
        """Edit › Tag › Filter Result: every record the filter matched."""
        numbers = self.filter_result()
        if numbers is None:
            self.said.emit("no filter is on: filter first, then tag its result")
            return
        if len(numbers) > ASK_ABOVE:
            sure = QMessageBox.question(
                self.w,
                "Tag the filter result",
                f"{'Clear' if word is None else str(word).title()} {len(numbers):,} records? It takes a few seconds.",
            )
            if sure != QMessageBox.StandardButton.Yes:
                return
        self.apply(numbers, word, None, "the filter result")

    def apply(
        self, numbers: np.ndarray, word: TagWord | None, note: str | None, what: str = "", key: str = ""
    ) -> None:
        """One action over the records `numbers` (global); said in the status bar (`key`: the
        letter pressed for it, if any: see `tag`)."""
        if self.book is None:
            self.said.emit(f"tags are off: {self.unavailable or 'no tag store'}")
            return
        if not len(numbers):
            self._say(f"nothing to tag: select {what or 'records'} first", key)
            return
        try:
            marks, left_out = self.book.marks(numbers, self.w.model._starts)
            if not marks:
                self.said.emit("these records cannot be tagged: their files are not local files")
                return
            change = self.book.act(marks, word, note)
        except (TfrviewError, OSError) as exc:
            self.said.emit(f"tagging failed: {one_line(exc)}")
            return
        extra = f" ({left_out:,} of files that are not local files left out)" if left_out else ""
        self._say(f"{change.what}{extra} · Ctrl+Z undoes", key)
        self.changed.emit()

    def undo(self) -> None:
        self._step(True)

    def redo(self) -> None:
        self._step(False)

    def _step(self, back: bool) -> None:
        if self.book is None:
            return
        try:
            change = self.book.undo() if back else self.book.redo()
        except TfrviewError as exc:
            self.said.emit(f"{'undo' if back else 'redo'} failed: {one_line(exc)}")
            return
        if change is None:
            self.said.emit(f"nothing to {'undo' if back else 'redo'}")
            return
        self.said.emit(f"{'undone' if back else 'redone'}: {change.what}")
        self.changed.emit()
