"""The Evaluation view's controller and the window's predictions (issue 24): predictions loaded
from a file (File › Load Predictions…, joined in a job process, never a thread of the window's),
drawn by the image panel and the gallery beside the ground truth; the evaluation job asked again
when the IoU or score threshold moves (either the view's controls or the image panel's slider);
a click on a matrix cell shows its records (array operations over the job's per-box cells); the
PR curves in the Plot panel; the records' most confident false positive for the Sort by.

State is plain data: `Thresholds` (frozen), `LoadedPredictions` and `EvalArrays` (numpy arrays
read from the .npz files the jobs write: a million boxes are no JSON line)."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow, QMessageBox

from tfrview.core.procs.messages import Evaluated, Failed
from tfrview.gui.job_state import Phase
from tfrview.gui.workers.base import Worker
from tfrview.gui.workers.jobs import ConversingJob, replace_job

if TYPE_CHECKING:  # the predictions' reading and the view load on first use, not with the window
    from tfrview.core.records.predlayer import Loaded
    from tfrview.gui.widgets.evaluation_panel import EvaluationPanel

log = logging.getLogger(__name__)

DEBOUNCE_MS = 120  # a threshold's moves within this are one question to the job


@dataclass(frozen=True)
class Thresholds:
    """The IoU a prediction needs to match a box, and the score under which predictions are
    left out: one pair for the image panel, the gallery and the evaluation."""

    iou: float = 0.5
    score: float = 0.5


class LoadedPredictions:
    """Predictions joined to the window's records from a file: flat arrays sorted by record
    number (global, the window's), a record's predictions a slice found by binary search. Their
    classes are codes into `names` (the evaluation's classes, matched by name: a record's boxes
    are coded the same way before they are matched, `predlayer.Versus.coded`)."""

    def __init__(
        self,
        record: np.ndarray,
        box: np.ndarray,
        cls: np.ndarray,
        score: np.ndarray,
        source: str,
        names: list[str] | None = None,
    ) -> None:
        order = np.argsort(record, kind="stable")
        self.record = np.asarray(record, dtype=np.int64)[order]
        self.box = np.asarray(box, dtype=np.float64).reshape(-1, 4)[order]
        self.cls = np.asarray(cls, dtype=np.int64)[order]
        self.score = np.asarray(score, dtype=np.float64)[order]
        self.source = source
        self.names = names

    def __len__(self) -> int:
        return len(self.record)

    def of(self, n: int) -> Loaded | None:
        """Record n's predictions (None: the file has none for it)."""
        lo, hi = np.searchsorted(self.record, [n, n + 1])
        if lo == hi:
            return None
        from tfrview.core.records.predictions import Predictions
        from tfrview.core.records.predlayer import Loaded

        pred = Predictions(self.box[lo:hi], self.cls[lo:hi], self.score[lo:hi], self.source)
        return Loaded(pred, tuple(self.names) if self.names is not None else None)


class EvalArrays:
    """What the evaluation job measured a record and a box, for the window: every record's most
    confident false positive's score (NaN: none), and each box's cell of the confusion matrix as
    the evaluation counts them (a ground-truth box: its class's row and its partner's class's
    column, or the background's when missed; a false positive: the background's row and its
    class's column), by record number."""

    def __init__(
        self, max_fp_score: np.ndarray, cell_n: np.ndarray, cell_row: np.ndarray, cell_col: np.ndarray
    ):
        self.max_fp_score = np.asarray(max_fp_score, dtype=np.float64)
        self.cell_n = np.asarray(cell_n, dtype=np.int64)
        self.cell_row = np.asarray(cell_row, dtype=np.int64)
        self.cell_col = np.asarray(cell_col, dtype=np.int64)

    def records_in(self, row: int, col: int) -> np.ndarray:
        """The record numbers (sorted, each once) with a box in cell (row, col)."""
        hit = (self.cell_row == row) & (self.cell_col == col)
        return np.unique(self.cell_n[hit])

    def scores_of(self, total: int) -> np.ndarray:
        """Every record's most confident false positive's score, `total` records long (NaN: none,
        or not evaluated): the Sort by's values."""
        out = np.full(total, np.nan)
        k = min(total, len(self.max_fp_score))
        out[:k] = self.max_fp_score[:k]
        return out

    @classmethod
    def of_job(cls, z, classes: int) -> EvalArrays:
        """From the evaluate job's arrays (`messages.Evaluated`), `classes` the evaluation's."""
        from tfrview.core.records.matching import BoxOutcome

        g_out, g_par = z["gt_outcome"].astype(np.int64), z["gt_partner"].astype(np.int64)
        pred_class = z["pred_class"].astype(np.int64)
        paired = (g_out == int(BoxOutcome.MATCHED)) | (g_out == int(BoxOutcome.WRONG_CLASS))
        g_col = np.full(len(g_out), classes, dtype=np.int64)
        g_col[paired] = pred_class[g_par[paired]]
        fp = z["pred_outcome"].astype(np.int64) == int(BoxOutcome.FALSE_POSITIVE)
        return cls(
            z["record_max_fp_score"],
            np.concatenate([z["gt_n"], z["pred_n"][fp]]),
            np.concatenate([z["gt_class"], np.full(int(fp.sum()), classes)]),
            np.concatenate([g_col, pred_class[fp]]),
        )


def curves_of(z, names: list[str], iou: float) -> dict:
    """Each class's precision against recall at the evaluation's IoU (classes the job reached a
    recall for), as the Plot panel's `show_curves` takes them."""
    recall, precision, at = z["recall_points"], z["pr_precision"], z["pr_score"]
    out = []
    for c, name in enumerate(names):
        reached = np.isfinite(at[c]) if c < len(at) else np.zeros(0, bool)
        if not reached.any():
            continue
        out.append(
            {
                "name": f"{name} (AP {precision[c].mean():.3f})",
                "colour_key": name,
                "x": recall[reached].tolist(),
                "y": precision[c][reached].tolist(),
            }
        )
    return {
        "title": f"precision against recall of each class at IoU ≥ {iou:.2f} (over every score)",
        "x_name": "recall",
        "y_name": "precision",
        "curves": out,
    }


def summary_of(msg: Evaluated) -> dict:
    """The view's plain data of an `Evaluated` (`analysis.evaluation.summary`'s shape)."""
    return {
        "source": msg.source,
        "images": msg.images,
        "boxes": msg.boxes,
        "predictions": msg.predictions,
        "iou": msg.iou,
        "score": msg.score,
        "map": msg.map,
        "map50": msg.map50,
        "classes": msg.classes,
        "confusion": {"labels": [*msg.names, "background"], "matrix": msg.confusion},
        "likely_errors": msg.likely_errors,
    }


# --- the controller ---------------------------------------------------------------------------------


class EvaluationController(QObject):
    """Owns the thresholds, the loaded predictions and the evaluation shown; widgets stay thin."""

    said = Signal(str)  # a line for the status bar (the join's count, an error)
    loaded_changed = Signal()  # predictions were loaded: what is drawn changes
    evaluated = Signal()  # a new evaluation is shown (the Sort by may read its max_fp_score)
    tiles_stale = Signal()  # the thresholds moved (and stayed DEBOUNCE_MS): the gallery draws its tiles again

    def __init__(
        self, session, window: QMainWindow, filtering=None, image_panel=None, thumbs=None, plots=None
    ):
        super().__init__(window)
        self.session, self.window = session, window
        self.filtering, self.image_panel, self.thumbs, self.plots = filtering, image_panel, thumbs, plots
        self.thresholds = Thresholds()
        self.loaded: LoadedPredictions | None = None
        self.loaded_path: str | None = None
        self.join_report: dict | None = None  # what the join said: matched, and why the rest did not
        self.summary: dict | None = None
        self.arrays: EvalArrays | None = None
        self.curves: dict | None = None
        self._panel: EvaluationPanel | None = None  # made when first shown or used (`panel`)
        self.dock = QDockWidget("Evaluation", window)
        self.dock.setObjectName("evaluation")
        self.job: ConversingJob | None = None
        self.asked = ""  # where the answer to the last question asked of the job goes (its answers say it)
        self._outs = 0
        self._out_dir: str | None = None  # where the job writes its .npz files; removed at the end
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.evaluate)
        self._tiles_timer = QTimer(self)
        self._tiles_timer.setSingleShot(True)
        self._tiles_timer.setInterval(DEBOUNCE_MS)
        self._tiles_timer.timeout.connect(self.tiles_stale.emit)
        self.dock.visibilityChanged.connect(self._on_visible)
        if image_panel is not None:
            image_panel.score_changed.connect(self._on_slider)
            image_panel.loaded = self.predictions_of
        if thumbs is not None:
            thumbs.predictions = self.predictions_of
        session.checks_changed.connect(self._on_checks)

    @property
    def panel(self) -> EvaluationPanel:
        """The view, made on first use: its module and its Qt classes cost the window's start
        (~50 ms at import) for a panel most sessions never open."""
        if self._panel is None:
            from tfrview.gui.widgets.evaluation_panel import EvaluationPanel

            p = self._panel = EvaluationPanel(self.window)
            p.set_thresholds(self.thresholds.iou, self.thresholds.score)
            p.details.setVisible(self.join_report is not None)
            p.thresholds_changed.connect(self._on_panel_thresholds)
            p.cell_clicked.connect(self.show_cell)
            p.curves_asked.connect(self.show_curves)
            p.details_asked.connect(lambda: self.join_details().show())
            self.dock.setWidget(p)
        return self._panel

    # what is drawn ---------------------------------------------------------------------------------

    def predictions_of(self, n: int) -> Loaded | None:
        """Record n's loaded predictions (None: none loaded for it: its own, if any, are drawn).
        Read by the image panel and the thumbnail threads (a reference read: no lock needed)."""
        loaded = self.loaded
        return loaded.of(n) if loaded is not None else None

    def set_thresholds(self, iou: float, score: float) -> None:
        """One pair for every view: the image panel re-matches its record at once, the gallery
        draws new tiles at them, the evaluation is asked again (after DEBOUNCE_MS of quiet)."""
        self.thresholds = Thresholds(iou, score)
        if self._panel is not None:  # a panel made later shows them then
            self._panel.set_thresholds(iou, score)
        if self.image_panel is not None:
            self.image_panel.set_thresholds(iou, score)
        if self.thumbs is not None and self.thumbs.thresholds != (iou, score):
            self.thumbs.thresholds = (iou, score)
            self._tiles_timer.start()
        if self.summary is not None or self.dock.isVisible():
            self._timer.start()

    @Slot(float, float)
    def _on_panel_thresholds(self, iou: float, score: float) -> None:
        self.set_thresholds(iou, score)

    @Slot(float)
    def _on_slider(self, score: float) -> None:
        self.set_thresholds(self.thresholds.iou, score)

    @Slot(bool)
    def _on_visible(self, visible: bool) -> None:
        if visible:
            self.panel  # noqa: B018  (made on first show)
        if visible and self.summary is None and self.job is None:
            self.evaluate()

    def scores_of(self, name: str) -> np.ndarray | None:
        """Every record's `max_fp_score` of the evaluation shown (None: none shown yet: the Sort
        by reads the analysis's stored column instead)."""
        if self.arrays is None or name != "max_fp_score" or not hasattr(self.window, "model"):
            return None
        return self.arrays.scores_of(self.window.model.total())

    # a matrix cell's records -------------------------------------------------------------------------

    @Slot(int, int)
    def show_cell(self, row: int, col: int) -> None:
        """The records with a box in cell (row, col) in the table and the gallery (known already:
        no job), the first shown with its boxes."""
        s, a = self.summary, self.arrays
        if s is None or a is None or self.filtering is None:
            return
        labels = s["confusion"]["labels"]
        numbers = a.records_in(row, col)
        what = f"truth {labels[row]}, predicted {labels[col]}"
        self.filtering.show_records(
            f"evaluation: {what}", numbers, note=f"IoU ≥ {s['iou']:.2f}, score ≥ {s['score']:.2f}"
        )
        if len(numbers) and hasattr(self.window, "select_record"):
            self.window.select_record(int(numbers[0]))
        self.said.emit(f"{len(numbers):,} records with a box of {what}")

    # PR curves ---------------------------------------------------------------------------------------

    @Slot()
    def show_curves(self) -> None:
        """Each class's precision against recall, in the Plot panel (brought to the front)."""
        if self.curves is None or self.plots is None:
            return
        self.plots.panel.show_curves(self.curves)
        if hasattr(self.window, "_raise_dock"):
            self.window._raise_dock(self.plots.dock)

    # shown ---------------------------------------------------------------------------------------------

    def show(self, summary: dict, arrays: EvalArrays | None, curves: dict | None = None) -> None:
        """An evaluation's answer: the view shows it, the Sort by may read its scores."""
        self.summary, self.arrays, self.curves = summary, arrays, curves
        self.panel.show_summary(summary)
        self.evaluated.emit()

    def use_predictions(
        self, loaded: LoadedPredictions | None, path: str | None, report: dict | None
    ) -> None:
        """Predictions joined from a file, drawn from now on (None: back to the records' own)."""
        self.loaded, self.loaded_path, self.join_report = loaded, path, report
        if self._panel is not None:  # a panel made later shows it then
            self._panel.details.setVisible(report is not None)
        if self.thumbs is not None:
            self.thumbs.reset(self.thumbs.label_map)  # tiles queued before are drawn again
        self.loaded_changed.emit()

    def choose_file(self) -> None:
        """File › Load Predictions…: a COCO results JSON or a TFRecord of predictions."""
        path, _ = QFileDialog.getOpenFileName(
            self.window,
            "Load predictions",
            str(Path(self.session.ds.files[0].path).parent) if self.session.ds.files else "",
            "Predictions (*.json *.tfrecord *.record *.tfrecords *.gz);;All files (*)",
        )
        if path:
            self.load(path)

    def join_details(self) -> QMessageBox:
        """The dialog with the join's details: how many matched, and why the others did not."""
        r = self.join_report or {}
        box = QMessageBox(self.window)
        box.setObjectName("join_details")
        box.setWindowTitle("Predictions joined")
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.setText(r.get("line", "no predictions loaded"))
        box.setDetailedText("\n".join(r.get("details", [])))
        return box

    def shutdown(self) -> None:
        self._timer.stop()
        if self.job is not None:
            self.job.cancel()
            self.job.wait()
            self.job = None
        if self._out_dir is not None:
            shutil.rmtree(self._out_dir, ignore_errors=True)
            self._out_dir = None

    # jobs ----------------------------------------------------------------------------------------------

    def load(self, path: str) -> None:
        """Join the predictions of `path` to the window's records in a job, then evaluate them;
        the job keeps them for the next thresholds. Every later job over the stored analysis (the
        filter's tp/fp/fn/max_fp_score, the Sort by) reads them too (`session.predictions_file`)."""
        self.use_predictions(None, path, None)
        self.session.predictions_file = path
        self._start(path)

    def evaluate(self) -> None:
        """The evaluation at the thresholds: a new question to the job when one is running over
        the same predictions (an answer within the second: nothing is read again), else a job."""
        self._timer.stop()
        t = self.thresholds
        if self.job is not None and self.job.isRunning():
            self.asked = self._out()
            line = json.dumps({"iou": t.iou, "score": t.score, "out": self.asked})
            self.panel.show_running(f"at IoU ≥ {t.iou:.2f}, score ≥ {t.score:.2f}")
            if self.job.ask(line):
                return
        self._start(self.loaded_path or "")

    def _out(self) -> str:
        """A new .npz path for the job's next answer (each answer its own: one may be read while
        the next is written)."""
        if self._out_dir is None:
            self._out_dir = tempfile.mkdtemp(prefix="tfrview-evaluation-")
        self._outs += 1
        return str(Path(self._out_dir) / f"evaluation-{self._outs}.npz")

    def _start(self, predictions: str) -> None:
        from tfrview.core.procs.requests import EvaluateRequest

        t = self.thresholds
        self.asked = self._out()
        request = self.session.request(
            EvaluateRequest,
            iou=t.iou,
            score=t.score,
            predictions=predictions or None,
            out=self.asked,
            converse=True,
        )
        what = Path(predictions).name if predictions else "the records' own predictions"
        self.panel.show_running(what)
        if predictions:
            self.said.emit(f"joining {what} to the records…")
        old, self.job = self.job, None
        if old is not None:
            old.end()
        self.job = replace_job(
            old, ConversingJob(request, self), self._on_items, self._on_done, self._on_error
        )

    def _on_items(self, worker: Worker, items: list) -> None:
        if worker is not self.job:
            return
        for msg in items:
            match msg:
                case Evaluated(path=path):
                    if path != self.asked:
                        self._forget(path)
                        continue  # a question the person has moved past
                    self._take(msg, worker.request.predictions)
                case Failed(message=message) if not msg.stopped:
                    self.panel.show_error(message)
                    if worker.request.predictions:
                        self.said.emit(f"cannot load {Path(worker.request.predictions).name}: {message}")

    def _take(self, msg: Evaluated, predictions: str | None) -> None:
        """An answer: shown; with a predictions file, its joined predictions drawn from now on."""
        names = list(msg.names)
        with np.load(msg.path) as z:
            arrays = EvalArrays.of_job(z, len(names))
            curves = curves_of(z, names, msg.iou)
            joined = None
            if predictions and self.loaded is None:
                joined = LoadedPredictions(
                    z["pred_n"], z["pred_box"], z["pred_class"], z["pred_score"], msg.source, names
                )
        self._forget(msg.path)
        if joined is not None:
            first, details = (
                (msg.join[0], msg.join[1:]) if msg.join else (f"{len(joined):,} predictions joined", [])
            )
            self.use_predictions(
                joined, predictions, {"line": first, "details": [d.strip() for d in details]}
            )
            self.said.emit(first)
            if details:  # some did not join: why, at once (not modal: the window stays usable)
                self.join_details().show()
        self.show(summary_of(msg), arrays, curves)

    def _on_error(self, worker: Worker, message: str) -> None:
        if worker is self.job:
            self.panel.show_error(message)

    @Slot(object)
    def _on_done(self, worker: Worker) -> None:
        if worker is self.job:
            self.job = None

    def _forget(self, path: str) -> None:
        try:
            Path(path).unlink(missing_ok=True)
        except OSError as exc:  # a temporary file left behind: worth a line in the log only
            log.debug("could not remove %s: %s", path, exc)

    @Slot(object)
    def _on_checks(self, state) -> None:
        """The analysis ended: what the evaluation reads is stored (again): asked anew when shown."""
        if state.phase is Phase.DONE and (self.dock.isVisible() or self.summary is not None):
            self._start(self.loaded_path or "")
