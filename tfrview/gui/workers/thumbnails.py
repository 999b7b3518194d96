"""Gallery thumbnails, made by a small pool of threads off the UI thread."""

from __future__ import annotations

import logging
import threading

from tfrview.core.errors import TfrviewError
from tfrview.core.records.thumbs import Thumbnail, make_thumbnail
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.gui.request_queue import NewestFirst
from tfrview.gui.workers.base import Worker

log = logging.getLogger(__name__)


class ThumbnailPool(Worker):
    """A few threads making gallery thumbnails, newest requests first (what is on screen now);
    requests scrolled past are dropped once the queue is long. Pillow decodes without the GIL.
    Each thumbnail is a `result`: (record number, Thumbnail)."""

    MAX_PENDING = 256

    def __init__(self, dataset: Dataset, threads: int = 2, size: int = 160, cell=None, parent=None) -> None:
        super().__init__(parent)
        self.dataset = dataset
        self.size = size
        self.cell = cell
        self.label_map: dict[int, str] | None = None
        self.specs: tuple = ()  # the box specs the person chose (dialogs.remembered_specs)
        # predictions loaded from a file (record number -> records.predictions.Predictions or None)
        # and the (IoU, score) thresholds they are drawn at, as the image panel's
        self.predictions = None
        self.thresholds: tuple[float, float] = (0.5, 0.5)
        self._queue = NewestFirst(self.MAX_PENDING)
        self.threads = max(1, threads)

    def request(self, n: int) -> None:
        self._queue.put(n)

    def reset(self, label_map) -> None:
        with self._queue.lock:
            self._queue.clear()
            self.label_map = label_map

    def work(self) -> None:
        """This thread and `threads - 1` helpers take from the one queue until it is stopped."""
        helpers = [threading.Thread(target=self._take_all, daemon=True) for _ in range(self.threads - 1)]
        for h in helpers:
            h.start()
        self._take_all()
        for h in helpers:
            h.join()

    def _wake(self) -> None:
        self._queue.stop()

    def _tfds_of(self, n: int, starts):
        """The TFDS features beside record n's file (read as data, one load a folder), or None.
        `starts`: the files' first record numbers, as `Dataset.locate` takes them."""
        from pathlib import Path

        from tfrview.core.tfds.features import features_of_folder

        path = self.dataset.files[self.dataset.locate(n, starts)[0]].path
        got = features_of_folder(path.parent) if isinstance(path, Path) else None
        return got if got is not None and got.root is not None else None

    def _take_all(self) -> None:

        while (n := self._queue.take()) is not None:
            try:
                # each file's first record number taken once a thumbnail, for its read and its
                # folder (each asked it of every file: 10,000 shards, as `RowTextWorker`)
                starts = self.dataset.starts()
                thumb = make_thumbnail(
                    self.dataset.read(n, starts),
                    self.size,
                    self.label_map,
                    cell=self.cell,
                    specs=self.specs,
                    tfds=self._tfds_of(n, starts),
                    predictions=self.predictions(n) if self.predictions is not None else None,
                    thresholds=self.thresholds,
                )
            except (TfrviewError, IndexError, ValueError) as exc:
                thumb = Thumbnail(None, str(exc), error=True)
            except Exception as exc:  # a bug must not kill the pool: said, and logged
                log.exception("the thumbnail of record %s failed", n)
                thumb = Thumbnail(None, f"internal error: {exc}", error=True)
            finally:
                self._queue.done(n)
            self.result.emit((n, thumb))
