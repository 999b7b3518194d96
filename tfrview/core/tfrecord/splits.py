"""Which split a file belongs to: `train`, `validation`, `test`, named by its path (a folder
`train/`, TFX's `Split-train/`, a file-name prefix `train-00000-of-00016`, TFDS's
`mnist-train.tfrecord-00000-of-00001`), by a TFDS folder's `dataset_info.json` (`tfds.layout`), or
by the person (`--split NAME=PATH...`, the window's
choice). The one rule every command, the fact table's `split` column and the window read.

A file no rule names is in no split (""). The aliases below all mean one split: `val`, `valid`,
`dev` and `eval` are `validation`, so a `val/` folder beside `train/` compares with TFDS's
`validation`.
"""

from __future__ import annotations

import os
import re

from tfrview.core.errors import TfrviewError
from tfrview.core.termtext import printable

# The words a path names a split by, and the split each means.
ALIASES = {
    "train": "train",
    "training": "train",
    "val": "validation",
    "valid": "validation",
    "validation": "validation",
    "dev": "validation",
    "eval": "validation",
    "evaluation": "validation",
    "test": "test",
    "testing": "test",
}
# A split word as a whole path component, or a name's part between separators (`-`, `_`, `.`), with
# TFX's `Split-` before it: `Split-train/`, `train-00000-of-00016`, `mnist-test.tfrecord-00000-of-00001`,
# COCO's `val2017`.
_WORD = re.compile(
    r"(?:^|[-_.])(?:split-)?(" + "|".join(sorted(ALIASES, key=len, reverse=True)) + r")(?=$|[-_.\d])"
)


# A folder names a split only by its whole name (`train/`, `Split-eval/`, `val2017/`): a folder
# `test_data/` or pytest's `test_something0/` holds data, not a test split.
_FOLDER = re.compile(r"(?:split-)?(" + "|".join(sorted(ALIASES, key=len, reverse=True)) + r")\d*")


def split_of_path(path: str) -> str:
    """The split a path names ("" when none): the file name first, then the folder it is in, by
    its whole name (`val/train-0.tfrecord` is in `train`: the name is the closer word). Folders
    further out are not read: `/home/test/data/x.tfrecord` or a `test_data/` folder names no split."""
    parts = str(path).replace("\\", "/").rstrip("/").split("/")
    m = _WORD.search(parts[-1].lower())
    if m:
        return ALIASES[m.group(1)]
    if len(parts) > 1:
        m = _FOLDER.fullmatch(parts[-2].lower())
        if m:
            return ALIASES[m.group(1)]
        if parts[-2].startswith("Split-") and len(parts[-2]) > len("Split-"):
            return parts[-2][len("Split-") :]  # TFX's own split names (`Split-holdout/`) as they are
    return ""


def split_of_files(paths: list, named: list[tuple[str, list[str]]] | None = None) -> list[str]:
    """Each file's split: `named` ((split, paths) the person gave, first match wins; a path named
    there is that file or a folder above it) before the names the paths hold. Each folder's TFDS
    metadata is looked for once, and a file's real path is asked only when the person named
    splits (10,000 shards: 0.17 s of CPU to ~0.03 s)."""
    from tfrview.core.tfrecord.paths import real_path  # start-up: kept off the CLI's path

    def key(p: str) -> str:
        return p.rstrip("/") if "://" in p else real_path(p).rstrip("/")

    given = [(name, [key(str(p)) for p in ps]) for name, ps in (named or [])]
    folders: dict[str, object] = {}  # a folder's TFDS dataset, found once (2,048 shards: one look)
    by_shape: dict[tuple[str, str], str] = {}  # `split_of_path` of a folder and name shape
    if not given:
        same = _one_folder_set([str(p) for p in paths])
        if same is not None:  # one folder's one shard set: one split for all, unless TFDS says each
            _tfds_split(same, folders)  # (its folder's TFDS dataset looked for)
            if folders.get(_folder_and_name(same)[0]) is None:
                return [_split_of_path_memo(same, by_shape)] * len(paths)
    out = []
    for p in paths:
        s = str(p)
        if given:
            real = key(s)
            hit = next(
                (name for name, roots in given for r in roots if real == r or real.startswith(r + "/")),
                None,
            )
            if hit is not None:
                out.append(hit)
                continue
        out.append(_tfds_split(s, folders) or _split_of_path_memo(s, by_shape))
    return out


