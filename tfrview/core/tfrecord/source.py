"""Record sources: the bytes of one file's record stream, plain or decompressed.

Files are read with `os.pread` on one descriptor held per file, never memory-mapped: a mapped file
that another process truncates kills the reader with SIGBUS, while a short `pread` is an error we
can name ("the file shrank while open"). `pread` also releases the GIL while the disk works.

A GZIP or ZLIB file is inflated once, front to back, by the index pass; that pass leaves inflater
checkpoints behind so any later read starts from the nearest checkpoint instead of from the
beginning. Compression is found from the content, not from the name: the reading that frames the
most bytes as valid records wins, so a damaged plain file is never mistaken for a compressed one.
"""

from __future__ import annotations

import bisect
import errno
import logging
import os
import stat
import struct
import sys
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tfrview.core.arrayrecord.signature import is_riegeli
from tfrview.core.errors import SourceError
from tfrview.core.limits import STREAM_PIECE
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import (
    HEADER,
    HEADER_SIZE,
    OVERHEAD,
    Compression,
    encode_header,
    header_valid,
    length_crc,
    masked_crc,
    valid_header_positions,
)

if TYPE_CHECKING:
    from tfrview.core.arrayrecord.reader import ArrayRecordFile
    from tfrview.core.tfrecord.remote import RemotePath

log = logging.getLogger(__name__)
_INPUT_BLOCK = 256 * 1024
_MIN_FEED = 64  # smallest piece of input handed to zlib at once (a file of one GZIP member per byte)
_TINY_FEED = 4096  # members fed in pieces up to this size go through _Inflater._tiny_members
_OUTPUT_BLOCK = 1024 * 1024
_DETECT_BYTES = 64 * 1024  # raw bytes read to decide the compression
_MIN_READ = 16 * 1024  # smallest read of a plain file's window (a header hop over a big record)
_ZERO_STRIDE = 8 << 20  # bytes of a run of zeros read and compared at once (Stream.zeros_until)
_ZERO_BYTES = bytes(_ZERO_STRIDE)


# --- reading a file without mapping it --------------------------------------------------------------


class FileBytes:
    """A read-only file as a sliceable bytes-like object: `fb[a:b]` is an `os.pread`.

    A read that comes back short of the size the file had when opened raises SourceError, which is
    what a truncated file gives instead of a SIGBUS. Thread-safe (pread has no file position)."""

    def __init__(self, fd: int, size: int, path: Path) -> None:
        self.fd = fd
        self.size = size
        self.path = path

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, s: slice) -> bytes:
        start, stop, _ = s.indices(self.size)
        return self.pread(start, stop - start)

    def readinto(self, offset: int, out: memoryview) -> None:
        """Fill `out` with the bytes at `offset` (reusing one buffer spares a page-faulting
        allocation per read: large verify passes run several times faster)."""
        got = 0
        n = len(out)
        if offset + n > self.size:
            raise SourceError(f"{self.path}: read past the end of the file")
        while got < n:
            try:
                k = os.preadv(self.fd, [out[got:]], offset + got)
            except OSError as exc:
                raise SourceError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
            if k == 0:
                raise SourceError(f"{self.path}: the file shrank while open; reload it")
            got += k

    def seek_data(self, pos: int) -> int:
        """os.lseek(SEEK_DATA): the next byte at or after `pos` that is not in a hole."""
        return os.lseek(self.fd, pos, os.SEEK_DATA)

    def close(self) -> None:
        os.close(self.fd)

    def pread(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        if n <= 0:
            return b""
        try:
            first = os.pread(self.fd, n, offset)
        except OSError as exc:
            raise SourceError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
        if len(first) == n:
            return first
        parts = [first]
        got = len(first)
        while got < n:
            try:
                chunk = os.pread(self.fd, n - got, offset + got)
            except OSError as exc:
                raise SourceError(f"{self.path}: cannot read ({exc.strerror or exc})") from None
            if not chunk:
                raise SourceError(f"{self.path}: the file shrank while open; reload it")
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts)


# --- detection -----------------------------------------------------------------------------------


def _framed_bytes(buf: bytes, start: int = 0) -> int:
    """How many bytes of `buf` a chain of valid record headers from `start` explains (a record that
    runs past the end of `buf` counts up to there: `buf` is only the head of the stream)."""
    pos = start
    n = len(buf)
    while pos + HEADER_SIZE <= n:
        length, crc = HEADER.unpack_from(buf, pos)
        if length_crc(length) != crc:
            break
        pos += length + OVERHEAD
    return min(pos, n) - start


def _best_plain_chain(buf: bytes) -> int:
    """Bytes explained by the longest header chain starting anywhere in `buf` (the first header may
    be damaged, so every start is tried; a random start validates with odds of 2^-32)."""
    if header_valid(buf):
        return _framed_bytes(buf)
    n = len(buf) - HEADER_SIZE + 1
    best = 0
    for p in valid_header_positions(buf, n)[:64]:
        best = max(best, _framed_bytes(buf, int(p)))
    return best


