"""TFDS metadata (`tfds.layout`) where files are named, opened and checked: which files a TFDS
folder or shard names, which named shards are not there (`split_missing_shard`) and whether a
framed shard holds the records `shardLengths` says (`shard_length_mismatch`). The one answer
`expand_arg`, `Dataset.open`, `verify`, `info` and the window give."""

from __future__ import annotations

import os
from pathlib import Path

from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.termtext import printable
from tfrview.core.tfds.layout import TfdsDataset, find


def dataset_of(path) -> TfdsDataset | None:
    """The TFDS dataset a local path is, holds or is a shard of (None for a URL or none)."""
    s = str(path)
    if "://" in s:
        return None
    return find(Path(s))


def present(ds: TfdsDataset) -> tuple[list[Path], list[Path]]:
    """The named shards that are there and those that are not, in metadata order (one listing of
    each folder, not a `stat` a shard)."""
    listed: dict[str, set[str]] = {}
    here, gone = [], []
    for p in ds.paths():
        folder, name = os.path.split(str(p))  # not pathlib's parent and name: 2,048 shards
        names = listed.get(folder)
        if names is None:
            try:
                with os.scandir(folder) as it:
                    names = {e.name for e in it}
            except OSError:
                names = set()
            listed[folder] = names
        (here if name in names else gone).append(p)
    return here, gone


def expected(path, folders: dict[str, TfdsDataset | None] | None = None) -> tuple[str, int | None] | None:
    """(split, records by `shardLengths`) of a shard its folder's metadata names, else None.
    `folders`: each folder's dataset, found once for all its files (a file's is its folder's:
    `layout.version_folder` looks beside it; 2,048 shards: one look, not three `stat`s each)."""
    if folders is None:
        ds = dataset_of(path)
    else:
        folder = os.path.dirname(str(path))
        if folder not in folders:
            folders[folder] = dataset_of(path)
        ds = folders[folder]
    if ds is None or ds.info is None:
        return None
    return ds.expected.get(str(Path(str(path))))


def missing_problem(path: Path, split: str, shards: int) -> Problem:
    msg = (
        f"{printable(path.name)} is not there: dataset_info.json names {shards:,} "
        f"shard{'s' if shards != 1 else ''} for split {printable(split)}"
    )
    return Problem(ProblemKind.SPLIT_MISSING_SHARD, 0, None, None, msg)


def missing_of(ds: TfdsDataset) -> list[tuple[Path, Problem]]:
    """Each named shard that is not there, with its problem."""
    _, gone = present(ds)
    counts = {str(p): (s.name, len(s.shards)) for s in ds.splits for p in s.shards}
    return [(p, missing_problem(p, *counts[str(p)])) for p in gone]


def length_problem(
    path, intact: int, framed_all: bool = True, folders: dict[str, TfdsDataset | None] | None = None
) -> Problem | None:
    """A `shard_length_mismatch` when a shard the metadata names holds another number of intact
    records than its `shardLengths` entry (None when it agrees, or nothing is said). `folders`: as
    `expected`'s, for many files."""
    return problem_of_expected(expected(path, folders), intact, framed_all)


def problem_of_expected(
    want: tuple[str, int | None] | None, intact: int, framed_all: bool = True
) -> Problem | None:
    """`length_problem` of a shard whose `expected` entry is `want`, for a caller that looked it
    up already (one look a shard)."""
    if not framed_all or want is None or want[1] is None or want[1] == intact:
        return None
    split, n = want
    msg = (
        f"{intact:,} intact record{'s' if intact != 1 else ''}, where dataset_info.json says "
        f"{n:,} for this shard of split {printable(split)}"
    )
    return Problem(ProblemKind.SHARD_LENGTH_MISMATCH, 0, None, None, msg)
