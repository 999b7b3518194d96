"""Whole-file results: index + verify in one call, summarised the way `tfrview verify` reports them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .framing import HEADER_SIZE, Problem, ProblemKind
from .index import BAD_DATA_CRC, DAMAGED, VERIFIED, RecordIndex, scan, verify
from .payload import BYTES_LIST, FLOAT_LIST, INT64_LIST, decode, sniff_kind
from .source import Source

Progress = Callable[[str, int, int], None]  # (phase, done, total)


@dataclass(frozen=True)
class FileReport:
    path: str
    compression: str
    bytes: int
    records: int  # framing and both CRCs intact
    damaged_records: int  # framed, but a CRC failed
    problems: tuple[Problem, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "compression": self.compression,
            "records": self.records,
            "damaged_records": self.damaged_records,
            "bytes": self.bytes,
            "ok": self.ok,
            "problems": [p.to_json() for p in self.problems],
        }


def index_source(source: Source, progress: Progress | None = None) -> RecordIndex:
    idx = RecordIndex()
    for chunk in scan(source):
        idx.apply(chunk)
        if progress:
            progress("index", chunk.consumed, source.file_size)
    return idx


def verify_index(source: Source, idx: RecordIndex, progress: Progress | None = None) -> list[Problem]:
    """Data CRCs of every record; also re-checks header-damaged records' data."""
    found: list[Problem] = []
    total = int(idx.scanned) or 1
    for vc in verify(source, idx):
        found.extend(vc.problems)
        if progress and vc.stop:
            last = vc.stop - 1
            progress("verify", int(idx.offsets[last] + idx.lengths[last]), total)
    return found


def sort_problems(problems) -> tuple[Problem, ...]:
    return tuple(
        sorted(problems, key=lambda p: (p.offset, p.record if p.record is not None else -1, str(p.kind)))
    )


def verify_source(source: Source, progress: Progress | None = None) -> tuple[RecordIndex, FileReport]:
    idx = index_source(source, progress)
    data_problems = verify_index(source, idx, progress)
    return idx, make_report(source, idx, data_problems)


def make_report(source: Source, idx: RecordIndex, data_problems: list[Problem]) -> FileReport:
    st = idx.status
    damaged = int(np.count_nonzero(st & DAMAGED))
    intact = int(np.count_nonzero((st & (VERIFIED | DAMAGED)) == VERIFIED))
    return FileReport(
        path=str(source.path),
        compression=source.compression,
        bytes=source.file_size,
        records=intact,
        damaged_records=damaged,
        problems=sort_problems(list(idx.problems) + list(data_problems)),
    )


def intact_numbers(idx: RecordIndex) -> np.ndarray:
    """Records whose data CRC is good. Header-damaged records count: their data is intact."""
    st = idx.status
    return np.nonzero(((st & VERIFIED) != 0) & ((st & BAD_DATA_CRC) == 0))[0]


# --- info: what is in a file -------------------------------------------------------------------------


@dataclass
class FeatureStats:
    types: Counter = field(default_factory=Counter)
    present: int = 0
    min_count: int | None = None
    max_count: int = 0

    def add(self, type_: str, n: int) -> None:
        self.types[type_] += 1
        self.present += 1
        self.min_count = n if self.min_count is None else min(self.min_count, n)
        self.max_count = max(self.max_count, n)


@dataclass
class ContentSummary:
    sampled: int
    kinds: Counter
    features: dict[str, FeatureStats]
    feature_lists: dict[str, FeatureStats]


def sample_numbers(count: int, sample: int | None) -> np.ndarray:
    if sample is None or count <= sample:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, sample).astype(np.int64))


def summarise_content(source: Source, idx: RecordIndex, sample: int | None = 2000) -> ContentSummary:
    kinds: Counter = Counter()
    feats: dict[str, FeatureStats] = {}
    lists: dict[str, FeatureStats] = {}
    nums = sample_numbers(idx.count, sample)
    for k in nums:
        data = source.read(int(idx.offsets[k]) + HEADER_SIZE, int(idx.lengths[k]))
        kind = sniff_kind(data)
        kinds[kind] += 1
        if kind in ("example", "sequence_example"):
            p = decode(data)
            for key, f in p.features.items():
                feats.setdefault(key, FeatureStats()).add(f.type, len(f))
            for key, fl in p.feature_lists.items():
                t = fl[0].type if fl else BYTES_LIST
                lists.setdefault(key, FeatureStats()).add(t, len(fl))
    return ContentSummary(len(nums), kinds, feats, lists)


TYPE_SHORT = {BYTES_LIST: "bytes", FLOAT_LIST: "float", INT64_LIST: "int64"}
KIND_WORDS = {
    ProblemKind.BAD_LENGTH_CRC: "bad length CRC",
    ProblemKind.BAD_DATA_CRC: "bad data CRC",
    ProblemKind.TRUNCATED: "truncated",
    ProblemKind.UNREADABLE_BYTES: "unreadable bytes",
    ProblemKind.TRAILING_BYTES: "trailing bytes",
    ProblemKind.NOT_TFRECORD: "not a TFRecord",
    ProblemKind.DECOMPRESSION_ERROR: "decompression error",
}
