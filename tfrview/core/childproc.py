"""What every worker process tfrview starts has in common: how it is started, and its priority."""

from __future__ import annotations

import contextlib
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child_argv(module: str, *args: str) -> list[str]:
    """`python -m module args`, with this interpreter."""
    return [sys.executable, "-m", module, *args]


def child_env() -> dict[str, str]:
    """The environment of a worker: ours, with this checkout importable (as when run from source)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = _ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def lower_priority() -> None:
    """Called first thing in a worker: below the window's CPU priority, so the UI stays smooth while
    every core works (os.nice raises the niceness of this process only)."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)
