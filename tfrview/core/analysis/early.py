"""A pool of worker processes started ahead, before the caller has loaded the pass or listed its
files: each worker's start-up (a Python, numpy and the pass's modules, ~0.3 s) then overlaps the
caller's own instead of following it (verify of 2,048 shards waited ~0.4 s for its workers). This
module loads no numpy, so `cli.main` can start the pool before it parses its arguments; the next
`pool.run_tasks` of as many workers takes it, and a pool never taken ends with this process.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from tfrview.core.childproc import worker_start
from tfrview.core.limits import WORKER_EXIT_SECONDS

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

_EARLY: list[tuple[int, ProcessPoolExecutor]] = []  # (jobs, pool) started, not yet taken
_EARLY_PIPES: list = []  # groupproc.GroupWorker started for a shared pass, not yet taken


def start_early(jobs: int, share: bool = True) -> None:
    """Start the workers of a pass on `jobs` cores now: `jobs` - 1 worker processes when this
    process takes groups too (`share`, `pool.run_tasks(share=True)`: one Python and numpy start-up
    fewer, ~0.2 s of CPU), else `jobs`; one pool a process, and none for one core. The workers run
    at this process's priority, as a big file's parts do: the command waits for them (lowered, on
    a busy machine the one worker got ~10 % of a core and its first group came back after this
    process had framed 45 of 50 groups alone)."""
    workers = jobs - 1 if share else jobs
    if workers < 1 or _EARLY or _EARLY_PIPES:
        return
    if share:  # workers on pipes, not a pool (groupproc: ~0.1 s of CPU less)
        from tfrview.core.analysis.groupproc import GroupWorker

        _EARLY_PIPES.extend(GroupWorker() for _ in range(workers))
        return
    from concurrent.futures import ProcessPoolExecutor  # multiprocessing: only where a pool starts
    from multiprocessing import get_context

    pool = ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=worker_start, initargs=(os.getpid(), False)
    )
    for _ in range(workers):
        pool.submit(ready)  # a submit starts every worker; each then loads what a task needs
    _EARLY.append((workers, pool))


def take_early_pipes(workers: int) -> list:
    """The group workers started ahead (`groupproc.GroupWorker`), if they are `workers` (taken once)."""
    if len(_EARLY_PIPES) == workers:
        taken = list(_EARLY_PIPES)
        _EARLY_PIPES.clear()
        return taken
    return []


def take_early(workers: int) -> ProcessPoolExecutor | None:
    """The pool started ahead, if it has `workers` workers (taken once)."""
    if _EARLY and _EARLY[0][0] == workers:
        return _EARLY.pop()[1]
    return None


def drop_early() -> None:
    """End a pool started ahead that no pass took, at once (not after its workers' start-up)."""
    while _EARLY:
        stop_pool(_EARLY.pop()[1])
    while _EARLY_PIPES:
        _EARLY_PIPES.pop().stop()


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool at once: a worker halfway through a 10 GB file is not waited for."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # no public way to reach them
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(timeout=WORKER_EXIT_SECONDS)


def ready() -> None:
    """A worker's first call: the modules a task loads, loaded while the caller plans."""
    from tfrview.core.analysis import cache, shard  # noqa: F401  (start-up of this process)
    from tfrview.core.tfrecord import smallfile  # noqa: F401  (start-up of this process)
