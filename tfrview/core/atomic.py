"""Writing new files atomically: a temporary file beside the destination, then a rename."""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
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


def new_temp_file(path: Path) -> tuple[int, Path]:
    """A temporary file beside `path` (same filesystem, so the final rename is atomic), with the
    permissions a new file gets from the umask rather than mkstemp's private 0600."""
    parent = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=parent)
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)
    return fd, Path(tmp)


@contextmanager
def atomic_file(path: Path, mode: str = "w"):
    """Write a new file: the block writes to a temporary file, renamed into place only if it finishes."""
    fd, tmp = new_temp_file(path)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    with atomic_file(path, "w") as fh:
        fh.write(text)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    with atomic_file(path, "wb") as fh:
        fh.write(data)
