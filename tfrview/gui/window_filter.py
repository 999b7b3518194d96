"""The filter box: parse on Enter, run the filter in a child process, show matches as they come."""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QWidget,
)

from tfrview.gui.widgets.filter_edit import FilterEdit
from tfrview.gui.workers import (
    replace_job,
)


class FilterMixin:
    """Mixed into MainWindow; uses its attributes."""

    def _build_filter_bar(self) -> QWidget:
        bar = QWidget(self)
        lay = QHBoxLayout(bar)
        lay.setContentsMargins(2, 2, 2, 2)
        self.filter_edit = FilterEdit(bar)
        self.filter_edit.setPlaceholderText(
            'Filter (Enter):  label == 3 and not problem    "image/object/class/text" contains "cat"'
        )
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.returnPressed.connect(self.apply_filter)
        self.filter_edit.textChanged.connect(self._on_filter_text)
        self.filter_status = QLabel("", bar)
        self.filter_status.setTextFormat(Qt.TextFormat.RichText)
        lay.addWidget(self.filter_edit, 1)
        lay.addWidget(self.filter_status)
        return bar

    @Slot(str)
    def _on_filter_text(self, text: str) -> None:
        if not text.strip() and self.model.filter_rows is not None:
            self.clear_filter()
        elif self.filter_edit.property("error"):
            self._set_filter_error(None)

    def _set_filter_error(self, error) -> None:
        self.filter_edit.setProperty("error", bool(error))
        self.filter_edit.setStyleSheet("QLineEdit { border: 2px solid #b00020; }" if error else "")
        if error is not None:
            self.filter_status.setText(
                f"<span style='color:#b00020'>⚠ {error.message} (character {error.position + 1})</span>"
            )
            self.filter_edit.setCursorPosition(error.position)
        else:
            self.filter_status.setText("")

    @Slot()
    def apply_filter(self) -> None:
        from tfrview.core.analysis.filterexpr import FilterError, parse, resolve_keys

        text = self.filter_edit.text().strip()
        if not text:
            self.clear_filter()
            return
        known, complete = self.known_keys()
        try:
            resolve_keys(parse(text), known, complete)
        except FilterError as exc:
            self._set_filter_error(exc)
            return
        self._set_filter_error(None)
        self._stop_filter()
        problems: dict[str, list[str]] = {}
        for r in self.problems.rows:
            if r.target is not None:
                problems.setdefault(str(r.target), []).append(str(r.problem.kind))
        spec = {**self._job_spec("filter"), "expr": text, "problems": problems, "known_keys": sorted(known),
                "complete": complete}  # fmt: skip
        self.model.set_filter()
        self.problems.set_matches(self.model.filter_rows[:0])
        self.filter_state = "filtering…"
        self.filterer = replace_job(self, None, spec, self._on_filter_items, self._on_filter_finished)
        self._show_filter_state()

    def offer_keys(self) -> None:
        """The filter box completes the keys known so far (a sample, then every key)."""
        self.filter_edit.set_keys(self.known_keys()[0])

    def known_keys(self) -> tuple[set[str], bool]:
        """The dataset's feature keys, and whether that is all of them: every key once the summary
        has read every record, else those of the records sampled when the index was done."""
        s = self.summary
        if s is not None and not getattr(self, "summary_partial", True):
            return set(s.get("keys", {})), True
        return set(getattr(self, "sample_keys", ())), False

    @Slot(object)
    def _on_filter_items(self, item) -> None:
        worker, items = item
        if worker is not self.filterer:
            return  # a replaced filter's last words, still queued
        for obj in items:
            if "matches" in obj:
                self.model.add_matches(obj["matches"])
                self.problems.set_matches(self.model.filter_rows[: self.model.match_count])
                done = obj["upto"] >= obj["total"]
                pct = 100 * obj["upto"] // max(obj["total"], 1)
                self.filter_state = "" if done else f"filtering {pct}%"
            elif "note" in obj:  # the stored facts hold some key only in part
                self.filter_status.setToolTip(obj["note"])
            elif "error" in obj:
                self.filter_state = f"filter failed: {obj['error']}"
        self._show_filter_state()

    @Slot(object)
    def _on_filter_finished(self, worker) -> None:
        if worker is not self.filterer:
            return
        if self.filter_state.startswith("filtering"):
            self.filter_state = "stopped"
        self._show_filter_state()

    def _show_filter_state(self) -> None:
        n = self.model.match_count
        total = self.model.total()
        text = f"{n:,} of {total:,} records match"
        if self.filter_state:
            text += f" · {self.filter_state}"
        self.filter_status.setText(text)

    def _stop_filter(self) -> None:
        if self.filterer is not None:
            self.filterer.cancel()
            self.filterer.wait()
            self.filterer = None

    @Slot()
    def clear_filter(self) -> None:
        self._stop_filter()
        if self.model.filter_rows is not None:
            self.model.clear_filter()
        self.problems.set_matches(None)
        self.filter_status.setText("")
        if self._selected is not None:
            self.select_record(self._selected)
