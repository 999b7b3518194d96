"""Writing new files atomically: a temporary file beside the destination, then a rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .framing import TfrviewError


def refuse_overwriting_inputs(out: Path, inputs: list[Path]) -> None:
    """tfrview never writes to a file it opened for reading."""
    try:
        target = out.resolve()
    except OSError:
        return
    for p in inputs:
        try:
            if p.resolve() == target or (out.exists() and os.path.samefile(p, out)):
                raise TfrviewError(f"{out}: refusing to write over an input file")
        except FileNotFoundError:
            continue


def atomic_write_text(path: Path, text: str) -> None:
    parent = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
