"""The fact table: one row per record of a file, with what the filter, the summary and exports
need of it, as Arrow columns (written to Parquet, so DuckDB, polars and pandas read it too).

Columns: `file`, `record` (number within the file), `offset`, `size`, `crc` (a `tfrecord.status` word),
`kind` (example, sequence_example, protobuf, bytes; null for damaged records), `image_width`,
`image_height`, `boxes`, the first decodable image's signals (`records.imagesignals.COLUMNS`:
`pixel_hash`, `phash`, `dhash`, `colour_top`, `colour_bottom` int64; `brightness`, `contrast`, `blur`, `entropy`, `blank`, `aspect`
float32; `pixels` int64; `gray_as_color` bool; null for a record with no image that decodes, and
for every row of the plain-Example column path, which holds no images), then one column per feature key: a plain column when every record holding
the key holds one value, else a list column with a `<column>#len` column of list lengths. Values are
kept within limits.FACT_VALUES / FACT_BYTES / FACT_KEYS (a file and a dataset); what is left out is
null, never guessed.

A feature's column is named by its key (`column_of`), except a key that is a fact column's name
(or `n`, `split`, `problems`, `image`, which merge and the Parquet export add, or a column the dataset
step adds, `stepcolumns.NAMES`: `dup_group`, `leak`, `tp`, ...), starts with `feature:`, or
holds a `#`: its column is `feature:` and the key with each `#` doubled (`a#len` -> `feature:a##len`).
So a derived `#len` column, which ends in an odd run of `#` before `len`, never shares a name with a
feature's column, whatever the keys; `key_of` reads a column's key back.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfrview.core.analysis.stepcolumns import NAMES as STEP_COLUMNS
from tfrview.core.limits import FACT_BYTES, FACT_KEYS, FACT_VALUES
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST
from tfrview.core.records.imagesignals import COLUMNS as SIGNALS
from tfrview.core.records.imagesignals import ImageSignals
from tfrview.core.records.payload import Payload
from tfrview.core.tfrecord.status import WORDS, status_codes

log = logging.getLogger(__name__)

META = ("file", "record", "offset", "size", "crc", "kind", "image_width", "image_height", "boxes", *SIGNALS)
# the signal columns' Arrow types (records.imagesignals says what each means)
SIGNAL_TYPES = {
    "pixel_hash": pa.int64(),
    "phash": pa.int64(),
    "dhash": pa.int64(),
    "colour_top": pa.int64(),
    "colour_bottom": pa.int64(),
    "brightness": pa.float32(),
    "contrast": pa.float32(),
    "blur": pa.float32(),
    "entropy": pa.float32(),
    "blank": pa.float32(),
    "aspect": pa.float32(),
    "pixels": pa.int64(),
    "gray_as_color": pa.bool_(),
}
# columns of facts, merge (`n`, `split`, the dataset step's: `stepcolumns.BY_STEP`) and the Parquet
# export
RESERVED = frozenset((*META, "n", "split", "problems", "image", *STEP_COLUMNS))
LEN_SUFFIX = "#len"
PREFIX = "feature:"
KEY_META = b"tfrview.keys"  # schema metadata: column name -> feature key, where they differ
BOX_META = b"tfrview.boxes"  # schema metadata: the box spec most records were read with (JSON)
# schema metadata: the names a TFDS dataset's ClassLabels give the ids a column holds (JSON
# {column: {id: name}}; only the ids present, so 1,000 ImageNet names are not stored with every
# shard's table): what plots, Compare, the dataset step and the Parquet export name classes by
CLASS_META = b"tfrview.class_names"


def column_of(key: str) -> str:
    """The column that holds a feature key (see the module's docstring for the escape)."""
    if key in RESERVED or key.startswith(PREFIX) or "#" in key:
        return PREFIX + key.replace("#", "##")
    return key


def len_column_of(key: str) -> str:
    """The column of a list key's lengths (before limits.FACT_VALUES kept its first values)."""
    return column_of(key) + LEN_SUFFIX


def key_of(column: str) -> tuple[str, bool] | None:
    """The feature key a column holds and whether it is that key's `#len` column (None: a fact)."""
    if column in RESERVED:
        return None
    derived = False
    if column.endswith(LEN_SUFFIX):
        head = column[: -len(LEN_SUFFIX)]
        if (len(head) - len(head.rstrip("#"))) % 2 == 0:  # an escaped key's own '#' come in pairs
            column, derived = head, True
    if column.startswith(PREFIX):
        return column[len(PREFIX) :].replace("##", "#"), derived
    return column, derived


def with_class_names(table: pa.Table, label_maps) -> pa.Table:
    """`table` with CLASS_META naming the ids its ClassLabel columns hold (`label_maps`: key ->
    {id: name}, `tfds.Features.label_maps`); unchanged when no such column holds a named id."""
    named: dict[str, dict[str, str]] = {}
    for key, names in (label_maps or {}).items():
        col = column_of(key)
        if col not in table.column_names or not names:
            continue
        c = table[col]
        values = pc.list_flatten(c) if pa.types.is_list(c.type) else c
        if not pa.types.is_integer(values.type):
            continue
        ids = pc.unique(pc.drop_null(values)).to_pylist()
        got = {str(i): names[i] for i in sorted(ids) if i in names}
        if got:
            named[col] = got
    if not named:
        return table
    return table.replace_schema_metadata({**(table.schema.metadata or {}), CLASS_META: _json_bytes(named)})


def class_names(schema: pa.Schema) -> dict[str, dict[int, str]]:
    """CLASS_META read back: column -> {id: name} ({} when none, or when it cannot be read)."""
    import json

    raw = (schema.metadata or {}).get(CLASS_META)
    if not raw:
        return {}
    try:
        doc = json.loads(raw)
        return {str(c): {int(i): str(n) for i, n in m.items()} for c, m in doc.items()}
    except (ValueError, TypeError, AttributeError):
        log.warning("the fact table's class names cannot be read: ids shown as numbers")
        return {}


def _json_bytes(doc) -> bytes:
    import json

    return json.dumps(doc, ensure_ascii=False, sort_keys=True).encode()


def _joined_class_names(tables: list[pa.Table], out: pa.Table) -> pa.Table:
    """`out` (the tables concatenated) with every table's class names (Arrow keeps the first's)."""
    joined: dict[str, dict[int, str]] = {}
    for t in tables:
        for col, names in class_names(t.schema).items():
            joined.setdefault(col, {}).update(names)
    if not joined:
        return out
    doc = {c: {str(i): n for i, n in sorted(m.items())} for c, m in joined.items()}
    return out.replace_schema_metadata({**(out.schema.metadata or {}), CLASS_META: _json_bytes(doc)})


def crc_words(status: np.ndarray) -> pa.Array:
    """The `crc` column: each record's status word (`tfrecord.status`, as every output says it)."""
    return pa.DictionaryArray.from_arrays(pa.array(status_codes(status)), pa.array([str(w) for w in WORDS]))


@dataclass
class _KeyValues:
    type: str
    rows: list[int] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    values: list = field(default_factory=list)  # one piece per row: numpy array, or list of bytes
    types: list[str] | None = None  # each row's type, once some record holds the key as another type
    # rows added a batch at a time (analysis.plain), in row order with the rows above: each a type,
    # rows, counts, kept values a row and the kept values flat (numpy, or a list of bytes)
    blocks: list[tuple[str, np.ndarray, np.ndarray, np.ndarray, object]] = field(default_factory=list)

    def seal(self) -> None:
        """The rows added one by one so far as blocks (a block a run of one type), so a batch's block
        follows them in row order."""
        if not self.rows:
            return
        types = self.types if self.types is not None else [self.type] * len(self.rows)
        at = 0
        while at < len(types):
            t, end = types[at], at + 1
            while end < len(types) and types[end] == t:
                end += 1
            pieces = self.values[at:end]
            kept = np.array([len(p) for p in pieces], dtype=np.int64)
            if t == BYTES_LIST:
                flat: object = [b for p in pieces for b in p]
            else:
                dtype = np.float32 if t == FLOAT_LIST else np.int64
                flat = (
                    np.concatenate([np.asarray(p, dtype=dtype) for p in pieces])
                    if pieces
                    else np.empty(0, dtype)
                )
            self.blocks.append(
                (
                    t,
                    np.asarray(self.rows[at:end], dtype=np.int64),
                    np.asarray(self.counts[at:end], dtype=np.int64),
                    kept,
                    flat,
                )
            )
            at = end
        self.type = types[-1]
        self.rows, self.counts, self.values, self.types = [], [], [], None


class FactsBuilder:
    """Accumulates one file's facts, record by record, in the pass that decodes each record once."""

    def __init__(self, first: int = 0) -> None:
        self.first = first  # the file's record number of row 0 (a part of a big file)
        self._kind_rows: list[int] = []
        self._kinds: list[str] = []
        self._image: list[tuple[int, int, int, int]] = []  # (row, width, height, boxes)
        self._signal_rows: list[int] = []  # rows whose first image decoded, with its signals
        self._signals: list[tuple] = []
        self._keys: dict[str, _KeyValues] = {}
        self.dropped_keys = 0
        self._specs: Counter = Counter()  # box spec (records/reading.BoxSpec) -> records read with it
        self._plain: list[np.ndarray] = []  # rows of plain Examples added a batch at a time

    def add(
        self,
        record: int,
        p: Payload,
        image_size: tuple[int, int] | None,
        boxes: int,
        spec=None,
        signals: ImageSignals | None = None,
    ) -> None:
        """One record's facts; `spec`: the box spec its reading found (the plots read boxes by it);
        `signals`: its first decodable image's hashes and scores (None: no image decoded)."""
        row = record - self.first
        if signals is not None:
            self._signal_rows.append(row)
            self._signals.append(signals.row())
        if spec is not None:
            self._specs[spec] += 1
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
            if acc.types is None and f.type != acc.type:
                acc.types = [acc.type] * len(acc.rows)
            if acc.types is not None:
                acc.types.append(f.type)
            acc.rows.append(row)
            acc.counts.append(f.count)
            acc.values.append(f.values[:FACT_VALUES])

    def add_block(self, key: str, type_: str, records: np.ndarray, counts: np.ndarray, flat) -> None:
        """A key's values of many records at once (`records` ascending, after every record added so
        far): `counts` values each, all of them in `flat` (numpy, or a list of bytes)."""
        acc = self._keys.get(key)
        if acc is None:
            if len(self._keys) >= FACT_KEYS:
                self.dropped_keys += len(records)
                return
            acc = self._keys[key] = _KeyValues(type_)
        acc.seal()
        counts = np.asarray(counts, dtype=np.int64)
        kept = np.minimum(counts, FACT_VALUES)
        if len(counts) and int(counts.max()) > FACT_VALUES:  # each record's first FACT_VALUES values
            starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
            within = np.arange(int(counts.sum())) - np.repeat(starts, counts)
            keep = np.flatnonzero(within < FACT_VALUES)
            flat = [flat[i] for i in keep.tolist()] if type_ == BYTES_LIST else flat[keep]
        acc.blocks.append((type_, np.asarray(records, dtype=np.int64) - self.first, counts, kept, flat))

    def add_plain_rows(self, records: np.ndarray) -> None:
        """Records of kind example with no image size and no boxes (analysis.plain), many at once."""
        self._plain.append(np.asarray(records, dtype=np.int64) - self.first)

    def table(self, file_name: str, offsets: np.ndarray, lengths: np.ndarray, status: np.ndarray) -> pa.Table:
        n = len(offsets)
        cols: dict[str, pa.Array] = {
            "file": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(n, dtype=np.int32)), pa.array([file_name])
            ),
            "record": pa.array(np.arange(self.first, self.first + n, dtype=np.int64)),
            "offset": pa.array(np.asarray(offsets, dtype=np.uint64)),
            "size": pa.array(np.asarray(lengths, dtype=np.uint64)),
            "crc": crc_words(np.asarray(status)),
        }
        kinds = np.full(n, -1, dtype=np.int8)
        plain = np.concatenate(self._plain) if self._plain else np.empty(0, np.int64)
        names = sorted(set(self._kinds) | ({"example"} if len(plain) else set()))
        code = {k: i for i, k in enumerate(names)}
        if self._kind_rows:
            kinds[np.array(self._kind_rows)] = [code[k] for k in self._kinds]
        if len(plain):
            kinds[plain] = code["example"]
        cols["kind"] = pa.DictionaryArray.from_arrays(
            pa.array(kinds, mask=kinds < 0), pa.array(names, pa.string())
        )
        img = np.array(self._image, dtype=np.int64).reshape(-1, 4)
        for j, name in enumerate(("image_width", "image_height", "boxes"), start=1):
            full = np.full(n, -1, dtype=np.int64)
            full[img[:, 0]] = img[:, j]
            if len(plain):
                full[plain] = 0 if name == "boxes" else -1
            cols[name] = pa.array(full, mask=full < 0)
        cols.update(self._signal_columns(n))
        renamed = {}
        # by column name, as `concat` orders them: an escaped key (`feature:pixels`) sorts as named
        for key, acc in sorted(self._keys.items(), key=lambda kv: column_of(kv[0])):
            col = column_of(key)
            if col != key:
                renamed[col] = key
            cols.update(_key_columns(col, acc, n))
        meta = {KEY_META: repr(renamed).encode()} if renamed else {}
        if self._specs:
            meta[BOX_META] = self._specs.most_common(1)[0][0].to_json().encode()
        return pa.table(cols, metadata=meta or None)

    def _signal_columns(self, n: int) -> dict[str, pa.Array]:
        """The image signal columns: a value at the rows whose image decoded, null elsewhere."""
        rows = np.asarray(self._signal_rows, dtype=np.int64)
        have = np.zeros(n, dtype=bool)
        have[rows] = True
        out = {}
        for j, name in enumerate(SIGNALS):
            t = SIGNAL_TYPES[name]
            full = np.zeros(n, dtype=t.to_pandas_dtype())
            if len(rows):
                full[rows] = [v[j] for v in self._signals]
            out[name] = pa.array(full, type=t, mask=~have)
        return out


