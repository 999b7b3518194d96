"""The filter: parse on Enter, run it as a job over the stored facts, show matches as they come."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtWidgets import QLabel

from tfrview.core.analysis.stepcolumns import NAMES as STEP_COLUMNS
from tfrview.core.limits import FILTER_RERUN_SECONDS
from tfrview.core.procs.messages import Failed, Matches, Note
from tfrview.core.procs.requests import FilterRequest, SelectRequest
from tfrview.gui.job_state import JobState, Phase
from tfrview.gui.models.problems import ProblemsModel
from tfrview.gui.models.record_table import RecordTableModel
from tfrview.gui.session import DatasetSession
from tfrview.gui.widgets.filter_edit import FilterEdit
from tfrview.gui.workers.base import Worker
from tfrview.gui.workers.jobs import JobWorker, replace_job

ERROR_STYLE = "QLineEdit { border: 2px solid #b00020; }"


def _of_the_analysis() -> set[str]:
    """The fact columns only the analysis fills (the image scores' module loads on first use)."""
    from tfrview.core.records.imagesignals import SCORE_COLUMNS

    return set(STEP_COLUMNS) | set(SCORE_COLUMNS)


class FilterController(QObject):
    state_changed = Signal(object)  # JobState
    cleared = Signal()  # the table shows every record again

    def __init__(
        self,
        session: DatasetSession,
        model: RecordTableModel,
        problems: ProblemsModel,
        edit: FilterEdit,
        status: QLabel,
        parent=None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.model = model
        self.problems = problems
        self.edit = edit
        self.status = status
        self.state = JobState()
        self.note = ""  # said after the count, e.g. while a shard's records are still being framed
        self.job: JobWorker | None = None
        self.expr = ""  # the expression the table's matches answer ("" for none, or a plot selection)
        self.on_findings = False  # it asks for `problem`: the QA findings, which the analysis brings
        self.selection: dict | None = None  # a plot selection no expression says: its request and words
        self._rerun = QTimer(self)  # findings arrived: the filter on them runs again, debounced
        self._rerun.setSingleShot(True)
        self._rerun.setInterval(int(FILTER_RERUN_SECONDS * 1000))
        self._rerun.timeout.connect(self._run_again)
        self._checks_running = session.checks.running
        edit.returnPressed.connect(self.apply)
        edit.textChanged.connect(self._on_text)
        edit.textEdited.connect(self._on_edited)
        session.checks_changed.connect(self._on_checks)
        session.problem_found.connect(self._on_finding)

    # what the person does -----------------------------------------------------------------------------

    @Slot()
    def apply(self) -> None:
        """Enter: check the expression against the known keys, then run it."""

        text = self.edit.text().strip()
        if not text:
            self.clear()
            return
        if self.selection is not None and text == self.expr:
            sel = self.selection
            self.run_job(sel["request"], note=sel["note"], what=sel["what"])
            return  # Enter on a plot selection's words: that selection again
        # the parser loads on the first Enter, not with the window (~15 ms of its start)
        from tfrview.core.analysis.filterexpr import FilterError, facts_used, keys_used, parse, resolve_keys

        known, complete = self.known_keys()
        try:
            node = resolve_keys(parse(text), known, complete)
        except FilterError as exc:
            self._show_error(exc)
            return

        # on the QA findings, or on what only the analysis knows (the dataset step's columns, the
        # image scores): run again as the findings arrive and when the analysis ends
        self.on_findings = "problem" in facts_used(node) or bool(keys_used(node) & _of_the_analysis())
        self._show_error(None)
        problems: dict[str, list[str]] = {}
        for r in self.problems.rows:
            if r.target is not None:
                problems.setdefault(str(r.target), []).append(str(r.problem.kind))
        request = self.session.request(
            FilterRequest, expr=text, problems=problems, known_keys=tuple(sorted(known)), complete=complete
        )
        self.run_job(request, text)

    def run_text(self, text: str) -> None:
        """A filter written for the person (a clicked bar): shown in the box and run."""
        self.edit.blockSignals(True)
        self.edit.setText(text)
        self.edit.blockSignals(False)
        self.apply()

    def run_job(
        self, request: FilterRequest | SelectRequest, text: str = "", note: str = "", what: str = ""
    ) -> None:
        """A job whose matches the table shows: a filter, or the records behind a click on a plot
        (`what` says them: no expression can, so the box says "plot selection: N records (what)"
        and Esc or the box's clear button clears it as any filter; `note` is said after the count)."""
        self._stop_job()
        self._rerun.stop()
        self.selection = {"request": request, "note": note, "what": what} if what else None
        self.on_findings = self.on_findings and bool(text) and not what
        self.expr = text or (f"plot selection: {what}" if what else "")
        self._set_box(self.expr)
        self.model.set_filter()
        self.problems.set_matches(self.model.filter_rows[:0])
        self.note = note
        self._set_state(JobState().started())
        self.job = replace_job(None, JobWorker(request, self), self._on_items, self._on_done, self._on_error)

    def show_records(self, text: str, numbers: np.ndarray, note: str = "") -> None:
        """A filter whose matches are known already (a shard's records): shown at once, no job."""
        self._stop_job()
        self._rerun.stop()
        self.selection, self.on_findings, self.expr = None, False, text
        self._set_box(text)
        self._show_error(None)
        self.model.set_filter()
        self.model.add_matches(numbers)
        self.problems.set_matches(self.model.filter_rows[: self.model.match_count])
        self.note = note
        self._set_state(JobState(Phase.DONE))

    def stop(self) -> None:
        """The filter stops (never the scan of the dataset), its matches so far still shown."""
        self._rerun.stop()
        if self.job is not None:
            self._stop_job()
            self._set_state(replace(self.state, phase=Phase.STOPPED))

    def escape(self) -> bool:
        """Esc: a running filter stops; a finished one is cleared, box and table (a plot selection
        too). False when there was nothing to stop or clear."""
        if self.job is not None and self.state.running:
            self.stop()
            return True
        if self.model.filter_rows is not None or self.edit.text():
            self._set_box("")
            self.clear()
            return True
        return False

    @property
    def filtered(self) -> bool:
        return self.model.filter_rows is not None

    @Slot()
    def clear(self) -> None:
        self._stop_job()
        self._rerun.stop()
        self.selection, self.on_findings, self.expr = None, False, ""
        if self.model.filter_rows is not None:
            self.model.clear_filter()
        self.problems.set_matches(None)
        self.status.setText("")
        self.state = JobState()
        self.cleared.emit()

    # keys ----------------------------------------------------------------------------------------------

    def offer_keys(self) -> None:
        """The filter box completes the keys known so far (a sample, then every key)."""
        self.edit.set_keys(self.known_keys()[0])

    def known_keys(self) -> tuple[set[str], bool]:
        """The dataset's feature keys, and whether that is all of them: every key once the summary
        has read every record, else those of the records sampled when the index was done."""
        s = self.session
        if s.summary is not None and not s.summary_partial:
            return set(s.summary.get("keys", {})), True
        return set(s.sample.keys if s.sample is not None else ()), False

    # the job -------------------------------------------------------------------------------------------

    def _on_items(self, worker: Worker, items: list) -> None:
        if worker is not self.job:
            return  # a replaced filter's last words, still queued
        state = self.state
        for msg in items:
            match msg:
                case Matches(matches=matches, upto=upto, total=total):
                    self.model.add_matches(matches)
                    self.problems.set_matches(self.model.filter_rows[: self.model.match_count])
                    if upto >= total:
                        state = replace(state, phase=Phase.DONE, done=total, total=total)
                    else:
                        state = state.progressed("filtering", upto, total)
                case Note(text=text):  # the stored facts hold some key only in part
                    self.status.setToolTip(text)
                case Failed(message=message):
                    state = state.failed(message)
        self._set_state(state)

    def _on_error(self, worker: Worker, message: str) -> None:
        if worker is self.job:
            self._set_state(self.state.failed(message))

    @Slot(object)
    def _on_done(self, worker: Worker) -> None:
        if worker is self.job:
            self._set_state(self.state.finished())

    # a filter on the QA findings, typed before they have all arrived ------------------------------------

    @property
    def provisional(self) -> bool:
        """The matches answer findings still arriving: the count may change."""
        return self.on_findings and self.session.checks.running

    @Slot(int, object)
    def _on_finding(self, _file_no: int, _problem) -> None:
        if self.on_findings and not self._rerun.isActive():
            self._rerun.start()

    @Slot(object)
    def _on_checks(self, state: JobState) -> None:
        was, self._checks_running = self._checks_running, state.running
        if not self.on_findings:
            return
        if state.running:
            if not was:
                self._set_state(self.state)  # says "QA still running"
        elif was:
            self._rerun.stop()
            self._run_again()  # the pass ended: the answer on every finding

    def _run_again(self) -> None:
        """The same filter over the findings known now (not if the person has edited the box)."""
        if self.on_findings and self.expr and self.edit.text().strip() == self.expr:
            self.apply()

    def _stop_job(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.job.wait()
            self.job = None

    # showing it ----------------------------------------------------------------------------------------

    def _set_state(self, state: JobState) -> None:
        self.state = state
        n, total = self.model.match_count, self.model.total()
        words = {
            Phase.RUNNING: f"filtering {100 * state.done // max(state.total, 1)}%",
            Phase.FAILED: f"filter failed: {state.error}",
            Phase.STOPPED: "stopped",
        }.get(state.phase, self.note)
        if self.provisional:  # short: the box beside it keeps its room
            words = (words + ", " if words else "") + "QA still running"
            self.status.setToolTip(
                "The QA checks are still finding problems: the filter runs again as they "
                "arrive and when the checks end, so this count may change."
            )
        self.status.setText(f"{n:,} of {total:,} records match" + (f" · {words}" if words else ""))
        if self.selection is not None and state.phase is Phase.DONE:
            self.expr = f"plot selection: {n:,} record{'s' if n != 1 else ''} ({self.selection['what']})"
            self._set_box(self.expr)
        self.state_changed.emit(state)

    def _set_box(self, text: str) -> None:
        """The box says what filters the table, without that being taken as the person's typing."""
        if self.edit.text() != text:
            self.edit.blockSignals(True)
            self.edit.setText(text)
            self.edit.blockSignals(False)
        self.edit.setToolTip(
            "the records a click on a plot selected: no filter expression says them; Esc or ✕ clears"
            if self.selection is not None
            else ""
        )

    def _show_error(self, error) -> None:
        self.edit.setProperty("error", bool(error))
        self.edit.setStyleSheet(ERROR_STYLE if error else "")
        if error is not None:
            self.status.setText(
                f"<span style='color:#b00020'>⚠ {error.message} (character {error.position + 1})</span>"
            )
            self.edit.setCursorPosition(error.position)
        else:
            self.status.setText("")

    @Slot(str)
    def _on_edited(self, _text: str) -> None:
        """The person edits the box: what it said of a plot selection is theirs to rewrite now."""
        self.selection = None

    @Slot(str)
    def _on_text(self, text: str) -> None:
        if not text.strip() and self.model.filter_rows is not None:
            self.clear()
        elif self.edit.property("error"):
            self._show_error(None)
