"""The record offset index, built progressively.

`scan(source)` is a generator of `IndexChunk`s: the first arrives after ~1,000 records so a window
can show rows at once, and a caller may stop between chunks. Every header's length CRC is checked
(a garbage length must never frame the rest of the file). When a header is bad the scanner
*resynchronises*: it looks for the next position whose header validates and whose record fits, and
goes on from there, reporting the skipped bytes. Data CRCs are checked by `verify`, a second pass.
"""

from __future__ import annotations

import enum
import time
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from tfrview.core.errors import SourceError
from tfrview.core.limits import BIG_RECORD_BYTES, FRAME_WINDOW_BYTES, LENGTH_CRC_CACHE, STREAM_PIECE
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.tfrecord.framing import (
    HEADER,
    HEADER_SIZE,
    OVERHEAD,
    U32,
    Compression,
    crc32c_function,
    crc32c_module,
    length_crc,
    mask,
    mask_array,
    masked_crc,
    valid_header_positions,
)
from tfrview.core.tfrecord.source import Source, Stream

# Per-record status bits (uint8).
VERIFIED = 1  # data CRC checked
BAD_DATA_CRC = 2
BAD_LENGTH_CRC = 4  # the header was damaged but the record could still be framed
DAMAGED = BAD_DATA_CRC | BAD_LENGTH_CRC
CRC_CUT = 8  # the stream ends inside its data CRC: its data is all there, but nothing can verify it
CUT_SHORT = 16  # the next record starts before its header's length ends: framed short, damaged
SPLIT_CUT = 2  # in a split (next, how): the bytes before `next` are a record cut short (not True: whole)

_RESYNC_BLOCK = 1 << 20
_HOP = 64 << 10  # records at least this long are framed by their header alone in a plain file
_ZEROS = bytes(_RESYNC_BLOCK + HEADER_SIZE - 1)  # a resync block of zeros, compared whole (memcmp)

_MORE, _END, _SHORT, _BAD = range(4)


@dataclass(frozen=True, slots=True)
class IndexChunk:
    """Records found since the previous chunk, plus progress."""

    first: int  # local number of the first record in this chunk
    offsets: np.ndarray  # uint64: where each record's header starts in the stream
    lengths: np.ndarray  # uint64: data length of each record
    status: np.ndarray  # uint8 status bits
    problems: tuple[Problem, ...]
    scanned: int  # stream bytes framed so far
    consumed: int  # file bytes read so far (compressed bytes for GZIP/ZLIB)
    done: bool
    reached: int = 0  # stream bytes read so far, framed or still being searched (inflated, for GZIP/ZLIB)


def _frame_run(buf, pos: int, end: int, budget: int, out: array, cache: dict) -> tuple[int, int]:
    """Frame records from buf[pos:end] while their headers are valid and they fit.

    Appends each record's start to `out`; lengths follow from the starts because the records of one
    run are contiguous. Returns (position, why it stopped). The hot loop of the whole program.
    """
    unpack = HEADER.unpack_from
    append = out.append
    get = cache.get
    limit = end - HEADER_SIZE
    n = 0
    while n < budget:
        if pos > limit:
            return pos, (_END if pos == end else _SHORT)
        length, crc = unpack(buf, pos)
        if get(length) != crc:
            if length_crc(length) != crc:
                return pos, _BAD
            if len(cache) < LENGTH_CRC_CACHE:
                cache[length] = crc
        nxt = pos + length + OVERHEAD
        if nxt > end:
            return pos, _SHORT
        append(pos)
        pos = nxt
        n += 1
    return pos, _MORE


class _Builder:
    """Accumulates records and problems between chunks."""

    def __init__(self) -> None:
        self.next_record = 0
        self.offsets: list[np.ndarray] = []
        self.lengths: list[np.ndarray] = []
        self.status: list[np.ndarray] = []
        self.problems: list[Problem] = []
        self.pending = 0

    def add_run(self, starts: array, base: int, end_pos: int) -> None:
        if not starts:
            return
        rel = np.frombuffer(starts, dtype=np.uint64)
        offs = rel + np.uint64(base)
        lens = np.empty_like(offs)
        lens[:-1] = np.diff(rel) - np.uint64(OVERHEAD)
        lens[-1] = np.uint64(end_pos - (int(rel[-1]) + base) - OVERHEAD)
        self.offsets.append(offs)
        self.lengths.append(lens)
        self.status.append(np.zeros(len(offs), dtype=np.uint8))
        self.pending += len(offs)

    def add_one(self, offset: int, length: int, status: int) -> int:
        self.offsets.append(np.array([offset], dtype=np.uint64))
        self.lengths.append(np.array([length], dtype=np.uint64))
        self.status.append(np.array([status], dtype=np.uint8))
        self.pending += 1
        return self.next_record + self.pending - 1

    def last_pending(self) -> tuple[int, int] | None:
        """(offset, length) of the newest record not yet handed out in a chunk."""
        if not self.pending:
            return None
        return int(self.offsets[-1][-1]), int(self.lengths[-1][-1])

    def drop_last_pending(self) -> None:
        for parts in (self.offsets, self.lengths, self.status):
            parts[-1] = parts[-1][:-1]
            if not len(parts[-1]):
                parts.pop()  # so the newest pending record is always parts[-1][-1]
        self.pending -= 1

    def record_at_cursor(self) -> int:
        return self.next_record + self.pending

    def take(self, scanned: int, consumed: int, done: bool, reached: int = 0) -> IndexChunk:
        """The records and problems since the last chunk. Until the end, the newest record is held
        back for the next chunk: damage right after it may still frame it anew (`_cut_short_previous`),
        so where chunks fall (every 50 ms) never changes the framing."""

        def cat(parts, dtype):
            if not parts:
                return np.empty(0, dtype=dtype)
            return parts[0] if len(parts) == 1 else np.concatenate(parts)

        held = None
        if not done and self.pending:
            held = (self.offsets[-1][-1:], self.lengths[-1][-1:], self.status[-1][-1:])
            self.drop_last_pending()

        chunk = IndexChunk(
            first=self.next_record,
            offsets=cat(self.offsets, np.uint64),
            lengths=cat(self.lengths, np.uint64),
            status=cat(self.status, np.uint8),
            problems=tuple(self.problems),
            scanned=scanned,
            consumed=consumed,
            done=done,
            reached=max(reached, scanned),
        )
        self.next_record += self.pending
        self.pending = 0
        self.offsets, self.lengths, self.status, self.problems = [], [], [], []
        if held is not None:
            self.offsets, self.lengths, self.status = [held[0]], [held[1]], [held[2]]
            self.pending = 1
        return chunk


