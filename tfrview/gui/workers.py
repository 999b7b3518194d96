"""Background work: the indexer/verifier and the record decoder. Both run core code on a QThread
and hand plain data back by queued signals; neither touches a widget, model or pixmap."""

from __future__ import annotations

import functools
import threading
import time
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QObject, QThread, Signal

from tfrview.core.limits import inflation_note
from tfrview.core.records.images import (
    DecodedImage,
    ImageError,
    ImageRef,
    decode_image,
    find_images,
    image_features,
)
from tfrview.core.records.overlays import BoxSpec, Overlay, compute_overlay
from tfrview.core.records.payload import Payload, decode
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.framing import TfrviewError
from tfrview.core.tfrecord.index import verify
from tfrview.core.tfrecord.report import sample_facts
from tfrview.gui.request_queue import NewestFirst

CHILD_MIN_BYTES = 32 << 20  # smaller files are done in well under a second in this process


def _first_unverified(index) -> int:
    """The first record whose data CRC was not checked yet (a scan stopped in its verify pass)."""
    from tfrview.core.tfrecord.index import VERIFIED

    unchecked = np.flatnonzero((index.status & VERIFIED) == 0)
    return int(unchecked[0]) if len(unchecked) else index.count


def _stop(proc) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
    err = getattr(proc, "error_file", None)
    if err is not None:
        err.close()


@dataclass(frozen=True, slots=True)
class IndexProgress:
    phase: str  # "index" | "verify" | "done" | "cancelled" | "error"
    records: int  # records framed so far (whole dataset)
    problems: int
    done_bytes: int
    total_bytes: int
    message: str = ""
    file_no: int = 0  # with phase "error": the file being read when it happened
    note: str = ""  # e.g. a compressed file that inflates like a decompression bomb


