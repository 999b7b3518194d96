"""Repairs that prove themselves: a record is restored only when its restored bytes pass both CRCs.

One flipped bit in a record's data is found from the CRC-32C syndrome: the CRC of the damaged data
xor the CRC it should have is, by CRC's linearity, the CRC contribution of the error alone, and a
single bit at each position has its own contribution (unique for records of realistic size; a
syndrome that two positions share is refused, never guessed). A flipped bit in the stored CRC
itself leaves the data whole: the two CRCs then differ in one bit.

The contributions are computed without a CRC per position: a zero byte moves the CRC register by
a linear map z (v -> T[v & 0xff] ^ v >> 8), so the bit b of the byte q bytes before the end
contributes z^q(T[1 << b]). Blocks of positions are stepped by z^B as four byte tables in numpy,
so a 1 MB record is searched in tens of milliseconds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from tfrview.core.output.atomic import refuse_overwriting_inputs
from tfrview.core.output.writer import RecordWriter
from tfrview.core.records.payload import bounded_payload
from tfrview.core.tfrecord.framing import (
    FRAMING_KINDS,
    HEADER_SIZE,
    U32,
    TfrviewError,
    crc32c_function,
    masked_crc,
)
from tfrview.core.tfrecord.index import BAD_DATA_CRC, BAD_LENGTH_CRC, VERIFIED, RecordIndex
from tfrview.core.tfrecord.source import Source

MAX_REPAIR_BYTES = 16 << 20  # records searched for a flipped bit (larger ones are left damaged)
_BLOCK = 1024  # positions stepped one by one; the rest by jumps of this many bytes


@cache
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """T (a byte's CRC contribution) and the four byte tables of z^_BLOCK, both from the CRC
    function itself (no bit-order convention to get wrong)."""
    crc = crc32c_function()
    zero = crc(b"\x00")
    t = np.array([crc(bytes([x])) ^ zero for x in range(256)], dtype=np.uint32)

    def z(v: np.ndarray) -> np.ndarray:
        return t[v & 0xFF] ^ (v >> np.uint32(8))

    basis = np.array([x << (8 * k) for k in range(4) for x in range(256)], dtype=np.uint32)
    for _ in range(_BLOCK):
        basis = z(basis)
    return t, basis.reshape(4, 256)


def _jump(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    return m[0][v & 0xFF] ^ m[1][(v >> 8) & 0xFF] ^ m[2][(v >> 16) & 0xFF] ^ m[3][v >> 24]


def find_flipped_bit(data: bytes, stored_masked: int) -> tuple[int, int] | None:
    """(byte, bit) of the one flipped data bit that explains a failed data CRC, or None when no
    single position does, or more than one does."""
    crc = crc32c_function()
    n = len(data)
    if n == 0 or n > MAX_REPAIR_BYTES:
        return None
    want = _unmask(stored_masked)
    syndrome = np.uint32(crc(data) ^ want)
    t, m = _tables()
    first = np.empty((_BLOCK, 8), dtype=np.uint32)  # [q, b]: bit b of the byte q bytes before the end
    v = t[1 << np.arange(8)].astype(np.uint32)
    for q in range(min(_BLOCK, n)):
        first[q] = v
        v = t[v & 0xFF] ^ (v >> np.uint32(8))
    hits: list[tuple[int, int]] = []
    block = first
    for start in range(0, n, _BLOCK):
        rows = min(_BLOCK, n - start)
        qs, bs = np.nonzero(block[:rows] == syndrome)
        hits += [(n - 1 - (start + int(q)), int(b)) for q, b in zip(qs, bs, strict=True)]
        if len(hits) > 1:
            return None
        block = _jump(block, m)
    if len(hits) != 1:
        return None
    p, b = hits[0]
    fixed = bytearray(data)
    fixed[p] ^= 1 << b
    return (p, b) if masked_crc(bytes(fixed)) == stored_masked else None


def _unmask(masked: int) -> int:
    rot = (masked - 0xA282EAD8) & 0xFFFFFFFF
    return ((rot << 15) | (rot >> 17)) & 0xFFFFFFFF


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


def repair_record(source: Source, offset: int, length: int) -> tuple[bytes, str] | None:
    """A damaged record's data restored and proven by both CRCs, with how; None if unprovable."""
    if length > MAX_REPAIR_BYTES:
        return None
    raw = source.read(offset, HEADER_SIZE + length + 4)
    if len(raw) < HEADER_SIZE + length + 4:
        return None
    length_ok = masked_crc(raw[:8]) == U32.unpack_from(raw, 8)[0] and int.from_bytes(raw[:8], "little") == length
    data = raw[HEADER_SIZE : HEADER_SIZE + length]
    stored = U32.unpack_from(raw, HEADER_SIZE + length)[0]
    if not length_ok:
        return None  # the header is not proven: salvage's re-heading covers records whose data is whole
    got = masked_crc(data)
    if bin(got ^ stored).count("1") == 1:
        return data, "one flipped bit in its stored data CRC; the data is whole"
    hit = find_flipped_bit(data, stored)
    if hit is None:
        return None
    p, b = hit
    fixed = bytearray(data)
    fixed[p] ^= 1 << b
    return bytes(fixed), f"one flipped bit restored (data byte {p:,}, bit {b}), proven by the data CRC"


def repair(source: Source, idx: RecordIndex, out: str | os.PathLike, compression: str | None = None,
           progress=None) -> RepairResult:  # fmt: skip
    """A new file with every intact record, every damaged record whose bytes could be proven whole
    again, and nothing unproven. `idx` must be verified."""
    out = Path(out)
    refuse_overwriting_inputs(out, [source.path])
    res = RepairResult()
    with RecordWriter(out, compression or source.compression) as w:
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
                    res.dropped.append((k, "damaged beyond one flipped bit: nothing proves another repair"))
                    continue
                w.write(fixed[0])
                res.written += 1
                res.repaired.append(Repair(k, fixed[1]))
            else:
                res.dropped.append((k, "never verified"))
            if progress is not None and k % 256 == 0 and not progress(k):
                raise TfrviewError("repair cancelled")
        res.damaged_regions = sum(1 for p in idx.problems if p.record is None and p.kind in FRAMING_KINDS)
    return res
