"""Running the pass over many files on every core: a pool of worker processes (spawn, never fork:
a forked child of a process with threads, Qt or fsspec may hang), each at a lower CPU priority,
one task per file, results handed back as each file finishes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import replace
from multiprocessing import get_context

from tfrview.core.analysis.shard import ShardResult, ShardTask, analyze_shard
from tfrview.core.childproc import worker_start


def default_jobs() -> int:
    """As many workers as cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def stored(task: ShardTask) -> ShardResult | None:
    """The stored result for a task; for a look at a file (not deep), a deep pass stored before
    answers too (`verify --checks` or the window decoded every record: the look then shows them
    all, and reads nothing)."""
    from tfrview.core.analysis.cache import load

    hit = load(task)
    if hit is not None or task.deep or task.part:
        return hit
    return stored_deep(task.path, task.file_no, task.label_map)


def stored_deep(path: str, file_no: int, label_map: dict | None) -> ShardResult | None:
    """A file's stored deep pass, its parts joined, or None unless every part is stored."""
    from tfrview.core.analysis.cache import load
    from tfrview.core.analysis.merge import join_parts
    from tfrview.core.analysis.shard import plan

    parts = [load(replace(t, file_no=file_no)) for t in plan([path], True, label_map)]
    if not parts or any(p is None or p.deep is None for p in parts):
        return None
    return join_parts(parts)[0]


def run_tasks(tasks: Iterable[ShardTask], jobs: int | None = None, cancelled: Callable[[], bool] = lambda: False,
              store_later: list | None = None, progress=None) -> Iterator[ShardResult]:  # fmt: skip
    """Results in the order files finish. Stored results of unchanged files are taken here (no
    worker started for them); `jobs` 1 (or one file left) runs here, in this process, and then
    with `store_later` its (task, result) pairs are put there for the caller to store once it has
    said the results (storing a 1,000-record file's result takes a few ms; thousands add up);
    `progress` then hears how far each file's framing and CRC pass is (analyze_shard)."""
    left = []
    for t in tasks:
        hit = stored(t) if t.read_cache else None
        if hit is None:
            left.append(replace(t, read_cache=False))  # looked at just now: the worker only reads the file
        else:
            yield hit
        if cancelled():
            return
    tasks = left
    jobs = min(jobs or default_jobs(), len(tasks))
    if jobs <= 1:
        for t in tasks:
            if cancelled():
                return
            if store_later is None or not t.write_cache:
                yield analyze_shard(t, progress)
                continue
            r = analyze_shard(replace(t, write_cache=False), progress)
            if r.error is None:
                store_later.append((t, r))
            yield r
        return
    pool = ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=worker_start,
                               initargs=(os.getpid(),))  # fmt: skip
    try:
        pending: set[Future] = set()
        queue = iter(tasks)
        for t in queue:  # a bounded queue: cancelling never waits for thousands of queued files
            pending.add(pool.submit(analyze_shard, t))
            if len(pending) >= 2 * jobs:
                break
        while pending:
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            if cancelled():
                return
            for f in done:
                yield f.result()
                nxt = next(queue, None)
                if nxt is not None:
                    pending.add(pool.submit(analyze_shard, nxt))
    finally:
        _stop(pool)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop at once: a worker halfway through a 10 GB file is not waited for."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # no public way to reach them
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=5)