def _inflated_head(head: bytes, wbits: int, limit: int = 256 * 1024) -> bytes | None:
    """The first output of inflating `head` (everything before any damage, as the index pass would
    get it); None if it fails to inflate at all, b"" if it inflates without output yet (a head that
    is all Huffman tables)."""
    inf = _Inflater(head, wbits)
    out = bytearray()
    while len(out) < limit:
        part = inf.read(limit - len(out))
        if not part:
            break
        out += part
    if not out and inf.error is not None and inf.error.startswith("compressed data is corrupt"):
        return None  # (a stream that merely ends is a head cut where detection cut it)
    return bytes(out)


def detect_compression(head: bytes) -> Compression:
    """none, gzip or zlib: the reading of `head` (the file's first bytes) under which chains of valid
    record headers explain the most bytes. A plain file with a damaged first header, or one whose
    first bytes happen to be a GZIP member (a payload that is itself a gzip blob), stays plain when
    its raw bytes frame better than its inflated ones."""
    candidates: list[Compression] = []
    if head[:3] == b"\x1f\x8b\x08":
        candidates.append(Compression.GZIP)
    if len(head) >= 2:
        cmf, flg = head[0], head[1]
        if cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf * 256 + flg) % 31 == 0:
            candidates.append(Compression.ZLIB)
    if not candidates or (header_valid(head) and _framed_bytes(head) >= len(head)):
        return Compression.NONE
    best, best_score = Compression.NONE, _best_plain_chain(head)
    for name in candidates:
        out = _inflated_head(head, name.wbits)
        if out is None:
            continue
        framed = _best_plain_chain(out) if out else 0
        score = -(-framed * len(head) // len(out)) if out else 0  # in compressed bytes, rounded up
        if score > best_score or (best == Compression.NONE and best_score == 0):
            # where neither reading frames anything yet, the stream that inflates is read inflated:
            # records may start further in, and a decompression bomb is then said to be one
            best, best_score = name, score
    return best


# --- the stream interface the indexer scans --------------------------------------------------------


class Stream:
    """A forward-moving window over the record stream.

    `buf[0]` is stream position `base`; the window ends at `end`; `eof` says the window's end is the
    end of the stream. `advance(pos, need)` moves the window to start at `pos` and holds at least
    `need` bytes when the stream has them. A `random_access` stream may also move backwards and
    jump forwards without reading what it skips.
    """

    buf: bytes | bytearray
    base: int
    end: int
    eof: bool
    problems: list[Problem]
    random_access = False

    def advance(self, pos: int, need: int) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def bytes_in(self) -> int:
        """How many bytes of the underlying file have been consumed (for progress)."""
        raise NotImplementedError

    def zeros_until(self, pos: int) -> int:
        """A position at or after `pos` before which every byte is zero, as far as the stream can
        tell cheaply (a resynchronising scan jumps there: a run of zeros holds no record header).
        `pos` itself when it cannot tell without the scan's own reading."""
        return pos


class _WindowStream(Stream):
    """A plain file read in windows with pread: bounded memory whatever the file's size, and a big
    record's body is jumped over, not read, while framing."""

    random_access = True

    def __init__(self, data, size: int) -> None:
        self._data = data  # FileBytes, or bytes for an in-memory source
        self._size = self.size = size
        self.buf = b""
        self.base = 0
        self.end = 0
        self.eof = size == 0
        self.problems = []

    def advance(self, pos: int, need: int) -> None:
        pos = min(pos, self._size)
        want = min(pos + max(need, 0), self._size)
        if self.base <= pos and want <= self.end:
            return
        stop = min(self._size, max(want, pos + _MIN_READ))
        if self.base <= pos < self.end:  # keep the overlap, read only what is new
            self.buf = self.buf[pos - self.base :] + self._data[self.end : stop]
        else:
            self.buf = self._data[pos:stop]
        self.base = pos
        self.end = pos + len(self.buf)
        self.eof = self.end >= self._size

    def bytes_in(self) -> int:
        return self.end

    def zeros_until(self, pos: int) -> int:
        """Past a run of zeros in big strides: the holes of a sparse file are found by SEEK_DATA
        without reading them (a 100 GB sparse file of zeros in no time), zero bytes on disk are
        read _ZERO_STRIDE at a time and compared whole (memcmp), not framed block by block."""
        size = self._size
        data = self._data
        buf = None
        while pos < size:
            if isinstance(data, FileBytes):
                try:
                    nxt = data.seek_data(pos)  # (pread never uses the file offset)
                except OSError as exc:
                    if exc.errno == errno.ENXIO:
                        return size  # no data after pos: a hole up to the end
                    nxt = pos  # no SEEK_DATA here (EINVAL): read the zeros
                if nxt > pos:
                    pos = min(nxt, size)
                    continue
                k = min(_ZERO_STRIDE, size - pos)
                if buf is None:
                    buf = bytearray(_ZERO_STRIDE)
                view = memoryview(buf)[:k]
                data.readinto(pos, view)
                chunk = buf if k == _ZERO_STRIDE else bytes(view)
                view.release()
            else:
                k = min(_ZERO_STRIDE, size - pos)
                chunk = data[pos : pos + k]
            if chunk != (_ZERO_BYTES if k == _ZERO_STRIDE else bytes(k)):
                return pos + k - len(bytes(chunk).lstrip(b"\0"))
            pos += k
        return size


# --- inflating ------------------------------------------------------------------------------------


class _Inflater:
    """zlib inflate over a byte buffer, following concatenated GZIP members.

    Input is read in blocks of _INPUT_BLOCK and handed to zlib in pieces of `feed` bytes, a size
    that follows the members: a file of tiny members (one per byte, as some writers flush) is fed
    a few dozen bytes at a time, since every member's end makes zlib copy the rest of its piece
    (fed 256 KB at a time, a 21-byte member cost a 256 KB read and copy: 241 s for a 5 MB file);
    a big member doubles it back. One `read` goes on across members until it has its output."""

    def __init__(self, data, wbits: int, in_pos: int = 0, d=None, feed: int = _INPUT_BLOCK) -> None:
        self.data = data
        self.wbits = wbits
        self.in_pos = in_pos  # next input byte not yet handed to zlib
        self.d = d if d is not None else zlib.decompressobj(wbits)
        self.finished = False
        self.error: str | None = None
        self.error_lost = True  # whether anything readable may lie beyond the error
        self.error_in_pos = 0
        self.soft_errors: list[str] = []  # damage read past (a GZIP member's trailer), not yet reported
        self.feed = feed  # bytes handed to zlib at once
        self.member_start = in_pos  # where the current member's input began (it sizes `feed`)
        self._block = b""  # input read ahead, from file position _block_pos
        self._block_pos = 0

    def clone(self) -> _Inflater:
        """An independent inflater at the same point. The copied decompressor keeps its unconsumed
        tail (input handed to zlib but not inflated yet, when a call hit its output cap), so the
        clone goes on reading input at `in_pos`, after that tail: resuming at `resume_pos()` would
        feed the tail's bytes twice and inflate garbage (every ratio over ~4:1 leaves a tail).
        The input read ahead is not kept (a checkpoint holds no block)."""
        c = _Inflater(self.data, self.wbits, self.in_pos, self.d.copy(), self.feed)
        c.member_start = self.member_start
        return c

    def resume_pos(self) -> int:
        """The file position of the first input byte not inflated yet (progress, error offsets)."""
        return self.in_pos - len(self.d.unconsumed_tail)

    def _input(self, pos: int, n: int) -> bytes:
        """Input bytes [pos, pos+n), from the block read ahead (one pread per _INPUT_BLOCK, not per
        member)."""
        b0 = self._block_pos
        if not (b0 <= pos and min(pos + n, len(self.data)) <= b0 + len(self._block)):
            self._block = self.data[pos : pos + max(n, _INPUT_BLOCK)]
            self._block_pos = b0 = pos
        return self._block[pos - b0 : pos - b0 + n]

    def read(self, max_out: int) -> bytes:
        """Up to max_out more bytes of output; b'' once the stream ended (cleanly or not)."""
        parts: list[bytes] = []
        got = 0
        start = self.in_pos
        # across members until max_out, or (with some output) _INPUT_BLOCK of input: the caller
        # then has its turn (progress, a checkpoint) on a stream of tiny members too
        while not self.finished and got < max_out and not (got and self.in_pos - start >= _INPUT_BLOCK):
            tail = self.d.unconsumed_tail
            fresh = not tail and self.in_pos == self.member_start  # nothing of this member fed yet
            if fresh and self.wbits == 31 and self.feed <= _TINY_FEED:
                at = self.in_pos
                for out in self._tiny_members(max_out - got, (start if got else at) + _INPUT_BLOCK):
                    parts.append(out)
                    got += len(out)
                if self.in_pos > at:
                    continue  # (else the member at in_pos is no plain tiny one: read it below)
            if tail:
                chunk = tail
            else:
                chunk = self._input(self.in_pos, self.feed)
                self.in_pos += len(chunk)
            saved = None if fresh else self.d.copy()  # (a fresh member's state is a new decompressor)
            try:
                out = self.d.decompress(chunk, max_out - got)
            except zlib.error as exc:
                saved = saved if saved is not None else zlib.decompressobj(self.wbits)
                parts.append(self._salvage(saved, chunk, max_out - got, exc))
                break
            if out:
                parts.append(out)
                got += len(out)
            if self.d.eof:
                rest = self.d.unused_data
                self.in_pos -= len(rest)
                self.feed = min(_INPUT_BLOCK, max(_MIN_FEED, 2 * (self.in_pos - self.member_start)))
                magic = rest[:2] if len(rest) >= 2 else self._input(self.in_pos, 2)
                if self.wbits == 31 and magic == b"\x1f\x8b":
                    self.d = zlib.decompressobj(self.wbits)  # next GZIP member
                    self.member_start = self.in_pos
                elif self.in_pos < len(self.data):
                    extra = len(self.data) - self.in_pos
                    self._fail(f"{extra} bytes of garbage after the end of the compressed stream", lost=False)
                else:
                    self.finished = True
            elif not chunk and not out:
                self._fail("compressed stream ends early (the file was cut short)")
            elif not tail and len(chunk) == self.feed < _INPUT_BLOCK:
                self.feed *= 2  # a member longer than its predecessor: bigger pieces again
        return b"".join(parts)

    def _tiny_members(self, room: int, stop_in: int) -> list[bytes]:
        """Whole GZIP members that each fit in a piece of `feed` bytes and are followed by another
        member, inflated in a tight loop (a file of one member per byte: half the time of the
        general loop). Stops before any member that is not so (longer, damaged, the last one, or
        over `room` bytes of output), which the general loop then reads from its start."""
        outs: list[bytes] = []
        got = 0
        pos = self.in_pos
        feed = self.feed
        size = len(self.data)
        new = zlib.decompressobj
        while got < room and pos < stop_in:
            b0 = self._block_pos
            if not (b0 <= pos and min(pos + feed, size) <= b0 + len(self._block)):
                self._input(pos, feed)  # read the next block
                b0 = self._block_pos
            chunk = self._block[pos - b0 : pos - b0 + feed]
            d = new(31)
            try:
                out = d.decompress(chunk, room - got)
            except zlib.error:
                break
            rest = d.unused_data
            if not d.eof or rest[:2] != b"\x1f\x8b":
                break
            used = len(chunk) - len(rest)
            pos += used
            feed = max(_MIN_FEED, 2 * used)
            if out:
                outs.append(out)
                got += len(out)
        if pos > self.in_pos:
            self.in_pos = self.member_start = pos
            self.feed = min(feed, _INPUT_BLOCK)
            self.d = new(31)
        return outs

    def _salvage(self, d, chunk: bytes, max_out: int, exc: zlib.error) -> bytes:
        """zlib drops a call's output when it raises: replay the chunk in small pieces, and the piece
        that fails byte by byte, to keep everything inflated before the damage. A GZIP member whose
        trailer alone fails its check has given all its data: that is said, and reading goes on
        with the next member (a damaged trailer must not cost a record)."""
        start = self.in_pos - len(chunk)  # the file position of chunk[0]
        parts: list[bytes] = []
        got = 0
        failed_at = None
        for i in range(0, len(chunk), 64):
            saved = d.copy()
            try:
                out = d.decompress(chunk[i : i + 64], max_out - got)
            except zlib.error:
                d = saved
                for j in range(i, min(i + 64, len(chunk))):
                    try:
                        out = d.decompress(chunk[j : j + 1], max_out - got)
                    except zlib.error:
                        failed_at = start + j
                        break
                    parts.append(out)
                    got += len(out)
                break
            parts.append(out)
            got += len(out)
            if got >= max_out:
                break
        text = str(exc)
        if failed_at is not None and ("incorrect data check" in text or "incorrect length check" in text):
            what = "GZIP trailer" if self.wbits == 31 else "ZLIB checksum"
            note = (
                f"the {what} checked at compressed byte {failed_at} does not match the data before it "
                f"({text.split(': ')[-1]}): the trailer is damaged, or the data is (the records' own CRCs say which)"
            )
            # zlib checks the CRC before reading the 4-byte size: the next member starts 1 or 5 bytes on
            nxt = next(
                (n for n in (failed_at + 1, failed_at + 5) if self.data[n : n + 2] == b"\x1f\x8b"),
                failed_at + 1,
            )
            if self.wbits == 31 and self.data[nxt : nxt + 2] == b"\x1f\x8b":
                self.soft_errors.append(note)  # the member's data is all out: go on with the next one
                self.d = zlib.decompressobj(self.wbits)
                self.in_pos = self.member_start = nxt
                return b"".join(parts)
            self.d = d
            self._fail(note, lost=nxt < len(self.data))
            return b"".join(parts)
        self.d = d
        self._fail(f"compressed data is corrupt ({exc})")
        return b"".join(parts)

    def _fail(self, message: str, lost: bool = True) -> None:
        self.finished = True
        self.error = message
        self.error_lost = lost
        self.error_in_pos = self.resume_pos()


@dataclass(frozen=True, slots=True)
class _Checkpoint:
    out_pos: int
    inflater: _Inflater  # never advanced itself: read through clone()


class _CheckpointList:
    """Inflater states every `spacing` output bytes; thinned by half when over `limit` (bounded memory)."""

    def __init__(self, spacing: int = 4 << 20, limit: int = 512) -> None:
        self.spacing = spacing
        self.limit = limit
        self.positions: list[int] = []
        self.last_in = 0  # the input position of the last checkpoint
        self.items: list[_Checkpoint] = []
        self.lock = threading.Lock()

    def maybe_add(self, out_pos: int, inflater: _Inflater) -> None:
        """A checkpoint every `spacing` bytes of output, or of input: a stream of tiny GZIP
        members costs its time by the input (a member per byte: 21 bytes of input per byte out)."""
        last = self.positions[-1] if self.positions else 0
        if self.positions and (
            out_pos <= last
            or (out_pos - last < self.spacing and inflater.in_pos - self.last_in < self.spacing)
        ):
            return
        with self.lock:
            self.last_in = inflater.in_pos
            self.positions.append(out_pos)
            self.items.append(_Checkpoint(out_pos, inflater.clone()))
            if len(self.items) > self.limit:
                self.items = self.items[::2]
                self.positions = self.positions[::2]
                self.spacing *= 2

    def nearest(self, pos: int) -> _Checkpoint:
        with self.lock:
            i = bisect.bisect_right(self.positions, pos) - 1
            return self.items[max(i, 0)]


class _InflatingStream(Stream):
    def __init__(self, data, wbits: int, checkpoints: _CheckpointList) -> None:
        self._inf = _Inflater(data, wbits)
        self._ckpts = checkpoints
        self._ckpts.maybe_add(0, self._inf)
        self.buf = bytearray()
        self.base = 0
        self.end = 0
        self.eof = False
        self.problems = []

    def bytes_in(self) -> int:
        return self._inf.resume_pos()

    def _pull(self) -> bytes:
        out = self._inf.read(_OUTPUT_BLOCK)
        for note in self._inf.soft_errors:
            self.problems.append(
                Problem(ProblemKind.DECOMPRESSION_ERROR, self.end + len(out), None, None, note)
            )
        self._inf.soft_errors.clear()
        if out:
            self.end += len(out)
            self._ckpts.maybe_add(self.end, self._inf)
        else:
            self.eof = True
            if self._inf.error is not None:
                self.problems.append(
                    Problem(
                        ProblemKind.DECOMPRESSION_ERROR,
                        self.end,
                        None,
                        None,
                        f"{self._inf.error} at compressed byte {self._inf.error_in_pos}"
                        + (
                            f"; nothing after stream position {self.end} can be read"
                            if self._inf.error_lost
                            else ""
                        ),
                    )
                )
        return out

    def advance(self, pos: int, need: int) -> None:
        if pos > self.end:  # skip over output nobody needs (a long record being framed)
            del self.buf[:]
            self.base = self.end
            while self.end < pos and not self.eof:
                out = self._pull()
                if self.end > pos:
                    keep = self.end - pos
                    self.buf = bytearray(out[len(out) - keep :])
                    self.base = pos
            if self.end <= pos:
                self.base = self.end
                self.buf = bytearray()
                return
        else:
            del self.buf[: pos - self.base]
            self.base = pos
        while self.end - pos < need and not self.eof:
            self.buf += self._pull()


# --- sources ---------------------------------------------------------------------------------------


class Source:
    """One file's record stream. Thread-safe `read`; `close()` only after every reader is done."""

    path: Path
    compression: Compression
    file_size: int
    # output bytes between inflate checkpoints at first (doubled as they thin); tests set less, to
    # put many checkpoints in a small stream
    checkpoint_spacing: int = 4 << 20

    def __init__(self, path: Path, data, file_size: int, compression: str, identity=None) -> None:
        self.path = path
        # (a member as it is: an Enum lookup a file is ~2 us, 10,000 shards a listing)
        known = compression if type(compression) is Compression else Compression(compression)
        self.compression = known
        self.file_size = file_size
        self.identity: tuple[int, int] | None = identity  # (st_dev, st_ino) of the file on disk
        self._data = data  # FileBytes over the held descriptor, or bytes for an in-memory source
        self._wbits = 0 if known is Compression.NONE else known.wbits  # (`wbits`: ~2 us, a dict a call)
        # inflate checkpoints: made by a scan (`stream`) or the first inflated read (none for a
        # plain file, nor for each of 10,000 shards listed and never read)
        self._ckpts: _CheckpointList | None = None
        self._read_lock = threading.Lock()
        self._cache_pos = 0
        self._cache = b""
        self._cursor: tuple[int, _Inflater] | None = None
        self.closed = False

    def stream(self) -> Stream:
        """A fresh scan from the start (the index pass)."""
        self._check_open()
        if self.compression == Compression.NONE:
            return _WindowStream(self._data, self.file_size)
        self._ckpts = _CheckpointList(self.checkpoint_spacing)
        return _InflatingStream(self._data, self._wbits, self._ckpts)

    def read(self, offset: int, n: int) -> bytes:
        """Bytes [offset, offset+n) of the record stream, shorter at its end. Always a copy.

        Callers keep n bounded (see limits.MAX_DECODE_BYTES); `pieces` streams a long span."""
        self._check_open()
        if n <= 0:
            return b""
        if self.compression == Compression.NONE:
            if self.identity is not None:
                self._check_same_file()
            return self._data[offset : offset + n]
        with self._read_lock:
            return self._read_inflated(offset, n)

    def data_from(self, pos: int) -> int:
        """The first byte at or after `pos` outside a sparse plain file's holes (SEEK_DATA), the
        file's size when only a hole follows, `pos` itself where that cannot be told cheaply."""
        if self.compression != Compression.NONE or not isinstance(self._data, FileBytes):
            return pos
        try:
            return min(self._data.seek_data(pos), self.file_size)
        except OSError as exc:
            return self.file_size if exc.errno == errno.ENXIO else pos

    def span(self, offset: int, n: int, buf: bytearray | None = None) -> memoryview | bytes:
        """Bytes [offset, offset+n) for one pass over many records: read into `buf` (grown as
        needed and reused by the caller) for a plain file, else a fresh copy."""
        if self.compression == Compression.NONE and isinstance(self._data, FileBytes) and buf is not None:
            self._check_open()
            if len(buf) < n:
                buf.extend(bytes(n - len(buf)))
            mv = memoryview(buf)[:n]
            self._data.readinto(offset, mv)
            return mv
        return self.read(offset, n)

    def pieces(self, offset: int, n: int, piece: int = STREAM_PIECE) -> Iterator[bytes]:
        """Bytes [offset, offset+n) in pieces of at most `piece` bytes: memory bounded by the piece,
        not by the span (a record of gigabytes is checksummed or copied this way). Each piece is
        valid until the next is asked for (a plain file's pieces share one buffer)."""
        done = 0
        if self.compression == Compression.NONE and isinstance(self._data, FileBytes):
            buf = bytearray(min(piece, n))
            while done < n:
                k = min(piece, n - done)
                yield self.span(offset + done, k, buf)
                done += k
            return
        while done < n:
            part = self.read(offset + done, min(piece, n - done))
            if not part:
                return
            yield part
            done += len(part)

    @property
    def remote(self) -> bool:
        """Read over the network (a URL), not from a local file."""
        # no import here: one a call cost ~15 us under the window's import hook (10,000 shards: 0.45 s
        # a pass); and with the remote module never loaded, no source reads over the network
        remote = sys.modules.get("tfrview.core.tfrecord.remote")
        return remote is not None and isinstance(self._data, remote.RemoteBytes)

    def refetch(self, offset: int, n: int) -> bytes | None:
        """A plain remote file's bytes fetched again past every cache (None for anything else):
        a CRC that fails on bytes that came over a network is checked once more before it is
        called damage."""
        if not self.remote or self.compression != Compression.NONE:
            return None
        return self._data.refetch(offset, n)

    def prefetch(self, spans: list[tuple[int, int]]) -> None:
        """Bring these (offset, n) spans of a plain remote file here in one batched request, before
        they are read one by one (nothing to do for a local or compressed file)."""
        if self.remote and self.compression == Compression.NONE:
            self._data.fetch_pages(spans)

    def read_ahead(self, limit: int) -> None:
        """Fetch a remote file's first `limit` bytes now, in one request, into its kept pages (the
        indexer fetches the next files while it frames one). Nothing for a local file."""
        if self.remote:
            self._data.fetch_pages([(0, min(limit, self._data.size))])

    def _check_same_file(self) -> None:
        """The held descriptor still reads the file that was indexed; but if the name now points
        at another file (rewritten by rename), what a person sees would no longer be what is there."""
        try:
            st = os.stat(self.path)
        except OSError:
            return  # deleted or moved away: the descriptor still reads the indexed bytes
        if (st.st_dev, st.st_ino) != self.identity:
            raise SourceError(f"{self.path}: the file was replaced since it was opened; reload it")

    def bulk_reader(self):
        """A read(offset, n) for one pass over many records in a worker process, without the
        per-call check that the name still points at the same file."""
        if self.compression != Compression.NONE:
            return self.read
        data = self._data
        return lambda offset, n: data[offset : offset + n]

    def _read_inflated(self, offset: int, n: int) -> bytes:
        c0 = self._cache_pos
        if c0 <= offset and offset + n <= c0 + len(self._cache):
            return self._cache[offset - c0 : offset - c0 + n]
        if self._ckpts is None:
            self._ckpts = _CheckpointList(self.checkpoint_spacing)
        if not self._ckpts.items:  # never scanned here (e.g. framed by another process): from the start
            self._ckpts.maybe_add(0, _Inflater(self._data, self._wbits))
        ck = self._ckpts.nearest(offset)
        if self._cursor is not None and ck.out_pos <= self._cursor[0] <= offset:
            pos, inf = self._cursor
        else:
            pos, inf = ck.out_pos, ck.inflater.clone()
        while pos < offset:  # inflate and drop what comes before the wanted bytes
            out = inf.read(min(_OUTPUT_BLOCK, offset - pos))
            if not out:
                return b""
            pos += len(out)
        want = max(n, 256 * 1024)
        parts = []
        got = 0
        while got < want:
            out = inf.read(min(_OUTPUT_BLOCK, want - got))
            if not out:
                break
            parts.append(out)
            got += len(out)
        self._cache = b"".join(parts)
        self._cache_pos = offset
        self._cursor = (offset + got, inf)
        return self._cache[:n]

    def _check_open(self) -> None:
        if self.closed:
            raise SourceError(f"{self.path}: source is closed")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._cache = b""
        self._cursor = None
        self._ckpts = None
        if hasattr(self._data, "close"):  # FileBytes, a lazily opened file's, RemoteBytes
            self._data.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_FILE_TYPES = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_regular(mode: int) -> str | None:
    """What a non-regular file is, in a few words, or None for a regular file."""
    if stat.S_ISREG(mode):  # (the common case first: 10,000 shards a listing)
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    for test, what in _FILE_TYPES:
        if test(mode):
            return what
    return "not a regular file"


def open_error(p: Path | str, exc: OSError) -> SourceError:
    """The one-line error for a file that cannot be opened."""
    reasons = {
        errno.ENOENT: "no such file",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.ELOOP: "a symbolic link loop",
        errno.EISDIR: "is a directory",
        errno.ENAMETOOLONG: "the name is too long",
        errno.ENOTDIR: "a part of the path is not a directory",
        errno.EMFILE: "too many files open at once for this system; raise the limit (ulimit -n)",
        errno.ENFILE: "too many files open at once for this system; raise the limit (ulimit -n)",
    }
    why = reasons.get(exc.errno) or f"cannot open ({exc.strerror or exc})"
    return SourceError(f"{printable(os.fspath(p))}: {why}")


def open_regular(path: str | os.PathLike) -> tuple[int, os.stat_result]:
    """A read-only descriptor of a regular file, and its stat. A FIFO, device or socket is refused
    without blocking (O_NONBLOCK: opening a FIFO would wait for a writer) and without reading
    (/dev/zero never ends). Raises SourceError with a one-line reason."""
    p = os.fspath(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise open_error(p, exc) from None
    try:
        st = os.fstat(fd)
        what = not_regular(st.st_mode)
        if what is not None:
            name = printable(p)
            raise SourceError(
                f"{name}: is a directory" if what == "a directory" else f"{name}: not a regular file ({what})"
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_source(path: str | os.PathLike) -> Source:
    """Open a file (or a URL: see `remote`) read-only and work out how its records are stored.
    Raises SourceError."""
    from tfrview.core.tfrecord.remote import is_url  # start-up: kept off the CLI's path

    if is_url(path):
        return open_remote(str(path))
    p = Path(path)
    fd, st = open_regular(p)
    size = st.st_size
    if size == 0:
        os.close(fd)
        return Source(p, b"", 0, "none")
    data = FileBytes(fd, size, p)
    try:
        head = data[:_DETECT_BYTES]
        if is_riegeli(head):
            os.close(fd)
            return open_arrayrecord_source(p)
        compression = detect_compression(head)
    except BaseException:
        os.close(fd)
        raise
    return Source(p, data, size, compression, identity=(st.st_dev, st.st_ino))


def source_from_bytes(data: bytes, name: str = "<bytes>") -> Source:
    """An in-memory source (tests, payloads extracted from elsewhere)."""
    data = bytes(data)
    compression = detect_compression(data[:_DETECT_BYTES])
    return Source(Path(name), data, len(data), compression)


def open_remote(url: str, info=None, head: bytes | None = None, compression: str | None = None) -> Source:
    """A remote object as a Source: its size and version from `info` (a listing) or one request,
    its compression as known, or from `head` (its first bytes), or from one more request."""
    from tfrview.core.tfrecord.remote import RemoteBytes, RemotePath, info_of

    info = info or info_of(url)
    data = RemoteBytes(info)
    if info.size == 0:
        return Source(RemotePath(url), b"", 0, "none")
    if compression is None:
        compression = detect_compression(head if head is not None else data[:_DETECT_BYTES])
    return Source(RemotePath(url), data, info.size, compression)


def open_remote_many(paths: list[RemotePath]) -> dict[RemotePath, object]:
    """Sources for many remote objects (or the NetworkError each failed with): sizes from their
    listing, first bytes in one batched request per back-end (none for objects opened before and
    unchanged since)."""
    # start-up: kept off the CLI's path
    from tfrview.core.tfrecord.remote import (
        NetworkError,
        RemoteInfo,
        RemotePath,
        heads,
        info_of,
        known_compression,
        remember_compression,
        url_scheme,
    )

    out: dict[RemotePath, object] = {}
    infos = []
    for p in paths:
        try:
            info = info_of(p.url)
        except NetworkError as exc:
            out[p] = exc
            continue
        comp = known_compression(info)
        if comp is not None:
            out[p] = open_remote(info.url, info, compression=comp)
        else:
            infos.append(info)
    by_fs: dict[str, list[RemoteInfo]] = {}
    for i in infos:
        by_fs.setdefault(url_scheme(i.url), []).append(i)
    for group in by_fs.values():
        try:
            firsts = heads(group)
        except NetworkError as exc:
            firsts = [exc] * len(group)
        for info, head in zip(group, firsts, strict=True):
            p = RemotePath(info.url)
            try:
                if isinstance(head, NetworkError):
                    raise head
                out[p] = src = open_remote(info.url, info, head)
                remember_compression(info, src.compression)
            except SourceError as exc:
                out[p] = exc
    return out


# --- ArrayRecord files --------------------------------------------------------------------------------
# An ArrayRecord file's record stream is its records in order, each framed as TFRecord frames a record
# (12-byte header, data, 4-byte CRC), the CRCs computed from the decoded bytes: offsets are in that
# decoded stream, as a GZIP file's are in its inflated stream. Framing is the one seam every consumer
# (commands, the window, the analysis pass, the filter, exports) shares, so everything past it works
# unchanged. Nothing vouches for these CRCs but the file's own checks, its chunk hashes: a record
# whose chunk fails them is framed with a data CRC that fails (status `damaged`, as a TFRecord
# record's would be). `arindex.index_and_verify` builds the index from the footer, never by a scan
# (a scan of this stream frames the same records, only slower).

_U32 = struct.Struct("<I")


class _Frames:
    """The decoded stream's bytes by slice (what `Source` and `_WindowStream` read)."""

    def __init__(self, src: ArrayRecordSource) -> None:
        self._src = src

    def __len__(self) -> int:
        return self._src.stream_size

    def __getitem__(self, s: slice) -> bytes:
        return self._src.read(s.start or 0, (s.stop if s.stop is not None else len(self)) - (s.start or 0))

    def close(self) -> None:
        self._src.ar.close()


class ArrayRecordSource(Source):
    """An ArrayRecord file's records as a TFRecord-framed stream (see the module's docstring)."""

    def __init__(self, path: Path, ar: ArrayRecordFile, identity=None) -> None:
        import numpy as np  # start-up: source.py loads no numpy for TFRecord files

        self.ar = ar
        self._lengths = ar.record_lengths()
        self._starts = np.zeros(len(self._lengths) + 1, dtype=np.int64)
        np.cumsum(self._lengths + OVERHEAD, out=self._starts[1:])
        self.stream_size = int(self._starts[-1])
        self._damaged: set[int] = set()  # chunks that failed to decode
        self._frame_lock = threading.Lock()
        super().__init__(path, _Frames(self), ar.size, Compression.ARRAYRECORD, identity)

    @property
    def record_count(self) -> int:
        return len(self._lengths)

    def stream(self):
        self._check_open()
        return _WindowStream(self._data, self.stream_size)

    def _frame(self, i: int) -> bytes:
        n = int(self._lengths[i])
        try:
            data = self.ar.record(i)
            crc = masked_crc(data)
        except SourceError as exc:  # the chunk's RiegeliError
            c = self.ar.chunks.chunk_of(i)
            if c not in self._damaged:
                self._damaged.add(c)
                log.warning("%s", exc)
            data = bytes(n)
            crc = masked_crc(data) ^ 1  # its chunk failed its checks: a CRC that fails says so
        if len(data) != n:  # the chunk decoded to other sizes than its size table said at open
            data = data[:n].ljust(n, b"\0")
            crc = masked_crc(data) ^ 1
        return encode_header(n) + data + _U32.pack(crc)

    def read(self, offset: int, n: int) -> bytes:
        """Bytes [offset, offset+n) of the decoded stream."""
        self._check_open()
        end = min(offset + max(n, 0), self.stream_size)
        if offset >= end:
            return b""
        import numpy as np

        i = int(np.searchsorted(self._starts, offset, side="right")) - 1
        parts = []
        pos = offset
        while pos < end:
            start = int(self._starts[i])
            size = int(self._lengths[i]) + OVERHEAD
            if pos == start + 12 and end - pos <= size - 12 and end - pos == int(self._lengths[i]):
                try:  # a record's data exactly: no frame built
                    parts.append(self.ar.record(i))
                    pos = end
                    break
                except SourceError:
                    pass
            frame = self._frame(i)
            take = frame[pos - start : pos - start + (end - pos)]
            parts.append(take)
            pos += len(take)
            i += 1
        return b"".join(parts)

    def bulk_reader(self):
        return self.read

    def data_from(self, pos: int) -> int:
        return pos

    def refetch(self, offset: int, n: int) -> bytes | None:
        return None

    def opening_problems(self) -> list:
        """What opening found (a footer missing, regions a walk lost, a group size over 1), at
        their records' places in the decoded stream."""
        return [self.in_stream(p) for p in [*self.ar.problems, *self.ar.notes()]]

    def in_stream(self, p):
        """A problem at a file byte offset moved to its record's place in the decoded stream (the
        message keeps the file's byte offset)."""
        from dataclasses import replace

        import numpy as np

        chunks = self.ar.chunks
        if p.record is None:
            at = int(np.searchsorted(chunks.begin, p.offset, side="left"))
            first = int(chunks.first[min(at, len(chunks))])
        else:
            first = p.record
        return replace(p, offset=int(self._starts[min(first, self.record_count)]))

    def checked(self, data_hashes: bool | None = None):
        """The file's own checks, in place of the frames' CRCs (which we compute from the decoded
        bytes, so they vouch for nothing): every block and chunk header hash, and with
        `data_hashes` (default: TFRVIEW_AR_DATA_HASHES, `data_hashes_asked`) every chunk's data
        hash. Returns the numbers of the records whose chunk fails (int64, sorted) and the
        problems, in the chunk's own words (`chunk_damaged`), at their places in the stream."""
        import numpy as np

        if data_hashes is None:
            data_hashes = data_hashes_asked()
        ar = self.ar
        found = ar.verify(data=data_hashes)
        bad = np.zeros(self.record_count, dtype=bool)
        for p in found:
            if p.record is not None:
                c = ar.chunks.chunk_of(p.record)
                bad[int(ar.chunks.first[c]) : int(ar.chunks.first[c + 1])] = True
        return np.flatnonzero(bad), [self.in_stream(p) for p in found]

    @property
    def starts(self):
        """Where each record's frame starts in the decoded stream (int64, one more: its size)."""
        return self._starts

    @property
    def lengths(self):
        return self._lengths


def data_hashes_asked() -> bool:
    """Whether every chunk's data hash is checked too (TFRVIEW_AR_DATA_HASHES=1): HighwayHash in
    numpy runs at ~140 MB/s (7.7 s a GB; the headers, hashed together, at 3 GB/s), so the
    data's hashes are opt-in; a chunk that fails to decode has its data hash checked regardless."""
    return os.environ.get("TFRVIEW_AR_DATA_HASHES", "") not in ("", "0")


def open_arrayrecord_source(path: str | os.PathLike) -> ArrayRecordSource:
    """An ArrayRecord/Riegeli file as a Source (SourceError in one line otherwise)."""
    from tfrview.core.arrayrecord.reader import open_arrayrecord

    # a chunk's data hash is checked by `index_and_verify` (every chunk's, as array operations), or
    # when a chunk fails to decode; a record read alone is not hashed (in Python, ~5 us a 32 bytes)
    ar = open_arrayrecord(path)
    try:
        st = os.fstat(ar._fd)
        return ArrayRecordSource(Path(path), ar, identity=(st.st_dev, st.st_ino))
    except BaseException:
        ar.close()
        raise