class IndexWorker(QThread):
    """Frames every file of a dataset, then verifies every data CRC. Chunks land in the dataset's
    own RecordIndex objects; the UI polls counts on a timer and gets progress by signal."""

    progress = Signal(object)  # IndexProgress
    problem_found = Signal(object)  # (file number, Problem)
    facts = Signal(object)  # SampleFacts, once every file is framed

    def __init__(
        self, dataset: Dataset, parent=None, use_subprocess: bool = True, class_ids: bool = False
    ) -> None:
        super().__init__(parent)
        self.dataset = dataset
        self.class_ids = class_ids  # sample class ids too (only to judge a label map found beside the data)
        self.use_subprocess = use_subprocess
        self._cancel = threading.Event()
        self._last = 0.0
        self._file_no = 0
        self._note = ""
        self.label_map_json: dict | None = None  # the window's, for the stored analysis it made
        self.stored_files = 0  # files whose index and CRCs came from a stored analysis
        self.stored_at: float | None = None  # when the oldest of those was read

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
        except TfrviewError as exc:  # a file that shrank, was replaced, or cannot be read: said as such
            self.progress.emit(IndexProgress("error", self.dataset.count, self._problems(), 0, 0, str(exc), self._file_no))
        except Exception as exc:  # never let a worker die silently
            msg = f"internal error while indexing: {type(exc).__name__}: {exc}"
            self.progress.emit(IndexProgress("error", self.dataset.count, self._problems(), 0, 0, msg, self._file_no))

    def _problems(self) -> int:
        return sum(len(f.index.problems) for f in self.dataset.files)

    def _use_child(self, f) -> bool:
        """Large plain files are framed and verified in a child process (the GIL stays free for the
        UI); compressed ones stay here, where their inflater checkpoints are needed."""
        return (
            self.use_subprocess and f.source.compression == "none" and f.source.file_size >= CHILD_MIN_BYTES
        )

    def _run(self) -> None:
        if self._phase("index", self._index_child, self._index_here, lambda f: f.source.file_size):
            self.facts.emit(
                sample_facts(self.dataset, ids_of=64 if self.class_ids else 0)
            )  # read here: on a cold file each read waits
            total = self._total("verify")
            if self._phase("verify", self._verify_child, self._verify_here, lambda f: int(f.index.scanned)):
                self._emit("done", total, total)

    def _phase(self, name: str, in_child, here, size) -> bool:
        """Run one pass over every open file, in a child process or here; False if cancelled."""
        total = self._total(name)
        base = 0
        for fi, f in enumerate(self.dataset.files):
            if f.source is None or (name == "verify" and not f.index.count):
                continue
            self._file_no = fi
            step = in_child if self._use_child(f) else here
            if name == "index" and f.index.done:  # a resumed scan: this file is framed already
                base += size(f)
                continue
            if name == "index" and not f.index.count and self._from_store(fi, f, base, total):
                base += size(f)
                continue
            if name == "index" and f.index.count:  # framed in part: go on, keeping what is known
                step = self._index_rest_here
            if name == "verify":
                first = _first_unverified(f.index)
                if first >= f.index.count:
                    base += size(f)
                    continue
                if first:
                    step = functools.partial(self._verify_here, start=first)
            if not step(fi, f, base, total):
                self._emit("cancelled", base, total)
                return False
            base += size(f)
        self._emit(name, total, total)
        return True

    def _tick(self, phase: str, done: int, total: int, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last > 0.05:
            self._emit(phase, done, total)
            self._last = now

    def _report(self, fi: int, problems) -> None:
        for p in problems:
            self.problem_found.emit((fi, p))

    def _from_store(self, fi, f, base, total) -> bool:
        """An unchanged plain file analysed before: its index, CRC status and framing problems at
        once, as stored (compressed files are scanned: random reads need the scan's checkpoints)."""
        from tfrview.core.analysis.cache import load
        from tfrview.core.analysis.shard import ShardTask, plan
        from tfrview.core.tfrecord.framing import QA_KINDS
        from tfrview.core.tfrecord.index import IndexChunk

        if f.source.compression != "none":
            return False
        for task in (ShardTask(str(f.path), fi), plan([str(f.path)], True, self.label_map_json)[0]):
            r = load(task)
            if r is None or r.error is not None or r.compression != "none":
                continue
            problems = tuple(p for p in r.problems if p.kind not in QA_KINDS)
            f.index.apply(IndexChunk(0, r.offsets, r.lengths, r.status, problems, r.scanned, r.file_size, True,
                                     r.scanned))  # fmt: skip
            self._report(fi, problems)
            self.stored_files += 1
            self.stored_at = r.analysed_at if self.stored_at is None else min(self.stored_at, r.analysed_at)
            self._tick("index", base + f.source.file_size, total, True)
            return True
        return False

    def _index_here(self, fi, f, base, total, limit: int | None = None) -> bool:
        seen = len(f.index.problems)
        for _, chunk in self.dataset.scan_file(fi, chunk_records=1000, first_chunk=500):
            self._report(fi, f.index.problems[seen:])
            seen = len(f.index.problems)
            if not self._note:
                self._note = inflation_note(str(f.path), f.source.compression, chunk.reached, chunk.consumed) or ""
            if self._cancel.is_set():
                return False
            self._tick("index", base + chunk.consumed, total, chunk.done)
            if limit is not None and f.index.count >= limit:
                return True
            time.sleep(0)  # let the UI thread take the GIL between chunks
        return True

    def _index_child(self, fi, f, base, total) -> bool:
        from tfrview.core.procs.scanproc import read_frames, spawn
        from tfrview.core.tfrecord.index import scan

        first = next(scan(f.source, first_chunk=1000))  # the first rows at once, while the child starts
        f.index.apply(first)
        self._report(fi, first.problems)
        self._tick("index", base + first.consumed, total, True)
        if first.done:
            return True
        known = first.scanned
        try:
            proc = spawn(str(f.path), "index")
        except OSError:
            return self._index_rest_here(fi, f, base, total)
        try:
            for chunk in read_frames(proc.stdout):
                if self._cancel.is_set():
                    return False
                self._apply_tail(fi, f, chunk, known, base, total)
        except (RuntimeError, EOFError, ValueError):
            pass
        finally:
            _stop(proc)
        return True if f.index.done else self._index_rest_here(fi, f, base, total)

    def _index_rest_here(self, fi, f, base, total) -> bool:
        """The child could not run or died: frame here, keeping what is already known."""
        from tfrview.core.tfrecord.index import scan

        known = f.index.scanned
        for chunk in scan(f.source, chunk_records=1000):
            if self._cancel.is_set():
                return False
            self._apply_tail(fi, f, chunk, known, base, total)
            time.sleep(0)
        return True

    def _apply_tail(self, fi, f, chunk, known: int, base: int, total: int) -> None:
        """A chunk from a scan that restarted at 0: apply what is new, report it, show progress."""
        seen = len(f.index.problems)
        f.index.apply_tail(chunk, known)
        self._report(fi, f.index.problems[seen:])
        self._tick("index", base + chunk.consumed, total, chunk.done)

    def _verify_here(self, fi, f, vbase, vtotal, start: int = 0) -> bool:
        for vc in verify(f.source, f.index, start=start, chunk_bytes=1 << 20, chunk_records=1000):
            for p in vc.problems:
                f.index.problems.append(p)
            self._report(fi, vc.problems)
            if self._cancel.is_set():
                return False
            done = int(f.index.offsets[vc.stop - 1] + f.index.lengths[vc.stop - 1])
            self._tick("verify", vbase + done, vtotal)
            time.sleep(0)
        return True

    def _verify_child(self, fi, f, vbase, vtotal) -> bool:
        from tfrview.core.procs.scanproc import read_frames, spawn

        try:
            proc = spawn(str(f.path), "verify")
        except OSError:
            return self._verify_here(fi, f, vbase, vtotal)
        stop = 0
        try:
            for vc in read_frames(proc.stdout):
                if self._cancel.is_set():
                    return False
                if vc.stop > f.index.count:  # the file changed under us: trust only what we framed
                    break
                f.index.apply_verify(vc)
                self._report(fi, vc.problems)
                stop = vc.stop
                done = int(f.index.offsets[vc.stop - 1] + f.index.lengths[vc.stop - 1])
                self._tick("verify", vbase + done, vtotal)
        except (RuntimeError, EOFError, ValueError):
            pass
        finally:
            _stop(proc)
        if stop < f.index.count:  # finish here whatever the child did not
            return self._verify_here(fi, f, vbase, vtotal, start=stop)
        return True

    def _emit(self, phase: str, done: int, total: int) -> None:
        self.progress.emit(IndexProgress(phase, self.dataset.count, self._problems(), done, total, note=self._note))


@dataclass(frozen=True)
class DecodeRequest:
    number: int
    data: bytes | None  # None: the worker reads record `number` itself (never the UI thread)
    image: int  # which of the record's images
    label_map: dict[int, str] | None
    spec: BoxSpec | None
    fit: tuple[int, int] | None = None  # the image view's size, for a preview scaled to fit it


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
    thumbnails: dict = field(default_factory=dict)  # (key, index) -> small uint8 pixels, or an error string
    preview: tuple | None = None  # (pixels scaled to fit the view, that scale)
    read_error: str | None = None  # the record could not be read at all


THUMB = 48


def _thumbnails(feats, refs) -> dict:
    out: dict = {}
    for ref in refs[:32]:
        if ref.storage != "encoded":
            continue
        try:
            out[(ref.key, ref.index)] = decode_image(feats, ref, max_side=THUMB).pixels
        except ImageError as exc:
            out[(ref.key, ref.index)] = str(exc)
    return out


def build_view(req: DecodeRequest, read=None) -> RecordView:
    data = req.data
    if data is None:
        from tfrview.core.tfrecord.framing import TfrviewError

        try:
            data = read(req.number)
        except (TfrviewError, IndexError) as exc:
            return RecordView(req.number, decode(b""), (), 0, None, str(exc), None, read_error=str(exc))
    p = decode(data)
    feats = image_features(p)
    refs = tuple(find_images(feats))
    if not refs:
        return RecordView(req.number, p, refs, 0, None, None, None)
    i = min(max(req.image, 0), len(refs) - 1)
    thumbs = _thumbnails(feats, refs)
    try:
        img = decode_image(feats, refs[i])
    except ImageError as exc:
        return RecordView(req.number, p, refs, i, None, str(exc), None, thumbnails=thumbs)
    ov = compute_overlay(feats, img.width, img.height, req.label_map, req.spec)
    if img.notes and any("EXIF" in n for n in img.notes) and ov.boxes:
        ov = Overlay(ov.spec, ov.boxes, ov.caption, (*ov.notes, "boxes drawn on the EXIF-rotated image"))
    return RecordView(
        req.number, p, refs, i, img, None, ov, thumbnails=thumbs, preview=_preview(img, req.fit)
    )


def _preview(img: DecodedImage, fit: tuple[int, int] | None) -> tuple | None:
    """The image scaled to fit the view, by Pillow here (it releases the GIL), not by Qt on the UI thread."""
    if fit is None:
        return None
    from PIL import Image

    from tfrview.gui.painting import fit_scale

    s = fit_scale(img.width, img.height, fit[0], fit[1])
    if s >= 1.0:
        return None
    size = (max(1, round(img.width * s)), max(1, round(img.height * s)))
    return np.asarray(
        Image.fromarray(img.pixels).resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)
    ), s


