"""CRC-32C as linear algebra, for repairs that search where damage was.

The CRC register moves by r -> z(r) ^ T[byte], with z(v) = T[v & 0xff] ^ v >> 8 linear over GF(2)
and T the byte table (T[x] is the contribution of the byte x). So the effect of a change on the
final CRC is the change's own contribution carried to the end by a power of z, and z^q is applied
in log q steps with four byte tables a power of two (`shift`), to many registers at once.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from tfrview.core.tfrecord.framing import crc32c_function


@cache
def byte_table() -> np.ndarray:
    """T, taken from the CRC function itself (no bit-order convention to get wrong)."""
    crc = crc32c_function()
    zero = crc(b"\x00")
    return np.array([crc(bytes([x])) ^ zero for x in range(256)], dtype=np.uint32)


def z(v: np.ndarray) -> np.ndarray:
    """One zero byte's move of CRC registers."""
    return byte_table()[v & 0xFF] ^ (v >> np.uint32(8))


@cache
def _low_byte_of() -> np.ndarray:
    """The byte x whose table entry T[x] has a given top byte (a bijection for CRC-32C's table)."""
    top = byte_table() >> np.uint32(24)
    out = np.zeros(256, dtype=np.uint32)
    out[top] = np.arange(256, dtype=np.uint32)
    if len(set(top.tolist())) != 256:
        raise AssertionError("CRC table: top bytes are not a bijection")
    return out


def z_inverse(v: np.ndarray) -> np.ndarray:
    """The register one zero byte moved to v: z's inverse (a CR byte taken out instead of put in).
    z(u) = T[u & 0xff] ^ u >> 8, whose top byte is T[u & 0xff]'s alone."""
    x = _low_byte_of()[v >> np.uint32(24)]
    return ((v ^ byte_table()[x]) << np.uint32(8)) | x


def apply(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The linear map given by four byte tables m (4, 256), applied to registers v."""
    return m[0][v & 0xFF] ^ m[1][(v >> 8) & 0xFF] ^ m[2][(v >> 16) & 0xFF] ^ m[3][v >> 24]


def _basis() -> np.ndarray:
    return np.array([x << (8 * k) for k in range(4) for x in range(256)], dtype=np.uint32)


@cache
def z_power(q: int) -> np.ndarray:
    """z^q as four byte tables."""
    b = _basis()
    if q <= 64:
        for _ in range(q):
            b = z(b)
        return b.reshape(4, 256)
    half = z_power(q // 2)
    b = apply(apply(b, half), half)
    return (apply(b, z_power(1)) if q % 2 else b).reshape(4, 256)


def shift(v: np.ndarray, q: np.ndarray) -> np.ndarray:
    """z^q[i](v[i]) for every i: each register carried past its own number of zero bytes (as many
    powers of two as the largest q needs: a fixed count would leave longer shifts short)."""
    v = v.astype(np.uint32).copy()
    q = np.asarray(q, dtype=np.int64)
    if q.size and int(q.min()) < 0:
        raise ValueError("shift: a negative number of zero bytes")
    for i in range(int(q.max()).bit_length() if q.size else 0):
        sel = ((q >> i) & 1).astype(bool)
        if sel.any():
            v[sel] = apply(v[sel], z_power(1 << i))
    return v


def registers_before(data: bytes, positions) -> np.ndarray:
    """The CRC register after data[:p] for each p (ascending), in one pass over the data."""
    crc = crc32c_function()
    out = np.empty(len(positions), dtype=np.uint32)
    state = prev = 0
    for i, p in enumerate(positions):
        state = crc(data[prev:p], state)
        prev = p
        out[i] = state ^ 0xFFFFFFFF
    return out
