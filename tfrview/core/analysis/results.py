"""What one file's pass takes and gives: the task (`ShardTask`), its result (`ShardResult`, with
`DeepResult` when every record was decoded), and the identity that says a stored result still
belongs to the file. Plain data: the pass (shard.py), the store (cache.py), the pool, the cluster
and the merge all read it, and it imports none of them."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tfrview.core.problems import Problem
from tfrview.core.tfrecord.framing import OVERHEAD, crc32c_module
from tfrview.core.tfrecord.index import CRC_CUT
from tfrview.core.tfrecord.status import (
    bytes_all,
    damaged_of_bytes,
    intact_of_bytes,
    status_bytes,
)

if TYPE_CHECKING:
    from tfrview.core.tfds.features import Features

Identity = tuple  # st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns, fingerprint of its ends


@dataclass(frozen=True)
class ShardTask:
    path: str
    file_no: int
    deep: bool = False  # decode every intact record: QA checks, statistics, fact table
    label_map: dict | None = None  # LabelMap.to_json()
    box_specs: tuple[
        str, ...
    ] = ()  # BoxSpec.to_json() of the box specs the person chose (reading.chosen_spec)
    read_cache: bool = True  # an unchanged file's stored result will do (`verify` always reads)
    write_cache: bool = True
    notices: bool = False  # say on stderr when a compressed stream inflates like a bomb
    part: int = 0  # a big file's deep pass is split by record ranges: this task does part `part`
    parts: int = 1  # of `parts` (each frames and verifies the whole file; part 0 reports that)
    listed: tuple[int, str] | None = None  # a remote object's (size, version) as listed (remote.note_listed)
    # what the features.json beside the file declares (a TFDS dataset): read as data, pickled with the task
    tfds: Features | None = field(default=None, compare=False, repr=False)

    @property
    def tfds_stamp(self) -> str:
        """The features' digest, in every key of a stored result (a changed features.json or
        labels file reads the file again)."""
        return self.tfds.stamp if self.tfds is not None else ""


@dataclass
class DeepResult:
    """What only decoding every intact record tells (mergeable across files)."""

    schema: object  # checks.Schema
    summary: object  # datasummary.DatasetSummary
    _facts: object  # pyarrow.Table, one row per framed record; or a function that reads it (`facts`)
    signatures: list  # distinct checks.Signature of this file
    # int32 per record of the part (lo..hi): index into `signatures`, -1 when not judged
    signature_of: np.ndarray
    digests: list[tuple[int, str, bytes]]  # (record, key, image hash), in record order
    class_zero: list[tuple[int, str]]  # (record, class-id key) of records whose class ids hold 0
    # the class ids the file uses (CLASS_IDS_TRACKED at most)
    class_ids: set[int] = field(default_factory=set)
    image_keys: object = None  # checks.ImageKeys: keys that hold images by the data, not by name
    parts: list | None = None  # a joined file's parts' results, whose tables are read one at a time

    @property
    def facts(self):
        """The fact table; a stored result reads it from its Parquet file only when asked (a look
        at a split needs its summaries, not its facts)."""
        if callable(self._facts):
            self._facts = self._facts()
        return self._facts

    @property
    def stored_key(self):
        """The store's key of a fact table not read yet (`cache.StoredTable`), else None: the
        dataset step fetches many files' tables in one query (`factcolumns._tables`)."""
        return getattr(self._facts, "key", None) if callable(self._facts) else None

    def read_facts(self, pick=None):
        """The fact table, not kept: a stored one is read again when asked (the dataset step reads
        every file's, and 2,048 shards' tables held at once cost what the pass bounds). `pick`
        (a pyarrow schema -> column names): only those columns, the others of a stored table never
        decompressed (a 250,000-record part: 7 ms and 7 MB for four columns, 140 ms and 43 MB whole)."""
        if callable(self._facts):
            return self._facts(pick) if pick is not None else self._facts()
        return picked(self._facts, pick)


