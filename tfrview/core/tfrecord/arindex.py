"""An ArrayRecord source's index, never scanned: built from its footer (or from the walk of a file
without one), every block and chunk header hash checked, and on request every chunk's data hash
(the count and the first rows need none of it)."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from tfrview.core.problems import Problem
from tfrview.core.tfrecord.index import BAD_DATA_CRC, VERIFIED, IndexChunk, RecordIndex
from tfrview.core.tfrecord.source import ArrayRecordSource


def data_hashes_asked() -> bool:
    """Whether every chunk's data hash is checked too (TFRVIEW_AR_DATA_HASHES=1): HighwayHash in
    numpy runs at a few tens of MB/s (the headers, hashed together, at the disk's speed), so the
    data's hashes are opt-in; a chunk that fails to decode has its data hash checked regardless."""
    return os.environ.get("TFRVIEW_AR_DATA_HASHES", "") not in ("", "0")


def index_and_verify(
    source: ArrayRecordSource, data_hashes: bool | None = None
) -> tuple[RecordIndex, list[Problem]]:
    """The index from the footer (or the walk), every block and chunk header hash checked and,
    with `data_hashes` (default: `data_hashes_asked`), every chunk's data hash: a damaged chunk's
    records are marked damaged."""
    if data_hashes is None:
        data_hashes = data_hashes_asked()
    ar = source.ar
    found = ar.verify(data=data_hashes)
    status = np.full(source.record_count, VERIFIED, dtype=np.uint8)
    for p in found:
        if p.record is not None:
            c = ar.chunks.chunk_of(p.record)
            status[int(ar.chunks.first[c]) : int(ar.chunks.first[c + 1])] |= BAD_DATA_CRC
    problems = source.opening_problems() + [_in_stream(source, p) for p in found]
    idx = RecordIndex()
    idx.apply(
        IndexChunk(
            0,
            source.starts[:-1].astype(np.uint64),
            source.lengths.astype(np.uint64),
            status,
            tuple(problems),
            source.stream_size,
            ar.size,
            True,
            source.stream_size,
        )
    )
    return idx, []


def _in_stream(source: ArrayRecordSource, p: Problem) -> Problem:
    """A problem at a file byte offset moved to its record's place in the decoded stream (the
    message keeps the file's byte offset)."""
    chunks = source.ar.chunks
    if p.record is None:
        at = int(np.searchsorted(chunks.begin, p.offset, side="left"))
        first = int(chunks.first[min(at, len(chunks))])
    else:
        first = p.record
    return replace(p, offset=int(source.starts[min(first, source.record_count)]))
