"""Running the pass over many files on every core: a pool of worker processes (spawn, never fork:
a forked child of a process with threads, Qt or fsspec may hang) at a lower CPU priority (the
window's own process starts pools too; the workers the CLI starts ahead and waits for run at its
priority: `early.start_early`), small files grouped into one task (`batches`: up to
limits.TASK_BYTES or TASK_FILES a task, each file's result still its own), a big file's deep pass
in parts, results handed back as each task finishes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import closing
from dataclasses import replace
from typing import TYPE_CHECKING

from tfrview.core import limits
from tfrview.core.analysis.early import stop_pool, take_early
from tfrview.core.analysis.results import ShardResult, ShardTask
from tfrview.core.analysis.shard import analyze_batch, analyze_shard, plan, share_framing
from tfrview.core.childproc import cores

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor


def stored(task: ShardTask) -> ShardResult | None:
    """The stored result for a task; for a look at a file (not deep), a deep pass stored before
    answers too (`verify --checks` or the window decoded every record: the look then shows them
    all, and reads nothing)."""
    from tfrview.core.analysis.cache import load  # start-up of this process

    hit = load(task)
    if hit is not None or task.deep or task.part:
        return hit
    return stored_deep(task.path, task.file_no, task.label_map, task.box_specs)


def stored_deep(
    path: str, file_no: int, label_map: dict | None, box_specs: tuple[str, ...] = ()
) -> ShardResult | None:
    """A file's stored deep pass, its parts joined, or None unless every part is stored."""
    from tfrview.core.analysis.cache import load  # start-up of this process
    from tfrview.core.analysis.merge import join_parts  # start-up of this process

    parts = [load(replace(t, file_no=file_no)) for t in plan([path], True, label_map, box_specs=box_specs)]
    if not parts or any(p is None or p.deep is None for p in parts):
        return None
    return join_parts(parts)[0]


def stored_many(tasks: list[ShardTask]) -> list[ShardResult | None]:
    """`stored` of many tasks, asking the store once for all, and once more for the looks a stored
    deep pass may answer: each file's identity read once for both, their deep passes planned in
    one call (10,000 shards were 20,000 identities and 10,000 plans, one a file)."""
    from tfrview.core.analysis.cache import load_many  # start-up of this process
    from tfrview.core.analysis.merge import join_parts  # start-up of this process

    identities: dict = {}
    hits = load_many(tasks, identities=identities)
    looks = [
        i for i, (t, h) in enumerate(zip(tasks, hits, strict=True)) if h is None and not t.deep and not t.part
    ]
    deep: list[list[ShardTask]] = [[] for _ in looks]
    for label_map, specs, some in _by_settings([(i, tasks[i]) for i in looks]):
        for d in plan([tasks[i].path for _, i in some], True, label_map, box_specs=specs):
            k, i = some[d.file_no]
            deep[k].append(replace(d, file_no=tasks[i].file_no))
    if looks:
        found = iter(load_many([d for ds in deep for d in ds], identities=identities))
        for i, ds in zip(looks, deep, strict=True):
            parts = [next(found) for _ in ds]
            if parts and all(p is not None and p.deep is not None for p in parts):
                hits[i] = join_parts(parts)[0]
    return hits


def _by_settings(looks: list[tuple[int, ShardTask]]) -> list:
    """The looks grouped by the label map and box specs their deep pass is planned with, each as
    (its index among the looks, its index among the tasks)."""
    groups: dict = {}
    for k, (i, t) in enumerate(looks):
        key = (json.dumps(t.label_map, sort_keys=True) if t.label_map else "", t.box_specs)
        groups.setdefault(key, ([], t.label_map, t.box_specs))[0].append((k, i))
    return [(lm, specs, some) for some, lm, specs in groups.values()]


def batches(tasks: list[ShardTask], jobs: int) -> list[list[ShardTask]]:
    """The tasks grouped for workers: consecutive small local files together, up to
    limits.TASK_BYTES (deep: TASK_DEEP_BYTES) or TASK_FILES a group, and smaller when the whole
    dataset is small, so each of `jobs` workers (more than one) gets about four groups. A part of a big file, a
    remote file its listing did not size and a file of the group's size go alone; a listed remote
    file carries its listing's size and version (its worker asks neither, and fetches the group's
    small objects many at a time: remote.fetch_ahead). Grouping changes nothing of a file's result
    or where it is stored."""
    from tfrview.core.tfrecord.remote import is_url, listed_claim  # start-up of this process

    tasks = list(tasks)
    sizes: list[int | None] = []
    for i, t in enumerate(tasks):
        try:
            if is_url(t.path):
                claim = t.listed or listed_claim(t.path)
                tasks[i] = replace(t, listed=claim)
                sizes.append(claim[0] if claim else None)
            else:
                sizes.append(os.stat(t.path).st_size)
        except OSError:
            sizes.append(None)  # the worker says why, in the file's own result
    total = sum(s for s in sizes if s)
    cap = limits.TASK_DEEP_BYTES if any(t.deep for t in tasks) else limits.TASK_BYTES
    left = total
    budget = _budget(left, total, jobs, cap)
    out: list[list[ShardTask]] = []
    group: list[ShardTask] = []
    held = 0
    for t, size in zip(tasks, sizes, strict=True):
        if t.parts > 1 or size is None or size >= budget:
            out.append([t])
            left -= size or 0
            continue
        if group and (held + size > budget or len(group) >= limits.TASK_FILES):
            out.append(group)
            left -= held
            budget = _budget(left, total, jobs, cap)
            group, held = [], 0
        group.append(t)
        held += size
    if group:
        out.append(group)
    return out