def _find_sync(st: Stream, start: int, keep_from: int, stop: int | None = None) -> Iterator[int | None]:
    """Yields None per block scanned (so callers can report progress and cancel), then the position
    of the next header whose length CRC validates and whose record fits, or -1 if none.

    Keeps the stream's bytes from `keep_from` while the region is small, so it can be examined."""
    p = start
    while True:
        if stop is not None and p >= stop:
            yield -1
            return
        if p - keep_from < FRAME_WINDOW_BYTES:
            st.advance(keep_from, p - keep_from + _RESYNC_BLOCK + HEADER_SIZE)
        else:
            st.advance(p, _RESYNC_BLOCK + HEADER_SIZE)
        avail = st.end - p
        if avail < HEADER_SIZE:
            if st.eof:
                yield -1
                return
            continue
        n = min(avail - HEADER_SIZE + 1, _RESYNC_BLOCK)
        rel = p - st.base
        raw = st.buf[rel : rel + n + HEADER_SIZE - 1]
        # zeros only: no header validates (the masked CRC of length 0 is not 0); memcmp-fast
        if raw == (_ZEROS if len(raw) == len(_ZEROS) else bytes(len(raw))):
            p += n
            # and past the rest of the run in big strides (holes of a sparse file unread); a header
            # may start in the run's last 11 bytes, so the scan goes on from there
            p = max(p, st.zeros_until(p) - HEADER_SIZE + 1)
            yield None
            continue
        ok = valid_header_positions(raw, n, st.end - p - OVERHEAD if st.eof else None)
        if len(ok):
            yield p + int(ok[0])
            return
        p += n
        yield None


def _explains(st: Stream, pos: int, head: bytes, region: int) -> bool:
    """Is [pos, pos+region) one record whose header alone was damaged?

    Yes when the length field or the length CRC still agrees with the region's size, or when the
    region's data matches its footer CRC (the header was overwritten but the record is intact).
    """
    if region < OVERHEAD:
        return False
    length, crc = HEADER.unpack_from(head, 0)
    true_len = region - OVERHEAD
    if length == true_len or length_crc(true_len) == crc:
        # the header half agrees; but zeros (a filesystem's lost pages, padding) are no record
        return not _all_zero(st, pos, region)
    if true_len > BIG_RECORD_BYTES:
        return False  # too big to check here
    if st.random_access:
        st.advance(pos, region)
    return _whole_record(st, pos, pos + region)  # False if a compressed stream no longer holds them


def _all_zero(st: Stream, pos: int, region: int) -> bool:
    """Is [pos, pos+region) all zero bytes (as far as the window holds them)?"""
    if st.random_access:
        st.advance(pos, min(region, BIG_RECORD_BYTES))
    a = pos - st.base
    if a < 0:
        return False
    chunk = st.buf[a : a + min(region, st.end - pos)]
    return chunk == bytes(len(chunk))


def _footer_chunks(source, first_chunk: int, start: int, first: int) -> Iterator[IndexChunk]:
    """An ArrayRecord source's records as index chunks from its footer (source.ArrayRecordSource):
    the first `first_chunk` at once, then the rest; unverified, as a scan leaves them (`verify`
    reads them). What opening the file found (a missing footer, lost regions) comes with them."""
    starts = source.starts
    k0 = int(np.searchsorted(starts[:-1], start, side="left"))
    offsets = starts[k0:-1].astype(np.uint64)
    lengths = source.lengths[k0:].astype(np.uint64)
    size = int(source.stream_size)
    cut = min(len(offsets), max(first_chunk, 0))
    problems = tuple(source.opening_problems()) if k0 == 0 else ()
    if cut < len(offsets):
        at = int(offsets[cut])
        yield IndexChunk(
            first, offsets[:cut], lengths[:cut], np.zeros(cut, np.uint8), problems, at, 0, False, at
        )
        problems = ()
        first += cut
        offsets, lengths = offsets[cut:], lengths[cut:]
    n = len(offsets)
    yield IndexChunk(
        first, offsets, lengths, np.zeros(n, np.uint8), problems, size, source.file_size, True, size
    )


