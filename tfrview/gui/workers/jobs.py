"""Jobs the person or the window starts over the whole dataset, each in a child process (the
analysis pass, the filter, plots, salvage, repair and exports), under the one worker convention."""

from __future__ import annotations

import functools
import logging
import time

from tfrview.core.procs.messages import Failed, Message, Plot, Summary
from tfrview.core.procs.requests import Request
from tfrview.gui.workers.base import Worker, stop_child

log = logging.getLogger(__name__)

BATCH_SECONDS = 0.05  # a job's messages go to the window at most this often
AT_ONCE = (Plot, Summary, Failed)  # messages that go at once: what the person waits to see


class JobWorker(Worker):
    """Runs a whole-dataset job (tfrview.core.procs.jobs) in a child process and hands back its
    typed messages (`core.procs.messages`) in batches, as `result` (a list of messages). Cancelling kills the child: it only
    reads the data and writes to its pipe."""

    def __init__(self, request: Request, parent=None) -> None:
        super().__init__(parent)
        self.request = request
        self.proc = None

    def _wake(self) -> None:
        proc = self.proc
        if proc is not None and proc.poll() is None:
            proc.kill()

    def work(self) -> None:
        from tfrview.core.procs.launch import prewarm, read_lines, spawn

        try:
            self.proc = spawn(self.request)
            prewarm()  # the next job (a filter, a plot) starts as fast
        except OSError as exc:
            raise OSError(f"could not start the job: {exc}") from exc
        batch: list[Message] = []
        last = time.monotonic()
        try:
            for msg in read_lines(self.proc):
                if self.cancelled:
                    break
                if isinstance(msg, Failed):
                    log.warning("%s job failed (%s): %s", self.request.JOB, msg.kind, msg.message)
                batch.append(msg)
                if time.monotonic() - last > BATCH_SECONDS or isinstance(msg, AT_ONCE):
                    self.result.emit(batch)
                    batch, last = [], time.monotonic()
        finally:
            if batch:
                self.result.emit(batch)
            stop_child(self.proc)


def replace_job(old: Worker | None, new: Worker, on_result, on_done=None, on_error=None) -> Worker:
    """Stop and join `old` (if any), then start `new`. Its `result` and `error` reach the handlers
    as (worker, value): a replaced job's last words are still queued when the new one starts, and
    the owner tells them apart by the worker (Qt delivers events already posted even after a
    disconnect)."""
    if old is not None:
        old.cancel()
        old.wait()
    new.result.connect(functools.partial(on_result, new))
    if on_done is not None:
        new.done.connect(on_done)
    if on_error is not None:
        new.error.connect(functools.partial(on_error, new))
    new.start()
    return new
