"""What every worker process tfrview starts has in common: how it is started, and its priority."""

from __future__ import annotations

import contextlib
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout


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


def die_with_parent() -> None:
    """A pool worker ends when the process that started it does (killed by a window's Cancel, say),
    rather than reading on alone. Linux only (prctl PR_SET_PDEATHSIG); elsewhere the pool's pipes
    close and the worker ends after its current file."""
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def worker_start(parent: int | None = None) -> None:
    """First thing in a pool worker: lower priority, die with the parent (`parent`: its pid; a
    parent that died while this worker was starting is caught here, after the death signal is
    armed), leave Ctrl-C to it."""
    import signal

    lower_priority()
    die_with_parent()
    if parent is not None and os.getppid() != parent:
        os._exit(0)
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
