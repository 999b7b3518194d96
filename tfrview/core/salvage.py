"""Salvage: every record whose data is intact, in order, into a new file TensorFlow reads cleanly.

Records whose header was damaged but whose data CRC still matches are kept, with a fresh header.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .atomic import refuse_overwriting_inputs
from .framing import HEADER_SIZE
from .index import RecordIndex
from .report import intact_numbers
from .source import Source
from .writer import RecordWriter


@dataclass(frozen=True)
class SalvageResult:
    written: int
    dropped: int  # framed records left out (bad data CRC)
    reheadered: int  # records kept whose header had to be rewritten
    damaged_regions: int  # stretches of bytes that held no framable record


def salvage(
    source: Source, idx: RecordIndex, out: str | os.PathLike, compression: str | None = None
) -> SalvageResult:
    """`idx` must be verified (status bits set by `verify`)."""
    out = Path(out)
    refuse_overwriting_inputs(out, [source.path])
    keep = intact_numbers(idx)
    from .index import BAD_LENGTH_CRC

    with RecordWriter(out, compression or source.compression) as w:
        for k in keep:
            w.write(source.read(int(idx.offsets[k]) + HEADER_SIZE, int(idx.lengths[k])))
    reheadered = int(sum(1 for k in keep if idx.status[k] & BAD_LENGTH_CRC))
    regions = sum(1 for p in idx.problems if p.record is None)
    return SalvageResult(len(keep), idx.count - len(keep), reheadered, regions)
