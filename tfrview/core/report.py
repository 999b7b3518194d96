"""Whole-file results: index + verify in one call, summarised the way `tfrview verify` reports them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .framing import Problem
from .index import BAD_DATA_CRC, DAMAGED, VERIFIED, RecordIndex, scan, verify
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


def sample_numbers(count: int, sample: int | None) -> np.ndarray:
    if sample is None or count <= sample:
        return np.arange(count)
    return np.unique(np.linspace(0, count - 1, sample).astype(np.int64))
