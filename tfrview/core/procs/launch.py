"""Starting a job process and reading what it says: the window's side of `procs/jobs.py` (which is
the child's code and loads the pass, the outputs and pyarrow; the window never imports it). A spare
process started ahead (`prewarm`) takes the next request, skipping Python's start-up and imports.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import subprocess
import threading
from collections.abc import Iterator

from tfrview.core import childproc
from tfrview.core.limits import SPARE_EXIT_SECONDS
from tfrview.core.procs.messages import ENDS, Failed, Message, decode
from tfrview.core.procs.requests import Request
from tfrview.core.procs.requests import encode as encode_request

log = logging.getLogger(__name__)

_spare_lock = threading.Lock()
_spare: tuple[subprocess.Popen, dict] | None = (
    None  # a started job process waiting for its request, and its env
)


NO_SPARE_ENV = "TFRVIEW_NO_SPARE"  # set (to anything): no spare process (the test suite: each spare
# costs ~0.5 s of CPU, and there a window rarely runs a second job to use it)


def prewarm() -> None:
    """Start a spare job process now, so that the next job skips Python's start-up and imports
    (about 0.3 s: the window's analysis, filter and plot jobs). One at most; it ends when its
    stdin closes (`drop_spare`, or this process ending)."""
    global _spare
    if os.environ.get(NO_SPARE_ENV):
        return
    with _spare_lock:
        if _spare is not None and _spare[0].poll() is None:
            return
        proc = childproc.spawn("tfrview.core.procs.jobs", text=True, keep_stderr=True, stdin_later=True)
        _spare = (proc, childproc.child_env())


@atexit.register
def drop_spare() -> None:
    """End the spare process, if any (its stdin closes: it exits at once)."""
    global _spare
    with _spare_lock:
        spare, _spare = _spare, None
    if spare is not None:
        with contextlib.suppress(OSError):  # already gone: nothing to end
            spare[0].stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):  # at exit: the OS reaps it, never wait longer
            spare[0].wait(timeout=SPARE_EXIT_SECONDS)


def spawn(request: Request) -> subprocess.Popen:
    """A job process running `request`, its JSON lines on stdout: the spare one when it is alive and
    was started with the environment a new one would get, else a new one."""
    global _spare
    line = encode_request(request)
    with _spare_lock:
        spare, _spare = _spare, None
    if spare is not None:
        proc, env = spare
        if proc.poll() is None and env == childproc.child_env():
            try:
                proc.stdin.write(line)
                proc.stdin.close()
                return proc
            except (BrokenPipeError, OSError) as exc:  # a spare that died meanwhile: a new process instead
                log.debug("the spare job process could not take a request: %s", exc)
        with contextlib.suppress(OSError):  # a dead spare's pipe: it is killed and reaped below
            proc.stdin.close()
        proc.kill()
        proc.wait()
    return childproc.spawn("tfrview.core.procs.jobs", stdin_text=line, text=True, keep_stderr=True)


def spawn_open(request: Request) -> subprocess.Popen:
    """A job process running `request` whose stdin stays open for further questions (a job that
    converses, `evaluate`: one JSON object a line, `ask`); it ends when its stdin closes. Never
    the spare: a conversation holds its process for as long as the window asks."""
    proc = childproc.spawn("tfrview.core.procs.jobs", text=True, keep_stderr=True, stdin_later=True)
    ask(proc, encode_request(request))
    return proc


def ask(proc: subprocess.Popen, line: str) -> bool:
    """One more line to a conversing job (False: it is gone: its messages say why)."""
    try:
        proc.stdin.write(line.rstrip("\n") + "\n")
        proc.stdin.flush()
        return True
    except (BrokenPipeError, OSError, ValueError) as exc:  # ValueError: its stdin already closed
        log.debug("a job process could not take a question: %s", exc)
        return False


def read_lines(proc: subprocess.Popen) -> Iterator[Message]:
    """The job's messages; if it dies without saying why, a `Failed` with its last stderr lines.
    A line that is no message (a library printing on the pipe) is logged and passed over."""
    ended = False
    for line in proc.stdout:
        try:
            msg = decode(line)
        except ValueError as exc:
            log.warning("a job process sent a line that is no message (%s): %.200s", exc, line.rstrip())
            continue
        ended = ended or isinstance(msg, ENDS)
        yield msg
    if not ended:
        code = proc.wait()
        if code not in (0, -9):  # -9: killed on purpose (cancelled)
            tail = ""
            err = getattr(proc, "error_file", None)
            if err is not None:
                err.seek(0)
                tail = " ".join(err.read().strip().splitlines()[-3:])
            failed = Failed(f"job exited with code {code}: {tail or 'no message'}", "exited")
            log.warning("%s", failed.message)
            yield failed
