"""The fact table: one row per record of a file, with what the filter, the summary and exports
need of it, as Arrow columns (written to Parquet, so DuckDB, polars and pandas read it too).

Columns: `file`, `record` (number within the file), `offset`, `size`, `crc` (ok / bad / unchecked),
`kind` (example, sequence_example, protobuf, bytes; null for damaged records), `image_width`,
`image_height`, `boxes`, then one column per feature key: a plain column when every record holding
the key holds one value, else a list column with a `<key>#len` column of list lengths. Values are
kept within limits.FACT_VALUES / FACT_BYTES / FACT_KEYS; what is left out is null, never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from tfrview.core.limits import FACT_BYTES, FACT_KEYS, FACT_VALUES
from tfrview.core.records.payload import BYTES_LIST, FLOAT_LIST, Payload
from tfrview.core.tfrecord.index import DAMAGED, VERIFIED

META = ("file", "record", "offset", "size", "crc", "kind", "image_width", "image_height", "boxes")
LEN_SUFFIX = "#len"
KEY_META = b"tfrview.keys"  # schema metadata: column name -> feature key, where they differ


def column_of(key: str) -> str:
    """The column that holds a feature key (a key named like a fact column is prefixed)."""
    return f"feature:{key}" if key in META or key.startswith("feature:") else key


def crc_words(status: np.ndarray) -> pa.Array:
    words = np.where(status & DAMAGED, 1, np.where(status & VERIFIED, 0, 2)).astype(np.int8)
    return pa.DictionaryArray.from_arrays(pa.array(words), pa.array(["ok", "bad", "unchecked"]))


@dataclass
class _KeyValues:
    type: str
    rows: list[int] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    values: list = field(default_factory=list)  # one piece per row: numpy array, or list of bytes
    mixed: bool = False  # some records hold it as another type (those rows keep only their count)


class FactsBuilder:
    """Accumulates one file's facts, record by record, in the pass that decodes each record once."""

    def __init__(self, first: int = 0) -> None:
        self.first = first  # the file's record number of row 0 (a part of a big file)
        self._kind_rows: list[int] = []
        self._kinds: list[str] = []
        self._image: list[tuple[int, int, int, int]] = []  # (row, width, height, boxes)
        self._keys: dict[str, _KeyValues] = {}
        self.dropped_keys = 0

    def add(self, record: int, p: Payload, image_size: tuple[int, int] | None, boxes: int) -> None:
        row = record - self.first
        self._kind_rows.append(row)
        self._kinds.append(p.kind)
        w, h = image_size or (-1, -1)
        self._image.append((row, w, h, boxes))
        for key, f in p.features.items():
            acc = self._keys.get(key)
            if acc is None:
                if len(self._keys) >= FACT_KEYS:
                    self.dropped_keys += 1
                    continue
                acc = self._keys[key] = _KeyValues(f.type)
            acc.rows.append(row)
            acc.counts.append(f.count)
            if f.type != acc.type:
                acc.mixed = True
                acc.values.append(None)
            else:
                acc.values.append(f.values[:FACT_VALUES])

    def table(self, file_name: str, offsets: np.ndarray, lengths: np.ndarray, status: np.ndarray) -> pa.Table:
        n = len(offsets)
        cols: dict[str, pa.Array] = {
            "file": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([file_name])),
            "record": pa.array(np.arange(self.first, self.first + n, dtype=np.int64)),
            "offset": pa.array(np.asarray(offsets, dtype=np.uint64)),
            "size": pa.array(np.asarray(lengths, dtype=np.uint64)),
            "crc": crc_words(np.asarray(status)),
        }
        kinds = np.full(n, -1, dtype=np.int8)
        names = sorted(set(self._kinds))
        code = {k: i for i, k in enumerate(names)}
        if self._kind_rows:
            kinds[np.array(self._kind_rows)] = [code[k] for k in self._kinds]
        cols["kind"] = pa.DictionaryArray.from_arrays(pa.array(kinds, mask=kinds < 0), pa.array(names, pa.string()))
        img = np.array(self._image, dtype=np.int64).reshape(-1, 4)
        for j, name in enumerate(("image_width", "image_height", "boxes"), start=1):
            full = np.full(n, -1, dtype=np.int64)
            full[img[:, 0]] = img[:, j]
            cols[name] = pa.array(full, mask=full < 0)
        renamed = {}
        for key, acc in sorted(self._keys.items()):
            col = column_of(key)
            if col != key:
                renamed[col] = key
            cols.update(_key_columns(col, acc, n))
        meta = {KEY_META: repr(renamed).encode()} if renamed else None
        return pa.table(cols, metadata=meta)


