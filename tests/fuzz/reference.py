"""A tiny reference for the fuzz tests, independent of tfrview's own code: CRC-32C from its
definition (bit by bit, table-free) and a check of one framed record. Slow, and so only used on the
handful of positions a test already knows."""

from __future__ import annotations

import struct

_POLY = 0x82F63B78  # CRC-32C (Castagnoli), reflected


def _table() -> list[int]:
    out = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (_POLY if c & 1 else 0)
        out.append(c)
    return out


_T = _table()


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def record_at(buf: bytes, pos: int) -> bytes | None:
    """The payload of an intact record starting at `pos` (header, length CRC, data, data CRC all
    valid and inside `buf`), else None."""
    if pos < 0 or pos + 12 > len(buf):
        return None
    length, lcrc = struct.unpack_from("<QI", buf, pos)
    if masked(buf[pos : pos + 8]) != lcrc or pos + 16 + length > len(buf):
        return None
    data = buf[pos + 12 : pos + 12 + length]
    (dcrc,) = struct.unpack_from("<I", buf, pos + 12 + length)
    return data if masked(data) == dcrc else None