def picked(table, pick):
    """The columns of a table `pick` names (a pyarrow schema -> names; those it lacks skipped), in
    the table's order; the whole table without `pick`."""
    if pick is None or table is None:
        return table
    wanted = set(pick(table.schema))
    return table.select([i for i, n in enumerate(table.schema.names) if n in wanted])


@dataclass
class ShardResult:
    file_no: int
    path: str
    identity: Identity | None = None
    compression: str = "none"
    file_size: int = 0
    scanned: int = 0  # record-stream bytes framed (inflated bytes of a compressed file)
    offsets: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64))
    lengths: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint64))
    status: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint8))
    problems: list[Problem] = field(default_factory=list)  # framing, CRCs, and the record checks
    error: str | None = None  # the file could not be read
    deep: DeepResult | None = None
    seconds: float = 0.0
    cause: str = ""  # why the whole file broke, where its bytes show it (tfrecord.forensics.file_cause)
    analysed_at: float = 0.0  # when the bytes were read (a cached result keeps its time)
    from_cache: bool = False
    part: int = 0
    parts: int = 1
    lo: int = 0  # the records this part decoded: lo <= n < hi
    hi: int = 0

    @property
    def records(self) -> int:
        return intact_of_bytes(self.status_bytes())  # the one rule (intact_mask): its data passed its CRC

    @property
    def damaged(self) -> int:
        return damaged_of_bytes(self.status_bytes())

    @property
    def crc_cut(self) -> int:
        """Records whose file ends inside their data CRC (index.CRC_CUT)."""
        return int(np.dot(self.status_bytes(), _CUT_BYTES))

    def status_bytes(self) -> np.ndarray:
        """`status.status_bytes` of this file, remembered while `status` is the same array (never
        changed in place once a result is made): the merge and `verify`'s report ask each file's
        records, damaged records, cut CRCs and words, a pass over its status each."""
        memo = self.__dict__.get("_bins")
        if memo is None or memo[0] is not self.status:
            memo = self.__dict__["_bins"] = (self.status, status_bytes(self.status))
        return memo[1]

    def known_status_bytes(self, bins: np.ndarray) -> None:
        """`status_bytes` counted already, for `status` as it is now: a clean file's (every record
        VERIFIED) or a batch's counted at once (`_unpacked`), not a bincount a file (verify of
        2,048 shards asked each file's in the merge, the report and the store)."""
        self.__dict__["_bins"] = (self.status, bins)


class ResultList(list):
    """A batch's results (`shard.analyze_batch`), a list of ShardResult like any other, that pickles
    (a pool worker's answer) with the index arrays of all its files in a few arrays: pickling and
    unpickling a 1,000-record shard's three arrays cost ~50 us (~17 KB a file), the batch's arrays
    at once ~2 us a file. Lengths go as their excess over the shortest in the narrowest type,
    offsets not at all when each file's records follow one another (every clean file)."""

    def __reduce__(self):
        return (_unpacked, _packed(self))


def _packed(results: list[ShardResult]) -> tuple:
    """(each result's fields without its arrays, records a file, lengths' base, narrow lengths,
    first offset a file or every offset, every status or the one status byte they all have)."""
    counts = np.array([len(r.offsets) for r in results], np.int64)
    shells = []
    for r in results:
        d = dict(r.__dict__)
        d["offsets"] = d["lengths"] = d["status"] = None
        d.pop("_bins", None)  # (ShardResult.status_bytes: remembered of the array not sent)
        shells.append(d)
    if not counts.sum():
        return shells, counts, 0, None, None, None, None
    offsets = np.concatenate([np.asarray(r.offsets, np.uint64) for r in results])
    lengths = np.concatenate([np.asarray(r.lengths, np.uint64) for r in results])
    status = np.concatenate([np.asarray(r.status, np.uint8) for r in results])
    if int(status.min()) == int(status.max()):  # one status for every record (clean files): its byte
        status = int(status[0])
    base = int(lengths.min())
    span = int(lengths.max()) - base
    dtype = next(
        (t for t in (np.uint8, np.uint16, np.uint32) if span < 1 << (8 * np.dtype(t).itemsize)), np.uint64
    )
    firsts = offsets[(np.cumsum(counts) - counts)[counts > 0]]  # each file's first record's
    follow = np.array_equal(_following(lengths, counts, firsts), offsets)
    return (
        shells,
        counts,
        base,
        (lengths - np.uint64(base)).astype(dtype),
        firsts if follow else None,
        None if follow else offsets,
        status,
    )