def _key_columns(col: str, acc: _KeyValues, n: int) -> dict[str, pa.Array]:
    if acc.blocks:
        return _block_columns(col, acc, n)
    rows = np.asarray(acc.rows, dtype=np.int64)
    counts = np.asarray(acc.counts, dtype=np.int64)
    pieces = acc.values
    values = _flat(acc.type, pieces) if acc.types is None else _mixed(acc.types, pieces)
    return _columns(col, rows, counts, np.array([len(p) for p in pieces], dtype=np.int64), values, n)


def _block_columns(col: str, acc: _KeyValues, n: int) -> dict[str, pa.Array]:
    """`_key_columns` of a key whose rows came (partly) in blocks: the same columns."""
    acc.seal()
    blocks = acc.blocks
    rows = np.concatenate([b[1] for b in blocks])
    counts = np.concatenate([b[2] for b in blocks])
    kept = np.concatenate([b[3] for b in blocks])
    kinds = sorted({b[0] for b in blocks})
    if len(kinds) == 1:
        values = _flat(kinds[0], [b[4] for b in blocks])
    else:  # as _mixed: each type's values in one array, unified, then put back in row order
        arrays = unify([_flat(t, [b[4] for b in blocks if b[0] == t]) for t in kinds])
        of = np.concatenate([np.full(len(b[1]), kinds.index(b[0])) for b in blocks])
        order = np.argsort(of, kind="stable")
        starts = np.empty(len(of), dtype=np.int64)
        starts[order] = np.concatenate([[0], np.cumsum(kept[order])[:-1]])
        idx = np.repeat(starts - np.concatenate([[0], np.cumsum(kept)[:-1]]), kept) + np.arange(
            int(kept.sum())
        )
        values = pa.concat_arrays(arrays).take(pa.array(idx, pa.int64()))
    return _columns(col, rows, counts, kept, values, n)


