"""The Sort by choice above the record table and the gallery: a column every framed record has
(the table's header sorts by the same), or an image quality score of the analysis (blur,
brightness, contrast, ...), which a job reads from the stored facts (`jobs.job_scores`) and the
table's model sorts by as array operations (`core.tfrecord.order.score_key`); the gallery follows
the table's rows, so the darkest or blurriest images come first there too."""

from __future__ import annotations

import logging
import os
import tempfile

import numpy as np
from PySide6.QtCore import QObject, Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QHeaderView, QToolButton

from tfrview.core.procs.messages import Failed, Scores
from tfrview.core.procs.requests import ScoresRequest
from tfrview.core.tfrecord.order import SORTABLE
from tfrview.gui.models.record_table import RecordTableModel
from tfrview.gui.session import DatasetSession
from tfrview.gui.workers.base import Worker
from tfrview.gui.workers.jobs import JobWorker, replace_job

log = logging.getLogger(__name__)

# the image scores offered (`imagesignals.SCORE_COLUMNS` but gray_as_color, a yes/no), with what
# each orders by
SCORES: dict[str, str] = {
    "blur": "sharpness (variance of a Laplacian): low is blurry",
    "brightness": "mean brightness: low is dark",
    "contrast": "spread of brightness: low is flat",
    "entropy": "information in the pixels: low is plain",
    "blank": "share of one constant colour: high is blank",
    "aspect": "width over height",
    "pixels": "width times height",
}
RECORD_ORDER = "record order"
# the predictions' scores offered (issue 24), with what each orders by: the evaluation's, or the
# analysis's stored dataset-step column for the records' own detection keys
PREDICTION_SCORES: dict[str, str] = {
    "max_fp_score": "the score of the record's most confident false positive (largest first: "
    "where the model is surest the labels lack a box or name the wrong class)",
}


