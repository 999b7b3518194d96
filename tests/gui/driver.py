"""A page object for the main window: what a person does and sees, in words the tests use.

GUI tests ask the window through this driver, not its attributes, for anything about the
background work (the index, the analysis, the filter): those are the parts that move when the
window is rebuilt, and only this file follows them.

The supported ways to wait, for pytest-qt tests and for scripts alike (a fuzz campaign, a child
process that measures the window: `Driver(None, window)` spins the event loop itself):

- indexed: `wait_indexed()` (every record framed is a row), or the predicate `is_indexed()`;
  the signal `scan_ended` fires when the scan ends, before the rows are all taken in.
- analysed: `wait_analysed()` (the QA checks and summary have ended, in any phase: returns the
  JobState), `wait_checks()` (the same, and it must have ended well), or `is_analysed()`; the
  signal `analysis_changed` carries each new JobState.
"""

from __future__ import annotations

import time

from tfrview.gui.job_state import JobState, Phase

INDEX_TIMEOUT_MS = 30000
ANALYSIS_TIMEOUT_MS = 60000


class _Spin:
    """qtbot's waitUntil for a script without pytest-qt: the event loop runs while it waits."""

    def waitUntil(self, cond, timeout: int = 5000) -> None:  # qtbot's name, so callers need not care
        from PySide6.QtWidgets import QApplication

        end = time.monotonic() + timeout / 1000
        while not cond():
            if time.monotonic() > end:
                raise TimeoutError(f"waited {timeout} ms for {getattr(cond, '__name__', 'a condition')}")
            QApplication.processEvents()
            time.sleep(0.005)