def _columns(
    col: str, rows: np.ndarray, counts: np.ndarray, kept: np.ndarray, values: pa.Array, n: int
) -> dict[str, pa.Array]:
    if len(counts) and (counts == 1).all():
        idx = np.full(n, -1, dtype=np.int64)
        idx[rows] = np.arange(len(rows))
        return {col: values.take(pa.array(idx, mask=idx < 0))}
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
        whole = [b for piece in pieces for b in piece]
        if max(map(len, whole), default=0) <= FACT_BYTES:  # none left out: Arrow checks the UTF-8
            binary = pa.array(whole, pa.binary())
            try:
                return binary.cast(pa.string())
            except pa.ArrowInvalid:
                return binary
        flat = [b if len(b) <= FACT_BYTES else None for b in whole]
        try:
            return pa.array([None if b is None else b.decode("utf-8") for b in flat], pa.string())
        except UnicodeDecodeError:
            return pa.array(flat, pa.binary())
    dtype = np.float32 if type_ == FLOAT_LIST else np.int64
    if not pieces:
        return pa.array(np.empty(0, dtype=dtype))
    return pa.array(np.concatenate([np.asarray(p, dtype=dtype) for p in pieces]))


def _mixed(types: list[str], pieces: list) -> pa.Array:
    """The values of a key some records hold as another type, in row order, in one type (`unify`)."""
    kinds = sorted(set(types))
    of = np.array([kinds.index(t) for t in types])
    lens = np.array([len(p) for p in pieces], dtype=np.int64)
    arrays = unify(
        [_flat(t, [p for p, k in zip(pieces, of, strict=True) if k == i]) for i, t in enumerate(kinds)]
    )
    # rows grouped by type, then put back in row order
    order = np.argsort(of, kind="stable")
    starts = np.empty(len(pieces), dtype=np.int64)
    starts[order] = np.concatenate([[0], np.cumsum(lens[order])[:-1]])
    idx = np.repeat(starts - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens) + np.arange(int(lens.sum()))
    return pa.concat_arrays(arrays).take(pa.array(idx, pa.int64()))