def scan(
    source: Source,
    chunk_records: int = 65536,
    first_chunk: int = 1000,
    splits: dict[int, tuple[int, bool]] | None = None,
    start: int = 0,
    first: int = 0,
) -> Iterator[IndexChunk]:
    """Frame every record of a source, resynchronising past damage. The last chunk has done=True.

    Chunks come after `first_chunk` records, then every `chunk_records` records or 50 ms of work,
    whichever is first, so a caller can show progress and stop between them. `splits` maps the
    offset of a header that claims the records after it to (where the next true record starts,
    whether the bytes before it are a whole record), as `verify` finds them (`overstated_split`,
    `coincidence_splits`): the swallowed records are then framed too. `start` and `first`: frame
    from stream position `start`, a record boundary, numbering from record `first` (the rest of a
    file whose first records were framed in parts: `parts`)."""
    if source.compression == Compression.ARRAYRECORD:  # its footer is its index: never scanned
        yield from _footer_chunks(source, first_chunk, start, first)
        return
    pending_splits = sorted((splits or {}).items(), reverse=True)
    st = source.stream()
    st.advance(0, 4096)
    first_bytes = bytes(st.buf[: min(st.end, 4096)])  # for the diagnosis if nothing is a record
    b = _Builder()
    b.next_record = first
    cache: dict[int, int] = {}
    pos = start
    left = first_chunk  # records until the next chunk is due
    hop = False  # the last record was jumped over: read just its successor's header next
    last_yield = time.perf_counter()

    def flush(done: bool = False) -> IndexChunk:
        return b.take(pos, st.bytes_in(), done, st.end)

    def due() -> bool:
        return left <= 0 or time.perf_counter() - last_yield > 0.05

    while True:
        if due():
            yield flush()
            left = chunk_records if left <= 0 else left
            last_yield = time.perf_counter()
        while pending_splits and pending_splits[-1][0] < pos:
            pending_splits.pop()
        if pending_splits and pending_splits[-1][0] == pos:
            nxt, whole = pending_splits.pop()[1]
            claimed = _claimed_length(st, pos)
            if whole == SPLIT_CUT and nxt - pos >= OVERHEAD:  # e.g. a record that lost CR bytes (lineendings)
                rec = b.add_one(pos, nxt - pos - OVERHEAD, CUT_SHORT | BAD_LENGTH_CRC | BAD_DATA_CRC)
                at_end = st.random_access and nxt >= st.size
                b.problems.append(_cut_short(pos, claimed, nxt - pos, None if at_end else nxt, rec))
            elif whole == True:  # noqa: E712 (SPLIT_CUT is truthy too)
                rec = b.add_one(pos, nxt - pos - OVERHEAD, BAD_LENGTH_CRC)
                b.problems.append(_overstated(pos, rec, claimed, nxt - pos - OVERHEAD))
            else:
                msg = (
                    f"{nxt - pos} unreadable bytes at {pos}: a header there claims {claimed} bytes over the intact "
                    f"records that start at {nxt}; resynchronised at {nxt}"
                )
                b.problems.append(Problem(ProblemKind.UNREADABLE_BYTES, pos, nxt - pos, None, msg))
            pos, left, hop = nxt, left - 1, False
            continue
        st.advance(pos, HEADER_SIZE if hop else FRAME_WINDOW_BYTES)
        if st.problems:
            b.problems.extend(st.problems)
            st.problems.clear()
        starts = array("Q")
        stop = st.end - st.base
        if pending_splits and pending_splits[-1][0] < st.end:
            stop = pending_splits[-1][0] - st.base  # frame up to the split, then split it there
        rel, why = _frame_run(st.buf, pos - st.base, stop, left, starts, cache)
        b.add_run(starts, st.base, st.base + rel)
        left -= len(starts)
        pos = st.base + rel
        hop = hop and not starts
        if why == _MORE:
            continue
        if why == _END:
            if st.eof and pos == st.end:
                break
            continue
        if why == _SHORT and not st.eof:
            avail = st.end - pos
            if avail < HEADER_SIZE:
                st.advance(pos, FRAME_WINDOW_BYTES)
                continue
            length, _ = HEADER.unpack_from(st.buf, pos - st.base)
            nxt = pos + length + OVERHEAD
            if st.random_access:
                if nxt <= st.size and length + OVERHEAD >= _HOP:  # frame it without reading it
                    b.add_one(pos, length, 0)
                    pos, left, hop = nxt, left - 1, True
                    continue
                if nxt <= st.size:
                    st.advance(pos, length + OVERHEAD + HEADER_SIZE)
                    continue
                # it runs past the end of the file: the damage handling below, as at the end
                st.advance(pos, FRAME_WINDOW_BYTES)
            else:
                if length + OVERHEAD <= BIG_RECORD_BYTES:
                    st.advance(pos, length + OVERHEAD + HEADER_SIZE)
                    if st.end - pos >= length + OVERHEAD or st.eof:
                        continue
                while st.end < nxt and not st.eof:  # inflate over the body without holding it
                    st.advance(min(nxt, st.end + BIG_RECORD_BYTES), HEADER_SIZE)
                    if time.perf_counter() - last_yield > 0.05:
                        yield flush()
                        last_yield = time.perf_counter()
                st.advance(nxt, HEADER_SIZE)
                if st.base == nxt:
                    b.add_one(pos, length, 0)
                    pos, left = nxt, left - 1
                    continue
                b.problems.append(_truncated(pos, length, st.end - pos, None, b.record_at_cursor()))
                pos = st.end
                break
        # A damaged header (_BAD), or the stream ends inside a record (_SHORT at end of stream).
        cut = _cut_short_previous(st, b, pos)
        if cut is not None and cut[2] is _Cut.OVERLAP:
            # A deletion at a record boundary whose lost byte(s) the record's last CRC bytes happen
            # to repeat: the next record frames whole from inside that CRC. Both pass their CRCs,
            # so both are kept (nothing intact is lost) and the shared bytes are said.
            prev, q, _ = cut
            n = pos - q
            msg = (
                f"{n} byte{'s' if n != 1 else ''} at {q} end the CRC of the record at {prev} and begin the "
                f"header of the record after it: bytes were lost at this boundary (both records pass their CRCs)"
            )
            b.problems.append(Problem(ProblemKind.UNREADABLE_BYTES, q, n, None, msg))
            pos = q
            continue
        if cut is not None:  # the previous record's header claimed bytes of the records after it
            prev, q, how = cut
            claimed = _length_at(st, prev)
            b.drop_last_pending()
            if how is _Cut.WHOLE:  # only its length was wrong: its data and CRC end exactly where q starts
                rec = b.add_one(prev, q - prev - OVERHEAD, BAD_LENGTH_CRC)
                b.problems.append(_overstated(prev, rec, claimed, q - prev - OVERHEAD))
            elif (
                q - prev >= OVERHEAD
            ):  # a record cut short (or CR bytes lost): a damaged row, not lost from sight
                rec = b.add_one(prev, q - prev - OVERHEAD, CUT_SHORT | BAD_LENGTH_CRC | BAD_DATA_CRC)
                b.problems.append(_cut_short(prev, claimed, q - prev, q, rec))
            else:
                b.problems.append(_truncated(prev, claimed, q - prev, q, b.record_at_cursor()))
            pos = q
            continue
        remaining = st.end - pos
        if why == _SHORT and remaining < HEADER_SIZE:
            tail = bytes(st.buf[pos - st.base : st.end - st.base])
            if tail.strip(b"\0"):
                msg = f"truncated record at {pos}: {remaining} bytes where a 12-byte header should be"
                b.problems.append(Problem(ProblemKind.TRUNCATED, pos, remaining, None, msg))
            else:
                msg = f"{remaining} zero bytes after the last record at {pos}"
                b.problems.append(Problem(ProblemKind.TRAILING_BYTES, pos, remaining, None, msg))
            pos = st.end
            break
        if why == _SHORT and st.eof and _crc_cut(st, b, pos):
            pos = st.end
            break
        head = bytes(st.buf[pos - st.base : pos - st.base + HEADER_SIZE])
        sync = None
        for sync in _find_sync(st, pos + 1, pos):
            if sync is not None:
                break
            if time.perf_counter() - last_yield > 0.05:
                yield flush()
                last_yield = time.perf_counter()
        nxt = st.end if sync == -1 else sync
        region = nxt - pos
        length, _ = HEADER.unpack_from(head, 0)
        if _explains(st, pos, head, region):
            rec = b.add_one(pos, region - OVERHEAD, BAD_LENGTH_CRC)
            msg = (
                f"corrupted record at {pos}: record {rec} has a damaged length header "
                f"(says {length} bytes; its {region - OVERHEAD} data bytes are still framed)"
            )
            b.problems.append(Problem(ProblemKind.BAD_LENGTH_CRC, pos, region, rec, msg))
        elif why == _SHORT and region >= OVERHEAD:  # cut short (a copy cut, CR bytes lost): a damaged row
            rec = b.add_one(pos, region - OVERHEAD, CUT_SHORT | BAD_LENGTH_CRC | BAD_DATA_CRC)
            b.problems.append(_cut_short(pos, length, region, None if sync == -1 else nxt, rec))
        elif why == _SHORT:
            b.problems.append(
                _truncated(pos, length, region, None if sync == -1 else nxt, b.record_at_cursor())
            )
        elif sync == -1:
            zeros = region <= BIG_RECORD_BYTES and _all_zero(st, pos, region)
            b.problems.append(
                _tail_problem(pos, region, b.record_at_cursor() == 0 and pos == 0, first_bytes, zeros)
            )
        else:
            msg = f"{region} unreadable bytes at {pos} (no valid record header); resynchronised at {nxt}"
            b.problems.append(Problem(ProblemKind.UNREADABLE_BYTES, pos, region, None, msg))
        pos = nxt
        hop = False
        if sync == -1:
            break
    if st.problems:
        b.problems.extend(st.problems)
        st.problems.clear()
    yield flush(True)


