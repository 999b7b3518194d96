"""The analysis pass: every record read once per question, on every core, remembered.

    from tfrview.core.analysis import analyze
    result = analyze(["train-*.tfrecord"], deep=True, jobs=4)
    result = analyze(paths, deep=True, splits={"test": "holdout/"}, rules={"near_distance": 6})
    result.problems(0), result.summary.to_json(), result.facts()   # a pyarrow Table

`shard.analyze_shard` is the per-file function (plain data in, plain data out: a pool, a Dask
cluster or an Apache Beam `Map` can run it), `merge.merge` (the submodule's function: `tfrview.core.merge` in the public face) combines files' results in any order,
`pool.run_tasks` runs files in worker processes, `cache` remembers results per file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfrview.core.analysis.merge import DatasetAnalysis
    from tfrview.core.analysis.pool import run_tasks
    from tfrview.core.analysis.results import ShardResult, ShardTask
    from tfrview.core.analysis.rules import DatasetRules
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
    splits: Mapping[str, Iterable[str] | str] | Sequence[str] | None = None,
    rules: DatasetRules | Mapping[str, object] | Iterable[str] | None = None,
) -> DatasetAnalysis:
    """The merged pass over files (paths already expanded, in the dataset's order).

    `splits`: each file's split — None: the split each path names (`tfrecord.splits`); a mapping
    {split: paths, folders or globs} (as `--split NAME=PATH`, first match wins, the rest by their
    paths; a path naming no file is a SplitError); or one split name per file. `rules`: the dataset
    step's thresholds — a `DatasetRules`, {name: value} or `NAME=VALUE` words (`tfrview rules`)."""
    from tfrview.core.analysis.merge import merge  # start-up: kept off the CLI's path
    from tfrview.core.analysis.pool import run_tasks  # start-up: kept off the CLI's path
    from tfrview.core.analysis.shard import plan  # start-up: kept off the CLI's path

    paths = list(paths)
    each, given = _splits_of(paths, splits), _rules_of(rules)  # bad words fail before the pass
    tasks = plan(paths, deep, label_map, read_cache=use_cache, write_cache=use_cache)
    results = []
    for r in run_tasks(tasks, jobs, cancelled):
        results.append(r)
        if on_result is not None:
            on_result(r)
    return merge(results, splits=each, rules=given)


def _splits_of(paths: list, splits) -> list[str]:
    """Each file's split from `analyze`'s `splits` argument."""
    from tfrview.core.tfrecord.splits import SplitError, named_splits, split_of_files

    if splits is None:
        return split_of_files(paths)
    if isinstance(splits, Mapping):
        words = [f"{name}={p}" for name, ps in splits.items() for p in ([ps] if isinstance(ps, str) else ps)]
        return split_of_files(paths, named_splits(words))
    each = [str(s) for s in splits]
    if len(each) != len(paths):
        raise SplitError(f"splits: {len(each):,} split names for {len(paths):,} files (one a file)")
    return each


def _rules_of(rules) -> DatasetRules:
    """A `DatasetRules` from `analyze`'s `rules` argument."""
    from tfrview.core.analysis.rules import DatasetRules

    if rules is None:
        return DatasetRules()
    if isinstance(rules, DatasetRules):
        return rules
    if isinstance(rules, Mapping):
        return DatasetRules().with_words([f"{k}={v}" for k, v in rules.items()])
    return DatasetRules().with_words(list(rules))
