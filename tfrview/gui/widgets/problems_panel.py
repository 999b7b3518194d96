"""The Problems panel: a bar of triage controls over the problems tree.

Thin: the controls only replace the model's `ProblemsQuery`; the tree keeps the person's place
(current problem, open groups, scroll) when the model arranges its entries anew, and says which
problem the person chose with a typed signal, never while it restores its own place.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from tfrview.gui.models.problems import SEVERITIES, ProblemRow, ProblemsModel
from tfrview.gui.widgets.record_table_view import NoTypeAhead

_SEVERITY_LABEL = {"error": "Errors", "warning": "Warnings", "info": "Notes"}
_WIDTHS = {"record": 110, "file": 90, "kind": 160, "severity": 70, "count": 60}


class ProblemsTree(NoTypeAhead, QTreeView):
    problem_chosen = Signal(object)  # ProblemRow: a click, an arrow key, Enter or F8 landed on it

    def __init__(self, model: ProblemsModel, parent=None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self._model = model
        self.setUniformRowHeights(True)
        self.setRootIsDecorated(True)
        self.setAllColumnsShowFocus(True)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setWordWrap(False)
        h = self.header()
        h.setStretchLastSection(True)
        for i, name in enumerate(model.columns):
            h.resizeSection(i, _WIDTHS.get(name, 200))
        h.setSortIndicator(model.columns.index("severity"), Qt.SortOrder.AscendingOrder)
        self.setSortingEnabled(True)
        self._restoring = False
        self._place: tuple[ProblemRow | None, set, int] = (None, set(), 0)
        model.modelAboutToBeReset.connect(self._remember_place)
        model.arranged.connect(self._restore_place)
        self.selectionModel().currentRowChanged.connect(self._on_current)
        self.activated.connect(self._on_activated)

    def _remember_place(self) -> None:
        m = self._model
        opened = {
            e.key for i, e in enumerate(m.entries) if len(e.rows) > 1 and self.isExpanded(m.index(i, 0))
        }
        self._place = (m.row_at(self.currentIndex()), opened, self.verticalScrollBar().value())

    def _restore_place(self) -> None:
        row, opened, scroll = self._place
        m = self._model
        self._restoring = True
        try:
            for key in opened:
                at = m.group_index(key)
                if at.isValid():
                    self.setExpanded(at, True)
            at = self._index_keeping_groups(row) if row is not None else QModelIndex()
            if at.isValid():
                self.setCurrentIndex(at)
            if not m.view_changed:
                self.verticalScrollBar().setValue(scroll)  # more problems came: the person keeps their place
            elif at.isValid():
                self.scrollTo(at)
            else:
                self.scrollToTop()  # a new question: its answer from the top
        finally:
            self._restoring = False

    def _index_keeping_groups(self, row: ProblemRow) -> QModelIndex:
        """A problem inside a closed group is shown by its group's row."""
        at = self._model.index_of(row)
        if at.isValid() and at.parent().isValid() and not self.isExpanded(at.parent()):
            return at.parent()
        return at

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._restoring:
            row = self._model.row_at(current)
            if row is not None:
                self.problem_chosen.emit(row)

    def _on_activated(self, index: QModelIndex) -> None:
        if self._model.is_group(index):
            self.setExpanded(index, not self.isExpanded(index))
        row = self._model.row_at(index)
        if row is not None:
            self.problem_chosen.emit(row)

    def show_problem(self, row: ProblemRow) -> None:
        """Make `row` current (opening its group), as F8 does; the record follows."""
        at = self._model.index_of(row)
        if not at.isValid():
            return
        if at.parent().isValid():
            self.setExpanded(at.parent(), True)
        if at == self.currentIndex():
            self.problem_chosen.emit(row)  # the only problem: F8 shows its record again
        self.setCurrentIndex(at)
        self.scrollTo(at)

    def current_problem(self) -> ProblemRow | None:
        """The problem that is current (None for a group's row: F8 then starts inside it)."""
        at = self.currentIndex()
        if self._model.is_group(at):
            return None
        return self._model.row_at(at)


