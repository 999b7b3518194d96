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


class _NoPandas:
    """An import finder that says pandas is not installed. pyarrow asks whether pandas is, the first
    time it is handed anything (a table, a list), and imports it when it is: ~0.3 s of every
    process, for nothing, since tfrview never hands pyarrow a DataFrame. pyarrow remembers the
    answer, so hiding pandas for a whole process of ours costs nothing else."""

    def find_spec(self, name: str, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("tfrview's own processes do not load pandas", name=name)
        return None


def hide_pandas() -> None:
    """Called first in tfrview's own processes (the CLI, pool workers, jobs), never on import of the
    library: a program that imports tfrview keeps its pandas."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


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


def worker_start(parent: int | None = None, lower: bool = True) -> None:
    """First thing in a pool worker: lower priority (unless not `lower`: the parent's, inherited),
    die with the parent (`parent`: its pid; a parent that died while this worker was starting is
    caught here, after the death signal is armed), leave Ctrl-C to it, log to its stderr at the
    parent's level."""
    import signal

    hide_pandas()
    if lower:
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


def part_ranges(size: int, jobs: int, lead: int = 0) -> list[tuple[int, int]]:
    """The byte ranges a plain file of `size` bytes is framed in (`tfrecord.parts`): one per core,
    none under limits.FRAME_PART_MIN_BYTES; the first (the caller's) longer by `lead` bytes, or
    shorter when `lead` is negative (at most half a range either way), the others equal. Here, as
    it loads no numpy: `start_parts_ahead` gives ranges before the caller's imports."""
    from itertools import pairwise

    from tfrview.core import limits

    n = max(1, min(jobs, size // max(1, limits.FRAME_PART_MIN_BYTES)))
    half = size // (2 * n)
    lead = max(-half, min(half, lead)) if n > 1 else 0
    cuts = [0] + [lead + (size - lead) * k // n for k in range(1, n)] + [size]
    return list(pairwise(cuts))


# bytes the caller's range is shorter by when its part processes were given theirs before its own
# imports and plan (`start_parts_ahead` with a path): they start framing ~0.15 s before it does,
# ~60 MB at one core's pace; half of that each way ends both together
AHEAD_LEAD = 32 << 20
PARTS_MODULE = "tfrview.core.tfrecord.parts"


def start_parts_ahead(size: int, jobs: int, path: str | None = None) -> int:
    """Start now the part processes (`tfrecord.parts`) a plain file of `size` bytes framed on `jobs`
    cores will need; here, as this module imports neither numpy nor the framing, so they start
    before the caller loads them (~0.15 s). With `path` each is given its range at once
    (`part_ranges`, the caller's range shorter by AHEAD_LEAD) and frames it while the caller is still
    importing (its `part` says which: path, lo, hi, size; `parts.frame_in_parts` takes them when the
    file is the one it frames, else they are killed); without, they wait on stdin for a range. How
    many were started."""
    from tfrview.core import limits

    if jobs < 2 or size < limits.FRAME_PARTS_BYTES:
        return 0
    ahead = started_ahead(PARTS_MODULE)
    if path is not None and not ahead:
        rs = part_ranges(size, jobs, -AHEAD_LEAD)
        for lo, hi in rs[1:]:
            proc = spawn(PARTS_MODULE, "-", stdin_text=f"{lo} {hi} {path}\n", keep_stderr=True)
            proc.part = (path, lo, hi, size)
            ahead.append(proc)
        return len(rs) - 1
    want = min(jobs, size // max(1, limits.FRAME_PART_MIN_BYTES)) - 1 - len(ahead)
    for _ in range(max(0, want)):
        ahead.append(spawn(PARTS_MODULE, "-", stdin_later=True, keep_stderr=True))
    return max(0, want)


def drop_parts_ahead() -> None:
    """Part processes started ahead that nothing took end now: one given a range would frame it for
    nobody."""
    ahead = started_ahead(PARTS_MODULE)
    while ahead:
        proc = ahead.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.error_file):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
