"""A small plain file framed and CRC-checked from memory, read whole in one read: the analysis
pass's path for thousands of small shards (issue 19), where the stream machinery of
`report.index_and_verify` (a Source, its buffers, chunks, a second look at damage) cost more per
file than framing its records. Only a file that is wholly clean is answered here: any damage,
compression, a file that is not regular or changes as it is read returns None, and the usual path
reads it and says why (its answer for a clean file is the same: tests/core/test_smallfile.py)."""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass

import numpy as np

from tfrview.core import limits
from tfrview.core.errors import SourceError
from tfrview.core.tfrecord.framing import HEADER_SIZE, OVERHEAD, Compression
from tfrview.core.tfrecord.index import _END, VERIFIED, _bad_crcs, _frame_run
from tfrview.core.tfrecord.source import _DETECT_BYTES, detect_compression, open_regular
from tfrview.core.tfrecord.window import MORE, frame_window


@dataclass
class WholeFile:
    """A clean plain file's framing: every record whole, every CRC good."""

    stat: os.stat_result
    ends: bytes  # the file's first and last bytes, for its identity (analysis.results.identity_of)
    offsets: np.ndarray  # uint64
    lengths: np.ndarray  # uint64
    status: np.ndarray  # uint8, VERIFIED each


def frame_whole(path: str, ends: int) -> WholeFile | None:
    """The framing of a plain file of at most limits.SMALL_FILE_WHOLE_BYTES with every record
    whole and verified, or None (not small, not plain, not clean, not readable: the usual path
    says why). `ends` bytes of each end are kept (the whole file when it is at most twice that)."""
    try:
        fd, st = open_regular(path)
    except SourceError:
        return None
    try:
        size = st.st_size
        if size < OVERHEAD or size > limits.SMALL_FILE_WHOLE_BYTES:
            return None
        data = os.pread(fd, size + 1, 0)  # one byte more: a file that grew is not read as whole
    except OSError:
        return None
    finally:
        os.close(fd)
    if len(data) != size:
        return None
    framed = frame_bytes(data)
    if framed is None:
        return None
    kept = data if size <= 2 * ends else data[:ends] + data[size - ends :]
    return WholeFile(st, kept, *framed)


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