def _crc_cut(st: Stream, b: _Builder, pos: int) -> bool:
    """The stream ends inside the 4-byte data CRC of a record whose valid header and whole data are
    there: a record (its data decodes), kept as one that cannot be verified (CRC_CUT)."""
    length, crc = HEADER.unpack_from(st.buf, pos - st.base)
    have = st.end - pos
    if length_crc(length) != crc or not HEADER_SIZE + length <= have < length + OVERHEAD:
        return False
    kept = have - HEADER_SIZE - length  # bytes of its CRC the stream still has: they must agree
    if kept:
        if pos < st.base:
            return False
        a = pos - st.base + HEADER_SIZE
        if U32.pack(masked_crc(st.buf[a : a + length]))[:kept] != bytes(
            st.buf[a + length : a + length + kept]
        ):
            return False  # not its CRC's first bytes: data lost (a cut copy, dropped CR bytes), not a cut CRC
    rec = b.add_one(pos, length, CRC_CUT)
    msg = (
        f"truncated record at {pos}: record {rec}'s {length} data bytes are all there, but the stream ends "
        f"with {have - HEADER_SIZE - length} of the 4 bytes of its data CRC: kept, unverified"
    )
    b.problems.append(Problem(ProblemKind.TRUNCATED, pos, have, rec, msg))
    return True


