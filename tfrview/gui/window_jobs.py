"""Whole-dataset jobs after the index: the QA checks, then the summary, each in a child process."""

from __future__ import annotations

from PySide6.QtCore import Slot

from tfrview.core.framing import QA_KINDS, Problem, ProblemKind
from tfrview.gui.workers import (
    replace_job,
)


class DatasetJobsMixin:
    """Mixed into MainWindow; uses its attributes."""

    @Slot()
    def start_checks(self) -> None:
        """Run the QA checks over the whole dataset in a child process; findings arrive live."""
        self.problems.remove_kinds({str(k) for k in QA_KINDS})
        self.model.clear_qa()
        self._update_problem_counts()
        self.check_state = "QA checks: starting"
        self.checker = replace_job(self, self.checker, self._job_spec("checks"), self._on_check_items,
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
                phase, done, total = obj["progress"]
                self.check_state = f"QA checks: {phase} {100 * done // max(total, 1)}%"
            elif "error" in obj:
                self.check_state = f"QA checks failed: {obj['error']}"
            elif obj.get("done"):
                self.check_state = "QA checks done"
        self._update_status()

    @Slot(object)
    def _on_checks_finished(self, worker) -> None:
        if worker is not self.checker:
            return
        if self.check_state.startswith("QA checks:"):
            self.check_state = "QA checks stopped"
        elif self.summarizer_job is None:
            self.start_summary()
        self._update_status()

    @Slot()
    def start_summary(self) -> None:
        self.summary_panel.show_progress("computing the summary…")
        self.summarizer_job = replace_job(
            self, self.summarizer_job, self._job_spec("summary"), self._on_summary_items
        )

    def _job_spec(self, job: str) -> dict:
        return {"job": job, "paths": [str(f.path) for f in self.ds.files if f.source is not None],
                "label_map": _label_map_json(self.label_map)}  # fmt: skip

    @Slot(object)
    def _on_summary_items(self, item) -> None:
        worker, items = item
        if worker is not self.summarizer_job:
            return
        for obj in items:
            if "summary" in obj:
                self.summary_panel.show_summary(obj["summary"], obj.get("partial", False))
                self.summary = obj["summary"]
                self.summary_partial = obj.get("partial", False)
                self.offer_keys()
            elif "progress" in obj:
                _, done, total = obj["progress"]
                if self.summary is None:
                    self.summary_panel.show_progress(f"computing the summary… {100 * done // max(total, 1)}%")
            elif "error" in obj:
                self.summary_panel.show_progress(f"the summary failed: {obj['error']}")


def _label_map_json(label_map) -> dict:
    """A label map for a job's spec, with every name each item gives (see core.labelmap.LabelMap)."""
    if label_map is None:
        return {}
    if hasattr(label_map, "to_json"):
        return label_map.to_json()
    return {str(k): v for k, v in label_map.items()}