_EXACT = 1 << 53  # integers a double holds exactly (Arrow's safe cast refuses larger ones)


def unified_type(types: list[pa.DataType], arrays: list[pa.Array]) -> pa.DataType:
    """The one type values of a feature held in several types are kept in, losing nothing:

    - integers and floats: float64 when every integer is within +-2**53 (a double holds it
      exactly); else int64 when every float is a whole number int64 holds; else text;
    - text or bytes beside numbers: text (numbers as their shortest exact decimal), or binary
      when some bytes are not UTF-8; text beside bytes: binary.

    The values (`arrays`) decide the numeric case."""
    kinds = [t for t in types if not pa.types.is_null(t)]
    if not kinds:
        return types[0]
    if len({str(t) for t in kinds}) == 1:
        return kinds[0]
    if any(pa.types.is_binary(t) for t in kinds):
        return pa.binary()
    if any(pa.types.is_string(t) for t in kinds):
        return pa.string()
    ints = [a for a in arrays if pa.types.is_integer(a.type)]
    floats = [a for a in arrays if pa.types.is_floating(a.type)]
    if all(_fits_double(a) for a in ints):
        return pa.float64()
    if all(_whole(a) for a in floats):
        return pa.int64()
    log.info("integers past 2**53 beside fractions: the feature's values are kept as text")
    return pa.string()


