"""Jobs the person or the window starts over the whole dataset, each in a child process (the
analysis pass, the filter, plots, salvage, repair and exports), under the one worker convention."""

from __future__ import annotations

import functools
import logging
import threading
import time

from tfrview.core.procs.messages import Done, Failed, Message, Plot, Summary
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


class StoredJob(Worker):
    """A job whose whole answer is already in hand: the analysis of an unchanged split, read from
    the store with the scan's own file identities (`procs.stored`). Its messages reach the owner
    as a job's would (`result`, then `done`), ending in `Done`; no process is started, so no job
    reads every file's ends again to say the same stored row."""

    def __init__(self, messages: list[Message], parent=None) -> None:
        super().__init__(parent)
        self.messages = list(messages)

    def work(self) -> None:
        if not self.cancelled:
            self.result.emit([*self.messages, Done()])


class ConversingJob(JobWorker):
    """A job process that answers question after question (`evaluate`: each new threshold a line
    on its stdin, `ask`) until the window is done with it (`cancel`, or `end`: its stdin closed).
    Every message goes to the window at once: each answers what the person just did."""

    def __init__(self, request: Request, parent=None) -> None:
        super().__init__(request, parent)
        self._started = threading.Event()

    def ask(self, line: str) -> bool:
        """Another question (False: the process has not started, or has ended)."""
        from tfrview.core.procs.launch import ask

        if not self._started.wait(5.0) or self.proc is None or self.proc.poll() is not None:
            return False
        return ask(self.proc, line)

    def end(self) -> None:
        """No more questions: the process finishes its answer and ends."""
        proc = self.proc
        if proc is not None and proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError as exc:  # already gone
                log.debug("closing a job's stdin: %s", exc)

    def work(self) -> None:
        from tfrview.core.procs.launch import read_lines, spawn_open

        try:
            self.proc = spawn_open(self.request)
        except OSError as exc:
            raise OSError(f"could not start the job: {exc}") from exc
        finally:
            self._started.set()
        try:
            for msg in read_lines(self.proc):
                if self.cancelled:
                    break
                if isinstance(msg, Failed):
                    log.warning("%s job failed (%s): %s", self.request.JOB, msg.kind, msg.message)
                self.result.emit([msg])
        finally:
            self.end()
            if self.proc is not None:
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
