"""HighwayHash-64 with Riegeli's fixed key: the hash of every Riegeli block header, chunk header
and chunk's data.

Written from the algorithm's public description (no well-kept Python package exists: the last one
dates from 2020). Two forms, one algorithm: `hash_rows` hashes many inputs of one length at once as
numpy lanes (every block or chunk header of a file in a few array operations: a full header check
runs at the disk's speed); `hash64` hashes one buffer with Python integers (a chunk's data when it is
read: per byte it is slower than numpy, but it has no per-call array overhead). `hash_many` hashes
buffers of different lengths together, packet by packet, for an opt-in check of every chunk's data.
Tests compare both with the hashes the official writer stored.
"""

from __future__ import annotations

import numpy as np

# 'Riegeli/', 'records\n', 'Riegeli/', 'records\n' as little-endian words
RIEGELI_KEY = (0x2F696C6567656952, 0x0A7364726F636572, 0x2F696C6567656952, 0x0A7364726F636572)
_MUL0 = (0xDBE6D5D5FE4CCE2F, 0xA4093822299F31D0, 0x13198A2E03707344, 0x243F6A8885A308D3)
_MUL1 = (0x3BD39E10CB0EF593, 0xC0ACF169B5F18A8C, 0xBE5466CF34E90C6C, 0x452821E638D01377)
_M64 = (1 << 64) - 1
_M32 = 0xFFFFFFFF


def _rot(x: int) -> int:
    return ((x >> 32) | (x << 32)) & _M64


# --- one buffer, Python integers ------------------------------------------------------------------


def _zipper(v1: int, v0: int) -> tuple[int, int]:
    """What ZipperMerge adds to (add1, add0) from the lane pair (v1, v0)."""
    add0 = (
        (((v0 & 0xFF000000) | (v1 & 0xFF00000000)) >> 24)
        | (((v0 & 0xFF0000000000) | (v1 & 0xFF000000000000)) >> 16)
        | (v0 & 0xFF0000)
        | ((v0 & 0xFF00) << 32)
        | ((v1 & 0xFF00000000000000) >> 8)
        | ((v0 & 0xFF) << 56)
    )
    add1 = (
        (((v1 & 0xFF000000) | (v0 & 0xFF00000000)) >> 24)
        | (v1 & 0xFF0000)
        | ((v1 & 0xFF0000000000) >> 16)
        | ((v1 & 0xFF00) << 24)
        | ((v0 & 0xFF000000000000) >> 8)
        | ((v1 & 0xFF) << 48)
        | (v0 & 0xFF00000000000000)
    )
    return add1, add0


def _update(s: list[list[int]], lanes) -> None:
    """One packet into the state, unrolled over the four lanes (Python's per-operation cost is
    the whole cost here: no loops, no indexing in the hot lines)."""
    v0, v1, mul0, mul1 = s
    a0, a1, a2, a3 = v0
    b0, b1, b2, b3 = v1
    m0, m1, m2, m3 = mul0
    n0, n1, n2, n3 = mul1
    l0, l1, l2, l3 = lanes
    b0 = (b0 + m0 + l0) & _M64
    b1 = (b1 + m1 + l1) & _M64
    b2 = (b2 + m2 + l2) & _M64
    b3 = (b3 + m3 + l3) & _M64
    m0 ^= (b0 & _M32) * (a0 >> 32)
    m1 ^= (b1 & _M32) * (a1 >> 32)
    m2 ^= (b2 & _M32) * (a2 >> 32)
    m3 ^= (b3 & _M32) * (a3 >> 32)
    a0 = (a0 + n0) & _M64
    a1 = (a1 + n1) & _M64
    a2 = (a2 + n2) & _M64
    a3 = (a3 + n3) & _M64
    n0 ^= (a0 & _M32) * (b0 >> 32)
    n1 ^= (a1 & _M32) * (b1 >> 32)
    n2 ^= (a2 & _M32) * (b2 >> 32)
    n3 ^= (a3 & _M32) * (b3 >> 32)
    x1, x0 = _zipper(b1, b0)
    a1 = (a1 + x1) & _M64
    a0 = (a0 + x0) & _M64
    x1, x0 = _zipper(b3, b2)
    a3 = (a3 + x1) & _M64
    a2 = (a2 + x0) & _M64
    x1, x0 = _zipper(a1, a0)
    b1 = (b1 + x1) & _M64
    b0 = (b0 + x0) & _M64
    x1, x0 = _zipper(a3, a2)
    b3 = (b3 + x1) & _M64
    b2 = (b2 + x0) & _M64
    v0[:] = (a0, a1, a2, a3)
    v1[:] = (b0, b1, b2, b3)
    mul0[:] = (m0, m1, m2, m3)
    mul1[:] = (n0, n1, n2, n3)


