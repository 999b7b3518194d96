"""The analysis pass: every record read once per question, on every core, remembered.

    from tfrview.core.analysis import analyze
    result = analyze(["train-*.tfrecord"], deep=True, jobs=4)
    result.problems(0), result.summary.to_json(), result.facts()   # a pyarrow Table

`shard.analyze_shard` is the per-file function (plain data in, plain data out: a pool, a Dask
cluster or an Apache Beam `Map` can run it), `merge.merge` (the submodule's function: `tfrview.core.merge` in the public face) combines files' results in any order,
`pool.run_tasks` runs files in worker processes, `cache` remembers results per file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrview.core.analysis.merge import DatasetAnalysis
    from tfrview.core.analysis.pool import run_tasks
    from tfrview.core.analysis.results import ShardResult, ShardTask
    from tfrview.core.analysis.shard import analyze_shard, plan

# Loaded on first use: a pool worker unpickles `shard.analyze_batch`, which imports this package
# first; it frames and checks CRCs and needs neither merge's checks nor pyarrow (~1 s of imports
# a worker on a busy machine).
_WHERE = {
    "DatasetAnalysis": "merge",
    "run_tasks": "pool",
    "ShardResult": "results",
    "ShardTask": "results",
    "analyze_shard": "shard",
    "plan": "shard",
}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(import_module(f"tfrview.core.analysis.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DatasetAnalysis",
    "ShardResult",
    "ShardTask",
    "analyze",
    "analyze_shard",
    "plan",
    "run_tasks",
]


def analyze(
    paths: Iterable[str],
    deep: bool = False,
    label_map: dict | None = None,
    jobs: int | None = None,
    use_cache: bool = True,
    on_result: Callable[[ShardResult], None] | None = None,
    cancelled: Callable[[], bool] = lambda: False,
) -> DatasetAnalysis:
    """The merged pass over files (paths already expanded, in the dataset's order)."""
    from tfrview.core.analysis.merge import merge  # start-up: kept off the CLI's path
    from tfrview.core.analysis.pool import run_tasks  # start-up: kept off the CLI's path
    from tfrview.core.analysis.shard import plan  # start-up: kept off the CLI's path

    tasks = plan(list(paths), deep, label_map, read_cache=use_cache, write_cache=use_cache)
    results = []
    for r in run_tasks(tasks, jobs, cancelled):
        results.append(r)
        if on_result is not None:
            on_result(r)
    return merge(results)
