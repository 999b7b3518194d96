"""Where tfrview's `logging` goes: one configuration for the CLI, the window and child processes.

Why: what goes wrong in a child process or a worker thread must be said somewhere, never swallowed.
Every module logs to `logging.getLogger(__name__)`; only the entry points choose where it goes:
the CLI to stderr (warnings, one line each; `-v` adds debug), the window to a file in the user's
state directory, a job or scan process to its stderr (which the window keeps, and quotes when the
process dies without a word). A record is always one line (a traceback only at debug level, or in
the window's file), so bad input never prints a traceback.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from tfrview.core.limits import LOG_FILE_BYTES, LOG_FILES_KEPT
from tfrview.core.userdirs import state_dir

LEVEL_ENV = "TFRVIEW_LOG_LEVEL"  # the level child processes log at (set by the entry point that started them)
_HANDLER_MARK = "_tfrview_handler"


class OneLineFormatter(logging.Formatter):
    """A record in one line: its message with line breaks folded; an exception as its type and
    message, or its traceback when `tracebacks` (debug output, the window's file)."""

    def __init__(self, fmt: str, tracebacks: bool = False) -> None:
        super().__init__(fmt)
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        exc, record.exc_info, text = record.exc_info, None, None
        try:
            record.exc_text = None
            text = " ".join(super().format(record).split("\n"))
        finally:
            record.exc_info = exc
        if exc and exc[1] is not None:
            if self.tracebacks:
                text += "\n" + self.formatException(exc)
            else:
                text += f" ({type(exc[1]).__name__}: {' '.join(str(exc[1]).split())})"
        return text


def _rotating_log(path: Path) -> logging.Handler:
    """A rotating file whose fresh file says why the older lines are elsewhere (the limit's name).
    `logging.handlers` (socket, queue, pickle) is loaded here, by the window alone: the CLI and
    every worker process log to stderr and start without it."""
    import logging.handlers

    class _RotatingLog(logging.handlers.RotatingFileHandler):
        def doRollover(self) -> None:
            super().doRollover()
            if self.stream is None:
                self.stream = self._open()
            self.stream.write(
                f"log rotated at LOG_FILE_BYTES ({LOG_FILE_BYTES:,} bytes): older lines in "
                f"{self.baseFilename}.1 … .{LOG_FILES_KEPT}\n"
            )

    return _RotatingLog(
        path, maxBytes=LOG_FILE_BYTES, backupCount=LOG_FILES_KEPT, encoding="utf-8", delay=True
    )


def _install(handler: logging.Handler, level: int) -> None:
    """Our one handler on tfrview's logger (replacing one installed before), at `level`."""
    root = logging.getLogger("tfrview")
    for h in list(root.handlers):
        if getattr(h, _HANDLER_MARK, False):
            root.removeHandler(h)
            h.close()
    setattr(handler, _HANDLER_MARK, True)
    root.addHandler(handler)
    root.setLevel(level)
    os.environ[LEVEL_ENV] = logging.getLevelName(level)  # what our child processes log at


def configure_cli(verbose: bool = False) -> None:
    """Warnings on stderr, one line each (`-v`: debug too, with tracebacks)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLineFormatter("tfrview: %(levelname)s: %(message)s", tracebacks=verbose))
    _install(handler, logging.DEBUG if verbose else logging.WARNING)


def configure_child() -> None:
    """A child process (job, scan, pool worker) logs to its stderr at the level its parent chose."""
    level = logging.getLevelName(os.environ.get(LEVEL_ENV, "WARNING"))
    level = level if isinstance(level, int) else logging.WARNING
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        OneLineFormatter(
            f"tfrview[{os.getpid()}] %(levelname)s %(name)s: %(message)s", tracebacks=level <= logging.DEBUG
        )
    )
    _install(handler, level)


def window_log_path() -> Path:
    """The window's log file (said in About and in `tfrview --help`)."""
    return state_dir() / "tfrview.log"


def configure_file(path: Path | None = None, verbose: bool = False) -> Path | None:
    """The window's log: `path` (default `window_log_path()`), rotated at LOG_FILE_BYTES with
    LOG_FILES_KEPT older files, info and up (debug with `verbose`), tracebacks included. Returns
    the path, or None when it cannot be written (then warnings go to stderr, said there once)."""
    path = path or window_log_path()
    level = logging.DEBUG if verbose else logging.INFO
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = _rotating_log(path)
    except OSError as exc:
        configure_cli(verbose)
        logging.getLogger(__name__).warning("no log file at %s: %s", path, exc.strerror or exc)
        return None
    handler.setFormatter(OneLineFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s", tracebacks=True))
    _install(handler, level)
    return path