def _overstated(pos: int, rec: int, claimed: int, true_len: int) -> Problem:
    msg = (
        f"corrupted record at {pos}: record {rec}'s header overstates its length (says {claimed} bytes; "
        f"its {true_len} data bytes and their CRC are intact, and the next record starts at {pos + true_len + OVERHEAD})"
    )
    return Problem(ProblemKind.BAD_LENGTH_CRC, pos, true_len + OVERHEAD, rec, msg)


def _claimed_length(st: Stream, pos: int) -> int:
    st.advance(pos, HEADER_SIZE)
    return HEADER.unpack_from(st.buf, pos - st.base)[0] if st.end - pos >= HEADER_SIZE else 0


def _length_at(st: Stream, pos: int) -> int:
    return HEADER.unpack_from(st.buf, pos - st.base)[0]


def _cut_short_previous(st: Stream, b: _Builder, pos: int) -> tuple[int, int, _Cut] | None:
    """When damage follows a record, that record's header may have claimed bytes that belong to the
    records after it: a writer that crashed and resumed (the record was cut short), or a header
    rewritten with an overstated length. Returns (its offset, the sync point q inside it, what that
    makes of the record: `_Cut`) when such a q is found.

    A record whose own CRC passes is proven whole and is kept, unless the framing from q explains
    bytes past `pos` that keeping it would call damage: a header (length, masked CRC of the length)
    is byte for byte a valid 8-byte payload with its CRC, so a record cut to 8 bytes can pass by
    coincidence. A payload that itself holds TFRecord framing stays one record."""
    last = b.last_pending()
    if last is None:
        return None
    prev, length = last
    if prev + OVERHEAD + length != pos or length > BIG_RECORD_BYTES:
        return None
    if st.random_access and prev < st.base:
        st.advance(prev, pos - prev + HEADER_SIZE)
    if prev < st.base:
        return None
    a = prev - st.base + HEADER_SIZE
    crc_ok = masked_crc(st.buf[a : a + length]) == U32.unpack_from(st.buf, a + length)[0]
    for q in _find_sync(st, prev + HEADER_SIZE, prev, stop=pos):
        if q is None:
            if st.base > prev:
                return None
            continue
        if not 0 <= q < pos:
            return None
        if crc_ok:
            if not _chain_passes(st, q, pos):
                return None
            # q inside its CRC: bytes were lost at the boundary, its data stands whole before q
            return prev, q, _Cut.OVERLAP if q >= prev + HEADER_SIZE + length else _Cut.SHORT
        return prev, q, _Cut.WHOLE if _whole_record(st, prev, q) else _Cut.SHORT
    return None


class _Cut(enum.Enum):
    """What `_cut_short_previous` found of the record before damage, whose framing a sync point q
    inside it continues."""

    WHOLE = "whole"  # [offset, q) is one whole record by its data CRC: only its length was wrong
    SHORT = "short"  # it was cut short (or kept, by its CRC, unless the framing from q explains more)
    OVERLAP = "overlap"  # it is whole, and so is the framing from inside its CRC: bytes lost between


def _chain_passes(st: Stream, q: int, pos: int) -> bool:
    """Does a chain of whole records from q (valid headers and, where the window holds them, valid
    data CRCs) reach past pos? Only then does it explain more than the record it would replace."""
    r = q
    while r < pos:
        if not _valid_header_at(st, r):
            return False
        end = r + _length_at(st, r) + OVERHEAD
        if end <= st.end and not _whole_record(st, r, end):
            return False
        r = end
    return r > pos


def _whole_record(st: Stream, start: int, end: int) -> bool:
    """Is [start, end) a record whose data matches its CRC, whatever its header says?"""
    n = end - start - OVERHEAD
    if n < 0 or start < st.base or end > st.end:
        return False
    a = start - st.base + HEADER_SIZE
    return masked_crc(st.buf[a : a + n]) == U32.unpack_from(st.buf, a + n)[0]


def _valid_header_at(st: Stream, pos: int) -> bool:
    rel = pos - st.base
    if rel < 0 or pos + HEADER_SIZE > st.end:
        return False
    length, crc = HEADER.unpack_from(st.buf, rel)
    return length_crc(length) == crc


def _truncated(pos: int, length: int, have: int, nxt: int | None, rec: int) -> Problem:
    where = f"before the next record at {nxt}" if nxt is not None else "before the end of the stream"
    msg = (
        f"truncated record at {pos}: needs {length + OVERHEAD} bytes "
        f"(header says {length} data bytes) but only {have} remain {where}"
    )
    return Problem(ProblemKind.TRUNCATED, pos, have, None, msg)


def _cut_short(pos: int, length: int, have: int, nxt: int | None, rec: int) -> Problem:
    """A record whose header claims more bytes than stand before the next record (or the end):
    framed short as a damaged record, so it is a row (its bytes decoded as they stand), not a gap."""
    p = _truncated(pos, length, have, nxt, rec)
    return replace(p, record=rec, message=f"{p.message}; framed as record {rec}, damaged")