class DecodeWorker(QThread):
    """Decodes the latest requested record; older requests still waiting are dropped, so scrolling
    fast through records never queues stale work."""

    ready = Signal(object)  # RecordView

    def __init__(self, parent=None, read=None) -> None:
        super().__init__(parent)
        self._read = read  # record number -> payload, for requests that carry no data
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
                view = build_view(req, self._read)
            except Exception as exc:  # a bug must not kill the panel
                view = RecordView(req.number, decode(b""), (), 0, None, f"internal error: {exc}", None)
            self.ready.emit(view)


class SummaryWorker(QThread):
    """Kind and summary of the rows the table asks for, computed off the UI thread.

    The newest requests are served first (rows scrolled past are dropped once the queue is long),
    and results go back in batches, so a screenful of rows costs the UI one repaint."""

    ready = Signal(object)  # (epoch, [(number, kind, summary), ...])

    MAX_PENDING = 512
    SETTLE = 0.02  # seconds

    def __init__(self, dataset: Dataset, parent=None) -> None:
        super().__init__(parent)
        self.dataset = dataset
        self._queue = NewestFirst(self.MAX_PENDING)
        self.epoch = 0
        self.label_map: dict[int, str] | None = None

    def request(self, number: int) -> None:
        self._queue.put(number)

    def reset(self, label_map: dict[int, str] | None) -> None:
        with self._queue.lock:
            self._queue.clear()
            self.label_map = label_map
            self.epoch += 1

    def stop(self) -> None:
        self._queue.stop()

    def run(self) -> None:
        from tfrview.core.records.summary import summarize
        from tfrview.core.tfrecord.framing import TfrviewError

        while self._queue.wait():
            # Let the repaint that asked finish asking before competing with it for the GIL; its
            # requests are served together in the next batch.
            time.sleep(self.SETTLE)
            with self._queue.lock:
                epoch, label_map = self.epoch, self.label_map
            batch = []
            t0 = time.monotonic()
            while time.monotonic() - t0 < 0.03 and epoch == self.epoch:
                n = self._queue.take(block=False)
                if n is None:
                    break
                try:
                    kind, text = summarize(self.dataset.read(n), label_map)
                except (TfrviewError, IndexError, ValueError) as exc:
                    kind, text = "?", str(exc)
                finally:
                    self._queue.done(n)
                batch.append((n, kind, text))
            if batch:
                self.ready.emit((epoch, batch))


