"""Record sources: the bytes of one file's record stream, plain or decompressed.

A plain file is memory-mapped read-only. A GZIP or ZLIB file is inflated once, front to back, by
the index pass; that pass leaves inflater checkpoints behind so any later read starts from the
nearest checkpoint instead of from the beginning. Compression is found from the content, not
from the name.
"""

from __future__ import annotations

import bisect
import errno
import mmap
import os
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

from .framing import HEADER, HEADER_SIZE, Problem, ProblemKind, SourceError, length_crc

COMPRESSIONS = ("none", "gzip", "zlib")
_INPUT_BLOCK = 256 * 1024
_OUTPUT_BLOCK = 1024 * 1024


# --- detection -----------------------------------------------------------------------------------


def _valid_header(head: bytes) -> bool:
    if len(head) < HEADER_SIZE:
        return False
    length, crc = HEADER.unpack_from(head, 0)
    return length_crc(length) == crc


def _inflates(data: bytes, wbits: int) -> bool:
    """Does inflating start well? Damage further in is the index's to report, not detection's."""
    d = zlib.decompressobj(wbits)
    for i in range(0, len(data), 16):
        try:
            if d.decompress(data[i : i + 16], 64 * 1024):
                return True
        except zlib.error:
            return False
    return True  # no output yet but no error either (a head that is all Huffman tables)


def detect_compression(head: bytes) -> str:
    """TFRecord framing first, then the GZIP magic, then a zlib header; each confirmed by trying."""
    if _valid_header(head):
        return "none"
    if head[:3] == b"\x1f\x8b\x08":  # GZIP magic + deflate: no TFRecord header looks like this
        return "gzip"
    if len(head) >= 2:
        cmf, flg = head[0], head[1]
        if cmf & 0x0F == 8 and cmf >> 4 <= 7 and (cmf * 256 + flg) % 31 == 0 and _inflates(head, 15):
            return "zlib"
    return "none"


# --- the stream interface the indexer scans --------------------------------------------------------


class Stream:
    """A forward-moving window over the record stream.

    `buf[0]` is stream position `base`; the window ends at `end`; `eof` says the window's end is the
    end of the stream. `advance(pos, need)` moves the window to start at `pos` and holds at least
    `need` bytes when the stream has them.
    """

    buf: bytes | bytearray | mmap.mmap
    base: int
    end: int
    eof: bool
    problems: list[Problem]

    def advance(self, pos: int, need: int) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def bytes_in(self) -> int:
        """How many bytes of the underlying file have been consumed (for progress)."""
        raise NotImplementedError


class _PlainStream(Stream):
    def __init__(self, buf, size: int) -> None:
        self.buf = buf
        self.base = 0
        self.end = size
        self.eof = True
        self.problems = []
        self._pos = 0

    def advance(self, pos: int, need: int) -> None:
        self._pos = pos

    def bytes_in(self) -> int:
        return self._pos


# --- inflating ------------------------------------------------------------------------------------


