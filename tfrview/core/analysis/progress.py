"""Records the deep pass has decoded, counted across the pool's worker processes.

A task (one part of a big file: up to limits.PART_RECORDS records) takes a minute on a busy
machine; counting finished tasks left the window at "starting" for minutes on one 2,000,000-record
file. Workers add to one shared 64-bit counter every few thousand records (`records_done`); the
job that started them reads it (`counted`) as often as it likes, without a message per record.
"""

from __future__ import annotations

import os
import time
from typing import Any

from tfrview.core.childproc import worker_start

EVERY = 4096  # records decoded between two additions to the shared counter (a lock each time)
SUMMARY_SECONDS = 2.0  # how often a worker sends the summary of the part it is decoding

_shared: Any = None  # a multiprocessing Value("q") in a pool worker, and in the job that made it
_here = 0  # records counted when no shared counter was set up (the CLI, a test)
_summaries: Any = None  # a multiprocessing Queue of (task key, pickled summary so far), or None
_summary_sent = 0.0


def make_counter():
    """A counter the spawned pool workers can share (`worker_init` hands it to each), also used
    by this process when it decodes records itself (`jobs` 1)."""
    from multiprocessing import get_context  # standard library, used here only

    global _shared
    _shared = get_context("spawn").Value("q", 0)
    return _shared


def make_summaries():
    """A queue on which the pool workers send the summary of the part they are decoding, every
    SUMMARY_SECONDS: the window's Dataset Summary fills while a 250,000-record part runs."""
    from multiprocessing import get_context  # standard library, used here only

    global _summaries
    _summaries = get_context("spawn").Queue()
    _summaries.cancel_join_thread()  # never wait at exit on summaries nobody reads any more
    return _summaries


def worker_init(parent: int | None, counter, summaries=None) -> None:
    """A pool worker's initializer: `childproc.worker_start`, then the job's counter kept."""

    global _shared, _summaries
    worker_start(parent)
    _shared = counter
    _summaries = summaries
    if summaries is not None:
        summaries.cancel_join_thread()


def summary_so_far(key: tuple, summary) -> None:
    """The summary of the part being decoded (`key`: its path and part), sent at most every
    SUMMARY_SECONDS when a job asked for them; pickled here, so the decoding may go on changing it."""
    import pickle

    global _summary_sent
    if _summaries is None or time.monotonic() - _summary_sent < SUMMARY_SECONDS:
        return
    _summary_sent = time.monotonic()
    _summaries.put((key, pickle.dumps(summary)))


def records_done(n: int) -> None:
    """`n` more records decoded by the deep pass (called every EVERY records, and at a task's end)."""
    global _here
    if n <= 0:
        return
    if _shared is None:
        _here += n
        return
    with _shared.get_lock():
        _shared.value += n


def counted(counter=None) -> int:
    """The records counted so far (by every worker sharing `counter`, else this process's counter)."""
    c = counter if counter is not None else _shared
    if c is None:
        return _here
    return int(c.value)


def initializer(counter, summaries=None) -> tuple:
    """(initializer, initargs) for a ProcessPoolExecutor whose workers add to `counter` and send
    their summaries so far on `summaries` (None, None: the plain `childproc.worker_start`)."""

    if counter is None and summaries is None:
        return worker_start, (os.getpid(),)
    return worker_init, (os.getpid(), counter, summaries)