def _tail_problem(pos: int, region: int, nothing_before: bool, head: bytes, zeros: bool = False) -> Problem:
    if nothing_before:
        from tfrview.core.tfrecord.sniff import describe_content  # start-up: kept off the CLI's path

        msg = (
            f"not a TFRecord file: it looks like {describe_content(head)} "
            f"(no valid record header in {region:,} bytes)"
        )
        return Problem(ProblemKind.NOT_TFRECORD, 0, region, None, msg)
    what = "zero bytes" if zeros else "bytes"
    msg = f"{region} {what} after the last record at {pos} are not a record"
    return Problem(ProblemKind.TRAILING_BYTES, pos, region, None, msg)


# --- the assembled index ----------------------------------------------------------------------------


_EMPTY: dict = {}  # one empty array a dtype, shared by every index before its first records


class _Grow:
    """A numpy array that grows by doubling, so appends are amortised O(1)."""

    def __init__(self, dtype) -> None:
        # nothing held until the first records: 10,000 shards listed are 10,000 empty indexes (17 KB
        # each when they began at 1,024 rows), sharing one empty array a dtype (30,000 made: 0.05 s)
        self._a = _EMPTY.get(dtype)
        if self._a is None:
            self._a = _EMPTY[dtype] = np.empty(0, dtype=dtype)
        self.n = 0

    def extend(self, values: np.ndarray) -> None:
        need = self.n + len(values)
        if need > len(self._a):
            bigger = np.empty(max(need, 2 * len(self._a), 1024), dtype=self._a.dtype)
            bigger[: self.n] = self._a[: self.n]
            self._a = bigger
        self._a[self.n : need] = values
        self.n = need

    def adopt(self, values: np.ndarray) -> None:
        """Hold `values` itself as the array (empty before; no one else writes to it): a file framed
        whole elsewhere, taken without a copy (any later growth copies it first)."""
        assert self.n == 0 and values.dtype == self._a.dtype
        self._a = values
        self.n = len(values)

    @property
    def view(self) -> np.ndarray:
        return self._a[: self.n]


@dataclass
class RecordIndex:
    """Offsets, lengths and status of every record framed in one source, plus its problems.

    Memory: 17 bytes per record. Readers on other threads may read `offsets`/`lengths`/`status` up to
    `count` while the indexer appends; only `apply` mutates.
    """

    _offsets: _Grow = field(default_factory=lambda: _Grow(np.uint64))
    _lengths: _Grow = field(default_factory=lambda: _Grow(np.uint64))
    _status: _Grow = field(default_factory=lambda: _Grow(np.uint8))
    problems: list[Problem] = field(default_factory=list)
    scanned: int = 0
    consumed: int = 0
    done: bool = False

    def apply(self, chunk: IndexChunk) -> None:
        self._offsets.extend(chunk.offsets)
        self._lengths.extend(chunk.lengths)
        self._status.extend(chunk.status)
        self._said(chunk.problems, chunk.scanned, chunk.consumed, chunk.done)

    def _said(self, problems, scanned: int, consumed: int, done: bool) -> None:
        """A chunk's problems and where its scan stands, after its records are held."""
        self.problems.extend(problems)
        self.scanned = scanned
        self.consumed = consumed
        self.done = done

    def adopt(self, chunk: IndexChunk) -> None:
        """`apply` of a whole file's one chunk to an empty index, its arrays held as they are (of the
        index's dtypes, writable, written by no one else): a reopened split's 10,000 files taken
        from one stored row without 30,000 copies (each at least 1,024 rows)."""
        if self.count or not (
            chunk.offsets.dtype == np.uint64
            and chunk.lengths.dtype == np.uint64
            and chunk.status.dtype == np.uint8
        ):
            self.apply(chunk)
            return
        self.adopt_whole(
            chunk.offsets,
            chunk.lengths,
            chunk.status,
            chunk.problems,
            chunk.scanned,
            chunk.consumed,
            chunk.done,
        )

    def adopt_whole(
        self,
        offsets: np.ndarray,
        lengths: np.ndarray,
        status: np.ndarray,
        problems,
        scanned: int,
        size: int,
        done: bool = True,
    ) -> None:
        """`adopt` of a whole file framed to its end elsewhere (`scanned` stream bytes of `size`),
        its arrays of the index's dtypes held as they are, into an empty index: no chunk made a file
        (a reopened split's 10,000 files taken from one stored row on a thread that shares the GIL
        with the window's). (`adopt` passes its chunk's `consumed` and `done`.)"""
        assert not self.count, "adopted into an empty index only"
        self._offsets.adopt(offsets)
        self._lengths.adopt(lengths)
        self._status.adopt(status)
        self._said(problems, scanned, size, done)

    def apply_tail(self, chunk: IndexChunk, known_until: int) -> None:
        """Apply a chunk from a scan that restarted at 0: records this index already holds are
        skipped, and so are problems before stream position `known_until` (already reported)."""
        skip = min(max(self.count - chunk.first, 0), len(chunk.offsets))
        self._offsets.extend(chunk.offsets[skip:])
        self._lengths.extend(chunk.lengths[skip:])
        self._status.extend(chunk.status[skip:])
        self.problems.extend(p for p in chunk.problems if p.offset >= known_until)
        self.scanned = max(self.scanned, chunk.scanned)
        self.consumed = max(self.consumed, chunk.consumed)
        self.done = chunk.done

    def apply_verify(self, vc: VerifyChunk) -> None:
        """Status bits from a verify pass that ran elsewhere (another process)."""
        self.status[vc.start : vc.stop] |= VERIFIED
        if len(vc.bad):
            self.status[vc.bad] |= BAD_DATA_CRC
        self.problems.extend(vc.problems)

    @property
    def count(self) -> int:
        return self._offsets.n

    @property
    def offsets(self) -> np.ndarray:
        return self._offsets.view

    @property
    def lengths(self) -> np.ndarray:
        return self._lengths.view

    @property
    def status(self) -> np.ndarray:
        return self._status.view