def _fits_double(a: pa.Array) -> bool:
    if len(a) == a.null_count:
        return True
    m = pc.min_max(a)
    return m["min"].as_py() >= -_EXACT and m["max"].as_py() <= _EXACT


def _whole(a: pa.Array) -> bool:
    v = a.drop_null().to_numpy(zero_copy_only=False).astype(np.float64)
    return bool(np.all(np.isfinite(v) & (v == np.floor(v)) & (np.abs(v) < 2.0**63)))


def unify(arrays: list[pa.Array]) -> list[pa.Array]:
    """Value arrays of one feature in several types, each in `unified_type`'s one type."""
    want = unified_type([a.type for a in arrays], arrays)
    return [_as(a, want) for a in arrays]


def _as(a: pa.Array, want: pa.DataType) -> pa.Array:
    """An array in the type `unified_type` chose for it (a safe cast: it was chosen to fit)."""
    if a.type == want:
        return a
    if pa.types.is_binary(want) and not (pa.types.is_string(a.type) or pa.types.is_binary(a.type)):
        a = a.cast(pa.string())  # numbers as their decimal text: Arrow casts no number to bytes
    return a.cast(want)


def concat(tables: list[pa.Table]) -> pa.Table:
    """Files' fact tables as one: a key held as one value in one file and as lists in another
    becomes a list column everywhere; values of several types become one (`unified_type`: exact,
    never a failed cast). The first limits.FACT_KEYS feature keys (in file order) keep their
    columns; further keys' are left out (said once: checks.other_keys_finding)."""
    if len(tables) == 1:
        return tables[0]
    tables = _bounded(tables)
    kinds: dict[str, list[pa.DataType]] = {}
    for t in tables:
        for f in t.schema:
            kinds.setdefault(f.name, []).append(f.type)
    target: dict[str, pa.DataType] = {}
    for name, types in kinds.items():
        if len({str(t) for t in types}) > 1:
            target[name] = _common(name, types, tables)
    if not target:
        return _joined_class_names(tables, _in_order(pa.concat_tables(tables, promote_options="permissive")))
    fixed = []
    for t in tables:
        for name, want in target.items():
            if name not in t.column_names or t.schema.field(name).type == want:
                continue
            col = t.column(name).combine_chunks()
            value = want.value_type if pa.types.is_list(want) else want
            if pa.types.is_list(col.type):
                col = pa.ListArray.from_arrays(col.offsets, _values_as(col.values, value), mask=col.is_null())
            else:
                col = _values_as(col, value)
            if pa.types.is_list(want) and not pa.types.is_list(col.type):
                valid = col.is_valid().to_numpy(zero_copy_only=False)
                offsets = np.concatenate([[0], np.cumsum(valid)]).astype(np.int32)
                col = pa.ListArray.from_arrays(pa.array(offsets), col.drop_null(), mask=pa.array(~valid))
                lens = name + LEN_SUFFIX
                if lens not in t.column_names:
                    t = t.append_column(lens, pa.array(valid.astype(np.int64), mask=~valid))
            t = t.set_column(t.column_names.index(name), name, col)
        fixed.append(t)
    return _joined_class_names(tables, _in_order(pa.concat_tables(fixed, promote_options="permissive")))


