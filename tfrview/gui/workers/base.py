"""The one convention for everything the window runs in the background (after superqt's workers).

A worker is started with `start()` and stopped with `cancel()`. It reports by four signals, all
queued to the window's thread: `progress` (how far), `result` (what it found, possibly many
times), `error` (one line, when it could not go on) and `done` (last of all, however it ended,
carrying the worker so an owner can tell a replaced worker's last words apart). Workers never
touch a widget, a model or a pixmap: they hand plain data back.
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QThread, Signal

from tfrview.core.errors import Cancelled, TfrviewError, one_line

log = logging.getLogger(__name__)


class Worker(QThread):
    progress = Signal(object)
    result = Signal(object)
    error = Signal(str)
    done = Signal(object)  # this worker

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._cancel = threading.Event()

    def cancel(self) -> None:
        """Ask the worker to stop soon; `done` follows. Safe from any thread, any number of times."""
        self._cancel.set()
        self._wake()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def _wake(self) -> None:
        """Subclasses that wait on something (a queue, a child process) end that wait here."""

    def work(self) -> None:
        raise NotImplementedError

    def run(self) -> None:
        try:
            self.work()
        except Cancelled:  # a stop on request is no error: `done` alone says it ended
            pass
        except Exception as exc:  # reported in the core's one line, never a silent death of the thread
            if isinstance(exc, (TfrviewError, OSError)):
                log.warning("%s: %s", type(self).__name__, exc)
            else:  # a bug: its traceback goes to the log, one line to the window
                log.exception("%s failed", type(self).__name__)
            self.error.emit(one_line(exc))
        finally:
            self.done.emit(self)


def stop_child(proc) -> None:
    """End a child process a worker started and close its pipes (it only reads the data)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
    err = getattr(proc, "error_file", None)
    if err is not None:
        err.close()
