"""Undo and redo of tagging actions: a stack of `store.Change`s kept in memory (the window's, for
its session), each one step however many records it tagged; the store writes each back in one
transaction. At most `limits.TAG_UNDO_STEPS` are kept."""

from __future__ import annotations

from tfrview.core import limits
from tfrview.core.tags.store import Change, TagStore


class TagHistory:
    """The actions done through it, undoable in reverse order; a new action forgets what was undone."""

    def __init__(self, store: TagStore) -> None:
        self.store = store
        self._done: list[Change] = []
        self._undone: list[Change] = []

    def did(self, change: Change) -> Change:
        """Remember an action the store just did."""
        self._done.append(change)
        del self._done[: -limits.TAG_UNDO_STEPS]
        self._undone.clear()
        return change

    def can_undo(self) -> bool:
        return bool(self._done)

    def can_redo(self) -> bool:
        return bool(self._undone)

    def undo(self) -> Change | None:
        """Put back what the last action changed; the change undone (None: nothing to undo)."""
        if not self._done:
            return None
        change = self._done[-1]
        self.store.restore(change.before)  # raises TagError before the stacks move
        self._undone.append(self._done.pop())
        return change

    def redo(self) -> Change | None:
        """Do the last undone action again; the change redone (None: nothing to redo)."""
        if not self._undone:
            return None
        change = self._undone[-1]
        self.store.restore(change.after)
        self._done.append(self._undone.pop())
        return change