def _values_as(a: pa.Array, want: pa.DataType) -> pa.Array:
    return a.cast(want) if pa.types.is_null(a.type) or pa.types.is_dictionary(want) else _as(a, want)


def _bounded(tables: list[pa.Table]) -> list[pa.Table]:
    """The tables without the columns of feature keys past the first FACT_KEYS (in file order)."""
    kept: set[str] = set()
    out = []
    for t in tables:
        names = []
        for c in t.column_names:
            k = key_of(c)
            if k is not None and k[0] not in kept:
                if len(kept) >= FACT_KEYS:
                    continue
                kept.add(k[0])
            names.append(c)
        out.append(t if len(names) == len(t.column_names) else t.select(names))
    return out


def _in_order(t: pa.Table) -> pa.Table:
    """The facts first, then features by key (each list's #len after it), whatever file came first."""
    names = t.column_names
    first = [c for c in ("n", *META) if c in names]
    rest = sorted(
        (c for c in names if c not in first),
        key=lambda c: (c.removesuffix(LEN_SUFFIX), c.endswith(LEN_SUFFIX)),
    )
    return t.select(first + rest)


def _common(name: str, types: list[pa.DataType], tables: list[pa.Table]) -> pa.DataType:
    listy = any(pa.types.is_list(t) for t in types)
    values = [t.value_type if pa.types.is_list(t) else t for t in types]
    if len({str(v) for v in values}) == 1 or any(pa.types.is_dictionary(v) for v in values):
        value = values[0]
    else:
        arrays = []
        for t in tables:
            if name in t.column_names:
                col = t.column(name).combine_chunks()
                arrays.append(col.values if pa.types.is_list(col.type) else col)
        value = unified_type(values, arrays)
    return pa.list_(value) if listy else value