class Driver:
    def __init__(self, qtbot, window) -> None:
        """qtbot: pytest-qt's fixture, or None in a script (the driver then runs the event loop)."""
        self.qtbot = qtbot if qtbot is not None else _Spin()
        self.window = window

    # what to wait on ------------------------------------------------------------------------------

    @property
    def scan_ended(self):
        """Signal(IndexProgress): the scan has ended (done, cancelled or error)."""
        return self._session.scan_ended

    @property
    def analysis_changed(self):
        """Signal(JobState): the analysis pass started, progressed or ended."""
        return self._session.checks_changed

    def is_indexed(self) -> bool:
        m = self.window.model
        return self.index_ended() and m.rowCount() == m.total()

    def is_analysed(self) -> bool:
        return self.checks.phase not in (Phase.IDLE, Phase.RUNNING)

    def wait_analysed(self, timeout: int = ANALYSIS_TIMEOUT_MS) -> JobState:
        """Until the analysis has ended, well or not (a hostile file may make it fail)."""
        self.qtbot.waitUntil(self.is_analysed, timeout=timeout)
        return self.checks

    # the index -----------------------------------------------------------------------------------

    @property
    def _session(self):
        return self.window.session

    @property
    def index_phase(self) -> str | None:
        """'index', 'verify', 'done', 'cancelled' or 'error'; None before the first report."""
        p = self._session.index_progress
        return None if p is None else p.phase

    @property
    def index_note(self) -> str:
        p = self._session.index_progress
        return "" if p is None else p.note

    @property
    def index_running(self) -> bool:
        return self._session.index_running

    @property
    def stored_files(self) -> int:
        """Files whose index and CRC status came from the stored analysis."""
        return self._session.stored_files

    def index_ended(self) -> bool:
        return self._session.scan_over

    def wait_index_ended(self, timeout: int = INDEX_TIMEOUT_MS) -> str | None:
        """Until the scan has ended (done, stopped or failed) and the window has taken it in."""
        self.qtbot.waitUntil(self.index_ended, timeout=timeout)
        return self.index_phase

    def wait_indexed(self, timeout: int = INDEX_TIMEOUT_MS) -> None:
        """Until the scan has ended and every record it framed is a row."""
        self.qtbot.waitUntil(self.is_indexed, timeout=timeout)

    def wait_index_phase(self, *phases: str, timeout: int = INDEX_TIMEOUT_MS) -> str:
        self.qtbot.waitUntil(lambda: self.index_phase in phases, timeout=timeout)
        return self.index_phase

    def stop_scan(self) -> None:
        """As the Stop button (or Esc outside the filter box) does."""
        self.window.actions_by_name["stop_scan"].trigger()

    @property
    def sample_keys(self) -> frozenset[str]:
        """Feature keys of the records sampled once every file is framed."""
        sample = self._session.sample
        return frozenset() if sample is None else frozenset(sample.keys)

    # the analysis (QA checks and the summary) --------------------------------------------------------

    @property
    def checks(self) -> JobState:
        return self._session.checks

    @property
    def summary(self) -> dict | None:
        return self._session.summary

    @property
    def summary_partial(self) -> bool:
        return self._session.summary_partial

    @property
    def analysis_note(self) -> str:
        return self._session.analysis_note

    @property
    def analysis_worker(self):
        return self._session.analyzer

    def wait_checks(self, timeout: int = ANALYSIS_TIMEOUT_MS) -> JobState:
        """Until the analysis has ended; it must have ended well."""
        self.wait_analysed(timeout)
        assert self.checks.phase is Phase.DONE, self.checks
        return self.checks

    # the filter ---------------------------------------------------------------------------------------

    @property
    def filter_state(self) -> JobState:
        return self.window.filtering.state

    def type_filter(self, text: str) -> None:
        """Type a filter and press Enter, without waiting for its answer."""
        self.window.filter_edit.setText(text)
        self.window.filtering.apply()

    def wait_filter(self, timeout: int = ANALYSIS_TIMEOUT_MS) -> JobState:
        self.qtbot.waitUntil(lambda: not self.filter_state.running, timeout=timeout)
        return self.filter_state

    def filter(self, text: str) -> list[int]:
        """Apply a filter, wait for its whole answer, and give the records the table shows."""
        self.type_filter(text)
        state = self.wait_filter()
        assert state.phase in (Phase.DONE, Phase.IDLE), state
        return self.shown_records()

    def shown_records(self) -> list[int]:
        m = self.window.model
        return [m.record_number(r) for r in range(m.rowCount())]

    # the Compare view ----------------------------------------------------------------------------

    def compare(self, a: str, b: str, timeout: int = ANALYSIS_TIMEOUT_MS) -> list[tuple[str, str, bool]]:
        """Compare split `a` with split `b` in the Compare view; its rows, in order: (feature,
        shift words, drifted)."""
        c = self.window.comparing
        c.panel.comparison = None
        c.compare(a, b)
        self.qtbot.waitUntil(lambda: c.panel.comparison is not None, timeout=timeout)
        return [
            (f.key, c.panel.table.item(i, 1).text(), f.drifted)
            for i, f in enumerate(c.panel.comparison.features)
        ]

    def compare_bars(self, feature: str) -> list[str]:
        """The bars' names the Compare view charts for a feature (its row selected)."""
        c = self.window.comparing
        keys = [f.key for f in c.panel.comparison.features]
        c.panel.table.selectRow(keys.index(feature))
        b = c.panel.feature.bars
        return list(b.names) if b.names else [f"{lo:g}" for lo in b.edges[:-1]]

    def click_compare_bar(self, side: str, bar: str) -> list[int]:
        """A click on side `side`'s ("a" or "b") bar named `bar` of the charted feature: the records
        the table then shows."""
        c = self.window.comparing
        plot = c.panel.plot.getPlotItem()
        i = self.compare_bars(c.panel.feature.key).index(bar)
        y = i - 0.2 if side == "a" else i + 0.2
        assert c.panel.bar_at(y) == (side, i)
        from PySide6.QtCore import QPointF, Qt
        from PySide6.QtTest import QTest

        view = c.panel.plot
        at = view.mapFromScene(plot.vb.mapViewToScene(QPointF(0.0, y)))
        at.setX(at.x() + 2)  # just right of the axis: inside the bar
        QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, at)
        self.qtbot.waitUntil(
            lambda: self.filter_state.running or "plot selection" in self.filter_text, timeout=5000
        )
        self.wait_filter()
        return self.shown_records()

    # the Problems and Shards panels --------------------------------------------------------------------

    def problems_shown(self) -> list[tuple[str, str, str]]:
        """(kind, file, message) of every problem the Problems panel shows, in its order."""
        m = self.window.problems
        m.flush()
        return [(str(r.problem.kind), m.file_names[r.file_no], r.problem.message) for r in m.leaves()]

    def shard_rows(self) -> list[dict[str, str]]:
        """The Shards panel's rows as the person reads them: column name -> text."""
        self.window.shards_panel.refresh()
        s = self.window.shards_panel.model
        return [{c: s.data(s.index(r, i)) for i, c in enumerate(s.columns)} for r in range(s.rowCount())]

    def table_records(self) -> list[tuple[int, int, str]]:
        """(record number, offset, status word) of every row the record table shows; the record
        status words of every output (tfrecord.status): ok, damaged, header_damaged, unverified."""
        m = self.window.model
        out = []
        for r in range(m.rowCount()):
            n = m.record_number(r)
            f, _, off, _ = self.window.ds.record_span(n)
            out.append((n, off, m.status_of(n)))
        return out

    def problem_records(self) -> list[tuple[str, str, str, int | None]]:
        """(kind, file, message, record number) of every problem the Problems panel shows."""
        m = self.window.problems
        m.flush()
        return [
            (str(r.problem.kind), m.file_names[r.file_no], r.problem.message, r.record) for r in m.leaves()
        ]

    def record_note(self, n: int, timeout: int = 10000) -> str:
        """Show record n and give what the feature tree says above its features ('' if nothing):
        why a record that did not pass its CRCs is shown as its bytes stand."""
        w = self.window
        w.select_record(n)
        self.qtbot.waitUntil(
            lambda: w.image_panel.current is not None and w.image_panel.current.number == n, timeout=timeout
        )
        top = w.tree.topLevelItem(0)
        return top.text(3) if top is not None and top.text(0) == "⚠" else ""

    # the filter as the person reads it, and the analysis run again --------------------------------

    def restart_analysis(self) -> None:
        """Run the QA pass again (as a new label map does): its findings are void until it ends."""
        self._session.start_analysis()

    @property
    def filter_text(self) -> str:
        """What the filter box says filters the table (an expression, or a plot selection's words)."""
        return self.window.filter_edit.text()

    @property
    def filter_words(self) -> str:
        """The line beside the filter box: 'N of M records match · …'."""
        return self.window.filter_status.text()

    def press_escape(self, in_filter_box: bool = False) -> None:
        """Esc, with the focus in the filter box or elsewhere in the window."""
        if in_filter_box:
            self.window.filter_edit.setFocus()
        else:
            self.window.table.setFocus()
        self.window.actions_by_name["cancel"].trigger()

    def shown_record(self, timeout: int = 10000) -> int | None:
        """The record the feature tree and image panel show (None: the pane is empty)."""
        return None if self.window.image_panel.current is None else self.window.image_panel.current.number

    @property
    def problems_notice(self) -> str:
        """The dataset-level note above the Problems panel's table ('' when none is shown)."""
        label = self.window.problems_panel.notice
        return label.text() if label.isVisibleTo(self.window.problems_panel) else ""

    # issue 18: what the person sees of the window's panels, table and status ----------------------------

    def view_menu(self, text: str) -> None:
        """Click the View menu's entry named `text` (e.g. 'Plot'), as the person does."""
        menu = next(a.menu() for a in self.window.menuBar().actions() if a.text().replace("&", "") == "View")
        act = next(a for a in menu.actions() if a.text().replace("&", "").split(" ")[0] == text)
        act.trigger()
        self.qtbot.waitUntil(lambda: True, timeout=100)

    def panel_in_front(self, title: str) -> bool:
        """Whether the dock titled `title` (its title's first word) is shown and not hidden behind a tab."""
        from PySide6.QtWidgets import QApplication, QDockWidget

        QApplication.processEvents()
        for d in self.window.findChildren(QDockWidget):
            if d.windowTitle().split(" ")[0] == title:
                return d.isVisible() and not d.visibleRegion().isEmpty()
        raise LookupError(title)

    def gallery_wheel(self, notches: int) -> int:
        """Turn the mouse wheel over the gallery by `notches` (down is positive); the pixels it
        scrolled."""
        from PySide6.QtCore import QPoint, QPointF, Qt
        from PySide6.QtGui import QWheelEvent
        from PySide6.QtWidgets import QApplication

        g = self.window.gallery
        bar = g.verticalScrollBar()
        before = bar.value()
        centre = QPointF(g.viewport().width() / 2, g.viewport().height() / 2)
        ev = QWheelEvent(
            centre,
            g.viewport().mapToGlobal(centre),
            QPoint(0, 0),
            QPoint(0, -120 * notches),
            Qt.MouseButton.NoButton,
            Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase,
            False,
        )
        QApplication.sendEvent(g.viewport(), ev)
        return bar.value() - before

    def gallery_row_height(self) -> int:
        """The height of one row of thumbnails (cell and spacing), in pixels."""
        return self.window.gallery.gridSize().height()

    def gallery_rows_visible(self) -> float:
        return self.window.gallery.viewport().height() / self.gallery_row_height()

    def column_cut(self, name: str) -> list[str]:
        """The texts of the table's column `name` (over its rows) wider than the column: what the
        person sees elided."""
        from tfrview.gui.models.record_table import number_text  # noqa: F401  (the column's format)

        t, m = self.window.table, self.window.model
        col = m.columns.index(name)
        room = t.horizontalHeader().sectionSize(col) - 12  # the cell's margins
        fm = t.fontMetrics()
        texts = (m.data(m.index(r, col)) for r in range(m.rowCount()))
        return [s for s in texts if fm.horizontalAdvance(s) > room]

    def folder_offered(self, action: str, choose: str | None = None, timeout: int = 5000) -> str:
        """Trigger the window's action `action` (e.g. 'salvage'), accept any question before its file
        dialog as offered, and give the folder the file dialog opens in; the dialog is cancelled, or
        `choose` (a path) is chosen in it."""
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QMessageBox

        seen: list[str] = []

        def answer() -> None:
            top = QApplication.activeModalWidget()
            if isinstance(top, QFileDialog):
                seen.append(top.directory().absolutePath())
                if choose is None:
                    top.reject()
                else:
                    top.selectFile(choose)
                    top.accept()
                return
            if time.monotonic() > end:
                return
            if isinstance(top, QMessageBox):
                top.button(QMessageBox.StandardButton.No).click() if top.button(
                    QMessageBox.StandardButton.No
                ) else top.accept()
            elif isinstance(top, QDialog):
                top.accept()
            QTimer.singleShot(20, answer)

        end = time.monotonic() + timeout / 1000
        QTimer.singleShot(20, answer)
        self.window.actions_by_name[action].trigger()
        self.qtbot.waitUntil(lambda: bool(seen), timeout=timeout)
        return seen[0]

    def close_message(self, timeout: int = 20000) -> str:
        """Wait for the window's next message box (a job's report), close it, and give its text.
        A timer closes it: the box runs its own event loop, where a wait's checks never run."""
        from PySide6.QtCore import QTimer
        from PySide6.QtWidgets import QApplication, QMessageBox

        texts: list[str] = []
        end = time.monotonic() + timeout / 1000

        def close() -> None:
            top = QApplication.activeModalWidget()
            if isinstance(top, QMessageBox):
                texts.append(top.text())
                top.done(0)
            elif time.monotonic() < end:
                QTimer.singleShot(20, close)

        QTimer.singleShot(20, close)
        self.qtbot.waitUntil(lambda: bool(texts), timeout=timeout)
        return texts[0]

    def show_record(self, n: int, timeout: int = 10000) -> None:
        """Select record n and wait until the image panel shows it."""
        w = self.window
        w.select_record(n)
        self.qtbot.waitUntil(
            lambda: w.image_panel.current is not None and w.image_panel.current.number == n, timeout=timeout
        )

    def tree_share(self) -> float:
        """The share of the record view's height the feature tree has (the image panel the rest)."""
        sizes = self.window.right_splitter.sizes()
        return sizes[1] / max(sum(sizes), 1)

    def summary_text(self, n: int, timeout: int = 10000) -> str:
        """The summary column of record n's row, once the summary worker has written it."""
        m = self.window.model
        c = m.columns.index("summary")
        r = m.row_of(n)
        m.data(m.index(r, c))
        self.qtbot.waitUntil(lambda: m.data(m.index(r, c)) != "…", timeout=timeout)
        return m.data(m.index(r, c))

    def status_line(self) -> tuple[str, str, str]:
        """The status bar's line as painted (cut to fit), whole, and its tooltip."""
        lab = self.window.status_label
        return lab.shown_text(), lab.text(), lab.toolTip()

    def status_bar_overflows(self) -> bool:
        """Whether the status bar asks for more width than the window has."""
        sb = self.window.statusBar()
        return sb.minimumSizeHint().width() > self.window.width()

    def labels_on_hover(self, x: float, y: float) -> list[str]:
        """Rest the mouse on the image at pixel (x, y) of the image: the labels its tooltip says
        (those of the boxes there whose label had no free slot)."""
        from PySide6.QtWidgets import QApplication

        v = self.window.image_panel.view
        v.repaint()  # the labels are placed as they are painted
        QApplication.processEvents()
        return v.labels_at(v.context().to_widget(x, y))

    def labels_left_out(self) -> int:
        """How many box labels the image view left out (no free slot) at its last paint."""
        v = self.window.image_panel.view
        v.repaint()
        return len(v.unlabelled)

    def sort_by(self, column: str, descending: bool = False) -> None:
        """Click the record table's header `column` (once, or twice for descending)."""
        from PySide6.QtCore import Qt

        hh = self.window.table.horizontalHeader()
        section = self.window.model.columns.index(column)
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        hh.setSortIndicator(section, order)  # what a click on the header does

    def sort_by_choice(
        self, name: str, descending: bool = False, timeout: int = ANALYSIS_TIMEOUT_MS
    ) -> list[int]:
        """Choose `name` in the Sort by box (a column, or an image score such as "blur") and wait
        for the rows to be sorted by it: the records the gallery then shows, in order."""
        s = self.window.sorting
        s.sort_by(name, descending)
        m = self.window.model
        if name != "#":
            self.qtbot.waitUntil(lambda: m.sort_key == (name, descending), timeout=timeout)
        g = self.window.gallery_model
        return [g.record_number(r) for r in range(g.rowCount())]

    def table_column(self, name: str) -> list[str]:
        """The text of the record table's column `name` in every row, top to bottom."""
        m = self.window.model
        c = m.columns.index(name)
        return [m.data(m.index(r, c)) for r in range(m.rowCount())]

    def sorted_column(self) -> str:
        """The column the header's sort indicator shows."""
        hh = self.window.table.horizontalHeader()
        return self.window.model.columns[hh.sortIndicatorSection()]

    # issue 21: the Duplicates view ---------------------------------------------------------------------

    def show_duplicates(self) -> None:
        """Bring the Duplicates tab (beside the Gallery) to the front."""
        self.window.tabs.setCurrentWidget(self.window.duplicates_view)

    def duplicates_tab_text(self) -> str:
        return self.window.tabs.tabText(self.window.tabs.indexOf(self.window.duplicates_view))

    def duplicate_rows(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """Each group the view lists: its title and its members as (split, record number)."""
        from tfrview.gui.models.duplicates import GROUP_ROLE

        m = self.window.duplicates_model
        rows = [m.data(m.index(r, 0), GROUP_ROLE) for r in range(m.rowCount())]
        return [(row.title, [(c.split, c.n) for c in row.members]) for row in rows]

    def duplicate_thumbnails_ready(self, row: int) -> bool:
        """Whether every member of a listed group has its thumbnail (asked when painted)."""
        m = self.window.duplicates_model
        group = m.rows[row]
        return all(m.pixmap(c.n) is not None for c in group.members)

    def click_copy(self, row: int, member: int) -> None:
        """A click on a member's thumbnail in the Duplicates view, as the person does."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        from tfrview.gui.widgets.duplicates_view import member_rects

        view = self.window.duplicates_view
        index = view.model().index(row, 0)
        view.scrollTo(index)
        rect = member_rects(view.visualRect(index), len(view.model().rows[row].members))[member]
        QTest.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center()
        )  # a script has no qtbot

    # the person's tags ---------------------------------------------------------------------------

    def select_rows(self, first: int, last: int) -> None:
        """Select the record table's rows first..last (a person's Shift+click), focus in the table."""
        from PySide6.QtCore import QItemSelection, QItemSelectionModel

        w = self.window
        w.tabs.setCurrentWidget(w.table)
        w.table.setFocus()
        m = w.model
        sel = QItemSelection(m.index(first, 0), m.index(last, len(m.columns) - 1))
        w.table.selectionModel().select(sel, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        w.table.selectionModel().setCurrentIndex(
            m.index(first, 0), QItemSelectionModel.SelectionFlag.NoUpdate
        )

    def press(self, keys: str, widget=None) -> None:
        """Keys as a person presses them on the focused part ("D", "Ctrl+Z"): the window's shortcuts."""
        from PySide6.QtGui import QKeySequence
        from PySide6.QtTest import QTest

        target = widget if widget is not None else (self.window.focusWidget() or self.window)
        seq = QKeySequence(keys)[0]
        QTest.keyClick(target, seq.key(), seq.keyboardModifiers())

    def tag_column(self) -> list[str]:
        """The record table's Tag column, row by row, as shown."""
        m = self.window.model
        c = m.columns.index("tag")
        return [m.data(m.index(r, c)) for r in range(m.rowCount())]

    def gallery_tags(self) -> list[str | None]:
        """The gallery's tag badge of each tile (the word, or None)."""
        from tfrview.gui.models.gallery import TAG_ROLE

        g = self.window.gallery_model
        return [
            None if (t := g.data(g.index(r, 0), TAG_ROLE)) is None else str(t) for r in range(g.rowCount())
        ]

    def status_message(self) -> str:
        return self.window.statusBar().currentMessage()

    # rewrite -------------------------------------------------------------------------------------

    def rewrite(self, request, timeout: int = ANALYSIS_TIMEOUT_MS):
        """File › Rewrite… with the dialog's answer given as a `RewriteRequest`: the job's ending
        (`messages.Rewrote` or `messages.Failed`) once it has ended."""
        c = self.window.rewriting
        c.start(request)
        self.qtbot.waitUntil(lambda: c.worker is None, timeout=timeout)
        return c.last

    def rewrite_status(self) -> str:
        """What the status line says of a running rewrite ("" when none runs)."""
        c = self.window.rewriting
        return c.status.text() if c.worker is not None else ""

    def open_rewritten(self) -> None:
        """Press "Open the result" in the box a finished rewrite shows."""
        from PySide6.QtWidgets import QMessageBox

        box = self.window.rewriting.result_box
        button = next(b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole)
        button.click()

    # predictions (issue 24) ------------------------------------------------------------------------

    def predictions_drawn(self) -> list[str]:
        """The labels ("cat 0.90") of the predictions the image panel draws (at or above its score
        threshold), in the record's order."""
        layer = self.window.image_panel.layer
        return [] if layer is None else [layer.labels[i] for i in layer.shown.tolist()]

    def truth_outcomes(self) -> list[str]:
        """What became of each ground-truth box of the record shown ("matched", "missed", ...)."""
        from tfrview.core.records.matching import BoxOutcome

        layer = self.window.image_panel.layer
        return [] if layer is None else [BoxOutcome(o).words for o in layer.gt_outcome.tolist()]

    def move_score_slider(self, score: float) -> None:
        """Move the image panel's score threshold slider, as the person drags it."""
        self.window.image_panel.score.setValue(round(score * 100))

    def boxes_on_hover(self, x: float, y: float) -> list[str]:
        """Rest the mouse on the image at pixel (x, y): what its tooltip says of the boxes there."""
        v = self.window.image_panel.view
        return v.boxes_at(v.context().to_widget(x, y))

    def matrix_labels(self) -> list[str]:
        """The Evaluation view's confusion matrix's classes (its last: the background)."""
        return list(self.window.evaluating.panel.matrix.labels)

    def click_matrix_cell(self, truth: str, predicted: str) -> list[int]:
        """A click on the Evaluation view's matrix cell (truth, predicted), as the person does: the
        records the table then shows."""
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        w = self.window
        w.evaluation_dock.show()
        m = w.evaluating.panel.matrix
        labels = m.labels
        at = m.cell_center(labels.index(truth), labels.index(predicted)).toPoint()
        QTest.mouseClick(m, Qt.MouseButton.LeftButton, pos=at)
        return self.shown_records()

    def evaluation(self, timeout: int = ANALYSIS_TIMEOUT_MS) -> dict:
        """Open the Evaluation view and wait for its answer (the evaluate job's summary)."""
        ev = self.window.evaluating
        before = ev.summary
        if not self.window.evaluation_dock.isVisible():
            self.window.evaluation_dock.show()
        else:
            ev.evaluate()
        self.qtbot.waitUntil(lambda: ev.summary is not None and ev.summary is not before, timeout=timeout)
        return ev.summary

    def set_evaluation_thresholds(self, iou: float, score: float, timeout: int = 20000) -> dict:
        """Set the Evaluation view's IoU and score, as the person does, and wait for the answer."""
        ev = self.window.evaluating
        before = ev.summary
        ev.panel.iou.setValue(iou)
        ev.panel.score.setValue(score)
        self.qtbot.waitUntil(
            lambda: ev.summary is not before and (ev.summary["iou"], ev.summary["score"]) == (iou, score),
            timeout=timeout,
        )
        return ev.summary

    def load_predictions(self, path, timeout: int = ANALYSIS_TIMEOUT_MS) -> str:
        """File › Load Predictions… having chosen `path` (the action's slot with the dialog's
        answer: the dialog itself is Qt's); waits for the join and gives the line the status bar
        said (how many joined)."""
        ev = self.window.evaluating
        assert self.window.actions_by_name["predictions"].text() == "Load &Predictions…"
        ev.load(str(path))
        self.qtbot.waitUntil(
            lambda: ev.join_report is not None or "cannot load" in self.window.statusBar().currentMessage(),
            timeout=timeout,
        )
        return self.window.statusBar().currentMessage()

    def join_details(self) -> list[str]:
        """The lines of the join's details dialog (closed after reading)."""
        from PySide6.QtWidgets import QApplication, QMessageBox

        boxes = [
            b
            for b in QApplication.topLevelWidgets()
            if isinstance(b, QMessageBox) and b.objectName() == "join_details"
        ]
        out = [line for b in boxes for line in b.detailedText().splitlines()]
        for b in boxes:
            b.close()
        return out
