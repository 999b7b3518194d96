"""The one error hierarchy of the core: everything it raises on purpose derives from `TfrviewError`,
whose message is one line meant for a person; `Cancelled` (a person stopped the work) is not an
error; `one_line` turns any exception into the one line the CLI and the window show.
"""

from __future__ import annotations

from tfrview.core.termtext import printable


class TfrviewError(Exception):
    """Base of every error tfrview raises on purpose; its message is one line meant for a person."""


class NotTFRecordError(TfrviewError):
    """The input holds no TFRecord data at all."""


class SourceError(TfrviewError):
    """A file could not be opened, mapped or read (missing, permission, a directory, shrank...)."""


class FileChangedError(SourceError):
    """A file changed (grew, was rewritten) while it was read: what was read of it at different
    moments does not fit together, so no answer about it can be given."""

    def __init__(self, path: str, detail: str = "") -> None:
        super().__init__(f"{printable(str(path))}: the file changed while it was read{detail}; read it again")


class RecordRangeError(TfrviewError, IndexError):
    """A record number outside a file or dataset (an IndexError too, for callers that catch that)."""


class ChildError(TfrviewError, RuntimeError):
    """A worker process reported that it failed; the message is the child's own one line (a
    RuntimeError too, for callers that catch that)."""


class Cancelled(BaseException):  # not an error: a person stopped the work
    """The work was stopped on request. A BaseException, as KeyboardInterrupt is, so `except
    Exception` (and `except TfrviewError`) never mistakes a stop for a failure; jobs and workers
    catch it apart and report "cancelled", never an error."""


def one_line(exc: BaseException) -> str:
    """The one line a person reads for any exception: a `TfrviewError`'s own message, an OS error's
    file and reason, running out of memory or stack named, anything else called an internal error
    (a bug: it says so). Always printable and one line."""
    if isinstance(exc, Cancelled):
        return "cancelled"
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, TfrviewError):
        text = str(exc)
    elif isinstance(exc, OSError):
        text = f"{getattr(exc, 'filename', '') or ''}: {exc.strerror or exc}".lstrip(": ")
    elif isinstance(exc, (MemoryError, RecursionError)):
        what = "memory" if isinstance(exc, MemoryError) else "stack"
        text = f"out of {what} ({type(exc).__name__}); please report the input"
    else:
        text = f"internal error: {type(exc).__name__}: {exc} (please report it)"
    return printable(text)
