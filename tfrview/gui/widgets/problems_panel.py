"""The Problems panel: a bar of triage controls over the problems table.

Thin: the controls only replace the model's `ProblemsQuery`; the table keeps the person's place
(current problem, scroll) when the model arranges its entries anew, and says which problem the
person chose with a typed signal, never while it restores its own place.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QMenu,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from tfrview.core.problems import SEVERITIES
from tfrview.gui.models.problems import ProblemRow, ProblemsModel
from tfrview.gui.widgets.record_table_view import NoTypeAhead, plain_rows

_WIDTHS = {"record": 110, "file": 90, "kind": 160, "severity": 70, "count": 60}


class ProblemsView(NoTypeAhead, QTableView):
    """The problems, a line each; a group of repeats opens in place (Enter, double-click or →;
    ← closes it). Flat, so an open group of a million repeats costs only the lines on screen."""

    problem_chosen = Signal(object)  # ProblemRow: a click, an arrow key, Enter or F8 landed on it

    def __init__(self, model: ProblemsModel, parent=None) -> None:
        super().__init__(parent)
        self.setModel(model)
        self._model = model
        plain_rows(self)
        h = self.horizontalHeader()
        h.setStretchLastSection(True)
        for i, name in enumerate(model.columns):
            h.resizeSection(i, _WIDTHS.get(name, 200))
        h.setSortIndicator(model.columns.index("severity"), Qt.SortOrder.AscendingOrder)
        self.setSortingEnabled(True)
        self._restoring = False
        self._place: tuple[ProblemRow | None, int] = (None, 0)
        model.modelAboutToBeReset.connect(self._remember_place)
        model.arranged.connect(self._restore_place)
        self.selectionModel().currentRowChanged.connect(self._on_current)
        self.activated.connect(self._on_activated)

    def _remember_place(self) -> None:
        self._place = (self._model.row_at(self.currentIndex()), self.verticalScrollBar().value())

    def _restore_place(self) -> None:
        row, scroll = self._place
        m = self._model
        self._restoring = True
        try:
            at = m.index_of(row) if row is not None else QModelIndex()
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

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        if not self._restoring:
            row = self._model.row_at(current)
            if row is not None:
                self.problem_chosen.emit(row)

    def _on_activated(self, index: QModelIndex) -> None:
        if self._model.is_group(index):
            self._model.set_open(index.row(), not self._model.is_open(index.row()))
        row = self._model.row_at(index)
        if row is not None:
            self.problem_chosen.emit(row)

    def keyPressEvent(self, event) -> None:
        at = self.currentIndex()
        if at.isValid() and event.key() in (Qt.Key.Key_Right, Qt.Key.Key_Left):
            opening = event.key() == Qt.Key.Key_Right
            line = self._model.group_line(at)
            if self._model.is_group(self._model.index(line, 0)):
                self._model.set_open(line, opening)
                if not opening and line != at.row():
                    self.setCurrentIndex(self._model.index(line, at.column()))
                event.accept()
                return
        super().keyPressEvent(event)

    def show_problem(self, row: ProblemRow) -> None:
        """Make `row` current (opening its group), as F8 does; the record follows."""
        at = self._model.index_of(row, open_group=True)
        if not at.isValid():
            return
        if at.row() == self.currentIndex().row():
            self.problem_chosen.emit(row)  # the only problem: F8 shows its record again
        self.setCurrentIndex(at)
        self.scrollTo(at)

    def current_problem(self) -> ProblemRow | None:
        """The problem that is current (None for a group's line: F8 then starts inside it)."""
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
            b.setToolTip(f"Show {s.plural}")
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
        self._bar = bar
        lay.addLayout(bar)
        self.notice = QLabel("", self)  # what the window decided for the whole dataset (a label map not used)
        self.notice.setWordWrap(True)
        self.notice.setContentsMargins(6, 2, 6, 2)
        self.notice.setStyleSheet("QLabel { background: #fff4e5; color: #5c3200; }")
        self.notice.setVisible(False)
        lay.addWidget(self.notice)
        self.causes = QLabel("", self)  # why whole files broke, above their problems
        self.causes.setWordWrap(True)
        self.causes.setTextFormat(Qt.TextFormat.RichText)
        self.causes.setContentsMargins(6, 2, 6, 2)
        self.causes.setStyleSheet("QLabel { background: #fff4e5; color: #5c3200; }")
        self.causes.setVisible(False)
        lay.addWidget(self.causes)
        self.tree = ProblemsView(model, self)
        lay.addWidget(self.tree, 1)
        model.arranged.connect(self._update_bar)
        self._update_bar()

    def show_notice(self, text: str) -> None:
        """A dataset-level note above the problems ("" hides it): said where problems are looked for,
        not only in the status bar, which forgets it in seconds."""
        self.notice.setText(f"⚠ {text}" if text else "")
        self.notice.setVisible(bool(text))

    def show_file_causes(self, causes: dict[int, str]) -> None:
        """`causes`: file name -> why it broke; shown above the problems (at most 5 files)."""
        import html  # standard library, used here only

        lines = [
            f"<b>{html.escape(name)}</b>: {html.escape(text)}" for name, text in list(causes.items())[:5]
        ]
        if len(causes) > 5:
            lines.append(f"… and {len(causes) - 5} more files")
        self.causes.setText("<br>".join(lines))
        self.causes.setVisible(bool(causes))

    def add_action(self, action, text: str) -> None:
        """A button on the panel's bar for a window action (Repair: where the damage is listed)."""
        b = QToolButton(self)
        b.setDefaultAction(action)
        b.setText(text)
        self._bar.addWidget(b)

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
            a.toggled.connect(
                lambda on, k=kind: self.set_hidden_kinds(
                    self.model.query.hidden_kinds - {k} if on else self.model.query.hidden_kinds | {k}
                )
            )

    def set_hidden_kinds(self, hidden: frozenset[str]) -> None:
        self.model.set_query(replace(self.model.query, hidden_kinds=frozenset(hidden)))

    def _update_bar(self) -> None:
        by_severity = self.model.severity_counts()
        for s, b in self.severity_buttons.items():
            b.setText(f"{s.label} {by_severity.get(s, 0):,}")
        hidden = self.model.query.hidden_kinds
        self.kinds_button.setText(f"Kinds ({len(hidden)} hidden)" if hidden else "Kinds")
        total = len(self.model.rows)
        shown = self.model.shown
        groups = len(self.model.groups())
        text = f"{shown:,} of {total:,} shown" if shown != total else f"{total:,} problems"
        if groups:
            text += f" · {groups:,} groups of repeats"
        self.shown_label.setText(text)
