"""The worker a command shares a pass with (`pool.run_tasks(share=True)`: `verify` of many small
files, not --checks): `python -m tfrview.core.analysis.groupproc`, handed groups of tasks on its
stdin and answering each with its results (`results.ResultList`) on its stdout, a frame each (an
8-byte length, then a pickle of (True, results), or (False, the exception raised)).

Not a multiprocessing pool: for one worker beside the command, the pool's import (~25 ms), the
resource tracker process it starts (~40 ms of CPU), its spawned interpreter's own multiprocessing
start-up and its two threads cost ~0.1 s of CPU of a ~1 s `verify` of 2,048 shards; a pipe serves
one worker as well. The command's thread (`GroupWorker.serve`) writes the worker's next group as
each answer comes back, so the worker never waits for the command's own group; a worker that dies
hands its unanswered groups back, and the command frames them itself (the log says why)."""

from __future__ import annotations

import logging
import os
import pickle
import struct
import sys
import threading
from collections.abc import Callable

from tfrview.core import limits
from tfrview.core.childproc import spawn
from tfrview.core.errors import TfrviewError

MODULE = "tfrview.core.analysis.groupproc"
_LEN = struct.Struct("<Q")
_QUEUED = 2  # groups a worker holds: the one it frames and the next, so it never waits for the pipe
_LOOK_SECONDS = 0.2  # how often the command looks for a stop while it waits for answers (not a bound)

log = logging.getLogger(__name__)


class WorkerGone(TfrviewError):
    """A group worker ended before answering `groups` (its stderr's last line, or its exit, in the message)."""

    def __init__(self, msg: str, groups: list) -> None:
        super().__init__(msg)
        self.groups = groups


class GroupWorker:
    """One worker process, started at once (its interpreter and the pass's modules load while the
    command lists its files: `early.start_early`)."""

    def __init__(self) -> None:
        # its stderr is the command's: what it says of a file (a notice, a warning) reaches the person
        self.proc = spawn(MODULE, stdin_later=True, share_stderr=True)
        self._stopped = threading.Lock()

    def serve(self, take: Callable[[], list | None], put: Callable[[object], None]) -> None:
        """On a thread of the command: the groups `take` gives (None: no more) to the worker, and
        each answer to `put` (a ResultList; an exception the worker raised, raised by the
        command's thread; or WorkerGone with the groups it did not answer), until `take` has no
        more and every group is answered."""
        sent: list[list] = []
        try:
            for _ in range(_QUEUED):
                if not self._send(take, sent):
                    break
            while sent:
                ok, got = self._answer()
                sent.pop(0)
                put(got if ok else _Raised(got))
                self._send(take, sent)
        except Exception as exc:  # a pipe that broke, an answer that does not read: framed here
            put(WorkerGone(self._why(exc), sent))
        finally:
            put(_DONE)  # first: the command waits for no worker's end (it polled, ~0.2 s a pass)
            self.stop()

    def _send(self, take: Callable[[], list | None], sent: list) -> bool:
        group = take()
        if group is None:
            return False
        sent.append(group)
        data = pickle.dumps(group, protocol=pickle.HIGHEST_PROTOCOL)
        self.proc.stdin.write(_LEN.pack(len(data)) + data)
        self.proc.stdin.flush()
        return True

    def _answer(self) -> tuple[bool, object]:
        data = _frame(self.proc.stdout)
        if not data:
            raise EOFError("it ended, or its answer was cut short")
        return pickle.loads(data)

    def _why(self, exc: BaseException) -> str:
        """Why the worker failed: how it ended (what it said is on the command's stderr)."""
        try:
            # (a pipe's end is seen before its process is reaped)
            code = self.proc.wait(timeout=limits.WORKER_EXIT_SECONDS)
        except Exception:  # subprocess.TimeoutExpired: it runs on, its pipe broken
            code = None
        how = "still running" if code is None else f"exit {code}" if code >= 0 else f"signal {-code}"
        return f"group worker {self.proc.pid} failed ({exc or type(exc).__name__}; {how})"

    def stop(self) -> None:
        """End the worker: no more groups (an empty frame), then at once if it still runs. From
        either thread, any number of times."""
        with self._stopped:
            try:
                self.proc.stdin.write(_LEN.pack(0))
                self.proc.stdin.close()
            except (OSError, ValueError):
                pass
            if self.proc.poll() is None:
                try:
                    self.proc.wait(timeout=limits.GROUP_WORKER_END_SECONDS)
                except Exception:  # subprocess.TimeoutExpired: it is ended here
                    self.proc.kill()
                    self.proc.wait()


