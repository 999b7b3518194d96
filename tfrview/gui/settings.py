"""Small QSettings helpers shared by the window's parts."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings


def last_dir() -> str:
    """The folder the person last opened or saved in (their home at first)."""
    return str(QSettings().value("last_dir", str(Path.home())))
