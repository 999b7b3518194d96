"""A small plain file framed and CRC-checked from memory, read whole in one read: the analysis
pass's path for thousands of small shards (issue 19), where the stream machinery of
`report.index_and_verify` (a Source, its buffers, chunks, a second look at damage) cost more per
file than framing its records. Only a file that is wholly clean is answered here: any damage,
compression, a file that is not regular or changes as it is read returns None, and the usual path
reads it and says why (its answer for a clean file is the same: tests/core/test_smallfile.py)."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from tfrview.core import limits
from tfrview.core.errors import SourceError
from tfrview.core.tfrecord.framing import OVERHEAD, Compression
from tfrview.core.tfrecord.index import VERIFIED
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
    if len(data) != size or detect_compression(data[:_DETECT_BYTES]) != Compression.NONE:
        return None
    starts, end, why = frame_window(data, size, size, True)
    if why != MORE or end != size or not len(starts):
        return None  # not whole (a header or data CRC fails, a record cut short): the usual path says why
    rel = starts.astype(np.uint64)
    lengths = np.empty_like(rel)
    lengths[:-1] = np.diff(rel) - np.uint64(OVERHEAD)
    lengths[-1] = np.uint64(size - int(rel[-1]) - OVERHEAD)
    if int(lengths.max()) > limits.STREAM_PIECE:
        return None  # a big record is streamed by verify: not a small file's case
    kept = data if size <= 2 * ends else data[:ends] + data[size - ends :]
    return WholeFile(st, kept, rel, lengths, np.full(len(rel), VERIFIED, np.uint8))
