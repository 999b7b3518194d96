"""Salvage: every record whose data is intact, in order, into a new file TensorFlow reads cleanly.

Records whose header was damaged but whose data CRC still matches are kept, with a fresh header.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfrview.core.output.atomic import refuse_overwriting_inputs
from tfrview.core.output.writer import RecordWriter
from tfrview.core.records.payload import bounded_payload
from tfrview.core.tfrecord.framing import FRAMING_KINDS, TfrviewError
from tfrview.core.tfrecord.index import BAD_LENGTH_CRC, RecordIndex
from tfrview.core.tfrecord.report import intact_numbers
from tfrview.core.tfrecord.source import Source


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
    return salvage_many([(source, idx)], out, compression or source.compression)


def salvage_many(parts: list[tuple[Source, RecordIndex]], out: str | os.PathLike, compression: str = "none",
                 progress=None) -> SalvageResult:  # fmt: skip
    """Every intact record of several files (a dataset's shards), in order, into one new file."""
    out = Path(out)
    refuse_overwriting_inputs(out, [s.path for s, _ in parts])
    written = dropped = reheadered = regions = 0
    with RecordWriter(out, compression) as w:
        for source, idx in parts:
            keep = intact_numbers(idx)
            for k in keep:
                w.write(bounded_payload(source.read, int(idx.offsets[k]), int(idx.lengths[k]), source.pieces))
                written += 1
                if progress is not None and written % 256 == 0 and not progress(written):
                    raise TfrviewError("salvage cancelled")
            reheadered += int(np.count_nonzero(idx.status[keep] & BAD_LENGTH_CRC)) if len(keep) else 0
            dropped += idx.count - len(keep)
            regions += sum(1 for p in idx.problems if p.record is None and p.kind in FRAMING_KINDS)
    return SalvageResult(written, dropped, reheadered, regions)
