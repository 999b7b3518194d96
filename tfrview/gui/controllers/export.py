"""Writing new files from the window: intact records, selections, images. Always new files, atomically."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QBuffer, QIODevice, QObject, Qt, Slot
from PySide6.QtWidgets import (
    QFileDialog,
    QInputDialog,
    QMainWindow,
    QMessageBox,
    QProgressDialog,
    QTableView,
)

from tfrview.core.errors import TfrviewError
from tfrview.core.output.arwriter import RecordFormat, official_writer, options_like
from tfrview.core.output.atomic import atomic_write_bytes, clean_stale, refuse_overwriting_inputs
from tfrview.core.output.words import ExportFormat
from tfrview.core.procs.messages import STOPPED, Failed, Progress, Wrote
from tfrview.core.procs.requests import ExportRequest, Request, WriteRequest
from tfrview.core.tfrecord.framing import Compression
from tfrview.core.tfrecord.index import BAD_DATA_CRC
from tfrview.core.tfrecord.report import intact_numbers
from tfrview.core.userdirs import cache_dir
from tfrview.gui.dialogs import remembered_specs
from tfrview.gui.models.problems import ProblemsModel
from tfrview.gui.models.record_table import RecordTableModel
from tfrview.gui.painting import render_overlay_on_image
from tfrview.gui.scan_phase import ScanPhase
from tfrview.gui.session import DatasetSession, label_map_json
from tfrview.gui.settings import remember_write, write_dir
from tfrview.gui.widgets.image_panel import ImagePanel
from tfrview.gui.widgets.record_table_view import selected_rows
from tfrview.gui.workers.base import Worker
from tfrview.gui.workers.jobs import JobWorker

if TYPE_CHECKING:  # (the core's export, repair and salvage modules load with their first use)
    from tfrview.core.output.export import ExportResult
    from tfrview.core.output.repair import RepairResult
    from tfrview.core.output.salvage import SalvageResult


class ExportController(QObject):
    """Salvage, exports and saved images: each a task on a worker, behind a progress dialog."""

    def __init__(
        self,
        window: QMainWindow,
        session: DatasetSession,
        table: QTableView,
        model: RecordTableModel,
        problems: ProblemsModel,
        image_panel: ImagePanel,
        labels_shown,
        data_dir,
    ) -> None:
        super().__init__(window)
        self.window = window  # the parent of dialogs, and its status bar
        self.session = session
        self.ds = session.ds
        self.table = table
        self.model = model
        self.problems = problems
        self.image_panel = image_panel
        self.labels_shown = labels_shown  # () -> bool: whether labels are drawn with the boxes
        self.data_dir = data_dir  # () -> str: the data's folder (dialogs for writing open in write_dir())
        self.tasks: set[Worker] = set()

    def shutdown(self) -> None:
        for t in list(self.tasks):
            t.cancel()
            t.wait()

    def selected_records(self) -> np.ndarray:
        """The selected records, or every record shown when at most one is selected. Read from the
        selection's ranges (Ctrl+A on 2,000,000 rows is one range), never one index per row."""
        rows = selected_rows(self.table.selectionModel().selection())
        if len(rows) <= 1:
            rows = np.arange(self.model.rowCount(), dtype=np.int64)
        return self.model.record_numbers(rows)

    def _run_job(self, title: str, total: int, request: Request, on_done) -> None:
        """A job process that writes a new file (salvage, repair, export), with a progress dialog;
        `on_done` gets the job's ending, the one shape: `messages.Wrote`, or `messages.Failed`
        (`.stopped` when a person stopped it: Cancel, or the job raised `errors.Cancelled`)."""
        dlg = QProgressDialog(title, "Cancel", 0, max(total, 1), self.window)
        dlg.setWindowModality(Qt.WindowModality.WindowModal)
        dlg.setMinimumDuration(300)
        worker = JobWorker(request, self)
        outcome: list[Wrote | Failed] = []

        def items(batch: list) -> None:
            for msg in batch:
                match msg:
                    case Progress(done=done):
                        dlg.setValue(min(done, dlg.maximum()))
                    case Wrote() | Failed():
                        outcome.append(msg)

        worker.result.connect(items)
        worker.error.connect(lambda message: outcome.append(Failed(message)))
        dlg.canceled.connect(worker.cancel)

        def finished(_worker) -> None:
            dlg.reset()
            worker.wait()
            self.tasks.discard(worker)
            on_done(outcome[0] if outcome else Failed("stopped", STOPPED))

        worker.done.connect(finished)
        self.tasks.add(worker)
        worker.start()

    def _said_failed(self, title: str, value: object) -> bool:
        """Say a job that did not write: a stop in the status bar, not in a warning (the person asked
        for it; a job stopped before its rename leaves no file, one that had just finished may have
        written it), a failure in a warning. False for a result."""
        if not isinstance(value, Failed):
            return False
        if value.stopped:
            self.window.statusBar().showMessage(f"{title}: stopped", 10000)
        else:
            QMessageBox.warning(self.window, title, value.message)
        return True

    def _write_request(
        self, what: str, path: Path, comp: str, fmt: RecordFormat = RecordFormat.TFRECORD
    ) -> WriteRequest:
        opened = [f for f in self.ds.files if f.source is not None]
        return WriteRequest(
            what=what,
            paths=tuple(str(f.path) for f in opened),
            counts=tuple(f.index.count for f in opened),
            out=str(path),
            compression=comp,
            fmt=fmt.value,
        )

    def _has_arrayrecord(self) -> bool:
        return any(f.compression == Compression.ARRAYRECORD for f in self.ds.files if f.source is not None)

    def format_dialog(self) -> tuple[QInputDialog, list[RecordFormat]]:
        """The dialog that asks what a salvage of ArrayRecord files writes, and the format of each
        of its items. The default is the input's format where the official writer is installed,
        TFRecord otherwise, and the dialog says which and why."""
        first = next(
            f for f in self.ds.files if f.source is not None and f.compression == Compression.ARRAYRECORD
        )
        if official_writer() is not None:
            options = options_like(first.source)
            items = [
                f"ArrayRecord, as the input ({options}; the official writer, read back before the rename)",
                "TFRecord",
            ]
            formats = [RecordFormat.ARRAYRECORD, RecordFormat.TFRECORD]
            words = "The input is ArrayRecord: its intact records are written as ArrayRecord by default."
        else:
            items = ["TFRecord"]
            formats = [RecordFormat.TFRECORD]
            words = (
                "The input is ArrayRecord, but writing ArrayRecord needs the official array-record package,\n"
                "which is not installed here (it has no Windows build): the intact records are written as TFRecord."
            )
        dlg = QInputDialog(self.window)
        dlg.setWindowTitle("Format of the new file")
        dlg.setLabelText(words + "\n\nWrite the new file as:")
        dlg.setComboBoxItems(items)
        dlg.setComboBoxEditable(False)
        dlg.setTextValue(items[0])
        return dlg, formats

    def _ask_format(self) -> RecordFormat | None:
        """What a salvage writes: asked only when an input is ArrayRecord (TFRecord otherwise)."""
        if not self._has_arrayrecord():
            return RecordFormat.TFRECORD
        dlg, formats = self.format_dialog()
        if not dlg.exec():
            return None
        items = dlg.comboBoxItems()
        return formats[items.index(dlg.textValue())] if dlg.textValue() in items else formats[0]

    def _ask_compression(self, default: str) -> str | None:
        items = [f"same as the source ({default})", "none", "gzip", "zlib"]
        choice, ok = QInputDialog.getItem(
            self.window, "Compression", "Compression of the new file:", items, 0, False
        )
        if not ok:
            return None
        return default if choice.startswith("same") else choice

    def _source_compression(self) -> str:
        """The inputs' TFRecord compression (an ArrayRecord input's chunks are its own: "none")."""
        comps = {f.compression for f in self.ds.files if f.source is not None}
        comp = comps.pop() if len(comps) == 1 else Compression.NONE
        return str(Compression.NONE if comp == Compression.ARRAYRECORD else comp)

    @Slot()
    def save_intact(self) -> None:
        p = self.session.index_progress
        if p is not None and p.phase in (ScanPhase.CANCELLED, ScanPhase.ERROR):
            QMessageBox.information(
                self.window,
                "Save intact records",
                "The scan stopped before every CRC was checked: Resume it first.",
            )
            return
        if p is None or p.phase is not ScanPhase.DONE:
            QMessageBox.information(
                self.window, "Save intact records", "Wait until every CRC is checked (see the status bar)."
            )
            return

        if not any(len(intact_numbers(f.index)) for f in self.ds.files if f.source is not None):
            QMessageBox.information(
                self.window, "Save intact records", "No record is intact: there is nothing to save."
            )
            return
        fmt = self._ask_format()
        if fmt is None:
            return
        chosen = self._ask_new_file("Save intact records as", "intact", fmt)
        if chosen is not None:
            self.write_intact(*chosen, fmt=fmt)

    def _ask_new_file(
        self, title: str, suffix: str, fmt: RecordFormat = RecordFormat.TFRECORD
    ) -> tuple[Path, str] | None:
        """The compression (TFRecord's; an ArrayRecord file keeps its input's), then where: a new
        file named after the dataset, in the folder last written to (never beside the data unasked)."""
        if fmt == RecordFormat.ARRAYRECORD:
            comp: str | None = str(Compression.NONE)
        else:
            comp = self._ask_compression(self._source_compression())
        if comp is None:
            return None
        stem = Path(self.ds.name.replace("?", "x")).name.split(".")[0]
        ext = ".array_record" if fmt == RecordFormat.ARRAYRECORD else ".tfrecord"
        suggested = Path(write_dir()) / f"{stem}-{suffix}{ext}{'.gz' if comp == Compression.GZIP else ''}"
        path, _ = QFileDialog.getSaveFileName(self.window, title, str(suggested))
        if not path:
            return None
        remember_write(path)
        return Path(path), comp

    @Slot()
    def save_repaired(self) -> None:
        """Repair Into a New File: what Save Intact writes, plus every damaged record whose bytes
        can be proven whole again (one flipped bit); the report says what, how, and what was left."""
        p = self.session.index_progress
        if p is None or p.phase is not ScanPhase.DONE:
            QMessageBox.information(
                self.window, "Repair", "Wait until every CRC is checked (see the status bar)."
            )
            return
        if self._has_arrayrecord():  # said before any dialog, in the core's words (output.repair)
            from tfrview.core.output.repair import refuse_arrayrecord  # (not with the window)

            try:
                refuse_arrayrecord([f.source for f in self.ds.files if f.source is not None])
            except TfrviewError as exc:
                QMessageBox.information(self.window, "Repair", str(exc))
                return
        chosen = self._ask_new_file("Repair into a new file", "repaired")
        if chosen is not None:
            self.write_repaired(*chosen)

    def write_repaired(self, path: Path, comp: str, on_done=None) -> None:

        def done(end: Wrote | Failed) -> None:
            value: RepairResult | Failed = end.result if isinstance(end, Wrote) else end
            if on_done is not None:
                on_done(value)
                return
            if self._said_failed("Repair", value):
                return
            lines = [
                f"Wrote {value.written:,} records to {path}: {len(value.repaired):,} repaired, "
                f"{len(value.dropped):,} left out."
            ]
            lines += [f"The file: {value.file_fix}."] if value.file_fix else []
            lines += (
                ["(The files changed since they were shown: the records are numbered as repair framed them.)"]
                if isinstance(end, Wrote) and end.renumbered
                else []
            )
            lines += [f"{r.where}: {r.how}" for r in value.repaired[:20]]
            lines += [
                f"left out {f'record {k}' if k is not None else 'a record'}: {why}"
                for k, why in value.dropped[:10]
            ]
            QMessageBox.information(self.window, "Repair", "\n".join(lines))

        self._run_job("Repairing…", self.model.total(), self._write_request("repair", path, comp), done)

    def write_intact(
        self, path: Path, comp: str, on_done=None, fmt: RecordFormat = RecordFormat.TFRECORD
    ) -> None:

        def done(end: Wrote | Failed) -> None:
            value: SalvageResult | Failed = end if isinstance(end, Failed) else end.result
            if on_done is not None:
                on_done(value)
                return
            if self._said_failed("Save intact records", value):
                return
            said = " (ArrayRecord, read back and checked)" if fmt == RecordFormat.ARRAYRECORD else ""
            text = (
                f"Wrote {value.written:,} intact records to {path}{said}.\n\nLeft out: {value.dropped:,} damaged "
                f"record{'s' if value.dropped != 1 else ''} and {value.damaged_regions} unreadable "
                f"region{'s' if value.damaged_regions != 1 else ''}."
            )
            if value.reheadered:
                text += f"\nKept {value.reheadered} record(s) whose header was damaged, with a new header."
            QMessageBox.information(self.window, "Save intact records", text)

        self._run_job(
            "Writing intact records…",
            self.model.total(),
            self._write_request("salvage", path, comp, fmt),
            done,
        )

    def export(self, what: str) -> None:
        numbers = self.selected_records()
        if not len(numbers):
            return
        comp = None
        keep_damaged = False
        if what == "records":
            keep_damaged_choice = self._ask_keep_damaged(numbers)
            if keep_damaged_choice is None:
                return
            keep_damaged = keep_damaged_choice
            comp = self._ask_compression(self._source_compression())
            if comp is None:
                return
            path, _ = QFileDialog.getSaveFileName(
                self.window, "Export records", str(Path(write_dir()) / "selection.tfrecord")
            )
        elif what == "jsonl":
            path, _ = QFileDialog.getSaveFileName(
                self.window, "Export features", str(Path(write_dir()) / "selection.jsonl")
            )
        else:
            path = QFileDialog.getExistingDirectory(self.window, "Export images to a folder", write_dir())
        if path:
            remember_write(path, folder=what not in ("records", "jsonl"))
            self.write_export(what, numbers, Path(path), comp or "none", keep_damaged=keep_damaged)

    def export_format(self, fmt) -> None:
        """The selection (or every record shown) in a training format: a new folder (a file for HF
        Parquet) named in a dialog; an existing one is replaced only when the person says so."""

        fmt = ExportFormat(fmt)
        numbers = self.selected_records()
        if not len(numbers):
            return
        stem = Path(self.ds.name.replace("?", "x")).name.split(".")[0] or "dataset"
        suffix = ".parquet" if fmt.is_file else ""
        suggested = Path(write_dir()) / f"{stem}-{fmt.value.replace('_', '-')}{suffix}"
        path, _ = QFileDialog.getSaveFileName(
            self.window,
            f"Export {len(numbers):,} records as {fmt.words}",
            str(suggested),
            options=QFileDialog.Option.DontConfirmOverwrite,
        )
        if not path:
            return
        out = Path(path)
        force = False
        if os.path.lexists(out) and not (out.is_dir() and not any(out.iterdir())):
            answer = QMessageBox.question(
                self.window,
                "Export",
                f"{out} exists. Replace it (everything in it) with the export?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No,
            )
            if answer != QMessageBox.StandardButton.Yes:
                return
            force = True
        remember_write(path, folder=not fmt.is_file)
        self.write_export(fmt.value, numbers, out, force=force)

    def damaged_among(self, numbers: list[int]) -> list[int]:
        """Which of these records are known to fail their data CRC (verified so far)."""
        import numpy as np

        nums = np.asarray(numbers, dtype=np.int64)
        return nums[np.isin(nums, self.ds.numbers_with(BAD_DATA_CRC))].tolist()

    def _ask_keep_damaged(self, numbers: list[int]) -> bool | None:
        """False: leave damaged records out (the default); True: keep them with their failing CRC;
        None: cancelled."""
        damaged = self.damaged_among(numbers)
        if not damaged:
            return False
        box = QMessageBox(self.window)
        box.setWindowTitle("Export records")
        box.setIcon(QMessageBox.Icon.Warning)
        box.setText(f"{len(damaged):,} of the {len(numbers):,} records fail their data CRC.")
        box.setInformativeText(
            "They are left out unless you keep them; kept, they keep their failing CRC, "
            "so the new file still says they are damaged."
        )
        leave = box.addButton("Leave them out", QMessageBox.ButtonRole.AcceptRole)
        keep = box.addButton("Keep them, damaged", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(leave)
        box.exec()
        return {leave: False, keep: True}.get(box.clickedButton())

    def _problems_by_record(self) -> dict[int, list[dict]]:
        """Each record's problems as JSON-lines exports carry them: one pass over the panel's rows
        (they live on this thread; the export itself runs on a worker)."""
        out: dict[int, list[dict]] = {}
        for r in self.problems.rows:
            if r.record is not None:
                out.setdefault(r.record, []).append(
                    {"kind": str(r.problem.kind), "message": r.problem.message}
                )
        return out

    def write_export(
        self,
        what: str,
        numbers: list[int] | np.ndarray,
        path: Path,
        comp: str = "none",
        on_done=None,
        keep_damaged: bool = False,
        force: bool = False,
    ) -> None:
        """Export records `numbers` as a TFRecord file, JSON lines, or images (with boxes or not), in
        a job process: where the records are goes to it in a .npz (the window reads nothing)."""
        import tempfile

        where = cache_dir() / "jobs"
        where.mkdir(parents=True, exist_ok=True)
        spans = tempfile.NamedTemporaryFile(dir=where, suffix=".npz", delete=False)  # noqa: SIM115 - removed when done
        spans.close()
        from tfrview.core.output.export import save_spans  # (with the first export, not the window)

        save_spans(spans.name, self.ds, numbers)
        request = ExportRequest(
            what=what,
            paths=tuple(str(f.path) for f in self.ds.files),
            out=str(path),
            spans=spans.name,
            compression=comp,
            keep_damaged=keep_damaged,
            label_map=label_map_json(self.session.label_map),
            box_specs=tuple(s.to_json() for s in remembered_specs()),
            problems={str(k): v for k, v in self._problems_by_record().items()} if what == "jsonl" else {},
            force=force,
            splits=tuple(self.session.splits),  # the window's: by the paths, or chosen by the person
        )
        formats = {f.value for f in ExportFormat}

        def done(end: Wrote | Failed) -> None:

            with contextlib.suppress(OSError):  # our temporary spans file, in the temp dir: the OS clears it
                os.unlink(spans.name)
            value: ExportResult | Failed = end if isinstance(end, Failed) else end.result
            if isinstance(value, Failed) and value.stopped:
                # a killed job leaves its temporary beside the output (its process has ended: the
                # worker waited for it); another writer's, still going, stays
                clean_stale(path)
            if on_done is not None:
                on_done(value)
                return
            if self._said_failed("Export", value):
                return
            images = what.startswith("images") or what in formats
            text = f"Exported {value.written:,} {'images' if images else 'records'} to {path}."
            if what in formats:
                text = f"Exported {value.written:,} images as {ExportFormat(what).words} to {path}."
                if value.skipped:
                    text += f"\nSkipped {value.skipped:,} records:\n" + "\n".join(value.notes[:10])
            elif value.skipped and what.startswith("images"):
                text += f"\nSkipped {value.skipped}:\n" + "\n".join(value.notes[:10])
            elif value.notes:
                text += "\n" + "\n".join(value.notes)
            QMessageBox.information(self.window, "Export", text)

        self._run_job(f"Exporting {len(numbers):,} records…", len(numbers), request, done)

    @Slot()
    def save_image(self) -> None:
        panel = self.image_panel
        if panel.qimage is None or panel.current is None:
            QMessageBox.information(self.window, "Save image", "The selected record has no image to save.")
            return
        with_boxes = (
            QMessageBox.question(
                self.window,
                "Save image",
                "Draw the boxes and labels on the saved image?",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            )
            == QMessageBox.StandardButton.Yes
        )
        name = f"record-{panel.current.number}{'-boxes' if with_boxes else ''}.png"
        path, _ = QFileDialog.getSaveFileName(
            self.window, "Save image", str(Path(write_dir()) / name), "PNG (*.png);;JPEG (*.jpg)"
        )
        if not path:
            return
        remember_write(path)
        self.write_image(Path(path), with_boxes)

    def write_image(self, path: Path, with_boxes: bool) -> bool:
        """Write the shown image (optionally with overlays burned in) to a new file, atomically."""

        panel = self.image_panel
        img = panel.qimage
        if img is None:
            return False
        try:
            refuse_overwriting_inputs(path, [f.path for f in self.ds.files])
        except TfrviewError as exc:
            QMessageBox.warning(self.window, "Save image", str(exc))
            return False
        if with_boxes:
            img = render_overlay_on_image(
                img,
                panel.current.overlay,
                self.labels_shown(),
                panel.view.mask,
                panel.view.mask_opacity,
                panel.view.layer,
            )
        fmt = "JPG" if path.suffix.lower() in (".jpg", ".jpeg") else "PNG"
        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        try:
            if not img.save(buf, fmt):
                raise OSError(f"could not encode the image as {fmt}")
            atomic_write_bytes(path, bytes(buf.data()))
        except OSError as exc:
            QMessageBox.warning(self.window, "Save image", f"Could not write {path}: {exc}")
            return False
        self.window.statusBar().showMessage(f"Saved {path}", 4000)
        return True