# --- verify: the data CRCs ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VerifyChunk:
    start: int
    stop: int  # records [start, stop) were checked
    bad: np.ndarray  # local numbers of records whose data CRC failed
    problems: tuple[Problem, ...]
    bytes_checked: int
    splits: tuple[tuple[int, tuple[int, bool]], ...] = ()  # (offset, (next record, whole)): see scan


def verify(
    source: Source,
    index: RecordIndex,
    start: int = 0,
    chunk_bytes: int = 4 << 20,  # fits the CPU cache: the read copy is then nearly free for the CRC
    chunk_records: int = 1 << 30,
) -> Iterator[VerifyChunk]:
    """Check the data CRC of every framed record from `start`, in chunks of about `chunk_bytes` and
    at most `chunk_records` records (small chunks let a UI thread have the GIL often).

    Marks status bits in `index` as it goes (VERIFIED, BAD_DATA_CRC) and yields what it found.
    An ArrayRecord source's frames carry CRCs we computed, which vouch for nothing: its records are
    verified by the file's own block and chunk header hashes, all at once (`_footer_verify`).
    """
    if source.compression == Compression.ARRAYRECORD:
        yield from _footer_verify(source, index, start)
        return
    n = index.count
    offs, lens, status = index.offsets, index.lengths, index.status
    while n > start and status[n - 1] & CRC_CUT:  # no CRC to check: it stays unverified
        n -= 1
    buf = bytearray()  # one buffer for every chunk
    i = start
    while i < n:
        j = int(np.searchsorted(offs, offs[i] + np.uint64(chunk_bytes), side="left"))
        j = min(max(j, i + 1), n, i + chunk_records)
        big = np.nonzero(lens[i:j] > np.uint64(STREAM_PIECE))[0]
        if len(big):  # a big record is checked on its own, streamed: memory never grows with its size
            j = i + max(int(big[0]), 1)
        a = int(offs[i])
        z = int(offs[j - 1]) + int(lens[j - 1]) + OVERHEAD
        bad: list[int] = []
        problems: list[Problem] = []
        if j == i + 1 and int(lens[i]) > STREAM_PIECE:
            if not data_crc_ok(source, a, int(lens[i])):
                bad.append(i)
        else:
            span = source.span(a, z - a, buf)
            if len(span) < z - a:
                raise SourceError(f"{source.path}: the stream ended before record {j - 1} did")
            mv = memoryview(span)
            bad = _bad_crcs(mv, offs[i:j].astype(np.int64) + (HEADER_SIZE - a), lens[i:j].astype(np.int64), i)
            mv.release()
            if isinstance(span, memoryview):
                span.release()
        if bad and source.remote:
            bad = [k for k in bad if not _whole_when_fetched_again(source, int(offs[k]), int(lens[k]))]
        status[i:j] |= VERIFIED
        splits = []
        for k in bad:
            if status[k] & CUT_SHORT:  # the scan said so already (truncated), with its record
                status[k] |= BAD_DATA_CRC
                continue
            status[k] |= BAD_DATA_CRC
            o = int(offs[k])
            ln = int(lens[k])
            inner = overstated_split(source, o, ln) if not status[k] & BAD_LENGTH_CRC else None
            if inner is not None:
                q, whole, count = inner
                splits.append((o, (o + q, whole)))
                first = (
                    f"its first {q - OVERHEAD} data bytes are a whole record"
                    if whole
                    else f"its first {q} bytes are not a record"
                )
                msg = (
                    f"corrupted record at {o}: record {k}'s header claims {ln} bytes over {count} intact records "
                    f"that start at {o + q}; {first}"
                )
                problems.append(Problem(ProblemKind.BAD_LENGTH_CRC, o, ln + OVERHEAD, k, msg))
                continue
            msg = f"corrupted record at {o + HEADER_SIZE}: data CRC mismatch in record {k} (starts at {o})"
            problems.append(Problem(ProblemKind.BAD_DATA_CRC, o + HEADER_SIZE, ln + 4, k, msg))
        yield VerifyChunk(i, j, np.array(bad, dtype=np.int64), tuple(problems), z - a, tuple(splits))
        i = j


def _footer_verify(source, index: RecordIndex, start: int) -> Iterator[VerifyChunk]:
    """Records [start, count) of an ArrayRecord source verified by its hashes
    (`ArrayRecordSource.checked`: ~0.4 s a GB, where decoding every chunk for its frames' CRCs took
    35 s): a damaged chunk's records get BAD_DATA_CRC and its `chunk_damaged` problem, in the
    chunk's words, in place of a `bad_data_crc` a record. One chunk: the check is array operations
    over every header at once."""
    n = index.count
    if start >= n:
        return
    bad, found = source.checked()
    bad = bad[(bad >= start) & (bad < n)]
    status = index.status
    status[start:n] |= VERIFIED
    status[bad] |= BAD_DATA_CRC
    lo = int(index.offsets[start])
    problems = tuple(p for p in found if p.offset >= lo or start == 0)
    z = int(index.offsets[n - 1]) + int(index.lengths[n - 1]) + OVERHEAD
    yield VerifyChunk(start, n, (bad - start).astype(np.int64), problems, z - lo)


