"""The Riegeli/records framing, as bytes: block headers, chunk headers, where a chunk ends, and the
records of a simple chunk.

Written from the published format description (google/riegeli's records file format): a file is
chunks; every 64 KiB a 24-byte block header (hash, distance back to the chunk it interrupts,
distance on to that chunk's end) interrupts them; a chunk is a 40-byte header (hash, data size,
data hash, type and record count, decoded size) and its data. Numbers are little-endian; hashes are
HighwayHash-64 with Riegeli's key (`highway`). Nothing here allocates what a header claims before
the claim is checked against the file and `core/limits.py`.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tfrview.core.arrayrecord.highway import hash64
from tfrview.core.arrayrecord.signature import SIGNATURE, is_riegeli  # noqa: F401 (re-exported)
from tfrview.core.errors import SourceError
from tfrview.core.limits import AR_CHUNK_BYTES, too_large

BLOCK_SIZE = 1 << 16
BLOCK_HEADER_SIZE = 24
USABLE_BLOCK_SIZE = BLOCK_SIZE - BLOCK_HEADER_SIZE
CHUNK_HEADER_SIZE = 40
_HEADER = struct.Struct("<5Q")
_BLOCK = struct.Struct("<3Q")
Read = Callable[[int, int], bytes]  # (file offset, n) -> at most n bytes


class RiegeliError(SourceError):
    """A Riegeli/ArrayRecord file, or a chunk of it, that cannot be read: one line, with where."""


class ChunkType(enum.IntEnum):
    """A chunk's type byte (the format's letters)."""

    SIGNATURE = ord("s")
    METADATA = ord("m")
    PADDING = ord("p")
    SIMPLE = ord("r")
    TRANSPOSED = ord("t")


class Codec(enum.IntEnum):
    """A chunk's compression byte."""

    NONE = 0
    BROTLI = ord("b")
    ZSTD = ord("z")
    SNAPPY = ord("s")


# --- positions --------------------------------------------------------------------------------------


def overhead_blocks(pos: int, size: int) -> int:
    """Block headers met by `size` chunk bytes written from `pos`."""
    return (size + (pos + USABLE_BLOCK_SIZE - 1) % BLOCK_SIZE) // USABLE_BLOCK_SIZE


def add_with_overhead(pos: int, size: int) -> int:
    """The file position `size` chunk bytes after `pos`, block headers included."""
    return pos + size + overhead_blocks(pos, size) * BLOCK_HEADER_SIZE


def _round_up_to_chunk_boundary(pos: int) -> int:
    remaining = (-pos) % BLOCK_SIZE
    return pos + max(0, remaining - (USABLE_BLOCK_SIZE - 1))


def chunk_end(begin: int, data_size: int, num_records: int) -> int:
    """Where a chunk that begins at `begin` ends (its padding included), by the format's rule."""
    return max(
        add_with_overhead(begin, CHUNK_HEADER_SIZE + data_size),
        _round_up_to_chunk_boundary(begin + num_records),
    )


