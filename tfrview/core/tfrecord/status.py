"""A record's CRC status as one word, the same in every output: `verify --json`, `dump --json`,
the JSON-lines export, the Parquet export's `crc` column and the window's record table (the README's
table of record status words is the one description of them)."""

from __future__ import annotations

import enum

import numpy as np

from tfrview.core.tfrecord.index import BAD_DATA_CRC, DAMAGED, VERIFIED


class RecordStatus(enum.StrEnum):
    """What the CRCs say of one framed record; the value is the wire word."""

    OK = "ok"  # both CRCs checked and good
    DAMAGED = "damaged"  # its data CRC fails (its header may be damaged too, or it was cut short)
    HEADER_DAMAGED = "header_damaged"  # its data passed its CRC; its header's length CRC did not
    UNVERIFIED = "unverified"  # no data CRC checked it: not yet, or the file ends inside that CRC


WORDS = tuple(RecordStatus)  # the order of `codes`, and of the Parquet column's dictionary


def record_status(status: int) -> RecordStatus:
    """The word for one record's index status bits (`tfrecord.index`)."""
    if status & BAD_DATA_CRC:
        return RecordStatus.DAMAGED
    if status & DAMAGED:
        return RecordStatus.HEADER_DAMAGED
    return RecordStatus.OK if status & VERIFIED else RecordStatus.UNVERIFIED


def status_codes(status: np.ndarray) -> np.ndarray:
    """`record_status` of every record at once, as indexes into WORDS (int8): one table lookup per
    record (the status bits fit a byte), for the fact table's millions of rows."""
    return _CODES[_bytes(status)]


def status_counts(status: np.ndarray) -> dict[str, int]:
    """How many records have each word (every word, zeros included: one shape for readers)."""
    return counts_of_bytes(status_bytes(status))


def status_bytes(status: np.ndarray) -> np.ndarray:
    """How many records have each of the 256 status bytes: every count below from one pass (a file's
    records, damaged records and words, asked of each of 2,048 shards, were a pass each)."""
    return np.bincount(_bytes(status), minlength=256)


def bytes_all(b: int, n: int | np.ndarray) -> np.ndarray:
    """`status_bytes` of `n` records whose status bytes are all `b`, without a pass over them (a
    file read whole, every record VERIFIED); `n` an array: one row of 256 counts for each of its
    counts (a batch of such files)."""
    n = np.asarray(n, np.int64)
    bins = np.zeros((*n.shape, 256), np.int64)
    bins[..., b] = n
    return bins


def counts_of_bytes(bins: np.ndarray) -> dict[str, int]:
    """`status_counts` from `status_bytes`."""
    return dict(zip(_WORD_TEXTS, (bins @ _WORD_OF_BYTE).tolist(), strict=True))


def intact_of_bytes(bins: np.ndarray) -> int:
    """How many records are intact (`intact_mask`), from `status_bytes`."""
    return int(np.dot(bins, _INTACT_INT))


def damaged_of_bytes(bins: np.ndarray) -> int:
    """How many records are damaged (`damaged_mask`), from `status_bytes`."""
    return int(np.dot(bins, _DAMAGED_INT))


_CODES = np.array([WORDS.index(record_status(b)) for b in range(256)], dtype=np.int8)


INTACT = frozenset({RecordStatus.OK, RecordStatus.HEADER_DAMAGED})  # the data passed its CRC


def intact_mask(status: np.ndarray) -> np.ndarray:
    """Which records are intact: their data passed its CRC (`ok` and `header_damaged`, whose header
    alone was damaged). The one rule `verify`'s count, `salvage`, the deep pass and Parquet share.
    One lookup a record in a table of the 256 status bytes (verify of 2,048 shards asks it of every
    shard's result more than once)."""
    return _INTACT[_bytes(status)]


def intact_numbers(status: np.ndarray) -> np.ndarray:
    """The numbers of the intact records (`intact_mask`), in order."""
    return np.flatnonzero(intact_mask(status))


def damaged_mask(status: np.ndarray) -> np.ndarray:
    """Which records are damaged: their data CRC fails (the word `damaged`; never intact)."""
    return _DAMAGED[_bytes(status)]


def _bytes(status: np.ndarray) -> np.ndarray:
    """Status bits as uint8 (the index keeps uint8; anything wider is masked to its bits)."""
    status = np.asarray(status)
    return status if status.dtype == np.uint8 else (status & 0xFF).astype(np.uint8)


_INTACT = np.isin(_CODES, [WORDS.index(w) for w in INTACT])
_DAMAGED = np.equal(_CODES, WORDS.index(RecordStatus.DAMAGED))
_INTACT_INT, _DAMAGED_INT = _INTACT.astype(np.int64), _DAMAGED.astype(np.int64)  # (a dot product: ~1 us)
_WORD_OF_BYTE = (_CODES[:, None] == np.arange(len(WORDS))).astype(np.int64)  # a status byte's word, one-hot
_WORD_TEXTS = tuple(str(w) for w in WORDS)
