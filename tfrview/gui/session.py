"""The open dataset and what is known of it, apart from any widget (as napari keeps its viewer
model): the label map, the scan (framing and every CRC) and the analysis pass (QA checks and the
summary). The window and its controllers listen to its typed signals and read its state; nothing
here shows anything."""

from __future__ import annotations

import logging
import time
from dataclasses import fields as dataclass_fields
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QObject, QSettings, Signal, Slot

from tfrview.core.procs.messages import (
    CauseFound,
    Done,
    DuplicateGroups,
    Failed,
    FileCause,
    Plot,
    ProblemFound,
    Progress,
    SplitSummary,
    Summary,
)
from tfrview.core.procs.requests import AnalyzeRequest, Request
from tfrview.core.records.labelmap import find_label_map, label_map_misfit, load_label_map
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.splits import split_of_files
from tfrview.gui.dialogs import remembered_specs
from tfrview.gui.job_state import JobState, Phase
from tfrview.gui.scan_phase import ScanPhase
from tfrview.gui.workers.base import Worker
from tfrview.gui.workers.jobs import JobWorker, StoredJob, replace_job
from tfrview.gui.workers.scan import IndexProgress, ScanWorker

log = logging.getLogger(__name__)

R = TypeVar("R", bound=Request)

if TYPE_CHECKING:  # (the sample's reading loads with the sample, not the window)
    from tfrview.core.analysis.sample import SampleFacts