def read_logical(read: Read, pos: int, n: int) -> bytes:
    """`n` chunk bytes from file position `pos`, the block headers between them left out (shorter
    where the file ends)."""
    end = add_with_overhead(pos, n)
    raw = read(pos, end - pos)
    if pos % BLOCK_SIZE >= BLOCK_HEADER_SIZE and (pos // BLOCK_SIZE) == ((pos + len(raw) - 1) // BLOCK_SIZE):
        return raw[:n]  # no block header inside: the common case
    parts = []
    p = pos
    i = 0
    while i < len(raw):
        in_block = p % BLOCK_SIZE
        if in_block < BLOCK_HEADER_SIZE:
            skip = BLOCK_HEADER_SIZE - in_block
            i += skip
            p += skip
            continue
        k = BLOCK_SIZE - in_block
        parts.append(raw[i : i + k])
        i += k
        p += k
    return b"".join(parts)[:n]


# --- headers ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkHeader:
    """A chunk's 40-byte header, read; `hash_ok` says whether it can be trusted."""

    begin: int
    stored_hash: int
    data_size: int
    data_hash: int
    chunk_type: int
    num_records: int
    decoded_size: int
    hash_ok: bool

    @property
    def end(self) -> int:
        return chunk_end(self.begin, self.data_size, self.num_records)

    @property
    def data_begin(self) -> int:
        """The file position of the data's first byte."""
        return add_with_overhead(self.begin, CHUNK_HEADER_SIZE) if self.data_size else self.begin

    def type_word(self) -> str:
        try:
            return ChunkType(self.chunk_type).name.lower()
        except ValueError:
            return f"unknown type 0x{self.chunk_type:02x}"


def parse_chunk_header(raw: bytes, begin: int, hashed: bool | None = None) -> ChunkHeader | None:
    """The header in `raw` (40 bytes), or None when the file ends before it does. `hashed`: its
    hash already checked (with others, `hash_rows`): not computed again."""
    if len(raw) < CHUNK_HEADER_SIZE:
        return None
    stored, data_size, data_hash, type_records, decoded = _HEADER.unpack_from(raw)
    return ChunkHeader(
        begin,
        stored,
        data_size,
        data_hash,
        type_records & 0xFF,
        type_records >> 8,
        decoded,
        hash64(raw[8:40]) == stored if hashed is None else hashed,
    )


def read_chunk_header(read: Read, begin: int, hashed: bool | None = None) -> ChunkHeader | None:
    return parse_chunk_header(read_logical(read, begin, CHUNK_HEADER_SIZE), begin, hashed)


@dataclass(frozen=True)
class BlockHeader:
    at: int
    previous_chunk: int
    next_chunk: int
    hash_ok: bool


def read_block_header(read: Read, at: int) -> BlockHeader | None:
    raw = read(at, BLOCK_HEADER_SIZE)
    if len(raw) < BLOCK_HEADER_SIZE:
        return None
    stored, prev, nxt = _BLOCK.unpack_from(raw)
    return BlockHeader(at, prev, nxt, hash64(raw[8:24]) == stored)


# --- chunk data ---------------------------------------------------------------------------------------


def read_varint(buf: bytes | memoryview, pos: int) -> tuple[int, int]:
    """A varint64 at `pos`: (value, position after it). Raises ValueError past the end or 10 bytes."""
    value = 0
    shift = 0
    for i in range(pos, min(pos + 10, len(buf))):
        b = buf[i]
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i + 1
        shift += 7
    raise ValueError("a varint runs past its buffer")


def varints(buf: bytes | memoryview, count: int) -> np.ndarray:
    """Exactly `count` varint64s filling `buf`, decoded as array operations (uint64): one gather
    per byte position (at most 10), not per byte."""
    if count == 1:
        value, end = read_varint(buf, 0)
        if end != len(buf):
            raise ValueError(f"bytes after the one varint expected ({len(buf) - end:,})")
        return np.array([value], dtype=np.uint64)
    a = np.frombuffer(buf, dtype=np.uint8)
    if count == 0:
        if len(a):
            raise ValueError("bytes where no varint was expected")
        return np.zeros(0, dtype=np.uint64)
    if len(a) == count and int(a.max()) < 0x80:
        return a.astype(np.uint64)  # every value under 128: one byte each
    ends = np.flatnonzero(a < 0x80)
    if len(ends) != count or ends[-1] != len(a) - 1:
        raise ValueError(f"{len(ends):,} varints where {count:,} were expected")
    starts = np.empty(count, dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    return varints_at(a, starts, ends)


_BYTES_KEPT = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
_SEVENS = np.uint64(0x7F7F7F7F7F7F7F7F)


def varints_at(a: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The varints of the uint8 array `a` whose first and last bytes are at `starts` and `ends`
    (each last byte under 0x80, every byte before it over: as `a < 0x80` finds them), as uint64.
    A one-byte varint is its byte; one of 2 to 8 bytes is read as one little-endian word (8 bytes
    gathered at once), its bytes past the varint masked off and its 7-bit groups packed by three
    shift-and-mask steps; longer ones (2^56 and over) a gather per byte position. ~10 array
    operations in all: a gather per byte position was the footer's 780,000 varints' 25 ms, the
    first rows' largest cost. ValueError for a varint over 10 bytes."""
    lens = ends - starts + 1
    longest = int(lens.max()) if len(lens) else 1
    if longest > 10:
        raise ValueError("a varint longer than 10 bytes")
    if longest > 8:
        out = (a[starts] & 0x7F).astype(np.uint64)
        for j in range(1, longest):
            rows = np.flatnonzero(lens > j)
            out[rows] |= (a[starts[rows] + j] & 0x7F).astype(np.uint64) << np.uint64(7 * j)
        return out
    out = a[starts].astype(np.uint64)
    multi = np.flatnonzero(lens > 1)
    if not len(multi):
        return out
    padded = np.concatenate([a, np.zeros(8, dtype=np.uint8)])
    words = np.ndarray((len(a),), dtype="<u8", buffer=padded, strides=(1,))  # a word at every byte
    x = words[starts[multi]]
    x &= _BYTES_KEPT[lens[multi]]
    x &= _SEVENS
    y = x & np.uint64(0x7F007F007F007F00)
    x &= np.uint64(0x007F007F007F007F)
    y >>= np.uint64(1)
    x |= y
    np.bitwise_and(x, np.uint64(0x3FFF00003FFF0000), out=y)
    x &= np.uint64(0x00003FFF00003FFF)
    y >>= np.uint64(2)
    x |= y
    np.bitwise_and(x, np.uint64(0x0FFFFFFF00000000), out=y)
    x &= np.uint64(0x000000000FFFFFFF)
    y >>= np.uint64(4)
    x |= y
    out[multi] = x
    return out


def decompress_block(
    codec: int, buf: memoryview, limit: int, exact: int | None, what: str
) -> bytes | memoryview:
    """A compressed block (varint decompressed size, then the codec's bytes) decompressed into a
    buffer of the size it claims, once that claim is checked (`exact`, else at most `limit`)."""
    if codec == Codec.NONE:
        return buf
    size, p = read_varint(buf, 0)
    if exact is not None and size != exact:
        raise ValueError(f"{what}: {size:,} bytes decompressed by their own count, {exact:,} by the header's")
    if size > limit:
        raise ValueError(too_large(what, size, limit, name="AR_CHUNK_BYTES"))
    import cramjam  # start-up: only a compressed chunk needs it

    out = bytearray(size)
    src = bytes(buf[p:])
    try:
        if codec == Codec.ZSTD:
            got = cramjam.zstd.decompress_into(src, out)
        elif codec == Codec.BROTLI:
            got = cramjam.brotli.decompress_into(src, out)
        elif codec == Codec.SNAPPY:
            got = cramjam.snappy.decompress_raw_into(src, out)
        else:
            raise ValueError(f"unknown compression 0x{codec:02x}")
    except cramjam.DecompressionError as exc:
        raise ValueError(f"{what} does not decompress ({exc})") from None
    if got != size:
        raise ValueError(f"{what} decompressed to {got:,} bytes, not the {size:,} it claims")
    return out


def codec_word(codec: int) -> str:
    try:
        return Codec(codec).name.lower()
    except ValueError:
        return f"0x{codec:02x}"


def simple_chunk_records(header: ChunkHeader, data: bytes | memoryview) -> tuple[bytes, np.ndarray]:
    """A simple chunk's records: (their concatenated bytes, int64 offsets of num_records + 1).

    Raises ValueError with what is wrong (a transposed chunk: RiegeliError, not supported yet)."""
    if header.chunk_type == ChunkType.TRANSPOSED:
        raise RiegeliError("transposed chunks are not supported yet")
    if header.chunk_type != ChunkType.SIMPLE:
        raise ValueError(f"a {header.type_word()} chunk holds no records")
    if header.decoded_size > AR_CHUNK_BYTES:
        raise RiegeliError(
            too_large(
                f"a chunk of {header.num_records:,} records",
                header.decoded_size,
                AR_CHUNK_BYTES,
                name="AR_CHUNK_BYTES",
            )
        )
    mv = memoryview(data)
    if not len(mv):
        raise ValueError("a chunk with no data")
    codec = mv[0]
    sizes_size, p = read_varint(mv, 1)
    if p + sizes_size > len(mv):
        raise ValueError(f"its sizes claim {sizes_size:,} bytes of {len(mv) - p:,}")
    n = header.num_records
    sizes_raw = decompress_block(codec, mv[p : p + sizes_size], 10 * n + 10, None, "the sizes table")
    values = decompress_block(codec, mv[p + sizes_size :], AR_CHUNK_BYTES, header.decoded_size, "the records")
    sizes = varints(sizes_raw, n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    if int(offsets[-1]) != header.decoded_size or len(values) != header.decoded_size:
        raise ValueError(
            f"its record sizes add up to {int(offsets[-1]):,} bytes, its records are {len(values):,}, "
            f"its header says {header.decoded_size:,}"
        )
    return bytes(values), offsets


def simple_chunk_sizes(header: ChunkHeader, read_data: Callable[[int], bytes]) -> np.ndarray:
    """A simple chunk's record sizes (uint64) from its size table alone: `read_data(n)` gives the
    data's first n bytes (the records are not read)."""
    if header.chunk_type == ChunkType.TRANSPOSED:
        raise RiegeliError("transposed chunks are not supported yet")
    head = read_data(min(header.data_size, 11))
    if not head:
        raise ValueError("a chunk with no data")
    sizes_size, p = read_varint(head, 1)
    if p + sizes_size > header.data_size:
        raise ValueError(f"its sizes claim {sizes_size:,} bytes of {header.data_size - p:,}")
    buf = memoryview(read_data(p + sizes_size))
    n = header.num_records
    return varints(decompress_block(buf[0], buf[p:], 10 * n + 10, None, "the sizes table"), n)