class JobWorker(QThread):
    """Runs a whole-dataset job (tfrview.core.procs.jobs) in a child process; hands back its JSON lines in
    batches. Cancelling kills the child: it only reads the data and writes to its pipe."""

    items = Signal(object)  # (this worker, list[dict]): receivers tell a replaced job's last words apart
    ended = Signal(object)  # this worker, after its last batch

    def __init__(self, spec: dict, parent=None) -> None:
        super().__init__(parent)
        self.spec = spec
        self._cancel = threading.Event()
        self._proc = None
        self.error: str | None = None

    def cancel(self) -> None:
        self._cancel.set()
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def run(self) -> None:
        from tfrview.core.procs.jobs import read_lines, spawn

        try:
            self._proc = spawn(self.spec)
        except OSError as exc:
            self.error = f"could not start the job: {exc}"
            self.items.emit((self, [{"error": self.error}]))
            self.ended.emit(self)
            return
        batch: list[dict] = []
        last = time.monotonic()
        try:
            for obj in read_lines(self._proc):
                if self._cancel.is_set():
                    break
                batch.append(obj)
                if time.monotonic() - last > 0.05:
                    self.items.emit((self, batch))
                    batch, last = [], time.monotonic()
        finally:
            if batch:
                self.items.emit((self, batch))
            _stop(self._proc)
            self.ended.emit(self)