class DatasetSession(QObject):
    index_progressed = Signal(object)  # IndexProgress
    problem_found = Signal(int, object)  # file number, Problem (framing, CRC and QA alike)
    # file number, its RecordIndex as every command frames it (swap it in)
    file_reframed = Signal(int, object)
    cause_found = Signal(int, str, int, str)  # file number, problem kind, its offset: why it happened
    file_cause_found = Signal(int, str)  # file number, why the whole file broke (a line-ending conversion)
    file_failed = Signal(int, str)  # file number, why it could not be opened or read
    # file number, messages.Failed: a scan process failed (framed here instead)
    child_failed = Signal(int, object)
    sample_ready = Signal(object)  # SampleFacts: a sample of records, once every file is framed
    scan_ended = Signal(object)  # the last IndexProgress (done, cancelled or error)
    analysis_started = Signal()  # QA findings of an earlier run are void
    checks_changed = Signal(object)  # JobState of the analysis pass
    summary_ready = Signal(object, bool)  # the summary dict, and whether it is partial
    plot_ready = Signal(object)  # messages.Plot: the plot an event file opens on, sent with the analysis
    duplicates_ready = Signal(object)  # messages.DuplicateGroups: the analysis's groups of copies
    label_map_changed = Signal(str)  # a note for the person ("" when they chose it)
    splits_changed = Signal()  # the files' splits (`splits`): the person assigned some
    split_summary_ready = Signal(str)  # a split's summary arrived (`split_summaries[name]`)

    def __init__(self, dataset: Dataset, run_checks: bool = True, parent=None) -> None:
        super().__init__(parent)
        self.ds = dataset
        self.run_checks = run_checks  # the analysis follows a finished scan
        self.label_map: dict[int, str] | None = None
        self.label_map_path: Path | None = None
        self.label_map_auto = False  # found beside the data (dropped if it does not fit it)
        # the files a map found beside the data is for (None: all)
        self.label_map_files: list[int] | None = None
        self.label_map_note = ""  # why a label map found beside the data is not used ("" if none was dropped)
        self.index_progress: IndexProgress | None = None
        self.sample: SampleFacts | None = None
        self.checks = JobState()
        self.summary: dict | None = None
        self.summary_partial = True
        # each file's split: named by its path (tfrecord.splits), or chosen in the window
        self.splits: list[str] = split_of_files([str(f.path) for f in dataset.files])
        self.split_summaries: dict[str, dict] = {}  # the last analysis's summary of each split
        self.analysis_note = ""  # "checked <when>" when every file's stored analysis still holds
        self.indexer: ScanWorker | None = None
        self.analyzer: JobWorker | None = None
        self._ended = False
        self._stop_asked = False  # Stop before the scan had started: it stops at its first chance
        self._closed = False  # shut down: nothing new starts (a listener may close the window mid-signal)
        # a predictions file the person loaded (File › Load Predictions…, issue 24): every job over
        # the stored analysis reads its tp, fp, fn, max_fp_score instead of the records' own
        self.predictions_file: str | None = None
        # (the scan, `_analysis_inputs`): what the analysis request given to that scan was made with
        self._asked_with: tuple | None = None
        self._early_for: ScanWorker | None = None  # the scan an analysis started beside (`_on_stored_found`)
        # the analysis's words that came while the scan still ran, and its end (said once it ends):
        # a QA finding is numbered by the files before it, which must be framed first
        self._held: list = []
        self._held_end: Worker | None = None
        self._painted = False  # the window painted its first rows (`rows_painted`)

    # the label map -------------------------------------------------------------------------------------

    def load_nearby_label_map(self) -> None:
        """A label map found beside the data is used until a sample shows it does not fit."""
        notes: list[str] = []
        found = find_label_map([f.path for f in self.ds.files], notes)
        for note in notes:  # candidates skipped for the search's limits: File > Load Label Map… still works
            log.warning("%s", note)
        if found is None:
            return
        try:
            self.label_map = load_label_map(found)
        except Exception as exc:  # a file beside the data that is not a label map: not ours to report
            log.debug("%s beside the data is no label map: %s", found, exc)
            return
        self.label_map_path = found
        self.label_map_auto = True
        self.label_map_files = self._files_beside(found)

    def _files_beside(self, label_map_path: Path) -> list[int] | None:
        """The files of the datasets (tfrecord.groups) that lie in the label map's folder: a map
        beside one dataset judges and names that dataset's classes, not another's opened with it."""
        from tfrview.core.tfrecord.groups import group_files

        paths = [f.path for f in self.ds.files]
        groups = group_files([str(p) for p in paths])
        mine = [
            fi
            for g in groups
            if any(Path(paths[fi]).parent == label_map_path.parent for fi in g.files)
            for fi in g.files
        ]
        return None if len(mine) == len(paths) else sorted(mine)

    def set_label_map(self, path: Path) -> None:
        """The person's label map (kept whatever the data holds); raises TfrviewError if unreadable.
        The QA checks depend on it, so an analysis already run runs again."""
        self.label_map = load_label_map(path)
        self.label_map_path = path
        self.label_map_auto = False
        self.label_map_files = None  # the person's: for every file
        self.label_map_note = ""
        self.label_map_changed.emit("")
        if self.checks.phase is not Phase.IDLE:
            self.start_analysis()

    def _drop_unfitting_label_map(self, ids: frozenset[int]) -> None:
        if not self.label_map or not self.label_map_auto:
            return
        misfit = label_map_misfit(set(ids), self.label_map)
        if misfit is None:
            return
        name = self.label_map_path.name if self.label_map_path else "the label map"
        self.label_map = None
        self.label_map_path = None
        self.label_map_files = None
        self.label_map_note = (
            f"Not using {name} found beside the data (judged on a sample of its records): "
            f"{misfit}. File › Load Label Map… uses it anyway."
        )
        log.info("%s", self.label_map_note)
        self.label_map_changed.emit(self.label_map_note)
        if self.analyzer is not None and self.checks.phase is not Phase.IDLE:
            # an analysis started beside the scan (`_on_stored_found`) judged with that map: again
            self.start_analysis(early=self._holding())

    # splits --------------------------------------------------------------------------------------------

    def split_names(self) -> list[str]:
        """The splits the files are in, in the order they first appear ("" for none left out)."""
        return list(dict.fromkeys(s for s in self.splits if s))

    def set_split(self, files: list[int], name: str) -> None:
        """The person puts these files in split `name` ("" takes them out of any); the next
        analysis merges with it (the summaries per split, the filter's and the plots' `split`), so
        one already run runs again."""
        name = name.strip()
        changed = False
        for fi in files:
            if 0 <= fi < len(self.splits) and self.splits[fi] != name:
                self.splits[fi] = name
                changed = True
        if not changed:
            return
        log.info("%d file(s) put in split %r", len(files), name)
        self.splits_changed.emit()
        if self.checks.phase is not Phase.IDLE:
            self.start_analysis()

    # the scan ------------------------------------------------------------------------------------------

    @property
    def index_running(self) -> bool:
        return self.indexer is not None and self.indexer.isRunning()

    @property
    def scan_over(self) -> bool:
        """The scan ended and everyone listening has taken that in."""
        return self._ended

    @property
    def stored_files(self) -> int:
        return self.indexer.stored_files if self.indexer is not None else 0

    @property
    def stored_at(self) -> float | None:
        return self.indexer.stored_at if self.indexer is not None else None

    def start(self) -> None:
        """Scan the dataset (framing, then every CRC), going on from what is known already: after
        a stop, the records framed and verified are kept."""
        if self.index_running or self._closed:
            return
        for fi, f in enumerate(self.ds.files):
            if f.error and self.indexer is None:
                self.file_failed.emit(fi, f.error)
        self._ended = False
        if self.run_checks and self._painted:  # the analysis job follows the scan: its process
            _spare_soon()  # starts meanwhile (before the first rows: `rows_painted` starts it)
        w = ScanWorker(self.ds, self, class_ids=self.label_map_auto)
        w.ids_files = self.label_map_files
        w.label_map_json = label_map_json(self.label_map)
        if self.run_checks and self.checks.phase is Phase.IDLE:  # the analysis `_on_stored_found` starts
            w.analysis_request = self._early_request()
            self._asked_with = (w, self._analysis_inputs())
        w.progress.connect(self._on_index_progress)
        w.problem_found.connect(self.problem_found)
        w.reframed.connect(self.file_reframed)
        w.child_failed.connect(self.child_failed)
        w.result.connect(self._on_sample)
        w.error.connect(self._on_index_error)
        w.done.connect(self._on_index_done)
        w.stored_found.connect(self._on_stored_found)
        self.indexer = w
        if self._stop_asked:
            w.cancel()
            self._stop_asked = False
        w.start()

    @Slot()
    def rows_painted(self) -> None:
        """The window painted its first rows: the scan, waiting for that (`FIRST_PAINT_WAIT_S`),
        goes on."""
        if self.indexer is not None:
            self.indexer.first_painted.set()
        if not self._painted:
            self._painted = True
            _spare_soon()

    def stop(self) -> None:
        """Stop the scan and the analysis (both can be resumed or rerun)."""
        if self.indexer is not None:
            self.indexer.cancel()
        else:
            self._stop_asked = True
        if self.analyzer is not None:
            self.analyzer.cancel()

    @Slot(object)
    def _on_index_progress(self, p: IndexProgress) -> None:
        self.index_progress = p
        self.index_progressed.emit(p)

    @Slot(object)
    def _on_sample(self, facts: SampleFacts) -> None:
        self.sample = facts
        self._drop_unfitting_label_map(facts.class_ids)
        self.sample_ready.emit(facts)

    @Slot(str)
    def _on_index_error(self, message: str) -> None:
        w = self.indexer
        fi = w.file_no if w is not None else 0
        p = IndexProgress(ScanPhase.ERROR, self.ds.count, w.problems() if w else 0, 0, 0, message, fi)
        self.index_progress = p
        self.file_failed.emit(fi, message)
        self.index_progressed.emit(p)

    @Slot()
    def _on_stored_found(self) -> None:
        """The scan took a file's results from the store: the split was analysed before, so its
        analysis starts now, beside the scan, not after it (10,000 unchanged shards: the findings
        ~5 s sooner): said from its stored answer when the scan read one for this very request
        (`StoredJob`, no process), else a job (which may find it stored whole:
        `procs.jobs._say_stored_answer`). Its words wait for the scan's end
        (`_on_analysis_items`). Only a first analysis: a rerun follows its scan."""
        w = self.indexer
        if (
            w is None
            or self.sender() is not w
            or not self.run_checks
            or self._closed
            or self.checks.phase is not Phase.IDLE
        ):
            return
        self._early_for = w
        self.start_analysis(early=True)

    @Slot(object)
    def _on_index_done(self, worker: Worker) -> None:
        if worker is not self.indexer:
            return
        p = self.index_progress
        self.scan_ended.emit(p)
        self._ended = True
        early = self._early_for is worker and self.analyzer is not None
        self._early_for = None
        if early:
            self._say_held()
        elif p is not None and p.phase is ScanPhase.DONE and self.run_checks and not self._closed:
            self.start_analysis()

    # the analysis pass ---------------------------------------------------------------------------------

    def request(self, cls: type[R], **fields) -> R:
        """A `cls` request over the files that opened: `fields`, and of what the window knows of the
        files those `cls` has (their paths, the window's number of each and its record count: a
        stored analysis is used only if it frames the same records; the label map, the box keys
        chosen, the worker processes). One place, so each job gets the same facts."""
        mine = {f.name for f in dataclass_fields(cls)}
        opened = [(fi, f) for fi, f in enumerate(self.ds.files) if f.source is not None]
        files = {
            "paths": tuple(str(f.path) for _, f in opened),
            "files": tuple(fi for fi, _ in opened),
            "counts": tuple(f.index.count for _, f in opened),
            "label_map": label_map_json(self.label_map),
            "label_map_files": None if self.label_map_files is None else tuple(self.label_map_files),
            "box_specs": tuple(s.to_json() for s in remembered_specs()),
            "splits": tuple(self.splits[fi] for fi, _ in opened),
        }
        if "jobs" in mine:
            files["jobs"] = analysis_jobs()
        if "predictions" not in fields:  # predictions loaded from a file: their tp, fp, fn, max_fp_score
            files["predictions"] = self.predictions_file
        return cls(**{k: v for k, v in files.items() if k in mine}, **fields)

    def start_analysis(self, early: bool = False) -> None:
        """The analysis pass over the whole dataset in a child process; QA findings and the summary
        arrive as files finish (at once for files analysed before and unchanged since). `early`:
        beside the scan, before the window has counted the records (the job counts them)."""
        if self._closed:
            return
        self.split_summaries = {}
        self._held, self._held_end = [], None  # a run replaced: what it said is void
        self.analysis_started.emit()
        self._set_checks(JobState().started())
        if early and self._asked_with == (self.indexer, self._analysis_inputs()):
            req = self.indexer.analysis_request  # as asked when the scan started: nothing changed since
        else:
            req = self._early_request() if early else self.request(AnalyzeRequest)
        told = self._stored_told(req) if early else None
        self.analyzer = replace_job(
            self.analyzer,
            JobWorker(req, self) if told is None else StoredJob(told, self),
            self._on_analysis_items,
            self._on_analysis_done,
            self._on_analysis_error,
        )

    def _analysis_inputs(self) -> tuple:
        """What an analysis request holds that may change while a window is open (the request's
        paths and numbers do not): compared, not rebuilt, as the stored analysis arrives (building
        a request walks every file: 10,000 on the UI thread while the scan thread holds the GIL)."""
        return (
            label_map_json(self.label_map),
            self.label_map_files,
            tuple(s.to_json() for s in remembered_specs()),
            tuple(self.splits),
            self.predictions_file,
            analysis_jobs(),
        )

    def _early_request(self) -> AnalyzeRequest:
        """The analysis asked beside the scan: before the window has counted the records (the job
        counts them)."""
        return replace(self.request(AnalyzeRequest), counts=None)

    def _stored_told(self, req: AnalyzeRequest) -> list | None:
        """What the analysis said when it last ran over these unchanged files with this very request,
        as the scan read it from the store (`ScanWorker.stored_analysis`); None: run the job."""
        w = self.indexer
        got = w.stored_analysis if w is not None else None
        return got[1] if got is not None and got[0] == req else None

    def checks_text(self, records: int | None = None) -> str:
        """The analysis's words for the status line. Before it starts, while the scan it follows
        still runs: what it waits for, in records read so far (a cold 10,000-shard split is read for
        ~8 s before its analysis starts: the words say so from the first second, where running the
        analysis beside the scan would share two cores with it and delay every row's CRC status);
        `records`: the count the rest of the line says (the table's), else the scan's last report."""
        p = self.index_progress
        if (
            self.checks.phase is Phase.IDLE
            and self.run_checks
            and p is not None
            and p.phase in (ScanPhase.INDEX, ScanPhase.VERIFY)
        ):
            read = p.records if records is None else records
            return f"QA checks: after the scan ({read:,} records read so far)"
        return self.checks.text("QA checks")

    def _set_checks(self, state: JobState) -> None:
        self.checks = state
        self.checks_changed.emit(state)

    def _holding(self) -> bool:
        """Whether the analysis's words wait: it started beside a scan that still runs."""
        return self._early_for is not None and self._early_for is self.indexer

    def _say_held(self) -> None:
        """What the analysis said while the scan ran, now that every file is framed."""
        held, end = self._held, self._held_end
        self._held, self._held_end = [], None
        if held and self.analyzer is not None:
            self._on_analysis_items(self.analyzer, held)
        if end is not None:
            self._on_analysis_done(end)

    def _on_analysis_items(self, worker: Worker, items: list) -> None:
        if worker is not self.analyzer:
            return  # the last words of a run that was replaced (e.g. by a new label map)
        if self._holding():
            now = [m for m in items if isinstance(m, Progress)]  # how far it is: at once
            self._held += [m for m in items if not isinstance(m, Progress)]
            items = now
        state = self.checks
        for msg in items:
            match msg:
                case ProblemFound(file=fi, problem=p):
                    self.problem_found.emit(fi, p)
                case Progress(phase=phase, done=done, total=total):
                    state = state.progressed(phase, done, total)
                case CauseFound(file=fi, kind=kind, offset=offset, text=text):
                    self.cause_found.emit(fi, kind, offset, text)
                case FileCause(file=fi, text=text):
                    self.file_cause_found.emit(fi, text)
                case Plot():
                    self.plot_ready.emit(msg)
                case DuplicateGroups():
                    self.duplicates_ready.emit(msg)
                case SplitSummary(split=split, summary=summary):
                    self.split_summaries[split] = summary
                    self.split_summary_ready.emit(split)
                case Summary():
                    self.summary = msg.summary
                    self.summary_partial = msg.partial
                    if not msg.partial:
                        self.analysis_note = _analysis_note(msg)
                    self.summary_ready.emit(self.summary, self.summary_partial)
                case Failed(message=message):
                    state = state.failed(message)
                case Done():
                    state = replace(state, phase=Phase.DONE)
                case _:
                    log.debug("the analysis sent %s: not for the session", type(msg).__name__)
        self._set_checks(state)

    def _on_analysis_error(self, worker: Worker, message: str) -> None:
        if worker is self.analyzer:
            self._set_checks(self.checks.failed(message))

    @Slot(object)
    def _on_analysis_done(self, worker: Worker) -> None:
        if worker is not self.analyzer:
            return
        if self._holding():
            self._held_end = worker  # ended after what it said, which waits for the scan
            return
        self._set_checks(self.checks.finished())

    # the end -------------------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """Stop and join every worker of the session; nothing starts after this."""
        self._closed = True
        for w in (self.indexer, self.analyzer):
            if w is not None:
                w.cancel()
                w.wait()


