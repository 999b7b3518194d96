"""Repairs that prove themselves: a record is restored only when its restored bytes pass both CRCs.

A record with one flipped data bit is restored (`tfrecord.bitflip` finds the bit); a flipped bit in
the stored CRC itself leaves the data whole (the two CRCs then differ in one bit).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tfrview.core.output.atomic import refuse_overwriting_inputs
from tfrview.core.output.writer import RecordWriter
from tfrview.core.records.payload import bounded_payload
from tfrview.core.tfrecord.bitflip import MAX_REPAIR_BYTES, one_flipped_bit, record_parts
from tfrview.core.tfrecord.framing import FRAMING_KINDS, U32, TfrviewError, masked_crc
from tfrview.core.tfrecord.index import BAD_DATA_CRC, BAD_LENGTH_CRC, VERIFIED, RecordIndex
from tfrview.core.tfrecord.source import Source


@dataclass(frozen=True)
class Repair:
    record: int  # in the input file
    how: str  # what was restored, in words


@dataclass
class RepairResult:
    written: int = 0
    repaired: list[Repair] = field(default_factory=list)
    dropped: list[tuple[int, str]] = field(default_factory=list)  # (record, why it could not be proven)
    reheadered: int = 0
    damaged_regions: int = 0
    file_fix: str = ""  # what was undone in the whole file first (a line-ending conversion)


def repair_record(source: Source, offset: int, length: int) -> tuple[bytes, str] | None:
    """A damaged record's data restored and proven by both CRCs, with how; None if unprovable."""
    if length > MAX_REPAIR_BYTES:
        return None
    parts = record_parts(source.read, offset, length)
    if parts is None:
        return None
    header, data, stored = parts
    if masked_crc(header[:8]) != U32.unpack_from(header, 8)[0] or int.from_bytes(header[:8], "little") != length:
        return None  # the header is not proven: salvage's re-heading covers records whose data is whole
    fix = one_flipped_bit(data, stored)
    if fix is None:
        return None
    if fix.in_crc:
        return fix.data, "one flipped bit in its stored data CRC; the data is whole"
    return fix.data, f"one flipped bit restored (data byte {fix.byte:,}, bit {fix.bit}), proven by the data CRC"


def repair(source: Source, idx: RecordIndex, out: str | os.PathLike, compression: str | None = None,
           progress=None) -> RepairResult:  # fmt: skip
    """A new file with every intact record, every damaged record whose bytes could be proven whole
    again, and nothing unproven. `idx` must be verified."""
    return repair_many([(source, idx)], out, compression or source.compression, progress)


def repair_many(parts: list[tuple[Source, RecordIndex]], out: str | os.PathLike, compression: str = "none",
                progress=None) -> RepairResult:  # fmt: skip
    """`repair` of several files (a dataset's shards) into one new file, in order; the records of
    the report are numbered across the files, as the window numbers them."""
    out = Path(out)
    refuse_overwriting_inputs(out, [s.path for s, _ in parts])
    res = RepairResult()
    base = 0
    with RecordWriter(out, compression) as w:
        for source, idx in parts:
            for k in range(idx.count):
                st = int(idx.status[k])
                off, ln = int(idx.offsets[k]), int(idx.lengths[k])
                if st & VERIFIED and not st & BAD_DATA_CRC:
                    w.write(bounded_payload(source.read, off, ln, source.pieces))
                    res.written += 1
                    res.reheadered += bool(st & BAD_LENGTH_CRC)
                elif st & BAD_DATA_CRC:
                    fixed = repair_record(source, off, ln)
                    if fixed is None:
                        res.dropped.append((base + k, "damaged beyond one flipped bit: nothing proves another repair"))
                        continue
                    w.write(fixed[0])
                    res.written += 1
                    res.repaired.append(Repair(base + k, fixed[1]))
                else:
                    res.dropped.append((base + k, "never verified"))
                if progress is not None and (base + k) % 256 == 0 and not progress(base + k):
                    raise TfrviewError("repair cancelled")
            res.damaged_regions += sum(1 for p in idx.problems if p.record is None and p.kind in FRAMING_KINDS)
            base += idx.count
    return res


LINE_ENDINGS_MAX_BYTES = 1 << 30  # a file whose line-ending conversion is undone is read whole


def undo_line_endings(source: Source) -> Source | None:
    """The file with a LF -> CR LF conversion undone (every CR LF back to LF), in memory, when
    forensics names that cause; None otherwise. What it restores is proven record by record by
    the CRCs afterwards: a record the undo does not make whole stays damaged."""
    from tfrview.core.tfrecord.forensics import LINE_ENDINGS, file_cause
    from tfrview.core.tfrecord.source import source_from_bytes

    if source.compression != "none" or source.file_size > LINE_ENDINGS_MAX_BYTES:
        return None
    if not file_cause(source, 0, [None]).startswith(LINE_ENDINGS):
        return None
    data = source.read(0, source.file_size).replace(b"\r\n", b"\n")
    return source_from_bytes(data, str(source.path))
