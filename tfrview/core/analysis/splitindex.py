"""Every file's index of a split as one stored answer (`cache.store_answer`): the window reopening
10,000 unchanged shards reads one row and cuts it into the files' indexes with array operations,
not 10,000 stored results looked up, checked and unpacked one by one (~3 s of its scan thread).

The row's text is JSON: for each file its record count, bytes framed, and its framing problems; its
arrays are every record's length and status one file after another, each file's first offset, and
the offsets of the files whose records do not follow one another (damage between them)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from tfrview.core import jsontext
from tfrview.core.problems import Problem
from tfrview.core.tfrecord.framing import OVERHEAD


@dataclass(frozen=True, slots=True)
class FileIndex:
    """One file's index as the split's answer holds it."""

    offsets: np.ndarray  # uint64
    lengths: np.ndarray  # uint64
    status: np.ndarray  # uint8
    problems: tuple[Problem, ...]
    scanned: int


def pack(files: list[FileIndex], settled: bool = False) -> tuple[bytes, bytes]:
    """(text, arrays) of the files' indexes, for `cache.store_answer`; `settled`: every damaged
    file is framed as `index_and_verify` frames it (the window's `_reframe` ran: a reopen need not
    ask again, which walks a damaged file's bytes)."""
    counts = np.array([len(f.offsets) for f in files], np.int64)
    lengths = np.concatenate([f.lengths for f in files]) if files else np.zeros(0, np.uint64)
    status = np.concatenate([f.status for f in files]) if files else np.zeros(0, np.uint8)
    firsts = np.array([int(f.offsets[0]) if len(f.offsets) else 0 for f in files], np.uint64)
    gapped = [k for k, f in enumerate(files) if len(f.offsets) and not _follows(f.offsets, f.lengths)]
    offsets = np.concatenate([files[k].offsets for k in gapped]) if gapped else np.zeros(0, np.uint64)
    wide = bool(len(lengths)) and int(lengths.max()) >= 1 << 32
    lengths = lengths.astype(np.uint64 if wide else np.uint32)
    text = {
        "at": time.time(),
        "wide": wide,
        "counts": counts.tolist(),
        "scanned": [int(f.scanned) for f in files],
        "gapped": gapped,
        "settled": settled,
        "problems": {str(k): [p.to_json() for p in f.problems] for k, f in enumerate(files) if f.problems},
    }
    arrays = b"".join(
        a.astype(a.dtype.newbyteorder("<")).tobytes() for a in (lengths, status, firsts, offsets)
    )
    return jsontext.dumps(text).encode(), arrays


@dataclass(frozen=True, slots=True)
class SplitIndex:
    """Every file's index of a split as one set of arrays (`unpack_split`): file k's records are
    `starts[k]:starts[k + 1]` of `offsets`, `lengths`, `status`, so a reader takes each file's
    arrays as views without a Python object a file in between (a reopen of 10,000 shards)."""

    offsets: np.ndarray  # uint64, every record of every file, file after file
    lengths: np.ndarray  # uint64
    status: np.ndarray  # uint8
    starts: np.ndarray  # int64, files + 1: where each file's records begin in those arrays
    scanned: np.ndarray  # int64: bytes framed in each file
    problems: dict[int, tuple[Problem, ...]]  # each file's framing problems, only files with some
    at: float  # when it was stored
    settled: bool  # see `pack`

    def __len__(self) -> int:
        return len(self.scanned)

    def file(self, k: int) -> FileIndex:
        """File k's index as views of the whole arrays (`unpack`'s, for tests: the window adopts
        the arrays a file at a time itself, `RecordIndex.adopt_whole`)."""
        a, b = int(self.starts[k]), int(self.starts[k + 1])
        return FileIndex(
            self.offsets[a:b],
            self.lengths[a:b],
            self.status[a:b],
            self.problems.get(k, ()),
            int(self.scanned[k]),
        )


def unpack(text: bytes, arrays: bytes) -> tuple[list[FileIndex], float, bool]:
    """The files' indexes `pack` stored, when they were stored, and whether they were settled
    (`pack`); ValueError if the row does not hold what its text says. (Only tests ask it now, to
    check each file's index; the window takes the whole arrays: `unpack_split`.)"""
    split = unpack_split(text, arrays)
    return [split.file(k) for k in range(len(split))], split.at, split.settled


def unpack_split(text: bytes, arrays: bytes) -> SplitIndex:
    """`unpack` as whole arrays (`SplitIndex`); ValueError if the row does not hold what its text
    says."""
    meta = jsontext.loads(text)
    counts = np.array(meta["counts"], np.int64)
    n, files = int(counts.sum()), len(counts)
    gapped = [int(k) for k in meta["gapped"]]
    wide = bool(meta["wide"])
    ltype = np.dtype("<u8" if wide else "<u4")
    sizes = (n * ltype.itemsize, n, 8 * files, 8 * int(counts[gapped].sum()) if gapped else 0)
    if sum(sizes) != len(arrays) or len(meta["scanned"]) != files:
        raise ValueError("a split's stored indexes do not match their description")
    at = 0
    parts = []
    for size, dtype in zip(sizes, (ltype, np.dtype("u1"), np.dtype("<u8"), np.dtype("<u8")), strict=True):
        parts.append(np.frombuffer(arrays, dtype, size // dtype.itemsize, at))
        at += size
    lengths, status, firsts, gapped_offsets = parts
    lengths = lengths.astype(np.uint64)
    status = status.copy()
    # each record's offset: the one before it plus its frame, from the file's first offset (in
    # place, one array: a reopen of 2,000,000 records waits for this)
    offsets = np.empty(n, np.uint64)
    if n:
        offsets[0] = 0
        np.add(lengths[:-1], np.uint64(OVERHEAD), out=offsets[1:])
        np.cumsum(offsets, out=offsets)
    starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    some = counts > 0
    offsets -= np.repeat(offsets[starts[:-1][some]] - firsts[some], counts[some])
    held = 0
    for k in gapped:
        c = int(counts[k])
        offsets[starts[k] : starts[k] + c] = gapped_offsets[held : held + c]
        held += c
    problems = {int(k): tuple(Problem.from_json(p) for p in ps) for k, ps in meta["problems"].items() if ps}
    if any(not 0 <= k < files for k in problems):
        raise ValueError("a split's stored problems name a file it does not hold")
    return SplitIndex(
        offsets,
        lengths,
        status,
        starts,
        np.array(meta["scanned"], np.int64),
        problems,
        float(meta["at"]),
        bool(meta.get("settled", False)),
    )


def _follows(offsets: np.ndarray, lengths: np.ndarray) -> bool:
    """Whether each record starts where the one before it ends."""
    if len(offsets) < 2:
        return True
    return bool(
        np.array_equal(offsets[1:], offsets[:-1] + lengths[:-1].astype(np.uint64) + np.uint64(OVERHEAD))
    )
