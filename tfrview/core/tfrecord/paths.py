"""Where a local file really is, cheaply for thousands of files in a few folders (a dataset's
shards): the one key a file is known by, however it was named (dataset.py, the result store)."""

from __future__ import annotations

import functools
import os

from tfrview.core.limits import NAME_MEMO


@functools.lru_cache(maxsize=NAME_MEMO)
def _real_dir(d: str) -> str:
    return os.path.realpath(d)


def real_path(p) -> str:
    """os.path.realpath of a local file, its folder resolved once for all its files (realpath
    walks every component with an lstat: ~0.1 ms a file, seconds for 10,000 shards, twice). A
    folder whose link changes while a process runs keeps its first answer here; the result
    store's key also holds the file's device and inode. Never raises (Path.resolve does)."""
    d, name = os.path.split(os.fspath(p))
    if name in ("", ".", ".."):
        return os.path.realpath(p)
    full = os.path.join(_real_dir(d or "."), name)
    if name in _NOT_LINKS.get(d, ()):
        return full
    return os.path.realpath(full) if os.path.islink(full) else full


_NOT_LINKS: dict[str, frozenset[str]] = {}  # a listed folder's names that were no symlinks


def note_not_links(folder: str, names: list[str]) -> None:
    """A folder's listing said these names are no symlinks (scandir's entry types, no lstat a
    file): `real_path` takes them so (as `_real_dir` keeps a folder's first answer), the last
    `NAME_MEMO` folders listed."""
    d = os.fspath(folder)
    _NOT_LINKS.pop(d, None)
    _NOT_LINKS[d] = frozenset(names)
    while len(_NOT_LINKS) > NAME_MEMO:
        del _NOT_LINKS[next(iter(_NOT_LINKS))]