def _budget(left: int, total: int, jobs: int, cap: int) -> int:
    """The bytes of the next group: an eighth of a worker's share of what is left, so groups shrink
    towards the end (the last ones, taken by whichever worker is free first, are small: no core
    waits long for the other's last group), and never below an eighth of the first groups. One
    worker: nothing to balance."""
    if jobs <= 1:
        return cap
    return max(1, min(cap, max(left, total // 8) // (8 * jobs)))


def _pool(jobs: int, counter, summaries) -> ProcessPoolExecutor:
    """The early pool when it fits (as many workers, no progress hooks), else a new one, its
    workers lowered (`progress.initializer`): this runs in the window's own process too (the
    scan's pool, gui/workers/scan.py), whose workers must never take the UI's priority."""
    early = take_early(jobs) if counter is None and summaries is None else None
    if early is not None:
        return early
    from concurrent.futures import ProcessPoolExecutor  # multiprocessing: not for one file framed here
    from multiprocessing import get_context

    from tfrview.core.analysis.progress import initializer  # start-up of this process

    init, initargs = initializer(counter, summaries)
    return ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=init, initargs=initargs)


def run_tasks(
    tasks: Iterable[ShardTask],
    jobs: int | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    store_later: list | None = None,
    progress=None,
    counter=None,
    summaries=None,
    share: bool = False,
) -> Iterator[ShardResult]:
    """`_run_tasks`, the parts of a big file holding its index once (`shard.share_framing`)."""

    seen: dict = {}
    with closing(
        _run_tasks(tasks, jobs, cancelled, store_later, progress, counter, summaries, share)
    ) as results:
        for r in results:
            yield share_framing(r, seen)


def _run_tasks(
    tasks: Iterable[ShardTask],
    jobs: int | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    store_later: list | None = None,
    progress=None,
    counter=None,
    summaries=None,
    share: bool = False,
) -> Iterator[ShardResult]:
    """Results in the order tasks finish. Stored results of unchanged files are taken here (no
    worker started for them; the store asked once a few hundred files); `jobs` 1 (or one task
    left) runs here, in this process, and then with `store_later` its (task, result) pairs are put
    there for the caller to store once it has said the results (storing a 1,000-record file's
    result takes a few ms; thousands add up); `progress` then hears how far each file's framing and
    CRC pass is (analyze_shard). `counter` (progress.make_counter): the workers add the records
    they decode to it, so the caller can say how far a long task is; `summaries`
    (progress.make_summaries): they send the summary of the part they decode, now and then.
    `share`: this process runs groups too, between taking the workers' answers, with one worker
    fewer (`jobs` - 1; `early.start_early` starts as many): for a process that does nothing else
    meanwhile (the CLI), never a thread of the window's process, nor with progress hooks, nor for a
    deep pass (a deep group's memory would add to the caller's: `verify --checks`' peak RSS)."""
    tasks = list(tasks)
    left = []
    for at in range(0, len(tasks), 256):
        some = tasks[at : at + 256]
        asked = [t for t in some if t.read_cache]
        found = iter(stored_many(asked) if asked else [])
        for t in some:
            hit = next(found) if t.read_cache else None
            if hit is None:
                # the worker only reads the file
                left.append(replace(t, read_cache=False) if t.read_cache else t)
            else:
                yield hit
        if cancelled():
            return
    jobs = jobs or cores()
    groups = batches(left, jobs)
    # one file alone: its framing and CRCs take every core when it is big and plain (tfrecord.parts)
    frame_jobs = jobs if len(groups) == 1 and len(groups[0]) == 1 else 1
    jobs = min(jobs, len(groups))
    if jobs <= 1:  # here, a file at a time (each said, and a chance to stop), stored a group at a time
        from tfrview.core.analysis.cache import store_many  # start-up of this process
        from tfrview.core.tfrecord.remote import fetch_ahead  # start-up of this process

        later = store_later if store_later is not None else []
        for g in groups:
            with fetch_ahead([(t.path, t.listed) for t in g]):  # remote objects: many requests in flight
                for t in g:
                    if cancelled():
                        break
                    r = analyze_shard(replace(t, write_cache=False), progress, frame_jobs)
                    if r.error is None and t.write_cache:
                        later.append((t, r))
                    yield r
            if store_later is None:
                store_many(later)
                later.clear()
            if cancelled():
                return
        return
    # a look's group is a few MB framed; a deep group's working set would add to this process's
    share = share and counter is None and summaries is None and not any(t.deep for t in left)
    workers = jobs - 1 if share else jobs
    if share:  # workers on pipes (groupproc), started ahead by the command or now
        from tfrview.core.analysis.groupproc import GroupWorker, run_shared  # start-up of this process

        procs = take_early(workers, share=True) or [GroupWorker() for _ in range(workers)]
        yield from run_shared(procs, groups, cancelled)
        return
    pool = _pool(workers, counter, summaries)
    try:
        pending: set[Future] = set()
        queue = iter(groups)
        nxt = next(queue, None)
        while nxt is not None or pending:
            while nxt is not None and len(pending) < 2 * workers:  # a bounded queue: cancelling never
                pending.add(pool.submit(analyze_batch, nxt))  # waits for thousands of queued files
                nxt = next(queue, None)
            done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
            if cancelled():
                return
            for f in done:
                yield from f.result()
    finally:
        stop_pool(pool)
