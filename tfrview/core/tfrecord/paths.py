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


def real_paths(paths) -> list[str]:
    """`real_path` of each of many local files, each folder's text split off and looked up once
    for a run of files in it (10,000 shards of one folder: ~25 ms of string splitting and joining
    to ~5 ms). The same answers as `real_path`, which takes any path this does not."""
    out = []
    last: tuple[str, str, frozenset[str]] | None = None  # (folder text, its real path, its non-links)
    for p in paths:
        s = os.fspath(p)
        d, _, name = s.rpartition("/")
        if os.sep != "/" or not d or d.endswith("/") or name in ("", ".", ".."):
            out.append(real_path(s))  # a name alone, the root's files, `a//b`, `a/..`: os.path.split's rules
            continue
        if last is None or last[0] != d:
            last = (d, _real_dir(d), _NOT_LINKS.get(d, frozenset()))
        full = f"{last[1]}/{name}" if last[1] != "/" else f"/{name}"
        out.append(full if name in last[2] else (os.path.realpath(full) if os.path.islink(full) else full))
    return out


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


_LABEL_NAMES: dict[str, tuple[int, tuple[str, ...]]] = {}  # folder: (its mtime_ns, its .pbtxt names)


def note_label_names(folder: str, mtime_ns: int, names: list[str]) -> None:
    """A folder's listing saw these `.pbtxt` names (no hidden ones) when the folder's mtime was
    `mtime_ns` (taken before it was listed): `label_names` answers from them while the folder is
    unchanged, so the label map search beside 10,000 shards lists the folder no second time (the
    last `NAME_MEMO` folders)."""
    d = os.fspath(folder)
    _LABEL_NAMES.pop(d, None)
    _LABEL_NAMES[d] = (mtime_ns, tuple(names))
    while len(_LABEL_NAMES) > NAME_MEMO:
        del _LABEL_NAMES[next(iter(_LABEL_NAMES))]


def label_names(folder: str) -> tuple[str, ...] | None:
    """The `.pbtxt` names `note_label_names` kept of `folder`, while its mtime is still the one they
    were seen at (a name added or removed since changes it); else None (list it)."""
    hit = _LABEL_NAMES.get(folder)
    if hit is None:
        return None
    try:
        return hit[1] if os.stat(folder).st_mtime_ns == hit[0] else None
    except OSError:
        return None