def _one_folder_set(paths: list[str]) -> str | None:
    """The first path when every path is a local one in one folder and their names are one `-of-N`
    set's, differing only in the shard number (`groups.one_folder_set`: 10,000 shards): then the
    name rule answers alike for all (`_split_of_path_memo`'s shape). Else None."""
    from tfrview.core.tfrecord.groups import one_folder_set

    if len(paths) < 2 or "://" in paths[0] or "\\" in paths[0]:
        return None
    if _folder_and_name(paths[0])[0] != os.path.dirname(paths[0]):
        return None
    return paths[0] if one_folder_set(paths) is not None else None


def _split_of_path_memo(path: str, by_shape: dict[tuple[str, str], str]) -> str:
    """`split_of_path`, read once a folder and name shape (its digits as one 0: the rule reads a
    digit only as what may follow a split word): a split's shards differ only in digits."""
    if "\\" in path:  # (a Windows path: the rule reads its folders too)
        return split_of_path(path)
    folder, name = _folder_and_name(path)
    key = (folder, name.translate(_ZEROS))  # (a finer shape than one 0 a run of digits: as right)
    hit = by_shape.get(key)
    if hit is None:
        hit = by_shape[key] = split_of_path(path)
    return hit


_ZEROS = str.maketrans("123456789", "000000000")


def _folder_and_name(path: str) -> tuple[str, str]:
    """`os.path.split(path)` by one search from the right where that is the same answer (a folder
    that is neither empty nor ends in a slash): a split of 10,000 shards asks for each."""
    folder, _, name = path.rpartition("/")
    if not folder or folder.endswith("/") or os.sep != "/":
        return os.path.split(path)
    return folder, name


def _tfds_split(path: str, folders: dict[str, object]) -> str:
    """The split a TFDS folder's dataset_info.json puts a shard in ("" when none names it): its
    metadata's own names (`train_400` too), an alias (`val`) taken as the split it means, as
    `--split` words are. `folders`: each folder's dataset, found once."""
    if "://" in path:
        return ""
    folder = _folder_and_name(path)[0]  # (os.path.dirname)
    ds = folders.get(folder, _UNSEEN)
    if ds is _UNSEEN:
        from tfrview.core.tfrecord.tfdsfiles import dataset_of

        try:
            ds = dataset_of(folder or ".")
        except (TfrviewError, OSError):
            ds = None
        folders[folder] = ds = ds if ds is not None and ds.info is not None else None  # type: ignore[attr-defined]
    if ds is None:
        return ""
    hit = ds.expected.get(path)  # type: ignore[attr-defined]
    return ALIASES.get(hit[0].lower(), hit[0]) if hit is not None else ""


_UNSEEN = object()


class SplitError(TfrviewError):
    """A `--split` the person gave that is no `NAME=PATH` or names no file."""


def named_splits(words: list[str]) -> list[tuple[str, list[str]]]:
    """`--split NAME=PATH` words as (split, the files PATH names), in the order given; PATH a file,
    a folder or a glob (`tfrecord.dataset.name_files`). Words of one NAME add up. A word without a
    name or a path, or whose path names no file, is a SplitError in one line."""
    from tfrview.core.tfrecord.dataset import name_files  # start-up: kept off the CLI's path

    out: dict[str, list[str]] = {}
    for word in words:
        name, eq, path = word.partition("=")
        name, path = name.strip(), path.strip()
        if not eq or not name or not path:
            raise SplitError(f"--split {printable(word)}: say NAME=PATH, as in train=data/train/")
        failed, files = name_files([path], whole_tfds=False)  # a TFDS shard: that shard, not its dataset
        if not failed and len(files) == 1 and "://" not in path and not os.path.lexists(files[0]):
            failed = [(path, "no such file")]  # a plain name is taken as given: here it must be there
        if failed or not files:
            why = failed[0][1] if failed else "no files"
            raise SplitError(f"--split {printable(word)}: names no file ({printable(why)})")
        out.setdefault(ALIASES.get(name.lower(), name), []).extend(str(f) for f in files)
    return list(out.items())
