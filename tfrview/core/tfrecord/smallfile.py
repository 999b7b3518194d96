"""Small plain files framed and CRC-checked from memory, read whole in one read: the analysis
pass's path for thousands of small shards (issue 19), where the stream machinery of
`report.index_and_verify` (a Source, its buffers, chunks, a second look at damage) cost more per
file than framing its records. Only a file that is wholly clean is answered here: any damage,
compression, a file that is not regular or changes as it is read returns None, and the usual path
reads it and says why (its answer for a clean file is the same: tests/core/test_smallfile.py).

Many files at once (`frame_many`, a task of the pass) are read one after another into one buffer
and framed together, a run of them by one `window.frame_window` call: its fixed cost a call (numpy
set-up, the header CRCs of each distinct length, one CRC pass) was paid a file, ~0.1 ms of a
1,000-record shard's ~0.4 ms."""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass

import numpy as np

from tfrview.core import limits
from tfrview.core.errors import SourceError
from tfrview.core.tfrecord.framing import HEADER_SIZE, OVERHEAD, Compression, crc32c_module
from tfrview.core.tfrecord.index import _END, VERIFIED, _bad_crcs, _frame_run
from tfrview.core.tfrecord.source import _DETECT_BYTES, detect_compression, open_regular
from tfrview.core.tfrecord.window import MORE, frame_window


@dataclass
class WholeFile:
    """A clean plain file's framing: every record whole, every CRC good."""

    stat: os.stat_result
    ends: tuple[
        int, int
    ]  # (CRC-32C, length) of its first and last bytes: its identity's (results.identity_of)
    offsets: np.ndarray  # uint64
    lengths: np.ndarray  # uint64
    status: np.ndarray  # uint8, VERIFIED each


def frame_whole(path: str, ends: int) -> WholeFile | None:
    """The framing of a plain file of at most limits.SMALL_FILE_WHOLE_BYTES with every record
    whole and verified, or None (not small, not plain, not clean, not readable: the usual path
    says why). `ends` bytes of each end are kept (the whole file when it is at most twice that)."""
    return frame_many([path], ends)[0]


# A run of files framed by one call holds this many bytes at most (a bigger file is a run alone): a
# damaged file costs the rest of its run framed again, and the buffer is this size, reused.
_RUN_BYTES = 2 << 20


def frame_many(paths: list[str], ends: int) -> list[WholeFile | None]:
    """`frame_whole` of each path, in order. Each file is opened, read in one `preadv` (one byte
    more than its size: a file that grew is not read as whole) and closed, into a buffer of
    `_RUN_BYTES` that a run of files shares; each run is then framed at once (`_settle_run`)."""
    out: list[WholeFile | None] = [None] * len(paths)
    buf = bytearray(0)  # sized at the first file: one file alone takes no more than its size
    one = bytearray(1)
    run: list[tuple[int, os.stat_result, int, int]] = []  # (index, stat, where in buf, size)
    at = 0
    for i, path in enumerate(paths):
        try:
            fd, st = open_regular(path)
        except SourceError:
            continue
        try:
            size = st.st_size
            if size < OVERHEAD or size > limits.SMALL_FILE_WHOLE_BYTES:
                continue
            if at + size > len(buf):  # the run is full: framed, and the buffer used again
                _settle_run(buf, run, ends, out)
                run, at = [], 0
                if size > len(buf):
                    buf = bytearray(max(size, _RUN_BYTES if len(paths) > 1 else 0))
            with memoryview(buf) as mv:
                got = os.preadv(fd, [mv[at : at + size], one], 0)
        except OSError:
            continue
        finally:
            os.close(fd)
        if got == size:
            run.append((i, st, at, size))
            at += size
    _settle_run(buf, run, ends, out)
    return out


def _settle_run(buf: bytearray, run: list, ends: int, out: list[WholeFile | None]) -> None:
    """Frame the files of `run`, one after another in `buf`, into `out`. A compressed file is left
    out; the others are framed together, and a file is clean when both its ends are record starts
    of the chain framed from the first file on, every record before its end whole: the chain from
    a record start is the same in the file alone. At the first file that is not clean (a record
    that fails, or one that runs into the next file) that file is left None and framing starts
    again at the next file."""
    if not run:
        return
    plain = []
    for f in run:
        _, _, a, size = f
        if detect_compression(bytes(buf[a : a + min(size, _DETECT_BYTES)])) == Compression.NONE:
            plain.append(f)
    k = 0
    while k < len(plain):
        j = k  # the files from k on that lie one after another in buf
        while j + 1 < len(plain) and plain[j + 1][2] == plain[j][2] + plain[j][3]:
            j += 1
        k = _frame_files(buf, plain[k : j + 1], ends, out) + k


