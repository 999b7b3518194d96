"""Small QSettings helpers shared by the window's parts."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings, QStandardPaths


def last_dir() -> str:
    """The folder the person last opened or saved in (their home at first)."""
    return str(QSettings().value("last_dir", str(Path.home())))


def write_dir() -> str:
    """Where a dialog for writing opens: the folder the person last wrote to, else their
    Documents (else home); never beside the input data, where tfrview writes nothing unasked."""
    kept = QSettings().value("last_write_dir", "")
    if kept and Path(str(kept)).is_dir():
        return str(kept)

    docs = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.DocumentsLocation)
    return docs if docs and Path(docs).is_dir() else str(Path.home())


def remember_write(path: str | Path, folder: bool = False) -> None:
    """The person chose to write `path` (a file, or a folder when `folder`): the next dialog for
    writing opens there."""
    p = Path(path)
    QSettings().setValue("last_write_dir", str(p if folder else p.parent))
