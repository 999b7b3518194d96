"""Repairs that prove themselves: a record is restored only when its restored bytes pass both CRCs.

A record with one flipped data bit is restored (`tfrecord.bitflip` finds the bit); a flipped bit in
the stored CRC itself leaves the data whole (the two CRCs then differ in one bit). A file that went
through a line-ending conversion gets its CR bytes back where both CRCs prove them
(`tfrecord.lineendings`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.limits import LINE_ENDINGS_MAX_BYTES, too_large
from tfrview.core.output.atomic import clean_stale, refuse_overwriting_inputs
from tfrview.core.output.salvage import nothing_written
from tfrview.core.output.writer import RecordWriter
from tfrview.core.problems import FRAMING_KINDS
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.bitflip import MAX_REPAIR_BYTES, one_flipped_bit, record_parts
from tfrview.core.tfrecord.framing import U32, Compression, masked_crc
from tfrview.core.tfrecord.index import BAD_DATA_CRC, BAD_LENGTH_CRC, CRC_CUT, VERIFIED, RecordIndex
from tfrview.core.tfrecord.lineendings import Conversion, conversion_of, undone, walk
from tfrview.core.tfrecord.payload_bytes import bounded_payload
from tfrview.core.tfrecord.source import Source


@dataclass(frozen=True)
class Repair:
    record: int | None  # verify's number of it (the window's, dump's); None: bytes verify frames as no record
    how: str  # what was restored, in words
    offset: int | None = None  # where it starts in its file (when `record` is None)

    @property
    def where(self) -> str:
        return f"record {self.record}" if self.record is not None else f"the record at byte {self.offset}"


@dataclass
class RepairResult:
    written: int = 0
    repaired: list[Repair] = field(default_factory=list)
    # (record, why it could not be proven)
    dropped: list[tuple[int | None, str]] = field(default_factory=list)
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
    if (
        masked_crc(header[:8]) != U32.unpack_from(header, 8)[0]
        or int.from_bytes(header[:8], "little") != length
    ):
        return None  # the header is not proven: salvage's re-heading covers records whose data is whole
    fix = one_flipped_bit(data, stored)
    if fix is None:
        return None
    if fix.in_crc:
        return fix.data, "one flipped bit in its stored data CRC; the data is whole"
    return (
        fix.data,
        f"one flipped bit restored (data byte {fix.byte:,}, bit {fix.bit}), proven by the data CRC",
    )


def refuse_arrayrecord(sources) -> None:
    """Repair is TFRecord's: it proves a damaged record whole by its own data CRC. An ArrayRecord
    file's records have none (their frames' CRCs are tfrview's, computed from the decoded bytes), and
    its damage lies in a compressed chunk, where one flipped bit cannot be proven: refused in one line,
    before anything is written (salvage keeps every intact record)."""
    ar = [s for s in sources if s.compression == Compression.ARRAYRECORD]
    if ar:
        raise TfrviewError(
            f"not for ArrayRecord: {printable(str(ar[0].path))}: repair proves a record whole by its "
            "TFRecord data CRC, which an ArrayRecord record has not (its damage is inside a compressed "
            "chunk); `tfrview salvage` writes every intact record"
        )


def repair(
    source: Source, idx: RecordIndex, out: str | os.PathLike, compression: str | None = None, progress=None
) -> RepairResult:
    """A new file with every intact record, every damaged record whose bytes could be proven whole
    again, and nothing unproven. `idx` must be verified."""
    return repair_many([(source, idx)], out, compression or source.compression, progress)


def repair_many(
    parts: list[tuple[Source, RecordIndex]], out: str | os.PathLike, compression: str = "none", progress=None
) -> RepairResult:
    """`repair` of several files (a dataset's shards) into one new file, in order; the records of
    the report are numbered across the files as `verify`, `dump` and the window number them (each
    part's index is `index_and_verify`'s). A file that went through a line-ending conversion is
    walked as it was written instead (`lineendings`); each record walked keeps the number of the
    record the index frames at the same byte (or says where it starts, when the index frames none
    there). Raises TfrviewError, writing nothing, when no record would be written."""
    out = Path(out)
    refuse_arrayrecord([s for s, _ in parts])
    refuse_overwriting_inputs(out, [s.path for s, _ in parts])
    clean_stale(out)  # what a killed write to it left
    res = RepairResult()
    base = 0

    def tick(k: int) -> None:
        if progress is not None and k % 256 == 0 and not progress(k):
            raise Cancelled("repair cancelled")

    with RecordWriter(out, compression) as w:
        for source, idx in parts:
            damaged = bool(idx.problems) or bool((idx.status[: idx.count] & BAD_DATA_CRC).any())
            conv = _conversion(source, res) if damaged else None
            if conv is not None:
                _write_walked(source, idx, conv, w, res, base, tick)
                base += idx.count
                continue
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
                        res.dropped.append(
                            (base + k, "damaged beyond one flipped bit: nothing proves another repair")
                        )
                        continue
                    w.write(fixed[0])
                    res.written += 1
                    res.repaired.append(Repair(base + k, fixed[1]))
                elif st & CRC_CUT:
                    res.dropped.append(
                        (
                            base + k,
                            "the file ends inside its data CRC: nothing proves its data "
                            "(salvage --keep-unverified keeps it)",
                        )
                    )
                else:
                    res.dropped.append((base + k, "never verified"))
                tick(base + k)
            res.damaged_regions += sum(
                1 for p in idx.problems if p.record is None and p.kind in FRAMING_KINDS
            )
            base += idx.count
        if not res.written:
            cut = sum(int((idx.status[: idx.count] & CRC_CUT != 0).sum()) for _, idx in parts)
            raise TfrviewError(nothing_written(out, len(res.dropped), res.damaged_regions, cut))
    return res


def _conversion(source: Source, res: RepairResult) -> Conversion | None:
    """The line-ending conversion a damaged file went through, if its bytes prove one."""
    ev = conversion_of(source)
    if ev is None:
        return None
    if source.file_size > LINE_ENDINGS_MAX_BYTES:
        res.file_fix = f"{printable(str(source.path))}: a line-ending conversion not undone: " + too_large(
            "the file", source.file_size, LINE_ENDINGS_MAX_BYTES, name="LINE_ENDINGS_MAX_BYTES"
        )
        return None
    return ev.conversion


def _write_walked(
    source: Source, idx: RecordIndex, conv: Conversion, w: RecordWriter, res: RepairResult, base: int, tick
) -> None:
    """The records of a converted file, each written only when proven whole, each named by the
    number the index gives the record at its first byte."""
    import numpy as np

    res.file_fix = _UNDONE[conv] if not res.file_fix else f"{res.file_fix}; {_UNDONE[conv]}"
    raw = source.read(0, source.file_size)
    stream = undone(conv, raw)
    to_file = _file_position(raw) if conv is Conversion.TO_CRLF else (lambda u: u)
    offs = idx.offsets[: idx.count]
    for item in walk(stream):
        if not item.framed:
            res.damaged_regions += 1
            continue
        at = to_file(item.start)
        k = int(np.searchsorted(offs, np.uint64(at)))
        number = base + k if k < len(offs) and int(offs[k]) == at else None
        if item.data is None:
            where = (
                "" if number is not None else f" (the record at byte {at}, which verify frames as no record)"
            )
            res.dropped.append((number, f"line-ending conversion: {item.why}{where}"))
        else:
            w.write(item.data)
            res.written += 1
            how = (
                [f"{item.crs} CR byte{'s' if item.crs != 1 else ''} the conversion dropped put back"]
                if item.crs
                else []
            )
            how += [item.flipped] if item.flipped else []
            if how:
                res.repaired.append(Repair(number, "; ".join(how) + ", proven by both CRCs", at))
        tick(base + res.written)


def _file_position(raw: bytes):
    """Position in the file of a position in `raw` with every CR LF made LF (the stream a
    conversion to CR LF is walked in): each CR removed before it moves it one byte on."""
    import numpy as np

    b = np.frombuffer(raw, dtype=np.uint8)
    crs = np.flatnonzero((b[:-1] == 0x0D) & (b[1:] == 0x0A)) if len(b) > 1 else np.empty(0, np.int64)
    moved = crs - np.arange(len(crs))  # where each removed CR stood in the undone stream

    def to_file(u: int) -> int:
        return u + int(np.searchsorted(moved, u, side="right"))

    return to_file


_UNDONE = {
    Conversion.TO_CRLF: "a line-ending conversion undone in the whole file (every CR LF back to LF, and a record's "
    "own CR LF restored where both CRCs prove it); each record written passed both CRCs",
    Conversion.TO_LF: "a line-ending conversion undone (CR LF had become LF): CR bytes put back before LF bytes "
    "where both CRCs prove them; each record written passed both CRCs",
}
