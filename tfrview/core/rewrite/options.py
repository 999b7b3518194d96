"""What a rewrite is asked to do, as one frozen value, and the parsers of the person's words for it
(`--map-classes`, `--split`, `--shard-size`): every mistake a one-line `RewriteError` before any
work, so a bad word never leaves half an output behind."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from enum import StrEnum

from tfrview.core.errors import TfrviewError
from tfrview.core.termtext import printable


class RewriteError(TfrviewError):
    """A rewrite that cannot start or could not finish; nothing of it is left behind."""


class GroupBy(StrEnum):
    """What keeps records together in one split (`--group-by`): copies never straddle splits."""

    SOURCE_ID = "source_id"
    STEM = "stem"
    EPISODE = "episode"
    DUP_GROUP = "dup_group"


DEFAULT_SHARD_BYTES = 256 << 20  # one shard per 256 MB of a split when neither --shards nor --shard-size


@dataclass(frozen=True)
class ClassMap:
    """`--map-classes 3=1,dog=animal`: class ids to ids and class names to names (a pair whose two
    sides are whole numbers maps ids; any other pair maps names)."""

    ids: tuple[tuple[int, int], ...] = ()
    names: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.ids or self.names)

    @property
    def id_map(self) -> dict[int, int]:
        return dict(self.ids)

    @property
    def name_map(self) -> dict[str, str]:
        return dict(self.names)


@dataclass(frozen=True)
class RewriteOptions:
    """Everything `rewrite` needs besides its inputs and output (defaults: copy every intact record
    as it is, one shard per 256 MB of each input split)."""

    where: str | None = None
    drop_tags: tuple[str, ...] = ()
    keep_tags: tuple[str, ...] = ()
    class_map: ClassMap = field(default_factory=ClassMap)
    shards: int | None = None
    shard_bytes: int | None = None
    shuffle: bool = False
    seed: int = 0
    compression: str = "none"
    split: tuple[tuple[str, float], ...] = ()
    group_by: GroupBy | None = None
    index: bool = False
    force: bool = False
    jobs: int = 1
    provenance: str = "parquet"  # or "jsonl"


def options_from_words(
    *,
    where: str | None = None,
    drop_tags: tuple[str, ...] = (),
    keep_tags: tuple[str, ...] = (),
    map_classes: str | None = None,
    shards: int | None = None,
    shard_size: str | None = None,
    shuffle: bool = False,
    seed: int = 0,
    compression: str = "none",
    split: str | None = None,
    group_by: str | None = None,
    index: bool = False,
    force: bool = False,
    jobs: int = 1,
    provenance: str = "parquet",
) -> RewriteOptions:
    """The person's words (the CLI's flags, the window's dialog) as options: the one reading of
    them, each mistake a one-line `RewriteError`."""
    if group_by and not split:
        raise RewriteError("--group-by needs --split (it keeps a group within one split)")
    return RewriteOptions(
        where=where or None,
        drop_tags=tuple(drop_tags),
        keep_tags=tuple(keep_tags),
        class_map=parse_class_map(map_classes) if map_classes is not None else ClassMap(),
        shards=shards or None,
        shard_bytes=parse_size(shard_size) if shard_size else None,
        shuffle=shuffle,
        seed=seed,
        compression=compression,
        split=parse_fractions(split) if split else (),
        group_by=GroupBy(group_by) if group_by else None,
        index=index,
        force=force,
        jobs=jobs,
        provenance=provenance,
    )


_INT = re.compile(r"[+-]?[0-9]+")


def parse_class_map(text: str) -> ClassMap:
    """`3=1,dog=animal`. A pair without '=', an empty side, or a class named twice on the left is
    a one-line error."""
    ids: dict[int, int] = {}
    names: dict[str, str] = {}
    if not text or not text.strip():
        raise RewriteError("--map-classes: empty (expected OLD=NEW pairs, e.g. 3=1,dog=animal)")
    for pair in text.split(","):
        old, eq, new = pair.partition("=")
        old, new = old.strip(), new.strip()
        if not eq or not old or not new:
            raise RewriteError(
                f"--map-classes: {printable(pair)!r} is not OLD=NEW (e.g. 3=1 for ids, dog=animal for names)"
            )
        if _INT.fullmatch(old) and _INT.fullmatch(new):
            if int(old) in ids:
                raise RewriteError(f"--map-classes: class id {old} is mapped twice")
            ids[int(old)] = int(new)
        else:
            if old in names:
                raise RewriteError(f"--map-classes: class {printable(old)!r} is mapped twice")
            names[old] = new
    return ClassMap(tuple(ids.items()), tuple(names.items()))


def parse_fractions(text: str) -> tuple[tuple[str, float], ...]:
    """`train=0.8,val=0.1,test=0.1`: each fraction in (0, 1], names distinct, summing to 1."""
    out: dict[str, float] = {}
    for pair in text.split(","):
        name, eq, value = pair.partition("=")
        name = name.strip()
        try:
            frac = float(value)
        except ValueError:
            frac = math.nan
        if not eq or not name or not re.fullmatch(r"[A-Za-z0-9_.]+", name):
            raise RewriteError(f"--split: {printable(pair)!r} is not NAME=FRACTION (e.g. train=0.8,val=0.2)")
        if not (0 < frac <= 1):
            raise RewriteError(
                f"--split: {printable(name)}'s fraction must be above 0 and at most 1, got {printable(value)!r}"
            )
        if name in out:
            raise RewriteError(f"--split: {printable(name)} is named twice")
        out[name] = frac
    total = sum(out.values())
    if abs(total - 1) > 1e-6:
        raise RewriteError(f"--split: the fractions add up to {total:g}, not 1")
    return tuple(out.items())


_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(i?B?)?", re.IGNORECASE)


def parse_size(text: str) -> int:
    """`256MB`, `1G`, `64k`, `1000000`: bytes (K, M, G, T are powers of 1024, as `human_bytes` says)."""
    m = _SIZE.fullmatch(text.strip())
    if not m:
        raise RewriteError(f"--shard-size: {printable(text)!r} is no size (e.g. 256MB, 1GB)")
    n = float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " ")
    if n < 1:
        raise RewriteError(f"--shard-size: must be at least one byte, got {printable(text)!r}")
    return int(n)
