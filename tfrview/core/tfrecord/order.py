"""The record table's sort orders, as array operations over the index arrays: a window sorts 2
million rows by a column without asking a model for any cell (an item view that walks its model
on the UI thread stalls it for seconds)."""

from __future__ import annotations

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.tfrecord.index import BAD_DATA_CRC, BAD_LENGTH_CRC, VERIFIED, RecordIndex

SORTABLE = ("#", "file", "split", "offset", "size", "status")  # known for every framed record
LAZY = ("kind", "summary")  # read from each payload as its row shows: never sorted


def status_rank(status: np.ndarray) -> np.ndarray:
    """0 ok, 1 unverified, 2 bad data CRC, 3 bad header, 4 both: damage sorts after good records."""
    s = np.asarray(status, dtype=np.uint8)
    bad_data = (s & BAD_DATA_CRC) != 0
    bad_hdr = (s & BAD_LENGTH_CRC) != 0
    rank = np.where((s & VERIFIED) != 0, 0, 1).astype(np.int8)
    rank[bad_data] = 2
    rank[bad_hdr] = 3
    rank[bad_data & bad_hdr] = 4
    return rank


class NotSortable(TfrviewError, ValueError):
    """A column the table cannot sort by (a person's choice; a ValueError too, as it was)."""


def column_key(
    indexes: list[RecordIndex], numbers: np.ndarray, column: str, splits: list[str] | None = None
) -> np.ndarray:
    """The sort key of records `numbers` (global, over the files in order, rising: the table's rows
    before sorting) for a sortable column; `splits`: each file's split, for the split column (by
    name; records in no split last)."""
    numbers = np.asarray(numbers, dtype=np.int64)
    if column == "#":
        return numbers
    counts = np.array([ix.count for ix in indexes], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    if column in ("file", "split"):
        file_of = np.searchsorted(starts, numbers, side="right") - 1
        if column == "file":
            return file_of
        names = sorted(set(splits or ()) - {""})
        code = {name: i for i, name in enumerate(names)}
        per_file = np.array([code.get(s, len(names)) for s in splits or ()] or [0], dtype=np.int64)
        return per_file[np.minimum(file_of, len(per_file) - 1)]
    name = {"offset": "offsets", "size": "lengths", "status": "status"}.get(column)
    if name is None:
        raise NotSortable(f"column {column!r} is not sortable (its values are read lazily)")
    parts = [getattr(ix, name)[: ix.count] for ix, n in zip(indexes, counts, strict=True) if n]
    if not parts:
        return np.zeros(len(numbers), dtype=np.int64)
    whole = parts[0] if len(parts) == 1 else np.concatenate(parts)
    n = len(numbers)
    if n and int(numbers[-1]) - int(numbers[0]) == n - 1:  # rising and unique: a run of records
        key = whole[int(numbers[0]) : int(numbers[0]) + n]
    else:
        key = whole[numbers]
    return status_rank(key) if column == "status" else key.astype(np.int64)


def sort_order(key: np.ndarray, descending: bool = False) -> np.ndarray:
    """Positions of `key` in sorted order; ties keep their record order, both ways. The key and the
    position are packed in one int64 and sorted as values (numpy's SIMD sort: 2 M in tens of ms,
    where a stable argsort takes hundreds); a key too wide to pack falls back to that argsort."""
    n = len(key)
    if not n:
        return np.empty(0, dtype=np.int64)
    k = np.asarray(key).astype(np.int64, copy=False)
    steps = np.diff(k)
    if not descending and np.all(steps >= 0):  # already in order (offsets in one file, record numbers)
        return np.arange(n, dtype=np.int64)
    if descending and np.all(steps > 0):  # strictly rising: no ties to keep in record order
        return np.arange(n - 1, -1, -1, dtype=np.int64)
    lo, hi = int(k.min()), int(k.max())
    if hi - lo < (2**62) // n:
        packed = (hi - k) if descending else (k - lo)
        packed *= n
        packed += np.arange(n, dtype=np.int64)
        packed.sort()
        packed %= n
        return packed
    if not descending:
        return np.argsort(k, kind="stable")
    rev = np.argsort(k[::-1], kind="stable")[::-1]  # stable descending: reversed keys, reversed
    return (n - 1 - rev).astype(np.int64)


def score_key(values: np.ndarray, numbers: np.ndarray, descending: bool = False) -> np.ndarray:
    """The sort key of records `numbers` by a score each record has (`values`, a float a record of
    the dataset, NaN for none: an image quality score from the fact table), for `sort_order`: the
    score's float32 bits as an order-keeping integer (no sort of its own, and narrow enough for
    `sort_order` to pack: 2 M rows in one int64 sort, where ranking them first cost seconds; scores
    closer than float32 tells apart tie, kept in record order), records with no score last both
    ways (a record with no image is no darkest or sharpest one)."""
    numbers = np.asarray(numbers, dtype=np.int64)
    v = np.full(len(numbers), np.nan, dtype=np.float32)
    inside = numbers < len(values)  # records framed after the scores were read have none
    v[inside] = np.asarray(values)[numbers[inside]]
    bits = v.view(np.int32).astype(np.int64)
    key = np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)  # negative floats: larger magnitude, smaller
    missing = np.isnan(v)
    key[missing] = -(1 << 31) - 1 if descending else (1 << 31)
    return key