def _remainder_packet(tail: bytes) -> bytes:
    """The last packet built from the final size % 32 bytes, as HighwayHash pads it."""
    r = len(tail)
    mod4 = r & 3
    whole = r & ~3
    packet = bytearray(32)
    packet[:whole] = tail[:whole]
    if r & 16:
        packet[28:32] = tail[r - 4 : r]
    elif mod4:
        rest = tail[whole:]
        packet[16] = rest[0]
        packet[17] = rest[mod4 >> 1]
        packet[18] = rest[mod4 - 1]
    return bytes(packet)


def _rot32_by(x: int, count: int) -> int:
    lo, hi = x & _M32, x >> 32
    lo = ((lo << count) | (lo >> (32 - count))) & _M32
    hi = ((hi << count) | (hi >> (32 - count))) & _M32
    return lo | (hi << 32)


def _start(key: tuple[int, int, int, int]) -> list[list[int]]:
    mul0, mul1 = list(_MUL0), list(_MUL1)
    return [[mul0[i] ^ key[i] for i in range(4)], [mul1[i] ^ _rot(key[i]) for i in range(4)], mul0, mul1]


def _finish(s: list[list[int]], mv: memoryview) -> int:
    """The state `s` fed the packets of `mv` and its tail, then finalised."""
    v0, v1, mul0, mul1 = s
    n = len(mv)
    full = n - n % 32
    if full:
        for lanes in np.frombuffer(mv[:full], dtype="<u8").reshape(-1, 4).tolist():
            _update(s, lanes)
    r = n - full
    if r:
        for i in range(4):
            v0[i] = (v0[i] + (r << 32) + r) & _M64
            v1[i] = _rot32_by(v1[i], r)
        _update(s, np.frombuffer(_remainder_packet(bytes(mv[full:])), dtype="<u8").tolist())
    for _ in range(4):
        _update(s, [_rot(v0[2]), _rot(v0[3]), _rot(v0[0]), _rot(v0[1])])
    return (v0[0] + v1[0] + mul0[0] + mul1[0]) & _M64


def hash64(data: bytes | memoryview, key: tuple[int, int, int, int] = RIEGELI_KEY) -> int:
    """HighwayHash-64 of one buffer."""
    return _finish(_start(key), memoryview(data).cast("B"))


# --- many inputs at once, numpy lanes -------------------------------------------------------------

_U = np.uint64


def _c(x: int) -> np.uint64:
    return np.uint64(x)


_S8, _S16, _S24, _S32, _S48, _S56 = (_c(k) for k in (8, 16, 24, 32, 48, 56))
_B = {k: _c(0xFF << k) for k in range(0, 64, 8)}
_LO32 = _c(_M32)