SPARE_AFTER_MS = 200  # the spare job process starts this long after the first rows painted


def _spare_soon() -> None:
    """The spare job process (`procs.launch.prewarm`) started shortly, off the first paint's way:
    no job runs before the first rows, and on 2 cores a Python start-up beside the window's (~0.3-0.5
    s of CPU) took a core from the window and the X server while they were made."""
    from PySide6.QtCore import QTimer

    from tfrview.core.procs.launch import prewarm

    QTimer.singleShot(SPARE_AFTER_MS, prewarm)


def analysis_jobs() -> int:
    """Worker processes for the analysis (View › Worker Processes; default: the cores)."""
    from tfrview.core.childproc import cores

    v = QSettings().value("analysis/jobs")
    try:
        return max(1, int(v)) if v is not None else cores()
    except (TypeError, ValueError):
        return cores()


def _analysis_note(msg: Summary) -> str:
    """'checked 2026-11-23 14:02' when every file's analysis was stored and still holds, else ''."""
    if not msg.files or msg.cached != msg.files or not msg.analysed_at:
        return ""
    return "checked " + time.strftime("%Y-%m-%d %H:%M", time.localtime(msg.analysed_at))


def label_map_json(label_map) -> dict:
    """A label map for a job's spec, with every name each item gives (see core.labelmap.LabelMap)."""
    if label_map is None:
        return {}
    if hasattr(label_map, "to_json"):
        return label_map.to_json()
    return {str(k): v for k, v in label_map.items()}
