"""An ArrayRecord source's index, never scanned: built from its footer (or from the walk of a file
without one), every block and chunk header hash checked, and on request every chunk's data hash
(the count and the first rows need none of it)."""

from __future__ import annotations

import numpy as np

from tfrview.core.problems import Problem
from tfrview.core.tfrecord.index import BAD_DATA_CRC, VERIFIED, IndexChunk, RecordIndex
from tfrview.core.tfrecord.source import ArrayRecordSource, data_hashes_asked

__all__ = ["data_hashes_asked", "index_and_verify"]


def index_and_verify(
    source: ArrayRecordSource, data_hashes: bool | None = None
) -> tuple[RecordIndex, list[Problem]]:
    """The index from the footer (or the walk), every block and chunk header hash checked and,
    with `data_hashes` (default: `data_hashes_asked`), every chunk's data hash: a damaged chunk's
    records are marked damaged (`ArrayRecordSource.checked`, which the window's verify takes too)."""
    bad, found = source.checked(data_hashes)
    status = np.full(source.record_count, VERIFIED, dtype=np.uint8)
    status[bad] |= BAD_DATA_CRC
    problems = source.opening_problems() + found
    idx = RecordIndex()
    idx.apply(
        IndexChunk(
            0,
            source.starts[:-1].astype(np.uint64),
            source.lengths.astype(np.uint64),
            status,
            tuple(problems),
            source.stream_size,
            source.ar.size,
            True,
            source.stream_size,
        )
    )
    return idx, []
