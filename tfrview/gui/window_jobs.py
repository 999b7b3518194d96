"""The whole-dataset job after the index: the analysis pass (QA checks and the summary in one read
of every record, on a pool of worker processes, remembered per file) in a child process."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Slot

from tfrview.core.tfrecord.framing import QA_KINDS, Problem, ProblemKind
from tfrview.gui.job_state import JobState, Phase
from tfrview.gui.workers import (
    replace_job,
)


class DatasetJobsMixin:
    """Mixed into MainWindow; uses its attributes."""

    @Slot()
    def start_checks(self) -> None:
        """The analysis pass over the whole dataset in a child process; QA findings and the summary
        arrive as files finish (at once for files analysed before and unchanged since)."""
        self.problems.remove_kinds({str(k) for k in QA_KINDS})
        self.model.clear_qa()
        self._update_problem_counts()
        self.checks = JobState().started()
        self.summary_panel.show_progress("computing the summary…")
        self.checker = replace_job(self, self.checker, self._job_spec("analyze"), self._on_check_items,
                                   self._on_checks_finished)  # fmt: skip
        self._update_status()

    @Slot(object)
    def _on_check_items(self, item) -> None:
        worker, items = item
        if worker is not self.checker:
            return  # from a run that was restarted (e.g. a new label map)
        for obj in items:
            if "problem" in obj:
                d = obj["problem"]
                p = Problem(ProblemKind(d["kind"]), d["offset"], d["length"], d["record"], d["message"])
                self._on_problem((obj["file"], p))
            elif "progress" in obj:
                step, done, total = obj["progress"]
                self.checks = self.checks.progressed(step, done, total)
            elif "summary" in obj:
                self._show_summary(obj)
            elif "error" in obj:
                self.checks = self.checks.failed(obj["error"])
                self.summary_panel.show_progress(f"the summary failed: {obj['error']}")
            elif obj.get("done"):
                self.checks = replace(self.checks, phase=Phase.DONE)
        self._update_status()

    def _show_summary(self, obj: dict) -> None:
        partial = obj.get("partial", False)
        self.summary_panel.show_summary(obj["summary"], partial)
        self.summary = obj["summary"]
        self.summary_partial = partial
        self.offer_keys()
        if not partial:
            self.analysis_note = _analysis_note(obj)

    @Slot(object)
    def _on_checks_finished(self, worker) -> None:
        if worker is not self.checker:
            return
        self.checks = self.checks.finished()
        self._update_status()

    @property
    def check_state(self) -> str:
        """The QA checks in words, for the status bar (decisions use `self.checks.phase`)."""
        return self.checks.text("QA checks")

    def _job_spec(self, job: str) -> dict:
        """A job over the files that opened, with the window's number of each and its record count
        (a stored analysis is used only if it frames the same records)."""
        opened = [(fi, f) for fi, f in enumerate(self.ds.files) if f.source is not None]
        return {"job": job, "paths": [str(f.path) for _, f in opened], "files": [fi for fi, _ in opened],
                "counts": [f.index.count for _, f in opened], "label_map": _label_map_json(self.label_map),
                "jobs": analysis_jobs()}  # fmt: skip

def analysis_jobs() -> int:
    """Worker processes for the analysis (View › Worker Processes; default: the cores)."""
    from PySide6.QtCore import QSettings

    from tfrview.core.analysis import default_jobs

    v = QSettings().value("analysis/jobs")
    try:
        return max(1, int(v)) if v is not None else default_jobs()
    except (TypeError, ValueError):
        return default_jobs()


def _analysis_note(obj: dict) -> str:
    """'analysed 14:02' when every file's analysis was stored and still holds, else ''."""
    import time

    if not obj.get("files") or obj.get("cached") != obj.get("files") or not obj.get("analysed_at"):
        return ""
    return "checked " + time.strftime("%Y-%m-%d %H:%M", time.localtime(obj["analysed_at"]))


def _label_map_json(label_map) -> dict:
    """A label map for a job's spec, with every name each item gives (see core.labelmap.LabelMap)."""
    if label_map is None:
        return {}
    if hasattr(label_map, "to_json"):
        return label_map.to_json()
    return {str(k): v for k, v in label_map.items()}
