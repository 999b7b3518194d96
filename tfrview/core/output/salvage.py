"""Salvage: every record whose data is intact, in order, into a new file TensorFlow reads cleanly.

Records whose header was damaged but whose data CRC still matches are kept, with a fresh header.
A record whose data is all there but whose data CRC the file lost (it ends inside it) is kept only
when asked (`keep_unverified`): nothing proves its bytes. A salvage that would write no record
writes nothing and says why.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.output.arwriter import ArrayRecordOut, RecordFormat, official_writer, options_like
from tfrview.core.output.atomic import clean_stale, refuse_overwriting_inputs
from tfrview.core.output.writer import RecordWriter
from tfrview.core.problems import FRAMING_KINDS
from tfrview.core.tfrecord.framing import Compression
from tfrview.core.tfrecord.index import BAD_LENGTH_CRC, CRC_CUT, RecordIndex
from tfrview.core.tfrecord.payload_bytes import bounded_payload
from tfrview.core.tfrecord.report import intact_numbers
from tfrview.core.tfrecord.source import Source


@dataclass(frozen=True)
class SalvageResult:
    written: int
    dropped: int  # framed records left out (bad data CRC)
    reheadered: int  # records kept whose header had to be rewritten
    damaged_regions: int  # stretches of bytes that held no framable record
    unverified: int = 0  # records kept whose data CRC was cut off (keep_unverified)


def salvage(
    source: Source,
    idx: RecordIndex,
    out: str | os.PathLike,
    compression: str | None = None,
    keep_unverified: bool = False,
    fmt: RecordFormat | None = None,
) -> SalvageResult:
    """`idx` must be verified (status bits set by `verify`). `fmt`: what the new file is (default
    `default_format`: an ArrayRecord input's records as ArrayRecord when the official writer is
    installed, written with `group_size:1` and the input's compression; else TFRecord)."""
    fmt = default_format(source) if fmt is None else RecordFormat(fmt)
    if fmt == RecordFormat.ARRAYRECORD:
        if compression is not None:
            raise TfrviewError(
                "--compression is TFRecord's (none, gzip, zlib): an ArrayRecord output keeps its input's"
            )
        return salvage_many(
            [(source, idx)], out, keep_unverified=keep_unverified, ar_options=options_like(source)
        )
    return salvage_many(
        [(source, idx)], out, compression or _written_as(source.compression), keep_unverified=keep_unverified
    )


def default_format(source: Source) -> RecordFormat:
    """ArrayRecord for an ArrayRecord input where the official writer is installed, else TFRecord."""
    if source.compression == Compression.ARRAYRECORD and official_writer() is not None:
        return RecordFormat.ARRAYRECORD
    return RecordFormat.TFRECORD


def salvage_many(
    parts: list[tuple[Source, RecordIndex]],
    out: str | os.PathLike,
    compression: str = "none",
    progress=None,
    keep_unverified: bool = False,
    ar_options: str | None = None,
) -> SalvageResult:
    """Every intact record of several files (a dataset's shards), in order, into one new file (an
    ArrayRecord file through the official writer with `ar_options`, `arwriter.ArrayRecordOut`:
    read back and checked before it is renamed into place). Raises TfrviewError, writing nothing,
    when no record would be written."""
    out = Path(out)
    refuse_overwriting_inputs(out, [s.path for s, _ in parts])
    clean_stale(out)  # what a killed write to it left
    written = dropped = reheadered = regions = unverified = cut = 0
    with RecordWriter(out, compression) if ar_options is None else ArrayRecordOut(out, ar_options) as w:
        for source, idx in parts:
            keep = intact_numbers(idx)
            cut_here = np.flatnonzero(idx.status[: idx.count] & CRC_CUT)
            cut += len(cut_here)
            if keep_unverified and len(cut_here):
                keep = np.union1d(keep, cut_here)
                unverified += len(cut_here)
            for k in keep:
                w.write(bounded_payload(source.read, int(idx.offsets[k]), int(idx.lengths[k]), source.pieces))
                written += 1
                if progress is not None and written % 256 == 0 and not progress(written):
                    raise Cancelled("salvage cancelled")
            reheadered += int(np.count_nonzero(idx.status[keep] & BAD_LENGTH_CRC)) if len(keep) else 0
            dropped += idx.count - len(keep)
            regions += sum(1 for p in idx.problems if p.record is None and p.kind in FRAMING_KINDS)
        if not written:
            raise TfrviewError(nothing_written(out, dropped, regions, cut))
    return SalvageResult(written, dropped, reheadered, regions, unverified)


def nothing_written(out: Path, dropped: int, regions: int, cut: int) -> str:
    """Why a salvage or repair wrote nothing, in one line (the output is not created)."""
    if not dropped and not regions:
        return f"{out}: not written: the input holds no records"
    why = f"{dropped:,} framed record{'s' if dropped != 1 else ''} failed or lacked a CRC"
    why += f", {regions:,} unreadable region{'s' if regions != 1 else ''}" if regions else ""
    hint = f"; `salvage --keep-unverified` keeps the {cut} whose data CRC was cut off" if cut else ""
    return f"{out}: not written: no record of the input passed its CRCs ({why}){hint}"


def _written_as(compression: str) -> str:
    """A TFRecord output's compression when none is asked: the input's, but an ArrayRecord file's
    records are written as a plain TFRecord."""
    return Compression.NONE if compression == Compression.ARRAYRECORD else compression