class ProblemsPanel(QWidget):
    def __init__(self, model: ProblemsModel, parent=None) -> None:
        super().__init__(parent)
        self.model = model
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 0)
        self.severity_buttons: dict[str, QToolButton] = {}
        for s in SEVERITIES:
            b = QToolButton(self)
            b.setCheckable(True)
            b.setChecked(True)
            b.setAutoRaise(True)
            b.setToolTip(f"Show {_SEVERITY_LABEL[s].lower()}")
            b.toggled.connect(self._on_severities)
            self.severity_buttons[s] = b
            bar.addWidget(b)
        self.kinds_button = QToolButton(self)
        self.kinds_button.setText("Kinds")
        self.kinds_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.kinds_menu = QMenu(self.kinds_button)
        self.kinds_menu.aboutToShow.connect(self._fill_kinds)
        self.kinds_button.setMenu(self.kinds_menu)
        bar.addWidget(self.kinds_button)
        self.group_box = QCheckBox("Group repeats", self)
        self.group_box.setChecked(model.query.grouped)
        self.group_box.toggled.connect(lambda on: self.model.set_query(replace(self.model.query, grouped=on)))
        self.follow_box = QCheckBox("Follow filter", self)
        self.follow_box.setToolTip("Show only the problems of the records the table's filter shows")
        self.follow_box.setChecked(model.query.follow_filter)
        self.follow_box.toggled.connect(
            lambda on: self.model.set_query(replace(self.model.query, follow_filter=on))
        )
        bar.addWidget(self.group_box)
        bar.addWidget(self.follow_box)
        bar.addStretch(1)
        self.shown_label = QLabel("", self)
        bar.addWidget(self.shown_label)
        lay.addLayout(bar)
        self.tree = ProblemsTree(model, self)
        lay.addWidget(self.tree, 1)
        model.arranged.connect(self._update_bar)
        self._update_bar()

    def _on_severities(self) -> None:
        on = frozenset(s for s, b in self.severity_buttons.items() if b.isChecked())
        self.model.set_query(replace(self.model.query, severities=on))

    def _fill_kinds(self) -> None:
        """The kinds there are, each with its count, ticked when shown."""
        m = self.kinds_menu
        m.clear()
        hidden = self.model.query.hidden_kinds
        every = m.addAction("Show every kind")
        every.triggered.connect(lambda: self.set_hidden_kinds(frozenset()))
        m.addSeparator()
        for kind, n in sorted(self.model.counts.items()):
            a = m.addAction(f"{kind}  ({n:,})")
            a.setCheckable(True)
            a.setChecked(kind not in hidden)
            a.toggled.connect(lambda on, k=kind: self.set_hidden_kinds(
                self.model.query.hidden_kinds - {k} if on else self.model.query.hidden_kinds | {k}))  # fmt: skip

    def set_hidden_kinds(self, hidden: frozenset[str]) -> None:
        self.model.set_query(replace(self.model.query, hidden_kinds=frozenset(hidden)))

    def _update_bar(self) -> None:
        by_severity = self.model.severity_counts()
        for s, b in self.severity_buttons.items():
            b.setText(f"{_SEVERITY_LABEL[s]} {by_severity.get(s, 0):,}")
        hidden = self.model.query.hidden_kinds
        self.kinds_button.setText(f"Kinds ({len(hidden)} hidden)" if hidden else "Kinds")
        total = len(self.model.rows)
        shown = self.model.shown
        groups = sum(1 for e in self.model.entries if len(e.rows) > 1)
        text = f"{shown:,} of {total:,} shown" if shown != total else f"{total:,} problems"
        if groups:
            text += f" · {groups:,} groups of repeats"
        self.shown_label.setText(text)