class _Inflater:
    """zlib inflate over a byte buffer, following concatenated GZIP members."""

    def __init__(self, data, wbits: int, in_pos: int = 0, d=None) -> None:
        self.data = data
        self.wbits = wbits
        self.in_pos = in_pos  # next input byte not yet handed to zlib
        self.d = d if d is not None else zlib.decompressobj(wbits)
        self.finished = False
        self.error: str | None = None
        self.error_lost = True  # whether anything readable may lie beyond the error
        self.error_in_pos = 0

    def clone(self) -> _Inflater:
        return _Inflater(self.data, self.wbits, self.resume_pos(), self.d.copy())

    def resume_pos(self) -> int:
        return self.in_pos - len(self.d.unconsumed_tail)

    def read(self, max_out: int) -> bytes:
        """Up to max_out more bytes of output; b'' once the stream ended (cleanly or not)."""
        while not self.finished:
            tail = self.d.unconsumed_tail
            if tail:
                chunk = tail
            else:
                chunk = self.data[self.in_pos : self.in_pos + _INPUT_BLOCK]
                self.in_pos += len(chunk)
            saved = self.d.copy()
            try:
                out = self.d.decompress(chunk, max_out)
            except zlib.error as exc:
                return self._salvage(saved, chunk, max_out, exc)
            if self.d.eof:
                rest = self.d.unused_data
                self.in_pos -= len(rest)
                if self.wbits == 31 and self.data[self.in_pos : self.in_pos + 2] == b"\x1f\x8b":
                    self.d = zlib.decompressobj(self.wbits)  # next GZIP member
                elif self.in_pos < len(self.data):
                    extra = len(self.data) - self.in_pos
                    self._fail(f"{extra} bytes of garbage after the end of the compressed stream", lost=False)
                else:
                    self.finished = True
            elif not chunk and not out:
                self._fail("compressed stream ends early (the file was cut short)")
            if out:
                return out
        return b""

    def _salvage(self, d, chunk: bytes, max_out: int, exc: zlib.error) -> bytes:
        """zlib drops a call's output when it raises: replay the chunk in small pieces to keep
        everything inflated before the damage."""
        parts: list[bytes] = []
        got = 0
        for i in range(0, len(chunk), 64):
            try:
                out = d.decompress(chunk[i : i + 64], max_out - got)
            except zlib.error:
                break
            parts.append(out)
            got += len(out)
            if got >= max_out:
                break
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
        self.items: list[_Checkpoint] = []
        self.lock = threading.Lock()

    def maybe_add(self, out_pos: int, inflater: _Inflater) -> None:
        last = self.positions[-1] if self.positions else 0
        if self.positions and out_pos - last < self.spacing:
            return
        if out_pos == 0 and self.positions:
            return
        with self.lock:
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
    compression: str
    file_size: int

    def __init__(self, path: Path, data, file_size: int, compression: str, identity=None) -> None:
        self.path = path
        self.compression = compression
        self.file_size = file_size
        self.identity: tuple[int, int] | None = identity  # (st_dev, st_ino) of the file on disk
        self._data = data  # mmap of the whole file, or b'' for an empty file
        self._wbits = {"gzip": 31, "zlib": 15}.get(compression, 0)
        self._ckpts = _CheckpointList()
        self._read_lock = threading.Lock()
        self._cache_pos = 0
        self._cache = b""
        self._cursor: tuple[int, _Inflater] | None = None
        self.closed = False

    def stream(self) -> Stream:
        """A fresh scan from the start (the index pass)."""
        self._check_open()
        if self.compression == "none":
            return _PlainStream(self._data, self.file_size)
        self._ckpts = _CheckpointList()
        return _InflatingStream(self._data, self._wbits, self._ckpts)

    def still_whole(self) -> bool:
        """False when the file shrank since it was mapped: touching pages past the end would SIGBUS.
        (mmap.size() is an fstat of the map's own descriptor.)"""
        if not isinstance(self._data, mmap.mmap):
            return True
        try:
            return self._data.size() >= self.file_size
        except (OSError, ValueError):
            return False

    def read(self, offset: int, n: int) -> bytes:
        """Bytes [offset, offset+n) of the record stream, shorter at its end. Always a copy."""
        self._check_open()
        if n <= 0:
            return b""
        if self.compression == "none":
            if self.identity is not None:
                return self._pread(offset, n)
            return bytes(self._data[offset : offset + n])  # in memory: nothing to wait for
        with self._read_lock:
            return self._read_inflated(offset, n)

    def _pread(self, offset: int, n: int) -> bytes:
        """Read with os.pread, which releases the GIL while the disk works; copying from the map
        instead would fault in cold pages with the GIL held, stalling every other thread (the UI).
        The file is opened by path per read (one descriptor per mapped shard is all we keep), so it
        must still be the file that was mapped, and no shorter."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise SourceError(f"{self.path}: cannot read ({exc.strerror or exc}); reload it") from None
        try:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) != self.identity:
                raise SourceError(f"{self.path}: the file was replaced since it was opened; reload it")
            if st.st_size < self.file_size:
                raise SourceError(f"{self.path}: the file shrank while open; reload it")
            parts = []
            while n > 0:
                chunk = os.pread(fd, n, offset)
                if not chunk:
                    break
                parts.append(chunk)
                offset += len(chunk)
                n -= len(chunk)
            return b"".join(parts)
        finally:
            os.close(fd)

    def bulk_reader(self):
        """A read(offset, n) for one pass over many records in a worker process: a plain file is
        sliced straight from the map, without the per-call size check of `read` (in a child process
        a file cut meanwhile costs that process, not the window)."""
        if self.compression != "none":
            return self.read
        data = self._data
        return lambda offset, n: data[offset : offset + n]

    def _read_inflated(self, offset: int, n: int) -> bytes:
        c0 = self._cache_pos
        if c0 <= offset and offset + n <= c0 + len(self._cache):
            return self._cache[offset - c0 : offset - c0 + n]
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
        self._ckpts = _CheckpointList()
        if isinstance(self._data, mmap.mmap):
            self._data.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_source(path: str | os.PathLike) -> Source:
    """Open a file read-only and work out how its records are stored. Raises SourceError."""
    p = Path(path)
    try:
        fh = open(p, "rb")  # noqa: SIM115 - closed below, once mapped
    except IsADirectoryError:
        raise SourceError(f"{p}: is a directory") from None
    except FileNotFoundError:
        raise SourceError(f"{p}: no such file") from None
    except PermissionError:
        raise SourceError(f"{p}: permission denied") from None
    except OSError as exc:
        raise SourceError(f"{p}: cannot open ({exc.strerror or exc})") from None
    try:  # a mapped file needs one descriptor (mmap duplicates it), so the handle is closed at once
        with fh:
            st = os.fstat(fh.fileno())
            size = st.st_size
            if size == 0:
                return Source(p, b"", 0, "none")
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        if exc.errno == errno.EMFILE:
            raise SourceError(
                f"{p}: too many files open at once for this system; raise the limit (ulimit -n)"
            ) from None
        raise SourceError(f"{p}: cannot map the file ({exc})") from None
    except ValueError as exc:
        raise SourceError(f"{p}: cannot map the file ({exc})") from None
    compression = detect_compression(bytes(data[:4096]))
    return Source(p, data, size, compression, identity=(st.st_dev, st.st_ino))


def source_from_bytes(data: bytes, name: str = "<bytes>") -> Source:
    """An in-memory source (tests, payloads extracted from elsewhere)."""
    compression = detect_compression(bytes(data[:4096]))
    return Source(Path(name), data, len(data), compression)