def _key_columns(col: str, acc: _KeyValues, n: int) -> dict[str, pa.Array]:
    rows = np.asarray(acc.rows, dtype=np.int64)
    counts = np.asarray(acc.counts, dtype=np.int64)
    pieces = acc.values
    scalar = bool(len(counts)) and bool((counts == 1).all()) and not acc.mixed
    values = _flat(acc.type, [p for p in pieces if p is not None])
    if scalar:
        idx = np.full(n, -1, dtype=np.int64)
        idx[rows] = np.arange(len(rows))
        return {col: values.take(pa.array(idx, mask=idx < 0))}
    kept = np.array([0 if p is None else len(p) for p in pieces], dtype=np.int64)
    lengths = np.zeros(n, dtype=np.int64)
    lengths[rows] = kept
    present = np.zeros(n, dtype=bool)
    present[rows] = True
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    lists = pa.ListArray.from_arrays(pa.array(offsets), values, mask=pa.array(~present))
    total = np.zeros(n, dtype=np.int64)
    total[rows] = counts
    return {col: lists, col + LEN_SUFFIX: pa.array(total, mask=~present)}


def _flat(type_: str, pieces: list) -> pa.Array:
    if type_ == BYTES_LIST:
        flat = [b if len(b) <= FACT_BYTES else None for piece in pieces for b in piece]
        try:
            return pa.array([None if b is None else b.decode("utf-8") for b in flat], pa.string())
        except UnicodeDecodeError:
            return pa.array(flat, pa.binary())
    dtype = np.float32 if type_ == FLOAT_LIST else np.int64
    if not pieces:
        return pa.array(np.empty(0, dtype=dtype))
    return pa.array(np.concatenate([np.asarray(p, dtype=dtype) for p in pieces]))


def concat(tables: list[pa.Table]) -> pa.Table:
    """Files' fact tables as one: a key held as one value in one file and as lists in another
    becomes a list column everywhere; int and float become float; text and bytes become bytes."""
    if len(tables) == 1:
        return tables[0]
    kinds: dict[str, list[pa.DataType]] = {}
    for t in tables:
        for f in t.schema:
            kinds.setdefault(f.name, []).append(f.type)
    target: dict[str, pa.DataType] = {}
    for name, types in kinds.items():
        if len({str(t) for t in types}) > 1:
            target[name] = _common(types)
    if not target:
        return _in_order(pa.concat_tables(tables, promote_options="permissive"))
    fixed = []
    for t in tables:
        for name, want in target.items():
            if name not in t.column_names or t.schema.field(name).type == want:
                continue
            col = t.column(name).combine_chunks()
            if pa.types.is_list(want) and not pa.types.is_list(col.type):
                valid = col.is_valid().to_numpy(zero_copy_only=False)
                offsets = np.concatenate([[0], np.cumsum(valid)]).astype(np.int32)
                col = pa.ListArray.from_arrays(pa.array(offsets), col.drop_null(), mask=pa.array(~valid))
                if name + LEN_SUFFIX not in t.column_names:
                    t = t.append_column(name + LEN_SUFFIX, pa.array(valid.astype(np.int64), mask=~valid))
            t = t.set_column(t.column_names.index(name), name, col.cast(want))
        fixed.append(t)
    return _in_order(pa.concat_tables(fixed, promote_options="permissive"))


def _in_order(t: pa.Table) -> pa.Table:
    """The facts first, then features by key (each list's #len after it), whatever file came first."""
    names = t.column_names
    first = [c for c in ("n", *META) if c in names]
    rest = sorted((c for c in names if c not in first), key=lambda c: (c.removesuffix(LEN_SUFFIX), c.endswith(LEN_SUFFIX)))
    return t.select(first + rest)


def _common(types: list[pa.DataType]) -> pa.DataType:
    listy = any(pa.types.is_list(t) for t in types)
    values = [t.value_type if pa.types.is_list(t) else t for t in types]
    if len({str(v) for v in values}) == 1 or any(pa.types.is_dictionary(v) for v in values):
        value = values[0]
    elif any(pa.types.is_binary(v) for v in values):
        value = pa.binary()
    elif any(pa.types.is_string(v) for v in values) and all(pa.types.is_string(v) or pa.types.is_null(v) for v in values):
        value = pa.string()
    elif any(pa.types.is_floating(v) for v in values) or len({str(v) for v in values}) > 1:
        value = pa.float64()
    else:
        value = values[0]
    return pa.list_(value) if listy else value
