"""Row summaries: each table row's kind and one-line summary, read and decoded off the UI thread
for the rows on screen."""

from __future__ import annotations

import time

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import ONE_AT_A_TIME_BYTES
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.records.protoschema import decode_with, summary_line
from tfrview.core.records.rowtext import row_text
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.gui.request_queue import NewestFirst
from tfrview.gui.workers.base import Worker


def _named(data: bytes, schema, kind: str, text: str) -> tuple[str, str]:
    """A custom payload's summary by the loaded schema's field names, when it is that message."""

    if len(data) > ONE_AT_A_TIME_BYTES:
        return kind, text
    named = decode_with(data, schema)
    return (PayloadKind.MESSAGE, summary_line(named, schema.name)) if named else (kind, text)


class RowTextWorker(Worker):
    """Kind and summary of the rows the table asks for, computed off the UI thread.

    The newest requests are served first (rows scrolled past are dropped once the queue is long),
    and results go back in batches, so a screenful of rows costs the UI one repaint."""

    # result: (epoch, [(number, kind, summary), ...])

    MAX_PENDING = 512
    PREFETCH = 128  # rows whose records are fetched together (remote files)
    SETTLE = 0.02  # seconds

    def __init__(self, dataset: Dataset, parent=None) -> None:
        super().__init__(parent)
        self.dataset = dataset
        self._queue = NewestFirst(self.MAX_PENDING)
        self.epoch = 0
        self.label_map: dict[int, str] | None = None
        self.schema = None  # records.schema.MessageSchema the person loaded: custom payloads by field name
        self._contexts: dict = {}  # folder -> ReadingContext with the TFDS features beside it (this epoch's)
        self._contexts_for: tuple = ()

    def _context(self, n: int, label_map, starts=None):
        """The reading context of record n's folder: its TFDS features.json's declarations, if any
        (read as data, one load a folder), else None (the label map alone). `starts`: the files'
        first record numbers, as `Dataset.locate` takes them."""
        from pathlib import Path

        from tfrview.core.records.reading import ReadingContext
        from tfrview.core.tfds.features import features_of_folder

        path = self.dataset.files[self.dataset.locate(n, starts)[0]].path
        if not isinstance(path, Path):
            return None
        folder = str(path.parent)
        if folder not in self._contexts:
            tfds = features_of_folder(folder)
            usable = tfds is not None and tfds.root is not None
            self._contexts[folder] = ReadingContext(label_map, tfds=tfds) if usable else None
        return self._contexts[folder]

    def request(self, number: int) -> None:
        self._queue.put(number)

    def reset(self, label_map: dict[int, str] | None, schema=None) -> None:
        with self._queue.lock:
            self._queue.clear()
            self.label_map = label_map
            self.schema = schema
            self.epoch += 1

    def _wake(self) -> None:
        self._queue.stop()

    def work(self) -> None:

        while self._queue.wait():
            # Let the repaint that asked finish asking before competing with it for the GIL; its
            # requests are served together in the next batch.
            time.sleep(self.SETTLE)
            with self._queue.lock:
                epoch, label_map, schema = self.epoch, self.label_map, self.schema
            if self._contexts_for != (epoch, id(label_map)):
                self._contexts, self._contexts_for = {}, (epoch, id(label_map))
            self.dataset.prefetch(self._queue.peek(self.PREFETCH))  # remote rows: one request, not one each
            batch = []
            # each file's first record number, once a batch: each read asked it of every file twice
            # (10,000 shards: ~6 ms a row, taken from the GIL the scan and the UI share)
            starts = self.dataset.starts()
            t0 = time.monotonic()
            while time.monotonic() - t0 < 0.03 and epoch == self.epoch:
                n = self._queue.take(block=False)
                if n is None:
                    break
                try:
                    at = starts if n < starts[-1] else None  # (framed since: asked afresh)
                    data = self.dataset.read(n, at)
                    kind, text = row_text(data, label_map, self._context(n, label_map, at))
                    if schema is not None and kind in (PayloadKind.PROTOBUF, PayloadKind.BYTES):
                        kind, text = _named(data, schema, kind, text)
                except (TfrviewError, IndexError, ValueError) as exc:
                    kind, text = "?", str(exc)
                finally:
                    self._queue.done(n)
                batch.append((n, kind, text))
            if batch:
                self.result.emit((epoch, batch))
