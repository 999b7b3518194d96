"""A TFDS `dataset_info.json`, read strictly as JSON data.

TFDS writes its `DatasetInfo` proto as JSON with camelCase names (64-bit integers as strings):
`name`, `version`, `description`, `citation`, `configName`, `fileFormat`, `downloadSize`,
`supervisedKeys` and `splits`, each split with `name`, `shardLengths`, `numBytes` and
`filepathTemplate`. Nothing in it is imported or executed; every field is checked for its type,
and a field of the wrong type is left out with a note (`DatasetInfo.notes`), never a traceback.
What cannot be read at all (too big, not JSON, too deep, not an object) is an `InfoError` in one line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import MAX_TFDS_INFO_BYTES, MAX_TFDS_JSON_DEPTH, MAX_TFDS_SHARDS, too_large
from tfrview.core.termtext import printable

INFO_FILE = "dataset_info.json"
# TFDS's default shard name (naming.py): `mnist-train.tfrecord-00000-of-00001`.
DEFAULT_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"
DEFAULT_FORMAT = "tfrecord"  # an empty `fileFormat`: TFDS's default
_TOKEN = re.compile(r"\{([A-Z_]+)\}")
_TOKENS = {"DATASET", "SPLIT", "FILEFORMAT", "SHARD_INDEX", "NUM_SHARDS", "SHARD_X_OF_Y"}
_DIGITS = 20  # a uint64 in decimal: longer strings are no count


class InfoError(TfrviewError):
    """A dataset_info.json that cannot be read as TFDS metadata at all."""


@dataclass(frozen=True)
class SplitInfo:
    """One split as the metadata says it: shard lengths in shard order (None: not said)."""

    name: str
    shard_lengths: tuple[int, ...] | None
    num_bytes: int | None
    template: str
    num_shards: int  # len(shard_lengths), or the older `numShards`

    @property
    def num_examples(self) -> int | None:
        return sum(self.shard_lengths) if self.shard_lengths is not None else None


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    version: str
    description: str
    citation: str
    config_name: str
    file_format: str
    download_size: int | None
    supervised_keys: tuple[str, ...]
    splits: tuple[SplitInfo, ...]
    notes: tuple[str, ...]  # fields left out for their type or size: each one line

    def split(self, name: str) -> SplitInfo | None:
        return next((s for s in self.splits if s.name == name), None)

    @property
    def num_examples(self) -> int | None:
        counts = [s.num_examples for s in self.splits]
        return None if any(c is None for c in counts) else sum(counts)  # type: ignore[misc]


def read_info(path: Path) -> DatasetInfo:
    """The metadata in `path`, its size checked before it is read (MAX_TFDS_INFO_BYTES)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(MAX_TFDS_INFO_BYTES + 1)
    except OSError as exc:
        raise InfoError(f"{printable(str(path))}: cannot read ({exc.strerror or exc})") from None
    if len(head) > MAX_TFDS_INFO_BYTES:
        raise InfoError(
            f"{printable(str(path))}: "
            + too_large(INFO_FILE, None, MAX_TFDS_INFO_BYTES, name="MAX_TFDS_INFO_BYTES")
        )
    return parse_info(head, where=printable(str(path)))