class SortController(QObject):
    """What the Sort by box and its direction button do, and what they say of the header's sort."""

    said = Signal(str)  # a line for the status bar (a score that cannot be read yet, and why)
    scored = Signal()  # the rows are sorted by a score now: the views show their first rows

    def __init__(
        self,
        session: DatasetSession,
        model: RecordTableModel,
        header: QHeaderView,
        box: QComboBox,
        down: QToolButton,
        parent=None,
    ) -> None:
        super().__init__(parent)
        self.session, self.model, self.header, self.box, self.down = session, model, header, box, down
        self.job: JobWorker | None = None
        self._out: str | None = None
        box.addItem(RECORD_ORDER, "#")
        for name in model.columns:
            if name in SORTABLE and name != "#":
                box.addItem(name, name)
        box.insertSeparator(box.count())
        for name, what in SCORES.items():
            box.addItem(f"{name} (image)", name)
            box.setItemData(
                box.count() - 1, f"{what}; records with no image come last", Qt.ItemDataRole.ToolTipRole
            )
        box.insertSeparator(box.count())
        for name, what in PREDICTION_SCORES.items():
            box.addItem(f"{name} (predictions)", name)
            box.setItemData(
                box.count() - 1, f"{what}; records with none come last", Qt.ItemDataRole.ToolTipRole
            )
        # the evaluation shown (EvaluationController.scores_of): its scores, when it has them
        self.prediction_scores = None
        box.setToolTip(
            "Sort the records and the gallery by a column, or by an image quality score of the "
            "analysis (records with no image last)"
        )
        down.setCheckable(True)
        down.setToolTip("Smallest first, or largest first (as a second click on a column's header)")
        down.setText(_direction(down.isChecked()))
        box.activated.connect(self._chosen)
        down.toggled.connect(self._turned)
        header.sortIndicatorChanged.connect(self._on_header)

    @property
    def chosen(self) -> str:
        """What the rows are sorted by ("#": record order)."""
        return self.box.currentData() or "#"

    def sort_by(self, name: str, descending: bool = False) -> None:
        """Sort by a column or a score, as the person choosing it in the box does."""
        i = self.box.findData(name)
        if i < 0:
            raise ValueError(f"nothing to sort by named {name!r}")
        self.down.blockSignals(True)
        self.down.setChecked(descending)
        self.down.setText(_direction(descending))
        self.down.blockSignals(False)
        self.box.setCurrentIndex(i)
        self._chosen(i)

    @Slot()
    def on_prediction_scores(self) -> None:
        """A new evaluation (another threshold, predictions loaded): a sort by its score again."""
        if self.chosen in PREDICTION_SCORES:
            self._sort()

    @property
    def running(self) -> bool:
        return self.job is not None

    # what the person does ------------------------------------------------------------------------------

    @Slot(int)
    def _chosen(self, _index: int) -> None:
        self._sort()

    @Slot(bool)
    def _turned(self, descending: bool) -> None:
        self.down.setText(_direction(descending))
        self._sort()

    def _sort(self) -> None:
        name, descending = self.chosen, self.down.isChecked()
        self._stop()
        if name in PREDICTION_SCORES:
            values = self.prediction_scores(name) if self.prediction_scores is not None else None
            if values is not None:  # the evaluation in the window (loaded predictions, its thresholds)
                self._sort_by_values(name, values, int(np.isfinite(values).sum()), len(values))
                return
        if name in SCORES or name in PREDICTION_SCORES:
            self._read_scores(name)
            return
        self.said.emit("")  # what was said of a score's order no longer holds
        order = Qt.SortOrder.DescendingOrder if descending else Qt.SortOrder.AscendingOrder
        section = self.model.columns.index(name)
        if (self.header.sortIndicatorSection(), self.header.sortIndicatorOrder()) == (section, order):
            self.model.sort(section, order)  # the header shows it already: sort anyway (after a score)
        else:
            self.header.setSortIndicator(section, order)  # the table's own sort, as a click does

    @Slot(int, Qt.SortOrder)
    def _on_header(self, section: int, order: Qt.SortOrder) -> None:
        """The header was clicked: the box says the column the rows are sorted by now."""
        if not 0 <= section < len(self.model.columns) or self.model.columns[section] not in SORTABLE:
            return
        i = self.box.findData(self.model.columns[section])
        if i >= 0:
            self._stop()
            self.box.setCurrentIndex(i)
            self.down.blockSignals(True)
            self.down.setChecked(order == Qt.SortOrder.DescendingOrder)
            self.down.setText(_direction(self.down.isChecked()))
            self.down.blockSignals(False)

    # a score, read by a job ------------------------------------------------------------------------------

    def _read_scores(self, name: str) -> None:
        fd, out = tempfile.mkstemp(prefix="tfrview-scores-", suffix=".npy")
        os.close(fd)
        self._out = out
        self.said.emit(f"reading each record's {name} from the analysis…")
        request = self.session.request(ScoresRequest, key=name, out=out)
        self.job = replace_job(None, JobWorker(request, self), self._on_items, self._on_done, self._on_error)

    def _on_items(self, worker: Worker, items: list) -> None:
        if worker is not self.job:
            return
        for msg in items:
            match msg:
                case Scores(key=key, path=path, scored=scored, records=records):
                    values = np.load(path)
                    if key != self.chosen:
                        continue  # the person chose something else meanwhile
                    if not scored:
                        why = "no false positive" if key in PREDICTION_SCORES else "no image was decoded"
                        self.said.emit(f"no record has a {key} score: {why}")
                        self._show_sorted()
                        continue
                    self._sort_by_values(key, values, scored, records)
                case Failed(message=message) if not msg.stopped:
                    self.said.emit(f"cannot sort by {self.chosen}: {message}")
                    self._show_sorted()

    def _sort_by_values(self, key: str, values: np.ndarray, scored: int, records: int) -> None:
        self.header.blockSignals(True)
        self.header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # no column says this order
        self.header.blockSignals(False)
        self.header.viewport().update()
        self.model.sort_by_score(key, values, self.down.isChecked())
        self.scored.emit()
        what = "a false positive" if key in PREDICTION_SCORES else "an image"
        self.said.emit(
            f"sorted by {key}: {scored:,} of {records:,} records have {what}"
            + (" (the rest come last)" if scored < records else "")
        )

    def _on_error(self, worker: Worker, message: str) -> None:
        if worker is self.job:
            self.said.emit(f"cannot sort by {self.chosen}: {message}")
            self._show_sorted()

    def _show_sorted(self) -> None:
        """The box and the button say what the rows are sorted by still (a score that could not
        be read left them as they were)."""
        name, descending = self.model.sort_key or ("#", False)
        i = self.box.findData(name)
        self.box.setCurrentIndex(max(i, 0))
        self.down.blockSignals(True)
        self.down.setChecked(descending)
        self.down.setText(_direction(descending))
        self.down.blockSignals(False)

    @Slot(object)
    def _on_done(self, worker: Worker) -> None:
        if worker is self.job:
            self.job = None
            self._forget_file()

    def _stop(self) -> None:
        if self.job is not None:
            self.job.cancel()
            self.job.wait()
            self.job = None
        self._forget_file()

    def _forget_file(self) -> None:
        if self._out is not None:
            try:
                os.unlink(self._out)
            except OSError as exc:  # a temporary file left behind: worth a line in the log only
                log.debug("could not remove %s: %s", self._out, exc)
            self._out = None

    def shutdown(self) -> None:
        self._stop()


def _direction(descending: bool) -> str:
    """The direction button's words (the header's arrows point either way by style: words do not)."""
    return "largest first" if descending else "smallest first"