_DONE = object()  # a worker's thread has put its last answer


class _Raised:
    """An exception the worker raised running a group: raised again by the command's thread."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def run_shared(workers: list[GroupWorker], groups: list, cancelled: Callable[[], bool]):
    """Results of `groups`, framed by this process and `workers`, each taking the next group from
    one queue whenever it is free (`pool.run_tasks(share=True)`), in the order they finish. A
    worker that fails hands back the groups it held: this process frames them (logged, with why)."""
    import queue as queues

    from tfrview.core.analysis.shard import analyze_batch  # start-up of this process

    lock = threading.Lock()
    stop = threading.Event()
    todo = iter(groups)
    redo: list[list] = []
    answers: queues.SimpleQueue = queues.SimpleQueue()

    def take() -> list | None:
        with lock:
            return None if stop.is_set() else next(todo, None)

    threads = [threading.Thread(target=w.serve, args=(take, answers.put), daemon=True) for w in workers]
    for t in threads:
        t.start()
    block = False
    done = 0  # workers whose thread put its last answer
    try:
        while True:
            for got in _taken(answers, block):
                if got is _DONE:
                    done += 1
                elif isinstance(got, WorkerGone):
                    log.warning("%s: this process frames its %d groups", got, len(got.groups))
                    redo += got.groups
                elif isinstance(got, _Raised):
                    raise got.exc
                else:
                    yield from got
            block = False
            if cancelled():
                return
            mine = redo.pop() if redo else take()
            if mine is not None:
                yield from analyze_batch(mine)
            elif done < len(workers):
                block = True  # nothing left to take: the workers' last answers
            elif answers.empty():
                return
    finally:
        stop.set()
        for w in workers:
            w.stop()
        for t in threads:
            t.join(timeout=limits.WORKER_EXIT_SECONDS)
        for w in workers:
            w.proc.stdout.close()


def _taken(answers, block: bool) -> list:
    """What the workers' threads have put, waiting up to 0.2 s for the first when `block`."""
    import queue as queues

    out = []
    try:
        out.append(answers.get(timeout=_LOOK_SECONDS) if block else answers.get_nowait())
        while True:
            out.append(answers.get_nowait())
    except queues.Empty:
        pass
    return out


def _frame(stream) -> bytes | None:
    """One frame's bytes read from `stream` (both sides): b"" for an empty frame (no more groups),
    None at the end of the stream or a frame cut short."""
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    (n,) = _LEN.unpack(head)
    data = stream.read(n) if n else b""
    return data if len(data) == n else None


def main() -> int:
    """The worker: groups until an empty frame or the end of stdin, each answered on stdout. Its
    stdin is read by a thread of its own, always: a group written while this process writes a long
    answer then never waits for it (a group of 512 small files pickles to ~100 KB, more than a
    pipe holds, and the command's thread writing it is the one that reads the answers). A
    precaution: a test with 250 KB groups and 70 KB answers did not hang without it either."""
    import queue as queues

    from tfrview.core.childproc import worker_start, write_all

    worker_start(os.getppid(), lower=False)  # the command waits for it: at its priority (early.start_early)
    from tfrview.core.analysis import cache  # noqa: F401  (loaded while the command lists its files)
    from tfrview.core.analysis.shard import analyze_batch
    from tfrview.core.tfrecord import smallfile  # noqa: F401

    inbox: queues.SimpleQueue = queues.SimpleQueue()
    threading.Thread(target=_frames, args=(sys.stdin.buffer, inbox.put), daemon=True).start()
    while True:
        data = inbox.get()
        if not data:
            return 0
        tasks = pickle.loads(data)
        try:
            answer = (True, analyze_batch(tasks))
        except Exception as exc:  # said to the command, which raises it as a pool would
            answer = (False, exc)
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # an exception that does not pickle: its words do
            data = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        try:
            write_all(_LEN.pack(len(data)) + data)
        except BrokenPipeError:
            return 0


def _frames(stream, put: Callable[[bytes], None]) -> None:
    """Each frame's bytes read from `stream`, to `put`; b"" at an empty frame or the end."""
    while True:
        data = _frame(stream) or b""
        put(data)
        if not data:
            return


if __name__ == "__main__":
    # its answers written by os.write, it ends at once (the command stops it by an empty frame):
    # an interpreter's teardown (numpy and the rest freed one by one) cost tens of ms
    code = main()
    sys.stderr.flush()
    os._exit(code)