def parse_info(data: bytes, where: str = INFO_FILE) -> DatasetInfo:
    """A DatasetInfo from the bytes of a dataset_info.json; InfoError if it is none at all."""
    if len(data) > MAX_TFDS_INFO_BYTES:
        raise InfoError(
            f"{where}: " + too_large(INFO_FILE, len(data), MAX_TFDS_INFO_BYTES, name="MAX_TFDS_INFO_BYTES")
        )
    try:
        obj = json.loads(data)
    except RecursionError:
        raise InfoError(
            f"{where}: nested deeper than the MAX_TFDS_JSON_DEPTH limit ({MAX_TFDS_JSON_DEPTH})"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:  # JSONDecodeError is a ValueError
        raise InfoError(f"{where}: not JSON ({printable(str(exc))[:120]})") from None
    if _depth(obj) > MAX_TFDS_JSON_DEPTH:
        raise InfoError(f"{where}: nested deeper than the MAX_TFDS_JSON_DEPTH limit ({MAX_TFDS_JSON_DEPTH})")
    if not isinstance(obj, dict):
        raise InfoError(f"{where}: a JSON {type(obj).__name__}, not an object of dataset fields")
    notes: list[str] = []
    fmt = _text(obj, "fileFormat", notes) or DEFAULT_FORMAT
    splits_raw = obj.get("splits", [])
    if not isinstance(splits_raw, list):
        notes.append("splits is not a list: no splits read")
        splits_raw = []
    splits = []
    for i, s in enumerate(splits_raw):
        split = _split(s, i, notes)
        if split is not None:
            splits.append(split)
    return DatasetInfo(
        name=_text(obj, "name", notes),
        version=_text(obj, "version", notes),
        description=_text(obj, "description", notes),
        citation=_text(obj, "citation", notes),
        config_name=_text(obj, "configName", notes),
        file_format=fmt,
        download_size=_count(obj.get("downloadSize"), "downloadSize", notes),
        supervised_keys=_supervised(obj.get("supervisedKeys"), notes),
        splits=tuple(splits),
        notes=tuple(notes),
    )


def _depth(obj) -> int:
    """How deep lists and objects nest, walked without recursion (the parser bounds it already by
    Python's recursion limit; this says the project's own limit)."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        o, d = stack.pop()
        if isinstance(o, dict | list):
            deepest = max(deepest, d)
            if d > MAX_TFDS_JSON_DEPTH:
                return d
            stack.extend((v, d + 1) for v in (o.values() if isinstance(o, dict) else o))
    return deepest


def _text(obj: dict, key: str, notes: list[str]) -> str:
    v = obj.get(key, "")
    if v is None:
        return ""
    if not isinstance(v, str):
        notes.append(f"{key} is a {type(v).__name__}, not text: left out")
        return ""
    return v


def _count(v, what: str, notes: list[str]) -> int | None:
    """A non-negative count written as TFDS writes an int64 (a string of digits) or as a number."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | str):
        notes.append(f"{what} is a {type(v).__name__}, not a count: left out")
        return None
    s = str(v).strip()
    if not s.isdigit() or len(s) > _DIGITS or not s.isascii():
        notes.append(f"{what} is {printable(s[:40])!s}, not a count: left out")
        return None
    return int(s)


def _supervised(v, notes: list[str]) -> tuple[str, ...]:
    """The feature keys of `supervisedKeys`: the old `{input, output}` or the newer nested
    `{tuple: {items: [{featureKey}...]}}` (dicts of keys too)."""
    if v is None:
        return ()
    if not isinstance(v, dict):
        notes.append("supervisedKeys is not an object: left out")
        return ()
    if isinstance(v.get("input"), str) or isinstance(v.get("output"), str):
        return tuple(x for x in (v.get("input"), v.get("output")) if isinstance(x, str))
    keys: list[str] = []
    stack = [v]
    while stack and len(keys) < 64:
        o = stack.pop()
        if isinstance(o, dict):
            if isinstance(o.get("featureKey"), str):
                keys.append(o["featureKey"])
            stack.extend(reversed(list(o.values())))
        elif isinstance(o, list):
            stack.extend(reversed(o))
    return tuple(keys)


def _split(s, i: int, notes: list[str]) -> SplitInfo | None:
    if not isinstance(s, dict):
        notes.append(f"splits[{i}] is not an object: left out")
        return None
    name = s.get("name")
    if not isinstance(name, str) or not name or "/" in name or name in (".", ".."):
        notes.append(f"splits[{i}] has no usable name: left out")
        return None
    template = s.get("filepathTemplate") or DEFAULT_TEMPLATE
    if not isinstance(template, str) or not _template_ok(template):
        notes.append(
            f"split {printable(name)}: filepathTemplate {printable(str(template))[:80]} is not usable: the default used"
        )
        template = DEFAULT_TEMPLATE
    lengths: tuple[int, ...] | None = None
    raw = s.get("shardLengths")
    if raw is not None:
        if not isinstance(raw, list):
            notes.append(f"split {printable(name)}: shardLengths is not a list: left out")
        elif len(raw) > MAX_TFDS_SHARDS:
            notes.append(
                f"split {printable(name)}: "
                + too_large("shardLengths", len(raw), MAX_TFDS_SHARDS, "shards", "MAX_TFDS_SHARDS")
            )
        else:
            counts = [
                _count(x, f"split {printable(name)}: shardLengths[{k}]", notes) for k, x in enumerate(raw[:])
            ]
            if all(c is not None for c in counts):
                lengths = tuple(counts)  # type: ignore[arg-type]
    n = len(lengths) if lengths is not None else 0
    if lengths is None:  # older metadata: `numShards` alone
        old = _count(s.get("numShards"), f"split {printable(name)}: numShards", notes)
        if old is not None and old > MAX_TFDS_SHARDS:
            notes.append(
                f"split {printable(name)}: "
                + too_large("numShards", old, MAX_TFDS_SHARDS, "shards", "MAX_TFDS_SHARDS")
            )
        elif old is not None:
            n = old
    return SplitInfo(
        name, lengths, _count(s.get("numBytes"), f"split {printable(name)}: numBytes", notes), template, n
    )


def _template_ok(template: str) -> bool:
    """Known tokens only, and a name that stays inside the dataset's folder."""
    if not template or template.startswith(("/", "\\")) or "\\" in template or "\x00" in template:
        return False
    if any(part in ("", ".", "..") for part in template.split("/")):
        return False
    return all(t in _TOKENS for t in _TOKEN.findall(template))


def shard_names(info: DatasetInfo, split: SplitInfo) -> list[str]:
    """The file names (relative to the version folder) of a split's shards, in shard order."""
    n = split.num_shards
    fixed = (
        split.template.replace("{DATASET}", info.name)
        .replace("{SPLIT}", split.name)
        .replace("{FILEFORMAT}", info.file_format)
        .replace("{NUM_SHARDS}", f"{n:05d}")
    )
    if "{SHARD_X_OF_Y}" in fixed:
        head, _, tail = fixed.partition("{SHARD_X_OF_Y}")
        return [f"{head}{i:05d}-of-{n:05d}{tail}".replace("{SHARD_INDEX}", f"{i:05d}") for i in range(n)]
    if "{SHARD_INDEX}" in fixed:
        head, _, tail = fixed.partition("{SHARD_INDEX}")
        return [f"{head}{i:05d}{tail}" for i in range(n)]
    return [fixed] if n == 1 else [f"{fixed}-{i:05d}-of-{n:05d}" for i in range(n)]
