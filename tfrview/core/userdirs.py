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
