"""Where the window's scan of the opened files is: one vocabulary, without Qt, so the status line's
pure functions and the scan worker say the same words."""

from __future__ import annotations

from enum import StrEnum


class ScanPhase(StrEnum):
    INDEX = "index"  # framing the files
    VERIFY = "verify"  # checking every data CRC
    DONE = "done"
    CANCELLED = "cancelled"
    ERROR = "error"
