"""Background work: the indexer/verifier and the record decoder. Both run core code on a QThread
and hand plain data back by queued signals; neither touches a widget, model or pixmap."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from PySide6.QtCore import QThread, Signal

from tfrview.core.dataset import Dataset
from tfrview.core.framing import Problem
from tfrview.core.images import DecodedImage, ImageError, ImageRef, decode_image, find_images
from tfrview.core.index import verify
from tfrview.core.overlays import BoxSpec, Overlay, compute_overlay
from tfrview.core.payload import Payload, decode


@dataclass(frozen=True, slots=True)
class IndexProgress:
    phase: str  # "index" | "verify" | "done" | "cancelled" | "error"
    records: int  # records framed so far (whole dataset)
    problems: int
    done_bytes: int
    total_bytes: int
    message: str = ""


class IndexWorker(QThread):
    """Frames every file of a dataset, then verifies every data CRC. Chunks land in the dataset's
    own RecordIndex objects; the UI polls counts on a timer and gets progress by signal."""

    progress = Signal(object)  # IndexProgress
    problem_found = Signal(object)  # (file number, Problem)

    def __init__(self, dataset: Dataset, parent=None) -> None:
        super().__init__(parent)
        self.dataset = dataset
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def _total(self, phase: str) -> int:
        files = [f for f in self.dataset.files if f.source is not None]
        if phase == "index":
            return sum(f.source.file_size for f in files)
        return sum(int(f.index.scanned) for f in files)

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:  # never let a worker die silently
            self.progress.emit(IndexProgress("error", self.dataset.count, self._problems(), 0, 0, str(exc)))

    def _problems(self) -> int:
        return sum(len(f.index.problems) for f in self.dataset.files)

    def _run(self) -> None:
        ds = self.dataset
        total = self._total("index")
        base = 0
        last = 0.0
        for fi, f in enumerate(ds.files):
            if f.source is None:
                continue
            seen = len(f.index.problems)
            for _, chunk in ds.scan_file(fi, chunk_records=2000, first_chunk=500):
                for p in f.index.problems[seen:]:
                    self.problem_found.emit((fi, p))
                seen = len(f.index.problems)
                if self._cancel.is_set():
                    self._emit("cancelled", base + chunk.consumed, total)
                    return
                now = time.monotonic()
                if now - last > 0.05 or chunk.done:
                    self._emit("index", base + chunk.consumed, total)
                    last = now
                time.sleep(0)  # let the UI thread take the GIL between chunks
            base += f.source.file_size
        self._emit("index", total, total)
        vtotal = self._total("verify")
        vbase = 0
        for fi, f in enumerate(ds.files):
            if f.source is None or not f.index.count:
                continue
            for vc in verify(f.source, f.index, chunk_bytes=4 << 20):
                for p in vc.problems:
                    f.index.problems.append(p)
                    self.problem_found.emit((fi, p))
                if self._cancel.is_set():
                    self._emit("cancelled", vbase, vtotal)
                    return
                done = int(f.index.offsets[vc.stop - 1] + f.index.lengths[vc.stop - 1])
                now = time.monotonic()
                if now - last > 0.05:
                    self._emit("verify", vbase + done, vtotal)
                    last = now
                time.sleep(0)
            vbase += int(f.index.scanned)
        self._emit("done", vtotal, vtotal)

    def _emit(self, phase: str, done: int, total: int) -> None:
        self.progress.emit(IndexProgress(phase, self.dataset.count, self._problems(), done, total))


@dataclass(frozen=True)
class DecodeRequest:
    number: int
    data: bytes
    image: int  # which of the record's images
    label_map: dict[int, str] | None
    spec: BoxSpec | None


@dataclass(frozen=True)
class RecordView:
    """Everything the image panel needs for one record, computed off the UI thread."""

    number: int
    payload: Payload
    images: tuple[ImageRef, ...]
    image_index: int
    decoded: DecodedImage | None
    error: str | None
    overlay: Overlay | None


def build_view(req: DecodeRequest) -> RecordView:
    p = decode(req.data)
    feats = p.features if p.kind in ("example", "sequence_example") else {}
    refs = tuple(find_images(feats))
    if not refs:
        return RecordView(req.number, p, refs, 0, None, None, None)
    i = min(max(req.image, 0), len(refs) - 1)
    try:
        img = decode_image(feats, refs[i])
    except ImageError as exc:
        return RecordView(req.number, p, refs, i, None, str(exc), None)
    ov = compute_overlay(feats, img.width, img.height, req.label_map, req.spec)
    if img.notes and any("EXIF" in n for n in img.notes) and ov.boxes:
        ov = Overlay(ov.spec, ov.boxes, ov.caption, (*ov.notes, "boxes drawn on the EXIF-rotated image"))
    return RecordView(req.number, p, refs, i, img, None, ov)


class DecodeWorker(QThread):
    """Decodes the latest requested record; older requests still waiting are dropped, so scrolling
    fast through records never queues stale work."""

    ready = Signal(object)  # RecordView

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._cond = threading.Condition()
        self._pending: DecodeRequest | None = None
        self._stop = False

    def request(self, req: DecodeRequest) -> None:
        with self._cond:
            self._pending = req
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stop = True
            self._cond.notify()

    def run(self) -> None:
        while True:
            with self._cond:
                while self._pending is None and not self._stop:
                    self._cond.wait()
                if self._stop:
                    return
                req, self._pending = self._pending, None
            try:
                view = build_view(req)
            except Exception as exc:  # a bug must not kill the panel
                view = RecordView(req.number, decode(b""), (), 0, None, f"internal error: {exc}", None)
            self.ready.emit(view)


def problem_text(p: Problem) -> str:
    return f"{p.kind}: {p.message}"
