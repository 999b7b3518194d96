"""One flipped bit in a record's data, found from the CRC-32C syndrome.

The CRC of the damaged data xor the CRC it should have is, by CRC's linearity, the CRC
contribution of the error alone, and a single bit at each position has its own contribution
(unique for records of realistic size; a syndrome that two positions share is refused, never
guessed). The contributions are computed without a CRC per position: a zero byte moves the CRC
register by a linear map z (`crcmath`), so the bit b of the byte q bytes before the end
contributes z^q(T[1 << b]). Blocks of positions are stepped by z^B as four byte tables in numpy,
so a 1 MB record is searched in well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tfrview.core.limits import MAX_REPAIR_BYTES
from tfrview.core.tfrecord.crcmath import apply, byte_table, z, z_power
from tfrview.core.tfrecord.framing import HEADER_SIZE, U32, crc32c_function, masked_crc, unmask

_BLOCK = 1024  # positions stepped one by one; the rest by jumps of this many bytes


def find_flipped_bit(data: bytes, stored_masked: int) -> tuple[int, int] | None:
    """(byte, bit) of the one flipped data bit that explains a failed data CRC, or None when no
    single position does, or more than one does."""
    crc = crc32c_function()
    n = len(data)
    if n == 0 or n > MAX_REPAIR_BYTES:
        return None
    want = unmask(stored_masked)
    syndrome = np.uint32(crc(data) ^ want)
    t, m = byte_table(), z_power(_BLOCK)
    first = np.empty((_BLOCK, 8), dtype=np.uint32)  # [q, b]: bit b of the byte q bytes before the end
    v = t[1 << np.arange(8)].astype(np.uint32)
    for q in range(min(_BLOCK, n)):
        first[q] = v
        v = z(v)
    hits: list[tuple[int, int]] = []
    block = first
    for start in range(0, n, _BLOCK):
        rows = min(_BLOCK, n - start)
        qs, bs = np.nonzero(block[:rows] == syndrome)
        hits += [(n - 1 - (start + int(q)), int(b)) for q, b in zip(qs, bs, strict=True)]
        if len(hits) > 1:
            return None
        block = apply(block, m)
    if len(hits) != 1:
        return None
    p, b = hits[0]
    fixed = bytearray(data)
    fixed[p] ^= 1 << b
    return (p, b) if masked_crc(bytes(fixed)) == stored_masked else None


def record_parts(read, offset: int, length: int) -> tuple[bytes, bytes, int] | None:
    """A framed record's 12 header bytes, its data and its stored (masked) data CRC, read with
    `read(offset, n)` (Source.read); None when the stream ends first."""
    raw = read(offset, HEADER_SIZE + length + 4)
    if len(raw) < HEADER_SIZE + length + 4:
        return None
    return (
        raw[:HEADER_SIZE],
        raw[HEADER_SIZE : HEADER_SIZE + length],
        U32.unpack_from(raw, HEADER_SIZE + length)[0],
    )


@dataclass(frozen=True)
class OneBit:
    """What one flipped bit explains of a data CRC that failed, and the data it proves."""

    data: bytes  # the record's data as it was written
    in_crc: bool  # the bit was in the stored CRC: the data is whole as it is
    byte: int = -1  # else where the flipped data bit was
    bit: int = -1


def one_flipped_bit(data: bytes, stored_masked: int) -> OneBit | None:
    """The one flipped bit (in the stored CRC, or in the data) that makes the data CRC match, or
    None when no single bit does (or more than one position would)."""
    if bin(masked_crc(data) ^ stored_masked).count("1") == 1:
        return OneBit(data, True)
    hit = find_flipped_bit(data, stored_masked)
    if hit is None:
        return None
    fixed = bytearray(data)
    fixed[hit[0]] ^= 1 << hit[1]
    return OneBit(bytes(fixed), False, *hit)
