"""The analysis pass: every record read once per question, on every core, remembered.

    from tfrview.core.analysis import analyze
    result = analyze(["train-*.tfrecord"], deep=True, jobs=4)
    result.problems(0), result.summary.to_json(), result.facts()   # a pyarrow Table

`shard.analyze_shard` is the per-file function (plain data in, plain data out: a pool, a Dask
cluster or an Apache Beam `Map` can run it), `merge.merge` combines files' results in any order,
`pool.run_tasks` runs files in worker processes, `cache` remembers results per file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from tfrview.core.analysis.merge import DatasetAnalysis, merge
from tfrview.core.analysis.pool import default_jobs, run_tasks
from tfrview.core.analysis.shard import ShardResult, ShardTask, analyze_shard, plan

__all__ = ["DatasetAnalysis", "ShardResult", "ShardTask", "analyze", "analyze_shard", "default_jobs", "merge", "plan",
           "run_tasks"]  # fmt: skip


def analyze(paths: Iterable[str], deep: bool = False, label_map: dict | None = None, jobs: int | None = None,
            use_cache: bool = True, on_result: Callable[[ShardResult], None] | None = None,
            cancelled: Callable[[], bool] = lambda: False) -> DatasetAnalysis:  # fmt: skip
    """The merged pass over files (paths already expanded, in the dataset's order)."""
    tasks = plan(list(paths), deep, label_map, read_cache=use_cache, write_cache=use_cache)
    results = []
    for r in run_tasks(tasks, jobs, cancelled):
        results.append(r)
        if on_result is not None:
            on_result(r)
    return merge(results)
