"""What every worker process tfrview starts has in common: how it is started (`spawn`, the one
spawner), its priority, and its death with its parent."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys

from tfrview.core.logs import configure_child

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout


def cores() -> int:
    """The cores this process may use: the default number of worker processes, and of the ranges a
    big plain file is framed in (one rule, in a module that loads no numpy: the CLI's parser asks)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


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
    import ctypes  # standard library, used here only
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def worker_start(parent: int | None = None) -> None:
    """First thing in a pool worker: lower priority, die with the parent (`parent`: its pid; a
    parent that died while this worker was starting is caught here, after the death signal is
    armed), leave Ctrl-C to it, log to its stderr at the parent's level."""
    import signal

    lower_priority()
    configure_child()
    die_with_parent()
    if parent is not None and os.getppid() != parent:
        os._exit(0)
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def spawn(
    module: str,
    *args: str,
    stdin_text: str | None = None,
    text: bool = False,
    keep_stderr: bool = False,
    stdin_later: bool = False,
) -> subprocess.Popen:
    """Start `python -m module args` as a worker: this interpreter, this checkout importable,
    results on its stdout (bytes, or text lines), `stdin_text` written to it and closed (a spec
    can be far longer than a command line; `stdin_later`: the pipe is left open for the caller to
    write it), its stderr kept in a temporary file for the reader to quote when the worker dies
    without saying why (`proc.error_file`), else dropped."""
    import tempfile  # standard library, used here only

    err = tempfile.TemporaryFile(mode="w+") if keep_stderr else subprocess.DEVNULL  # noqa: SIM115 - closed by its reader
    proc = subprocess.Popen(
        child_argv(module, *args),
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=err,
        text=text,
        stdin=subprocess.PIPE if stdin_text is not None or stdin_later else subprocess.DEVNULL,
        bufsize=-1 if text else 1 << 20,
    )
    proc.error_file = err if keep_stderr else None
    if stdin_text is not None:
        try:
            proc.stdin.write(stdin_text if text else stdin_text.encode())
            proc.stdin.close()
        except BrokenPipeError:  # it died at once: its exit code and stderr say why, to whoever waits on it
            pass
    return proc


_AHEAD: dict[str, list[subprocess.Popen]] = {}


def started_ahead(module: str) -> list[subprocess.Popen]:
    """The processes of `module` started ahead and not yet given their work (taken by popping)."""
    return _AHEAD.setdefault(module, [])


def start_parts_ahead(size: int, jobs: int) -> int:
    """Start now the part processes (`tfrecord.parts`) a plain file of `size` bytes framed on `jobs`
    cores will need, waiting on their stdin for a range; here, as this module imports neither numpy
    nor the framing, so they start before the caller loads them (~0.15 s). How many were started."""
    from tfrview.core import limits

    if jobs < 2 or size < limits.FRAME_PARTS_BYTES:
        return 0
    module = "tfrview.core.tfrecord.parts"
    want = min(jobs, size // max(1, limits.FRAME_PART_MIN_BYTES)) - 1 - len(started_ahead(module))
    for _ in range(max(0, want)):
        started_ahead(module).append(spawn(module, "-", stdin_later=True))
    return max(0, want)
