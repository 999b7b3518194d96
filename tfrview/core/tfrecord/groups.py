"""Which files form one dataset: the unit every rule that compares records with each other runs
within (schema, payload kind, the >=90 % presence rule, a label map found beside the data).

A command line or a folder may hold several datasets (`pets_examples.record` beside
`two_damaged_regions.tfrecords`, or `train-*` beside `val-*`): judging them as one gives each the
other's features as "missing". Files belong together when they sit in one folder and their names
differ only in digits: the shards of `train-NNNNN-of-00016`, `part_000.tfrecord`,
`part_001.tfrecord`; any other file is a dataset of its own. The person can say otherwise
(`one_dataset`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# A shard set's name, `train-00003-of-00016.tfrecord`: the one rule the dataset, its groups and the
# window's file column read a shard number by.
SHARD_NAME = re.compile(r"^(?P<prefix>.*?)(?P<num>\d+)-of-(?P<total>\d+)(?P<suffix>.*)$")
_DIGITS = re.compile(r"\d+")


def one_set(names: list[str]) -> tuple[int, int] | None:
    """Where the shard number stands, (start, end), in every name of one `-of-N` set whose names
    differ only in that number (a split's 10,000 shards), found by one `SHARD_NAME` match (of the
    first name) and a string compare a name; None for any other names (then each is matched).
    Names of one length, alike before and after the number, whose number is all ASCII digits, match
    `SHARD_NAME` at the same place: the pattern sees only which characters are digits and the
    words around them."""
    if len(names) < 2:
        return None
    first = SHARD_NAME.match(names[0])
    if first is None:
        return None
    a, b = first.span("num")
    n0 = names[0]
    head, tail, size = n0[:a], n0[b:], len(n0)
    for n in names:
        if len(n) != size or not (n.startswith(head) and n.endswith(tail) and _ascii_digits(n[a:b])):
            return None
    return a, b


def one_folder_set(paths: list[str]) -> tuple[int, int, int] | None:
    """(cut, start, end) when every path is one folder's text, `paths[0][:cut]` (to its last `/`),
    then a name with no `/` or `\\` in it, and the names are one `-of-N` set's (`one_set`: the
    shard number at name[start:end]): one folder's 10,000 shards told by string compares, not a
    match a name. None for any other paths (a shard in a subfolder too)."""
    if len(paths) < 2:
        return None
    first = paths[0]
    cut = first.rfind("/") + 1
    head = first[:cut]
    names = [p[cut:] for p in paths]
    if not all(p.startswith(head) for p in paths) or any("/" in n or "\\" in n for n in names):
        return None
    span = one_set(names)
    return None if span is None else (cut, *span)


def _ascii_digits(s: str) -> bool:
    return s.isascii() and s.isdigit()


@dataclass(frozen=True)
class DatasetGroup:
    """Files judged together, by their number in the list given to `group_files`."""

    name: str  # a shard pattern (`train-?????-of-00016`), a name pattern or the one file's name
    files: tuple[int, ...]

    def to_json(self, paths: list[str]) -> dict:
        return {"name": self.name, "files": [paths[i] for i in self.files]}


def _split(path) -> tuple[str, str]:
    """(folder, file name) of a local path or a URL (kept whole: `gs://bucket/split`), without
    touching the file system."""
    folder, _, name = str(path).replace("\\", "/").rstrip("/").rpartition("/")
    return folder or ".", name


def _key_and_name(name: str) -> tuple[tuple, str]:
    """What files of one dataset share in their name, and the name the dataset is called by."""
    m = SHARD_NAME.match(name)
    if m:
        return ("shard", m["prefix"], m["total"], m["suffix"], len(m["num"])), (
            f"{m['prefix']}{'?' * len(m['num'])}-of-{m['total']}{m['suffix']}"
        )
    return ("name", _DIGITS.sub("#", name)), _DIGITS.sub(lambda d: "?" * len(d.group()), name)


def group_files(paths: list, one_dataset: bool = False) -> list[DatasetGroup]:
    """The datasets among `paths` (files in the dataset's order), each with its files' numbers, in
    the order of their first file. `one_dataset`: the person says every file is one dataset."""
    if not paths:
        return []
    if one_dataset:
        return [DatasetGroup(_joint_name(paths), tuple(range(len(paths))))]
    by_key: dict[tuple, list[int]] = {}
    names: dict[tuple, str] = {}
    tfds = _tfds_groups(paths)
    for i, p in enumerate(paths):
        if i in tfds:  # a TFDS dataset's shards, every split: one dataset, named by its metadata
            key, pattern = ("tfds", tfds[i][0]), tfds[i][1]
        else:
            folder, name = _split(p)
            key, pattern = _key_and_name(name)
            key = (folder, *key)
        by_key.setdefault(key, []).append(i)
        names.setdefault(key, pattern)
    out = []
    for key, files in by_key.items():
        name = names[key] if len(files) > 1 else _split(paths[files[0]])[1]
        out.append(DatasetGroup(name, tuple(files)))
    return _unique_names(out, paths)


def _tfds_groups(paths: list) -> dict[int, tuple[str, str]]:
    """(version folder, `name/version`) of each file its TFDS folder's dataset_info.json names
    (`tfds.layout`): one stat a file's folder, the metadata read once a folder."""
    import os

    from tfrview.core.errors import TfrviewError
    from tfrview.core.tfrecord.tfdsfiles import dataset_of

    out: dict[int, tuple[str, str]] = {}
    by_folder: dict[str, object] = {}
    for i, p in enumerate(paths):
        s = str(p)
        if "://" in s:
            continue
        folder = os.path.dirname(s)
        if folder not in by_folder:
            try:
                by_folder[folder] = dataset_of(p)
            except TfrviewError:
                by_folder[folder] = None
        ds = by_folder[folder]
        if ds is not None and ds.info is not None and s in ds.expected:
            out[i] = (str(ds.root), ds.title)
    return out


def _joint_name(paths: list) -> str:
    if len(paths) == 1:
        return _split(paths[0])[1]
    return f"{len(paths)} files judged as one dataset"


def _unique_names(groups: list[DatasetGroup], paths: list) -> list[DatasetGroup]:
    """Two folders holding `train-?????-of-00002` are two datasets: say which folder each is in."""
    seen: dict[str, int] = {}
    for g in groups:
        seen[g.name] = seen.get(g.name, 0) + 1
    return [
        g if seen[g.name] == 1 else DatasetGroup(f"{_split(paths[g.files[0]])[0]}/{g.name}", g.files)
        for g in groups
    ]


def group_of(groups: list[DatasetGroup], n: int) -> list[int]:
    """For each of n files, the number of its group."""
    out = [0] * n
    for gi, g in enumerate(groups):
        for f in g.files:
            out[f] = gi
    return out