class TaskWorker(QThread):
    """Runs one user-started task (salvage, export) off the UI thread. The task gets a progress
    callback that returns False once the person cancels."""

    progressed = Signal(int)
    done = Signal(object)  # ("ok", result) or ("error", message)

    def __init__(self, task, parent=None) -> None:
        super().__init__(parent)
        self.task = task
        self._cancel = threading.Event()

    def cancel(self) -> None:
        self._cancel.set()

    def _progress(self, n: int) -> bool:
        self.progressed.emit(n)
        return not self._cancel.is_set()

    def run(self) -> None:
        from tfrview.core.tfrecord.framing import TfrviewError

        try:
            self.done.emit(("ok", self.task(self._progress)))
        except (TfrviewError, OSError) as exc:
            self.done.emit(("error", str(exc)))
        except Exception as exc:  # reported, never a crash
            self.done.emit(("error", f"{type(exc).__name__}: {exc}"))


class ThumbnailPool(QObject):
    """A few threads making gallery thumbnails, newest requests first (what is on screen now);
    requests scrolled past are dropped once the queue is long. Pillow decodes without the GIL."""

    ready = Signal(object)  # (record number, Thumbnail)
    MAX_PENDING = 256

    def __init__(self, dataset: Dataset, threads: int = 2, size: int = 160, cell=None, parent=None) -> None:
        super().__init__(parent)
        self.dataset = dataset
        self.size = size
        self.cell = cell
        self.label_map: dict[int, str] | None = None
        self._queue = NewestFirst(self.MAX_PENDING)
        self._threads = [_PoolThread(self) for _ in range(threads)]
        for t in self._threads:
            t.start()

    def request(self, n: int) -> None:
        self._queue.put(n)

    def reset(self, label_map) -> None:
        with self._queue.lock:
            self._queue.clear()
            self.label_map = label_map

    def _work(self) -> None:
        from tfrview.core.records.thumbs import Thumbnail, make_thumbnail
        from tfrview.core.tfrecord.framing import TfrviewError

        while (n := self._queue.take()) is not None:
            try:
                thumb = make_thumbnail(self.dataset.read(n), self.size, self.label_map, cell=self.cell)
            except (TfrviewError, IndexError, ValueError) as exc:
                thumb = Thumbnail(None, str(exc), error=True)
            except Exception as exc:  # a bug must not kill the pool
                thumb = Thumbnail(None, f"internal error: {exc}", error=True)
            finally:
                self._queue.done(n)
            self.ready.emit((n, thumb))

    def stop(self) -> None:
        self._queue.stop()
        for t in self._threads:
            t.wait()


class _PoolThread(QThread):
    def __init__(self, pool: ThumbnailPool) -> None:
        super().__init__()
        self.pool = pool

    def run(self) -> None:
        self.pool._work()


def replace_job(parent, old: JobWorker | None, spec: dict, on_items, on_ended=None) -> JobWorker:
    """Stop `old` (if any) and start a job for `spec`, its batches going to `on_items`."""
    if old is not None:
        old.cancel()
        old.wait()
    job = JobWorker(spec, parent)
    job.items.connect(on_items)
    if on_ended is not None:
        job.ended.connect(on_ended)
    job.start()
    return job