def _frame_files(buf: bytearray, files: list, ends: int, out: list[WholeFile | None]) -> int:
    """Frame `files` (one after another in `buf`) from the first; each clean file of the longest
    clean run from the first is put in `out`: how many files were settled (that run, and the first
    file after it, which is not clean)."""
    pos = files[0][2]
    n = files[-1][2] + files[-1][3] - pos
    with memoryview(buf) as mv:
        span = mv[pos : pos + n]
        if len(files) == 1:  # a file alone: a few records are checked one by one (_whole_records)
            rel = _whole_records(span, n)
            starts = rel.astype(np.int64) if rel is not None else np.empty(0, np.int64)
            good = n if rel is not None else 0
        else:  # records start where the last whole one ends, or where one that fails starts
            starts, good, _ = frame_window(span, n, n, True)
        span.release()
        chain = np.append(starts, np.int64(good))  # every record start, and where whole records end
        bounds = np.array([f[2] - pos for f in files] + [n], np.int64)
        at = np.searchsorted(chain, bounds)
        on = (bounds <= good) & (chain[np.minimum(at, len(chain) - 1)] == bounds)
        lengths = (np.diff(chain) - OVERHEAD).astype(np.uint64)
        big = len(lengths) > 0 and int(lengths.max()) > limits.STREAM_PIECE
        crc32c = crc32c_module().crc32c
        for k, (i, st, a, size) in enumerate(files):
            lo, hi = int(at[k]), int(at[k + 1])
            if not (on[k] and on[k + 1]) or lo == hi:
                return k + 1  # not clean: the usual path says why; framing goes on after it
            if big and int(lengths[lo:hi].max()) > limits.STREAM_PIECE:
                continue  # a big record is streamed by verify: not a small file's case
            if size <= 2 * ends:
                kept = (crc32c(mv[a : a + size]), size)
            else:  # the CRC of the two ends one after the other
                kept = (crc32c(mv[a + size - ends : a + size], crc32c(mv[a : a + ends])), 2 * ends)
            offsets = (starts[lo:hi] - (a - pos)).astype(np.uint64)
            out[i] = WholeFile(st, kept, offsets, lengths[lo:hi], np.full(hi - lo, VERIFIED, np.uint8))
    return len(files)


def frame_bytes(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(offsets, lengths, status) of a small plain file's bytes held whole (a local file read in
    one read, a remote object fetched whole) when every record is whole and verified, else None
    (compressed, damaged, a big record: the usual path says why)."""
    size = len(data)
    if size < OVERHEAD or size > limits.SMALL_FILE_WHOLE_BYTES:
        return None
    if detect_compression(data[:_DETECT_BYTES]) != Compression.NONE:
        return None
    rel = _whole_records(data, size)
    if rel is None:
        return None  # not whole (a header or data CRC fails, a record cut short): the usual path says why
    lengths = np.empty_like(rel)
    lengths[:-1] = np.diff(rel) - np.uint64(OVERHEAD)
    lengths[-1] = np.uint64(size - int(rel[-1]) - OVERHEAD)
    if int(lengths.max()) > limits.STREAM_PIECE:
        return None  # a big record is streamed by verify: not a small file's case
    return rel, lengths, np.full(len(rel), VERIFIED, np.uint8)


_FEW_BYTES = 32 << 10  # below this, records checked one by one beat numpy's fixed cost a call


def _whole_records(data: bytes, size: int) -> np.ndarray | None:
    """Where each record of `data` starts (uint64) when every record is whole, else None. A file of
    a few records is framed and checked one record at a time (~1.5 us a record); a bigger one by
    `window.frame_window` (~0.15 ms a call, then ~0.3 us a record): a 100-record shard took 0.15
    ms the first way and 0.25-0.35 ms the second, a 1,000-record one 0.7 ms and 0.45 ms."""
    if size >= _FEW_BYTES:
        starts, end, why = frame_window(data, size, size, True)
        return starts.astype(np.uint64) if why == MORE and end == size and len(starts) else None
    found = array("Q")
    pos, why = _frame_run(data, 0, size, size, found, {})
    if why != _END or pos != size or not found:
        return None
    rel = np.frombuffer(found, dtype=np.uint64)
    lengths = np.diff(np.append(rel, np.uint64(size))) - np.uint64(OVERHEAD)
    mv = memoryview(data)
    try:
        bad = _bad_crcs(mv, rel.astype(np.int64) + HEADER_SIZE, lengths.astype(np.int64), 0)
    finally:
        mv.release()
    return None if bad else rel.copy()
