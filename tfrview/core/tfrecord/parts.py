"""One big plain file framed and CRC-checked in parts, on every core.

`index_and_verify` of a 2,000,000-record file spent its time in two per-record Python loops on one
core (framing, then every data CRC). Here the file is cut into byte ranges, one per core; each range
is framed and CRC-checked in its own process (this one takes the first range), reading each window
of the file once for both. A range finds its first record boundary as the scanner does past damage
(a header whose length's masked CRC matches) and goes on to the first record that starts at or past
its end. Ranges are joined only where they agree: range i's framing reaches exactly where range
i+1's begins (or lands on one of its records: a false sync at the start of a range that met the true
framing again). Only records whose header and data CRC both pass are taken this way, and the framing
of such a run is the same whoever frames it, so a clean file's result is `index_and_verify`'s.

At the first place they do not agree (damage, a record cut short, a false sync that never meets the
true framing again), the rest of the file is framed again sequentially by `report.index_and_verify`'s
own steps, from a few records before it (the scanner looks back at the record before damage, and the
coincidence check up to three records back), so numbering, statuses and problems are the ones one
core gives. Compressed files are never split: a deflate stream cannot be entered in the middle.
"""

from __future__ import annotations

import logging
import os
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from tfrview.core import limits
from tfrview.core.tfrecord.framing import (
    HEADER_SIZE,
    OVERHEAD,
    crc32c_module,
    masked_length_crcs,
    valid_header_positions,
)
from tfrview.core.tfrecord.index import (
    VERIFIED,
    IndexChunk,
    RecordIndex,
    _bad_crcs,
    data_crc_ok,
)
from tfrview.core.tfrecord.source import Source

if TYPE_CHECKING:
    import subprocess

log = logging.getLogger(__name__)

_WINDOW = 8 << 20  # bytes read at once: framed, then their data CRCs checked while still in cache
_MARGIN = 8  # records before the first disagreement framed again sequentially (it looks back up to 4)
_HEAD = struct.Struct("<qqqBq")  # st_ino, start, end, clean, record count: a child's answer


@dataclass(frozen=True)
class Part:
    """What one range's framing found: a run of whole records (both CRCs pass) from `start`."""

    lo: int
    hi: int
    start: int  # where its framing begins: 0, or the first valid header at or past lo; -1: none before hi
    offsets: np.ndarray  # uint64: each whole record's header offset, from `start`
    end: int  # where the run stops: the first record at or past hi (clean), or the first that is not whole
    clean: bool  # the run reached hi (or the end of the file) with every record whole