def _whole_when_fetched_again(source: Source, offset: int, length: int) -> bool:
    """A record that failed its data CRC as it came over a network, fetched again: whole now?
    (Then the first copy was damaged on the way, not in the file.)"""
    if length > STREAM_PIECE:
        return False  # streamed records are checked as they stream; a second fetch would cost as much
    again = source.refetch(offset, length + OVERHEAD)
    if again is None or len(again) < length + OVERHEAD:
        return False
    return (
        masked_crc(again[HEADER_SIZE : HEADER_SIZE + length])
        == U32.unpack_from(again, HEADER_SIZE + length)[0]
    )


def _bad_crcs(mv: memoryview, starts: np.ndarray, lengths: np.ndarray, first: int) -> list[int]:
    """Numbers of the records in a read span whose data CRC fails. One C call per record for the
    CRC; the masking and the comparison with the stored CRCs are numpy over the whole span (the
    per-record Python work of a 100-byte record is most of its cost)."""
    crc = crc32c_function()
    got = np.fromiter(
        (crc(mv[o : o + n]) for o, n in zip(starts.tolist(), lengths.tolist(), strict=True)),
        dtype=np.uint32,
        count=len(starts),
    )
    raw = np.frombuffer(mv, dtype=np.uint8)
    at = starts + lengths
    stored = (
        raw[at].astype(np.uint32)
        | raw[at + 1].astype(np.uint32) << 8
        | raw[at + 2].astype(np.uint32) << 16
        | raw[at + 3].astype(np.uint32) << 24
    )
    return (np.flatnonzero(mask_array(got) != stored) + first).tolist()


def overstated_split(source: Source, offset: int, length: int) -> tuple[int, bool, int] | None:
    """For a record whose data CRC failed: do whole records start inside its claimed span, and
    explain its end better than it does? A header rewritten with an overstated length, a record cut
    short by a writer that crashed and went on, or garbage that holds a valid header, swallows the
    records after it this way (and its claimed end may land on a valid-looking header by chance).

    Returns (where the true records start, relative to `offset`; whether the bytes before them are
    themselves a whole record; how many whole records chain from there), or None. Taken at the first
    q where a whole record starts (header and data CRC valid: a random match has odds of 2^-64).
    A damaged record whose payload is itself TFRecord framing stays one damaged record when its
    inner records fill the payload exactly (from its first byte to its footer)."""
    if length > BIG_RECORD_BYTES:
        return None
    end = length + OVERHEAD
    span = source.read(offset, end + HEADER_SIZE - 1)  # a header may start in the span's last bytes
    if len(span) < end:
        return None
    starts = valid_header_positions(span[1:].ljust(end + HEADER_SIZE - 2, b"\xff"), end - 1) + 1
    for q in starts:
        q = int(q)
        whole = q >= OVERHEAD and masked_crc(span[HEADER_SIZE : q - 4]) == U32.unpack_from(span, q - 4)[0]
        n, reach = _whole_chain(source, offset + q, offset + end)
        if whole:
            return q, True, n
        if not n or (q == HEADER_SIZE and reach == offset + end - 4):
            continue
        return q, False, n
    return None


def coincidence_splits(source: Source, index: RecordIndex, problems) -> dict[int, tuple[int, bool]]:
    """An 8-byte record's data and CRC are, byte for byte, a valid header, so a record cut to its first
    20 bytes can pass its CRC by coincidence and frame what follows wrongly. Near each problem, an
    8-byte record is re-framed from its data start when whole records chain further from there than
    from the record itself. Only near problems: a clean file of 8-byte records costs nothing."""
    offs, lens = index.offsets, index.lengths
    out: dict[int, tuple[int, bool]] = {}
    for p in problems:
        k = int(np.searchsorted(offs, np.uint64(p.offset), side="right"))
        for j in range(max(k - 3, 0), min(k + 1, index.count)):
            if int(lens[j]) != 8:
                continue
            prev = int(offs[j])
            goal = prev + (1 << 20)
            n_a, reach_a = _whole_chain(source, prev, goal, 64)
            n_b, reach_b = _whole_chain(source, prev + HEADER_SIZE, goal, 64)
            if n_b and reach_b > reach_a:
                out[prev] = (prev + HEADER_SIZE, False)
    return out


def _whole_chain(source: Source, start: int, goal: int, most: int | None = None) -> tuple[int, int]:
    """(how many whole records chain from `start`, where the chain ends), walking until it ends,
    passes `goal` or has `most` records. Each record's header and data CRC must be valid."""
    r, n = start, 0
    while r < goal and (most is None or n < most):
        head = source.read(r, HEADER_SIZE)
        if len(head) < HEADER_SIZE:
            break
        ln, crc = HEADER.unpack(head)
        if length_crc(ln) != crc or ln > BIG_RECORD_BYTES:
            break
        body = source.read(r + HEADER_SIZE, ln + 4)
        if len(body) < ln + 4 or masked_crc(body[:ln]) != U32.unpack_from(body, ln)[0]:
            break
        r += ln + OVERHEAD
        n += 1
    return n, r


def data_crc_ok(source: Source, offset: int, length: int) -> bool:
    """Does the data of the record at `offset` match its footer CRC? Streamed in pieces, so a record
    of gigabytes costs a piece of memory, not its size."""
    crc32c = crc32c_module()

    value = 0
    got = 0
    for piece in source.pieces(offset + HEADER_SIZE, length):
        value = crc32c.crc32c(piece, value)
        got += len(piece)
    footer = source.read(offset + HEADER_SIZE + length, 4)
    return got == length and len(footer) == 4 and mask(value) == U32.unpack(footer)[0]
