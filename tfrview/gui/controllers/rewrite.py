"""File › Rewrite…: a new dataset from the open one (`core.rewrite`), in a job process, its progress
in the status line with a Cancel button beside it, then "Open the result". The dialog checks the
person's words with the core's own parsers before any job starts; the job says anything else."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QWidget,
)

from tfrview.core.errors import TfrviewError
from tfrview.core.procs.messages import Failed, Progress, Rewrote
from tfrview.core.procs.requests import RewriteRequest
from tfrview.core.rewrite.options import GroupBy, parse_class_map, parse_fractions, parse_size
from tfrview.core.tags.words import TagWord
from tfrview.gui.session import DatasetSession, label_map_json
from tfrview.gui.workers.jobs import JobWorker

NO_GROUP = "(none: every record alone)"


class RewriteDialog(QDialog):
    """What to write: the output folder and every option `tfrview rewrite` takes."""

    def __init__(self, parent: QWidget, start_dir: str, where: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Rewrite Dataset")
        self.setMinimumWidth(560)
        form = QFormLayout(self)
        row = QHBoxLayout()
        self.out = QLineEdit(self)
        self.out.setPlaceholderText("a new folder (created whole, at the end)")
        browse = QPushButton("Browse…", self)
        browse.clicked.connect(lambda: self._browse(start_dir))
        row.addWidget(self.out, 1)
        row.addWidget(browse)
        form.addRow("Output folder:", row)
        self.where = QLineEdit(where, self)
        self.where.setPlaceholderText("keep only records matching, e.g. boxes > 0 and not problem")
        form.addRow("Where:", self.where)
        self.map_classes = QLineEdit(self)
        self.map_classes.setPlaceholderText("3=1,dog=animal (ids or names; a new label map is written)")
        form.addRow("Map classes:", self.map_classes)
        self.split = QLineEdit(self)
        self.split.setPlaceholderText(
            "train=0.8,val=0.1,test=0.1 (stratified by class; empty: as the inputs)"
        )
        form.addRow("Split:", self.split)
        self.group_by = QComboBox(self)
        self.group_by.addItems([NO_GROUP, *[str(g) for g in GroupBy]])
        form.addRow("Keep together by:", self.group_by)
        shard_row = QHBoxLayout()
        self.shards = QSpinBox(self)
        self.shards.setRange(0, 100_000)
        self.shards.setSpecialValueText("by size")
        self.shard_size = QLineEdit("256MB", self)
        shard_row.addWidget(self.shards)
        shard_row.addWidget(QLabel("shards a split, or about", self))
        shard_row.addWidget(self.shard_size)
        form.addRow("Shards:", shard_row)
        shuffle_row = QHBoxLayout()
        self.shuffle = QCheckBox("Shuffle, seed", self)
        self.seed = QSpinBox(self)
        self.seed.setRange(0, 2**31 - 1)
        shuffle_row.addWidget(self.shuffle)
        shuffle_row.addWidget(self.seed)
        shuffle_row.addStretch(1)
        form.addRow("Order:", shuffle_row)
        self.drop_tagged = QCheckBox("Leave out records tagged drop (D)", self)
        self.drop_tagged.setChecked(True)
        self.keep_tagged = QCheckBox("Write only records tagged keep (K)", self)
        form.addRow("Tags:", self.drop_tagged)
        form.addRow("", self.keep_tagged)
        self.compression = QComboBox(self)
        self.compression.addItems(["none", "gzip", "zlib"])
        form.addRow("Compression:", self.compression)
        self.index = QCheckBox("DALI / tfrecord index file beside each shard", self)
        form.addRow("", self.index)
        self.force = QCheckBox("Replace the folder if it exists and is not empty", self)
        form.addRow("", self.force)
        form.addRow(QLabel("Damaged records are always left out; the inputs are never changed.", self))
        self.error = QLabel("", self)
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)
        form.addRow(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Rewrite")
        buttons.accepted.connect(self._check)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self, start: str) -> None:
        d = QFileDialog.getExistingDirectory(self, "Output folder (its parent)", start)
        if d:
            self.out.setText(os.path.join(d, "rewritten"))

    def mistake(self) -> str:
        """The first mistake in the person's words, in the core's one line ("" when none)."""
        if not self.out.text().strip():
            return "Name an output folder."
        try:
            if self.map_classes.text().strip():
                parse_class_map(self.map_classes.text())
            if self.split.text().strip():
                parse_fractions(self.split.text())
            if not self.shards.value() and self.shard_size.text().strip():
                parse_size(self.shard_size.text())
        except TfrviewError as exc:
            return str(exc)
        if self.group_by.currentText() != NO_GROUP and not self.split.text().strip():
            return "Keeping records together needs a split."
        return ""

    def _check(self) -> None:
        why = self.mistake()
        self.error.setText(why)
        if not why:
            self.accept()

    def request(self, paths: tuple[str, ...], label_map: dict | None) -> RewriteRequest:
        return RewriteRequest(
            paths=paths,
            out=os.path.abspath(os.path.expanduser(self.out.text().strip())),
            where=self.where.text().strip(),
            map_classes=self.map_classes.text().strip(),
            label_map=label_map or None,
            shards=self.shards.value(),
            shard_size="" if self.shards.value() else self.shard_size.text().strip(),
            split=self.split.text().strip(),
            group_by="" if self.group_by.currentText() == NO_GROUP else self.group_by.currentText(),
            shuffle=self.shuffle.isChecked(),
            seed=self.seed.value(),
            compression=self.compression.currentText(),
            index=self.index.isChecked(),
            force=self.force.isChecked(),
            drop_tags=(str(TagWord.DROP),) if self.drop_tagged.isChecked() else (),
            keep_tags=(str(TagWord.KEEP),) if self.keep_tagged.isChecked() else (),
        )


def rewrote_text(r: Rewrote) -> str:
    """What a finished rewrite says (the result box's text)."""
    splits: dict[str, list[int]] = {}
    for _, split, records, _size in r.shards:
        splits.setdefault(split, []).append(records)
    d = r.dropped
    lines = [
        f"Wrote {r.kept:,} of {r.records_in:,} records to {r.outdir}.",
        f"Left out: {d.get('damaged', 0):,} damaged, {d.get('filter', 0):,} by the filter, {d.get('tag', 0):,} by tags.",
    ]
    if r.changed:
        lines.append(f"Classes mapped in {r.changed:,} records.")
    lines += [
        f"  {s}: {sum(v):,} records in {len(v)} shard{'s' if len(v) != 1 else ''}" for s, v in splits.items()
    ]
    return "\n".join(lines)


class RewriteController(QObject):
    """One rewrite at a time: the dialog, the job, the status line's progress and Cancel."""

    def __init__(
        self,
        window: QMainWindow,
        session: DatasetSession,
        open_result: Callable[[list[str]], None],
        where: Callable[[], str],
        start_dir: Callable[[], str],
    ) -> None:
        super().__init__(window)
        self.window = window
        self.session = session
        self.open_result = open_result
        self.where = where
        self.start_dir = start_dir
        self.worker: JobWorker | None = None
        self.status = QLabel("", window)
        # room for the longest phase, so the line does not jump or cut as the words change
        self.status.setMinimumWidth(
            self.status.fontMetrics().horizontalAdvance(
                "Rewriting: reading records (analysis) 99,999 of 99,999 100%"
            )
        )
        self.cancel_button = QPushButton("Cancel rewrite", window)
        self.cancel_button.clicked.connect(self.cancel)
        # both wait hidden until a rewrite puts them in the status bar: a shown window shows its
        # children, and these two, in no layout yet, sat at its corner over the filter box
        self.status.hide()
        self.cancel_button.hide()
        self.last: Rewrote | Failed | None = None
        self.result_box: QMessageBox | None = None
        self.dialog: RewriteDialog | None = None

    def ask(self) -> None:
        """File › Rewrite…: the dialog, then the job."""
        if self.worker is not None:
            self.window.statusBar().showMessage("A rewrite is running (Cancel rewrite stops it)", 5000)
            return
        dlg = RewriteDialog(self.window, self.start_dir(), self.where())
        self.dialog = dlg
        if dlg.exec() != QDialog.DialogCode.Accepted:
            return
        self.start(dlg.request(self.paths(), label_map_json(self.session.label_map)))

    def paths(self) -> tuple[str, ...]:
        return tuple(str(f.path) for f in self.session.ds.files if f.source is not None)

    def start(self, request: RewriteRequest) -> None:
        self.request = request
        self.last = None
        worker = JobWorker(request, self)
        worker.result.connect(self._messages)
        worker.error.connect(lambda message: setattr(self, "last", Failed(message)))
        worker.done.connect(self._finished)
        self.worker = worker
        sb = self.window.statusBar()
        sb.addPermanentWidget(self.status)
        sb.addPermanentWidget(self.cancel_button)
        self.status.setText("Rewriting: starting…")
        self.status.show()
        self.cancel_button.show()
        worker.start()

    def _messages(self, batch: list) -> None:
        for msg in batch:
            match msg:
                case Progress(phase=phase, done=done, total=total):
                    pct = f" {100 * done / total:.0f}%" if total else ""
                    self.status.setText(f"Rewriting: {phase} {done:,} of {total:,}{pct}")
                case Rewrote() | Failed():
                    self.last = msg

    def cancel(self) -> None:
        if self.worker is not None:
            self.status.setText("Rewriting: stopping…")
            self.worker.cancel()

    def _finished(self, _worker=None) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.wait()
        sb = self.window.statusBar()
        for w in (self.status, self.cancel_button):
            sb.removeWidget(w)
        end = self.last
        if isinstance(end, Rewrote):
            self._said(end)
            return
        if end is None or end.stopped:  # killed before its rename: its temporary folder goes now
            from tfrview.core.rewrite.outdir import clean_stale

            clean_stale(Path(self.request.out))
            sb.showMessage("Rewrite stopped: nothing was written", 10000)
            return
        box = QMessageBox(
            QMessageBox.Icon.Warning, "Rewrite", end.message, QMessageBox.StandardButton.Close, self.window
        )
        self.result_box = box  # window-modal, not blocking
        box.open()

    def _said(self, r: Rewrote) -> None:
        self.window.statusBar().showMessage(f"Rewrote {r.kept:,} records to {r.outdir}", 10000)
        box = QMessageBox(self.window)
        box.setWindowTitle("Rewrite")
        box.setText(rewrote_text(r))
        open_button = box.addButton("Open the result", QMessageBox.ButtonRole.AcceptRole)
        box.addButton(QMessageBox.StandardButton.Close)
        self.result_box = box  # window-modal, not blocking: the window repaints behind it

        def clicked(button) -> None:
            if button is open_button:
                self.open_result([r.outdir])

        box.buttonClicked.connect(clicked)
        box.open()

    def shutdown(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            self.worker.wait()
