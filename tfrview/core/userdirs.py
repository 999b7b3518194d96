"""The user's own directories (XDG), the only places tfrview writes without being asked where."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """`$XDG_CACHE_HOME/tfrview` (default ~/.cache/tfrview): the demo data set, the result store
    (`analysis/`), fetched remote bytes (`remote/`); `tfrview cache` says how much each holds."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tfrview"


def state_dir() -> Path:
    """`$XDG_STATE_HOME/tfrview` (default ~/.local/state/tfrview): what is worth keeping but not
    worth backing up, here the window's log (`tfrview.log`)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "tfrview"


def data_dir() -> Path:
    """`$XDG_DATA_HOME/tfrview` (default ~/.local/share/tfrview): the person's own work, here the
    tags on records (`tags.sqlite`). Never trimmed or cleared by `tfrview cache`: it is no cache."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "tfrview"
