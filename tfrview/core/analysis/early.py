"""Worker processes started ahead (a pool, or for a shared pass group workers on pipes,
`groupproc`), before the caller has loaded the pass or listed its files: each worker's start-up
(a Python, numpy and the pass's modules, ~0.3 s) then overlaps the caller's own instead of
following it (verify of 2,048 shards waited ~0.4 s for its workers). This module loads no numpy,
so `cli.main` can start them before it parses its arguments; the next `pool.run_tasks` of as
many workers, shared or not, takes them (`take_early`), and what no pass took is ended
(`drop_early`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from tfrview.core.childproc import worker_start
from tfrview.core.limits import WORKER_EXIT_SECONDS

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

# (workers, share, what started: a pool, or for a shared pass a list of groupproc.GroupWorker), not yet taken
_EARLY: list[tuple[int, bool, Any]] = []


def start_early(jobs: int, share: bool = True) -> None:
    """Start the workers of a pass on `jobs` cores now: `jobs` - 1 group workers (`groupproc`) when
    this process takes groups too (`share`, `pool.run_tasks(share=True)`: one Python and numpy
    start-up fewer, ~0.2 s of CPU), else a pool of `jobs`; nothing while something started ahead
    is still untaken, and nothing for one core. Only the CLI starts workers ahead, and it waits for
    them: they run at its priority (`worker_start(lower=False)`), as a big file's parts do (lowered
    on a busy machine, the command's one worker got ~10 % of a core and its first group came back
    after the command had framed 45 of 50 groups alone). A pool `pool._pool` starts is lowered
    instead: the window's own process starts those too (gui/workers/scan.py)."""
    workers = jobs - 1 if share else jobs
    if workers < 1 or _EARLY:
        return
    if share:  # workers on pipes, not a pool (groupproc: ~0.1 s of CPU less)
        from tfrview.core.analysis.groupproc import GroupWorker

        _EARLY.append((workers, True, [GroupWorker() for _ in range(workers)]))
        return
    from concurrent.futures import ProcessPoolExecutor  # multiprocessing: only where a pool starts
    from multiprocessing import get_context

    pool = ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=worker_start, initargs=(os.getpid(), False)
    )
    for _ in range(workers):
        pool.submit(ready)  # a submit starts every worker; each then loads what a task needs
    _EARLY.append((workers, False, pool))


def take_early(workers: int, share: bool = False) -> Any:
    """What was started ahead for a pass on `workers` workers, shared or not (`start_early`): the
    pool, or the list of group workers (taken once); else None."""
    if _EARLY and _EARLY[0][:2] == (workers, share):
        return _EARLY.pop()[2]
    return None


def drop_early() -> None:
    """End what was started ahead and no pass took, at once (not after its workers' start-up)."""
    while _EARLY:
        _, share, started = _EARLY.pop()
        if share:
            for w in started:
                w.stop()
        else:
            stop_pool(started)


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