def ranges(size: int, jobs: int, started: bool = False) -> list[tuple[int, int]]:
    """The byte ranges of a file's parts: one per core, none under limits.FRAME_PART_MIN_BYTES. The
    first, framed in the caller while the others' processes start (~0.2 s of CPU: Python and numpy
    imported), is longer by about what one core frames in half that time, so all end together
    (at most half a range more); not when the others were `started` before (`prestart`)."""
    n = max(1, min(jobs, size // max(1, limits.FRAME_PART_MIN_BYTES)))
    lead = min(_LEAD, size // (2 * n)) if n > 1 and not started else 0
    cuts = [0] + [lead + (size - lead) * k // n for k in range(1, n)] + [size]
    return list(pairwise(cuts))


_LEAD = 40 << 20


def cores() -> int:
    """The cores this process may use: how many ranges a big file is framed in."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def worth_splitting(source: Source, jobs: int) -> bool:
    """A local plain file of limits.FRAME_PARTS_BYTES or more, and more than one core to use."""
    return (
        jobs > 1
        and source.compression == "none"
        and not source.remote
        and source.identity is not None
        and source.file_size >= limits.FRAME_PARTS_BYTES
    )


def _first_header(source: Source, lo: int, hi: int, buf: bytearray) -> int:
    """The first position in [lo, hi) where a header's length CRC validates, or -1. Looked for in
    blocks that grow from 4 KB (it is usually within a record's length of lo; each block's check
    costs numpy work for every byte of it)."""
    p = lo
    size = source.file_size
    block = 4096
    while p < hi:
        p = max(p, source.data_from(p))  # a sparse file's holes hold no header: never read
        if p >= hi:
            return -1
        n = min(block, hi - p, size - p - HEADER_SIZE + 1)
        if n <= 0:
            return -1
        raw = bytes(source.span(p, n + HEADER_SIZE - 1, buf))
        ok = valid_header_positions(raw, n)
        if len(ok):
            return p + int(ok[0])
        p += n
        block = min(block * 4, 1 << 20)
    return -1


def frame_range(source: Source, lo: int, hi: int) -> Part:
    """Frame and CRC-check the records of [lo, hi): from the first header at or past lo, every
    record whose header and data CRC pass, up to the first record that starts at or past hi. Stops
    early at the first record that is not whole (that one is left to the sequential framing)."""
    size = source.file_size
    buf = bytearray()
    start = 0 if lo == 0 else _first_header(source, lo, hi, buf)
    if start < 0:
        return Part(lo, hi, -1, np.empty(0, np.uint64), hi, True)
    pos = start
    kept: list[np.ndarray] = []
    clean = True
    while pos < hi and pos < size:
        n = min(_WINDOW, size - pos)
        if n < HEADER_SIZE:
            clean = False
            break
        span = source.span(pos, n, buf)
        starts, nxt, why = _frame_window(span, n, hi - pos, pos + n == size)
        if isinstance(span, memoryview):
            span.release()
        if len(starts):
            kept.append((starts + pos).astype(np.uint64))
        pos += nxt
        if why == _NOT_WHOLE:
            clean = False
            break
        if why == _LONG:  # one record longer than the window: framed alone, its data CRC streamed
            head = source.read(pos, HEADER_SIZE)
            length = int.from_bytes(head[:8], "little")
            if pos + length + OVERHEAD > size or not _valid(head) or not data_crc_ok(source, pos, length):
                clean = False
                break
            kept.append(np.array([pos], dtype=np.uint64))
            pos += length + OVERHEAD
    offsets = np.concatenate(kept) if kept else np.empty(0, np.uint64)
    return Part(lo, hi, start, offsets, pos, clean)


_MORE, _LONG, _NOT_WHOLE = range(3)
_U64 = struct.Struct("<Q")
_zero_crcs: dict[int, int] = {}  # crc32c of n zero bytes, by n


def _frame_window(span: bytes | memoryview, n: int, hi: int, at_end: bool) -> tuple[np.ndarray, int, int]:
    """The whole records of one window of n bytes that start before `hi` (relative positions), where
    framing goes on, and how: _MORE (at the next window, or at or past hi), _LONG (a record longer
    than the window starts there), _NOT_WHOLE (a record whose header or data CRC fails starts there,
    or the file ends inside one). `at_end`: the window ends where the file does.

    The chain of records is followed by one lean Python loop (a length read a record); the header
    CRCs are then checked by numpy, once per distinct length, and the data CRCs of all the window's
    records by one CRC over a copy of the window (`_all_whole`), one at a time only when that fails."""
    unpack = _U64.unpack_from
    out: list[int] = []
    add = out.append
    stop = min(n - HEADER_SIZE, hi - 1)  # a whole header in the window, and a start before hi
    p = 0
    while p <= stop:
        add(p)
        p += unpack(span, p)[0] + OVERHEAD
    starts = np.array(out, dtype=np.int64)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    if len(ends):
        ends[-1] = min(p, 1 << 62)
    why = _MORE
    if p > n:  # the last record does not fit in the window
        p = int(starts[-1])
        starts, ends = starts[:-1], ends[:-1]
        why = _NOT_WHOLE if at_end else _LONG if p == 0 else _MORE
    elif p < hi and p != n:  # fewer than a header's bytes left before the window's end
        why = _NOT_WHOLE if at_end else _MORE
    if not len(starts):
        return starts, p, why
    raw = np.frombuffer(span, dtype=np.uint8, count=n)
    lengths = ends - starts - OVERHEAD
    uniq, inverse = np.unique(lengths, return_inverse=True)
    ok = (
        _u32_at(raw, starts + 8)
        == masked_length_crcs(uniq.astype("<u8").view(np.uint8).reshape(-1, 8))[inverse]
    )
    if not ok.all():  # framing stops at the first header that fails
        j = int(np.argmin(ok))
        p, why = int(starts[j]), _NOT_WHOLE
        starts, ends, lengths, inverse = starts[:j], ends[:j], lengths[:j], inverse[:j]
        if not j:
            return starts, p, why
    if not _all_whole(raw, starts, ends, uniq, inverse):
        bad = _bad_crcs(memoryview(span)[:n], starts + HEADER_SIZE, lengths, 0)
        if bad:
            j = bad[0]
            return starts[:j], int(starts[j]), _NOT_WHOLE
    return starts, p, why


def _u32_at(raw: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The little-endian u32 at each position of `at` in a byte array."""
    return (
        raw[at].astype(np.uint32)
        | raw[at + 1].astype(np.uint32) << 8
        | raw[at + 2].astype(np.uint32) << 16
        | raw[at + 3].astype(np.uint32) << 24
    )


def _all_whole(
    raw: np.ndarray, starts: np.ndarray, ends: np.ndarray, uniq: np.ndarray, inverse: np.ndarray
) -> bool:
    """Do the data CRCs of all these contiguous records (valid headers) pass? One CRC over a copy of
    their bytes in which each footer is replaced by the raw CRC (no initial value, no final xor) its
    header and data must have if the footer is right: a record whose data and footer agree then adds
    nothing to the raw CRC of the whole (r(M || r(M)) = 0), so the copy's CRC is that of as many zero
    bytes. The header's share of that raw CRC depends on the length alone (`_length_share`). A
    record that does not agree always shows when it is the only one in the window (x^k is invertible
    modulo the CRC's polynomial); two that cancel each other have odds of 2^-32. When it fails, the
    records are checked one at a time (`_bad_crcs`)."""
    from tfrview.core.tfrecord.framing import MASK_DELTA

    crc32c = crc32c_module()

    a, z = int(starts[0]), int(ends[-1])
    y = raw[a:z].copy()
    rot = _u32_at(raw, ends - 4) - np.uint32(MASK_DELTA)
    # unmasked: crc32c of the data, if the footer is right
    crc = (rot >> np.uint32(17)) | (rot << np.uint32(15))
    share = np.array([_length_share(int(m)) for m in uniq], dtype=np.uint32)[inverse]
    want = crc ^ share  # r(header || data), if the footer is right
    f = ends - 4 - a
    for k in range(4):
        y[f + k] = (want >> np.uint32(8 * k)).astype(np.uint8)
    return crc32c.crc32c(y) == _zero_crc(z - a)


def _length_share(n: int) -> int:
    """What turns crc32c(data) of an n-byte record into r(header || data): crc32c of n zero bytes
    (the initial value and final xor) and r(header || n zero bytes) (the header's share), remembered."""
    got = _shares.get(n)
    if got is None:
        from tfrview.core.tfrecord.framing import encode_header

        crc32c = crc32c_module()
        zeros = _zeros()
        tail = memoryview(zeros)[:n] if n <= len(zeros) else bytes(n)
        header_share = crc32c.crc32c(tail, crc32c.crc32c(encode_header(n))) ^ _zero_crc(n + HEADER_SIZE)
        got = _zero_crc(n) ^ header_share
        if len(_shares) < 1 << 16:
            _shares[n] = got
    return got


_shares: dict[int, int] = {}


def _zero_crc(n: int) -> int:
    """crc32c of n zero bytes (the CRC's initial value and final xor alone), remembered."""
    crc32c = crc32c_module()
    got = _zero_crcs.get(n)
    if got is None:
        zeros = _zeros()
        got = crc32c.crc32c(bytes(n)) if n > len(zeros) else crc32c.crc32c(memoryview(zeros)[:n])
        if len(_zero_crcs) < 1 << 16:
            _zero_crcs[n] = got
    return got


_ZERO_BUF: list[bytes] = []


def _zeros() -> bytes:
    if not _ZERO_BUF:
        _ZERO_BUF.append(bytes(8 << 20))
    return _ZERO_BUF[0]


def _valid(head: bytes) -> bool:
    from tfrview.core.tfrecord.framing import HEADER, length_crc

    if len(head) < HEADER_SIZE:
        return False
    length, crc = HEADER.unpack(head)
    return length_crc(length) == crc


def join(parts: list[Part], size: int) -> tuple[np.ndarray, int, bool]:
    """(offsets of the records the parts agree on from the file's start, where that run ends,
    whether it is the whole file). Parts are joined only where the run so far ends exactly at a
    record the next part framed (its records before that, after a false sync, are dropped); a part
    whose whole range the run has already passed (a record longer than a range) adds nothing."""
    taken: list[np.ndarray] = []
    at = 0
    for p in parts:
        if at >= p.hi:
            continue
        k = int(np.searchsorted(p.offsets, np.uint64(at)))
        meets = k < len(p.offsets) and int(p.offsets[k]) == at  # its framing reaches ours
        stopped_here = p.start == at == p.end  # it starts where we are, with a record that is not whole
        if p.start < 0 or not (meets or stopped_here):
            return _cat(taken), at, False
        taken.append(p.offsets[k:])
        at = p.end
        if not p.clean:
            return _cat(taken), at, False
    return _cat(taken), at, at == size


def _cat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.empty(0, np.uint64)


# --- running the parts -------------------------------------------------------------------------------


def _spawn(path: str, lo: int, hi: int) -> subprocess.Popen:
    """A part process for one range: a started one waiting for its range (`prestart`), else a new one."""
    from tfrview.core import childproc

    while childproc.started_ahead(__name__):
        proc = childproc.started_ahead(__name__).pop()
        try:
            proc.stdin.write(f"{lo} {hi} {path}\n".encode())
            proc.stdin.close()
            return proc
        except (BrokenPipeError, OSError, ValueError):  # it died waiting: another, or a new one
            log.debug("a started part process was gone; another one instead")
            proc.wait()
    return childproc.spawn("tfrview.core.tfrecord.parts", path, str(lo), str(hi))


def prestart(source_size: int, jobs: int) -> int:
    """Start the part processes a file of `source_size` bytes will need on `jobs` cores now, to wait
    on their stdin for a range: their Python and numpy start-up (~0.2 s) then overlaps the caller's
    own (the CLI's imports and plan) instead of delaying the framing. Those never given a range end
    when the caller does (their stdin closes). How many were started. (The CLI calls this module's
    twin in childproc, before numpy is loaded here: `childproc.start_parts_ahead`.)"""
    from tfrview.core import childproc

    return childproc.start_parts_ahead(source_size, jobs)


def _answer(proc: subprocess.Popen, lo: int, hi: int, ino: int) -> Part | None:
    """A child's part, or None when it failed or read another file (the caller frames alone)."""
    try:
        head = proc.stdout.read(_HEAD.size)
        if len(head) < _HEAD.size:
            return None
        got_ino, start, end, clean, n = _HEAD.unpack(head)
        body = proc.stdout.read(8 * n)
        if got_ino != ino or len(body) != 8 * n:
            return None
        return Part(lo, hi, start, np.frombuffer(body, dtype=np.uint64), end, bool(clean))
    finally:
        proc.stdout.close()
        proc.wait()


def frame_in_parts(
    source: Source, jobs: int, progress: Callable[[str, int, int], None] | None = None
) -> list[Part] | None:
    """Every range's part: the first framed here, the others in child processes at once. None when
    a child failed (logged; the caller frames the file on one core)."""
    from tfrview.core import childproc

    rs = ranges(source.file_size, jobs, started=len(childproc.started_ahead(__name__)) >= jobs - 1)
    if len(rs) < 2 or not _valid(source.read(0, HEADER_SIZE)):
        # a file damaged from its first byte (zeros, another format) is the sequential framing's:
        # it resynchronises past damage and strides over zeros; parts would each search theirs
        return None
    path = str(source.path)
    procs = [_spawn(path, lo, hi) for lo, hi in rs[1:]]
    try:
        first = frame_range(source, *rs[0])
        if progress:
            progress("verify", rs[0][1], source.file_size)
        ino = source.identity[1] if source.identity else -1
        others = [_answer(p, lo, hi, ino) for p, (lo, hi) in zip(procs, rs[1:], strict=True)]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    if any(o is None for o in others):
        log.warning("%s: a framing process failed; framed on one core instead", path)
        return None
    return [first, *others]


def clean_prefix(parts: list[Part], size: int) -> tuple[RecordIndex, int, bool]:
    """The index of the whole records the parts agree on from the start (all VERIFIED), where
    sequential framing must take over (a few records before their run ends, unless it is the whole
    file), and whether it is the whole file."""
    offsets, end, whole = join(parts, size)
    if not whole:
        keep = max(0, len(offsets) - _MARGIN)
        end = int(offsets[keep]) if keep < len(offsets) else end
        offsets = offsets[:keep]
    lengths = np.empty_like(offsets)
    if len(offsets):
        lengths[:-1] = np.diff(offsets) - np.uint64(OVERHEAD)
        lengths[-1] = np.uint64(end - int(offsets[-1]) - OVERHEAD)
    idx = RecordIndex()
    idx.apply(IndexChunk(0, offsets, lengths, np.full(len(offsets), VERIFIED, np.uint8), (), end, end, whole))
    return idx, end, whole


def child_main(path: str, lo: int, hi: int) -> int:
    """Frame one range and write its part to stdout (python -m tfrview.core.tfrecord.parts PATH LO HI)."""
    from pathlib import Path

    from tfrview.core.childproc import worker_start
    from tfrview.core.errors import TfrviewError
    from tfrview.core.tfrecord.source import FileBytes

    worker_start(os.getppid())
    out = sys.stdout.buffer
    try:  # a plain local file, as the parent found it: opened here without open_source's detection and imports
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        st = os.fstat(fd)
        src = Source(
            Path(path), FileBytes(fd, st.st_size, Path(path)), st.st_size, "none", (st.st_dev, st.st_ino)
        )
        p = frame_range(src, lo, hi)
        ino = src.identity[1] if src.identity else -1
        src.close()
    except (TfrviewError, OSError) as exc:
        print(f"tfrview: {exc}", file=sys.stderr)
        return 1
    try:
        out.write(_HEAD.pack(ino, p.start, p.end, int(p.clean), len(p.offsets)))
        out.write(np.ascontiguousarray(p.offsets, dtype=np.uint64).tobytes())
        out.flush()
    except BrokenPipeError:
        return 0
    return 0


def _waiting_main() -> int:
    """`python -m tfrview.core.tfrecord.parts -`: started ahead (`prestart`), it waits on stdin for
    one line, LO HI PATH; none (its parent did not need it) ends it quietly."""
    from importlib import import_module

    for name in ("childproc", "errors", "logs"):  # what child_main needs, loaded while waiting
        import_module(f"tfrview.core.{name}")

    crc32c_module()
    line = sys.stdin.buffer.readline().decode("utf-8", "surrogateescape").rstrip("\n")
    if not line:
        return 0
    lo, hi, path = line.split(" ", 2)
    return child_main(path, int(lo), int(hi))


if __name__ == "__main__":
    if sys.argv[1:] == ["-"]:
        raise SystemExit(_waiting_main())
    raise SystemExit(child_main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