def _nzipper(v1: np.ndarray, v0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    add0 = (
        (((v0 & _B[24]) | (v1 & _B[32])) >> _S24)
        | (((v0 & _B[40]) | (v1 & _B[48])) >> _S16)
        | (v0 & _B[16])
        | ((v0 & _B[8]) << _S32)
        | ((v1 & _B[56]) >> _S8)
        | (v0 << _S56)
    )
    add1 = (
        (((v1 & _B[24]) | (v0 & _B[32])) >> _S24)
        | (v1 & _B[16])
        | ((v1 & _B[40]) >> _S16)
        | ((v1 & _B[8]) << _S24)
        | ((v0 & _B[48]) >> _S8)
        | ((v1 & _B[0]) << _S48)
        | (v0 & _B[56])
    )
    return add1, add0


class _Lanes:
    """The state of N hashes at once: four (N, 4) uint64 arrays."""

    def __init__(self, n: int, key: tuple[int, int, int, int]) -> None:
        k = np.array(key, dtype=_U)
        self.mul0 = np.tile(np.array(_MUL0, dtype=_U), (n, 1))
        self.mul1 = np.tile(np.array(_MUL1, dtype=_U), (n, 1))
        self.v0 = self.mul0 ^ k
        self.v1 = self.mul1 ^ ((k >> _S32) | (k << _S32))

    def prefix(self, k: int) -> _Lanes:
        """The first k rows, as views: an update of them changes this state in place."""
        out = object.__new__(_Lanes)
        out.v0, out.v1, out.mul0, out.mul1 = (a[:k] for a in (self.v0, self.v1, self.mul0, self.mul1))
        return out

    def take(self, rows: np.ndarray) -> _Lanes:
        out = object.__new__(_Lanes)
        out.v0, out.v1, out.mul0, out.mul1 = (a[rows] for a in (self.v0, self.v1, self.mul0, self.mul1))
        return out

    def put(self, rows: np.ndarray, part: _Lanes) -> None:
        for name in ("v0", "v1", "mul0", "mul1"):
            getattr(self, name)[rows] = getattr(part, name)

    def update(self, lanes: np.ndarray) -> None:
        v0, v1, mul0, mul1 = self.v0, self.v1, self.mul0, self.mul1
        v1 += mul0 + lanes
        mul0 ^= (v1 & _LO32) * (v0 >> _S32)
        v0 += mul1
        mul1 ^= (v0 & _LO32) * (v1 >> _S32)
        a1, a0 = _nzipper(v1[:, 1::2], v1[:, 0::2])
        v0[:, 1::2] += a1
        v0[:, 0::2] += a0
        a1, a0 = _nzipper(v0[:, 1::2], v0[:, 0::2])
        v1[:, 1::2] += a1
        v1[:, 0::2] += a0

    def remainder(self, tails: np.ndarray) -> None:
        """The final partial packet: `tails` is (N, r) uint8, 0 < r < 32, one length for all."""
        r = tails.shape[1]
        self.v0 += _c((r << 32) + r)
        lo, hi = self.v1 & _LO32, self.v1 >> _S32
        cnt, back = _c(r), _c(32 - r)
        lo = ((lo << cnt) | (lo >> back)) & _LO32
        hi = ((hi << cnt) | (hi >> back)) & _LO32
        self.v1 = lo | (hi << _S32)
        packet = np.zeros((tails.shape[0], 32), dtype=np.uint8)
        whole, mod4 = r & ~3, r & 3
        packet[:, :whole] = tails[:, :whole]
        if r & 16:
            packet[:, 28:32] = tails[:, r - 4 : r]
        elif mod4:
            packet[:, 16] = tails[:, whole]
            packet[:, 17] = tails[:, whole + (mod4 >> 1)]
            packet[:, 18] = tails[:, whole + mod4 - 1]
        self.update(packet.view("<u8"))

    def finish(self) -> np.ndarray:
        for _ in range(4):
            v0 = self.v0
            perm = np.empty_like(v0)
            for dst, src in ((0, 2), (1, 3), (2, 0), (3, 1)):
                perm[:, dst] = (v0[:, src] >> _S32) | (v0[:, src] << _S32)
            self.update(perm)
        return self.v0[:, 0] + self.v1[:, 0] + self.mul0[:, 0] + self.mul1[:, 0]


def hash_rows(rows: np.ndarray, key: tuple[int, int, int, int] = RIEGELI_KEY) -> np.ndarray:
    """HighwayHash-64 of every row of an (N, L) uint8 array (N inputs of L bytes) as uint64[N]."""
    rows = np.ascontiguousarray(rows, dtype=np.uint8)
    n, length = rows.shape
    state = _Lanes(n, key)
    full = length - length % 32
    if full:
        words = rows[:, :full].copy().view("<u8").reshape(n, -1, 4)
        for p in range(words.shape[1]):
            state.update(words[:, p, :])
    if length - full:
        state.remainder(rows[:, full:])
    return state.finish()


def hash_many(buffers: list[bytes], key: tuple[int, int, int, int] = RIEGELI_KEY) -> np.ndarray:
    """HighwayHash-64 of buffers of any lengths, as uint64: packet p of every buffer that has one
    in one array operation (an opt-in check of every chunk's data). The state's rows are kept
    longest buffer first, so the rows with a packet p are a prefix, updated in place (a slice,
    no copy); the buffers are joined each padded to whole packets, so packet p of every row is
    one row gather of 32-byte packets, not 32 byte gathers."""
    n = len(buffers)
    if not n:
        return np.zeros(0, dtype=_U)
    lengths = np.fromiter((len(b) for b in buffers), dtype=np.int64, count=n)
    packets = lengths // 32
    order = np.argsort(-packets, kind="stable")  # the longest first: packet p's rows are a prefix
    sorted_packets = packets[order]
    most = int(sorted_packets[0])
    state = _Lanes(n, key)  # row r is buffer order[r]
    if most:
        spans = (lengths[order] + 31) // 32  # each buffer padded to whole packets (its tail hashed apart)
        first = np.zeros(n, dtype=np.int64)  # each ordered buffer's first packet row
        first[1:] = np.cumsum(spans)[:-1]
        joined = np.zeros(int(first[-1] + spans[-1]) * 32, dtype=np.uint8)
        for at, i in zip((first * 32).tolist(), order.tolist(), strict=True):
            b = buffers[i]
            joined[at : at + len(b)] = np.frombuffer(b, dtype=np.uint8)
        rows = joined.view("<u8").reshape(-1, 4)  # one packet a row
        has = np.searchsorted(-sorted_packets, -np.arange(most), side="left")  # rows with > p packets
        for p in range(most):
            k = int(has[p])
            if k == n:
                state.update(rows[first + p])
            else:
                _Lanes.update(state.prefix(k), rows[first[:k] + p])
    # back to the buffers' own order, then each tail and the finalisation
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    return _finish_lanes(state.take(inverse), n, buffers, lengths)


def _finish_lanes(state: _Lanes, n: int, buffers: list[bytes], lengths: np.ndarray) -> np.ndarray:
    """Rows of `state` whose full packets are fed: each tail (grouped by its length), finalised."""
    rest = lengths % 32
    for r in np.unique(rest[rest > 0]).tolist():
        rows = np.flatnonzero(rest == r)
        tails = np.stack([np.frombuffer(buffers[i], dtype=np.uint8)[-r:] for i in rows.tolist()])
        part = state.take(rows)
        part.remainder(tails)
        state.put(rows, part)
    return state.finish()