def _following(lengths: np.ndarray, counts: np.ndarray, firsts: np.ndarray) -> np.ndarray:
    """Every record's offset when each file's records follow one another from its first offset."""
    ends = np.cumsum(lengths + np.uint64(OVERHEAD))
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1]
    at = (np.cumsum(counts) - counts)[counts > 0]  # each file's first record
    return starts + np.repeat(firsts - starts[at], counts[counts > 0])


def _unpacked(shells, counts, base, narrow, firsts, offsets, status) -> ResultList:
    """The results `_packed` sent, each file's status bytes counted for all at once (`bins`)."""
    out = ResultList()
    bins = None
    if narrow is not None:
        lengths = narrow.astype(np.uint64) + np.uint64(base)
        if offsets is None:
            offsets = _following(lengths, counts, firsts)
        if isinstance(status, int):  # one status byte for every record
            bins = bytes_all(status, counts)
            status = np.full(len(lengths), status, np.uint8)
        else:
            at_file = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
            bins = np.bincount(at_file * 256 + status, minlength=256 * len(counts)).reshape(-1, 256)
    at = 0
    for d, n in zip(shells, counts.tolist(), strict=True):
        r = ShardResult.__new__(ShardResult)
        r.__dict__.update(d)
        if n:
            r.offsets, r.lengths, r.status = offsets[at : at + n], lengths[at : at + n], status[at : at + n]
            r.known_status_bytes(bins[len(out)])
        else:
            r.offsets, r.lengths, r.status = (
                np.empty(0, np.uint64),
                np.empty(0, np.uint64),
                np.empty(0, np.uint8),
            )
        at += n
        out.append(r)
    return out


_CUT_BYTES = ((np.arange(256) & CRC_CUT) != 0).astype(np.int64)  # the status bytes with CRC_CUT set
IDENTITY_ENDS = 64 << 10


def identity_of(path: str) -> Identity | None:
    """What says a file is unchanged: its inode, size and times, and a hash of its first and last
    64 KB (file times tick coarsely: a file rewritten within one tick keeps them). A file whose
    middle changes in place with its times set back is beyond this; `verify` always reads."""

    from tfrview.core.tfrecord.remote import NetworkError, info_of, is_url

    if is_url(path):  # an object in storage: its URL, size and ETag (or generation, or time)
        try:
            info = info_of(path)
        except NetworkError:
            return None
        return ("url", info.url, info.size, info.version) if info.version else None
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return None  # a named pipe or a device is never opened here (it could block)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # read-only, never locked
        try:  # a small shard whole, in one read
            ends = (
                os.pread(fd, 2 * IDENTITY_ENDS, 0)
                if st.st_size <= 2 * IDENTITY_ENDS
                else (
                    os.pread(fd, IDENTITY_ENDS, 0) + os.pread(fd, IDENTITY_ENDS, st.st_size - IDENTITY_ENDS)
                )
            )
        finally:
            os.close(fd)
    except OSError:
        return None
    return identity_from(st, ends)


def identity_from(st: os.stat_result, ends: bytes) -> Identity:
    """A file's identity from its stat and its ends (both ends' IDENTITY_ENDS bytes, or the whole file
    when it is at most twice that). CRC-32C, not a cryptographic hash: it tells a rewrite within
    one tick of the times as well, and costs ~20 us where blake2b cost ~0.5 ms a file (a second
    over 2,048 small shards)."""
    return identity_from_crc(st, crc32c_module().crc32c(ends), len(ends))


def identity_from_crc(st: os.stat_result, crc: int, n: int) -> Identity:
    """`identity_from` with the CRC-32C of the `n` bytes of the ends taken already (a small shard
    framed in a buffer of many: its bytes checked where they lie, not copied out)."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, f"{crc:08x}{n:x}")
