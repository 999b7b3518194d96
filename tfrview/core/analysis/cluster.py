"""The analysis pass on a Dask distributed cluster, when one machine is not enough.

`analyze_shard` is a plain function of a picklable task and merges associatively, so a cluster
runs the same tasks the local pool does and `merge` gives the same answer. Dask is an optional
extra (`pip install 'tfrview[dask]'`); its own rescheduling re-runs the tasks of a worker lost
mid-run. Workers need tfrview installed and, for remote data, their back-end's credentials in
the usual places; results are stored in this machine's cache, not the workers'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace

from tfrview.core.analysis.results import ShardResult, ShardTask
from tfrview.core.analysis.shard import analyze_batch
from tfrview.core.errors import TfrviewError

LOCAL = "local"  # `--dask local`: a LocalCluster on this machine, one single-threaded worker a core
RETRIES = 2  # a task that raised (not a lost worker: Dask reschedules those itself) runs again


def _client(address: str):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise TfrviewError("--dask needs Dask: pip install 'tfrview[dask]'") from None
    try:
        if address == LOCAL:
            from tfrview.core.childproc import cores

            cluster = LocalCluster(
                n_workers=cores(), threads_per_worker=1, processes=True, dashboard_address=None
            )
            return Client(cluster), cluster
        return Client(address, timeout="20s"), None
    except OSError as exc:
        raise TfrviewError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def run_tasks_on_cluster(
    tasks: Iterable[ShardTask], address: str, cancelled: Callable[[], bool] = lambda: False
) -> Iterator[ShardResult]:
    """Results in the order tasks finish, as `pool.run_tasks` gives them: stored results of
    unchanged files here, the rest on the cluster's workers, small files grouped as the pool groups
    them (`pool.batches`, for the cluster's threads)."""
    from tfrview.core.analysis.cache import store_many
    from tfrview.core.analysis.pool import batches, stored_many

    tasks = list(tasks)
    left = []
    asked = [t for t in tasks if t.read_cache]
    found = iter(stored_many(asked) if asked else [])
    for t in tasks:
        hit = next(found) if t.read_cache else None
        if hit is None:
            left.append(t)
        else:
            yield hit
    if not left:
        return
    client, cluster = _client(address)
    try:
        from distributed import as_completed

        threads = sum(client.nthreads().values()) or 1
        groups = batches(left, threads)
        remote = [[replace(t, read_cache=False, write_cache=False) for t in g] for g in groups]
        futures = client.map(analyze_batch, remote, pure=False, retries=RETRIES)
        group_of = {f.key: g for f, g in zip(futures, groups, strict=True)}
        for fut in as_completed(futures):
            if cancelled():
                client.cancel(futures)
                return
            results = fut.result()
            store_many(
                [
                    (t, r)
                    for t, r in zip(group_of[fut.key], results, strict=True)
                    if t.write_cache and r.error is None
                ]
            )
            yield from results
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
