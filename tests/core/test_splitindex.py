"""A split's indexes packed into one stored answer and back, exactly."""

from __future__ import annotations

import numpy as np

from tests.helpers import json_extract
from tfrview.core.analysis.splitindex import FileIndex, pack, unpack
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.tfrecord.framing import OVERHEAD


def _file(first: int, lengths: list[int], gap_at: int | None = None, problems=()) -> FileIndex:
    ln = np.array(lengths, np.uint64)
    off = first + np.concatenate([[0], np.cumsum(ln + OVERHEAD)[:-1]]).astype(np.uint64)
    if gap_at is not None:
        off[gap_at:] += np.uint64(100)  # damaged bytes between two records
    st = np.arange(len(ln), dtype=np.uint8) % 4
    return FileIndex(
        off.astype(np.uint64), ln, st, tuple(problems), int(off[-1] + ln[-1] + OVERHEAD) if len(ln) else 0
    )


def test_indexes_come_back_as_packed_gaps_empty_files_and_wide_lengths_too():
    bad = Problem(ProblemKind.BAD_DATA_CRC, 40, 12, 1, "data CRC mismatch")
    files = [
        _file(0, [10, 20, 30]),
        FileIndex(np.zeros(0, np.uint64), np.zeros(0, np.uint64), np.zeros(0, np.uint8), (), 0),
        _file(7, [5, 6, 7, 8], gap_at=2, problems=[bad]),  # a head skipped, then a gap
        _file(0, [1 << 33, 3]),  # a length past 32 bits
    ]
    text, arrays = pack(files)
    assert json_extract(text, "$.problems.2[0].kind") == "bad_data_crc"  # standard JSON
    back, at, settled = unpack(text, arrays)
    assert at > 0 and len(back) == len(files) and not settled
    assert unpack(*pack(files, settled=True))[2]  # framed as `index_and_verify` frames it: said
    for a, b in zip(files, back, strict=True):
        for name in ("offsets", "lengths", "status"):
            assert np.array_equal(getattr(a, name), getattr(b, name)), name
            assert getattr(b, name).dtype == getattr(a, name).dtype
        assert a.problems == b.problems and a.scanned == b.scanned


def test_a_row_that_does_not_hold_what_it_says_is_refused():
    import pytest

    text, arrays = pack([_file(0, [10, 20])])
    with pytest.raises(ValueError):
        unpack(text, arrays[:-3])


def test_an_index_adopts_a_whole_files_arrays_without_a_copy_and_grows_a_copy_later():
    from tfrview.core.tfrecord.index import IndexChunk, RecordIndex

    offsets = np.array([0, 20, 40], np.uint64)
    lengths = np.array([4, 4, 4], np.uint64)
    status = np.zeros(3, np.uint8)
    idx = RecordIndex()
    idx.adopt(IndexChunk(0, offsets, lengths, status, [], 60, 60, True, 60))
    assert idx.count == 3 and idx.done and np.shares_memory(idx.status, status)
    idx.status[1] |= 1  # a verify pass writes the index's own array
    assert status[1] == 1
    idx.apply(IndexChunk(3, offsets[:1] + np.uint64(60), lengths[:1], status[:1], [], 80, 80, True, 80))
    assert (
        idx.count == 4 and list(idx.offsets) == [0, 20, 40, 60] and not np.shares_memory(idx.offsets, offsets)
    )
    other = RecordIndex()  # arrays of other types are copied as `apply` copies them
    other.adopt(IndexChunk(0, offsets.astype(np.int64), lengths, status, [], 60, 60, True, 60))
    assert other.count == 3 and other.offsets.dtype == np.uint64
