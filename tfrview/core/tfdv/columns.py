"""Every feature's values, split by split, from the stored fact tables: what TFDV's statistics,
schema inference and validation are computed from, without a second pass over the data.

Each deep file's fact table is read once (`analysis.factcolumns.read`, a `Gatherer`), with the
feature columns only; for each key of each split we keep, as numpy and Arrow arrays, the records
holding it (file, record), how many values each holds (exact: the fact table keeps every list's
length), its kept values and which of those records each value belongs to. What the fact table
keeps of a value is bounded (`limits.FACT_VALUES` values a list, `limits.FACT_BYTES` bytes a text):
`Feature.cut` says a list was cut, `Feature.left_out` counts texts too long to keep (images), so
the statistics that need them say they are partial rather than guess.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.analysis.factcolumns import RECORD, read
from tfrview.core.analysis.facts import LEN_SUFFIX, RESERVED, key_of
from tfrview.core.errors import TfrviewError
from tfrview.core.limits import FACT_KEYS
from tfrview.core.records.kinds import FEATURE_KINDS

log = logging.getLogger(__name__)


class ValueType(enum.StrEnum):
    """A feature's value type in TFDV's words (Schema's FeatureType)."""

    INT = "INT"
    FLOAT = "FLOAT"
    BYTES = "BYTES"


@dataclass
class Feature:
    """One key of one split: the records holding it and its kept values (numbers as float64, texts
    as an Arrow array of strings or binaries), each value's row in `file`/`record`."""

    key: str
    file: np.ndarray  # int32: the file of each record holding the key
    record: np.ndarray  # int64: its record number in that file
    count: np.ndarray  # int64: how many values it holds
    type_of: np.ndarray  # uint8: each record's value type (an index into TYPES)
    numbers: np.ndarray  # float64: kept numeric values (INT and FLOAT records)
    number_row: np.ndarray  # int64: the row (into file/record) of each number
    texts: object  # pyarrow Array of kept texts (BYTES records; null where left out)
    text_row: np.ndarray  # int64: the row of each text
    cut: bool = False  # some record held more values than the fact table keeps
    left_out: int = 0  # texts too long to keep (images): no length, no value
    binary: bool = False  # some kept text is not UTF-8 (TFDV's BYTES statistics, not STRING)

    @property
    def present(self) -> int:
        return len(self.record)

    @property
    def type(self) -> ValueType:
        """The type most records hold it as (ties: BYTES, then FLOAT, then INT)."""
        counts = np.bincount(self.type_of, minlength=len(TYPES))
        return TYPES[int(np.flatnonzero(counts == counts.max())[-1])]


TYPES = (ValueType.INT, ValueType.FLOAT, ValueType.BYTES)


@dataclass
class Split:
    """One split's decoded records (`file`, `record`: every record that is a feature-carrying
    payload) and its features by key."""

    name: str
    file: np.ndarray
    record: np.ndarray
    features: dict[str, Feature] = field(default_factory=dict)

    @property
    def examples(self) -> int:
        return len(self.record)


@dataclass
class _Piece:
    file: int
    rows: np.ndarray  # row numbers in its table of the records holding the key
    record: np.ndarray
    count: np.ndarray
    vtype: int
    values: object  # pyarrow Array, flat
    value_rows: np.ndarray  # index into rows of each value
    cut: bool


class FeatureGatherer:
    """A `factcolumns.Gatherer` keeping every feature column's values, per split."""

    def __init__(self, analysis) -> None:
        self.splits = list(analysis.splits) or [""] * len(analysis.shards)
        self.records: dict[str, list[tuple[int, np.ndarray]]] = {}
        self.pieces: dict[str, dict[str, list[_Piece]]] = {}
        # file -> keys every decoded record of it holds (by the pass's exact summary): a null in
        # such a key's plain column is a value too long to keep, not a record without the key
        self.everywhere: dict[int, set[str]] = {}
        for fi, s in enumerate(analysis.shards):
            if s.deep is None:
                continue
            parts = s.deep.parts or (s.deep,)
            sums = [d.summary for d in parts if d.summary is not None]
            decoded = sum(n for sm in sums for k, n in sm.kinds.items() if k in FEATURE_KINDS)
            present: dict[str, int] = {}
            for sm in sums:
                for k, ks in sm.keys.items():
                    present[k] = present.get(k, 0) + ks.present
            self.everywhere[fi] = {k for k, n in present.items() if decoded and n == decoded}

    def needs(self, schema) -> list[str]:
        return [RECORD, "kind", *(n for n in schema.names if n not in RESERVED)]

    def add(self, file_no: int, table) -> None:
        import pyarrow as pa  # heavy: pyarrow on first use only
        import pyarrow.compute as pc

        split = self.splits[file_no] if file_no < len(self.splits) else ""
        record = np.asarray(table.column(RECORD).to_numpy(), dtype=np.int64)
        kind = table.column("kind").combine_chunks()
        if pa.types.is_dictionary(kind.type):
            kind = kind.cast(kind.type.value_type)
        decoded = np.asarray(
            pc.is_in(kind, value_set=pa.array([str(k) for k in FEATURE_KINDS])).fill_null(False),
            dtype=bool,
        )
        self.records.setdefault(split, []).append((file_no, record[decoded]))
        names = set(table.column_names)
        by_key = self.pieces.setdefault(split, {})
        for name in table.column_names:
            got = key_of(name)
            if got is None or got[1]:
                continue
            key = got[0]
            col = table.column(name).combine_chunks()
            lens = table.column(name + LEN_SUFFIX).combine_chunks() if name + LEN_SUFFIX in names else None
            held = decoded if key in self.everywhere.get(file_no, ()) and lens is None else None
            piece = _piece(file_no, record, col, lens, held)
            if piece is not None:
                by_key.setdefault(key, []).append(piece)

    def done(self) -> list[Split]:
        out = []
        for name in sorted(self.records):
            recs = self.records[name]
            split = Split(
                name,
                np.concatenate([np.full(len(r), f, dtype=np.int32) for f, r in recs]),
                np.concatenate([r for _, r in recs]),
            )
            for key, pieces in sorted(self.pieces.get(name, {}).items()):
                split.features[key] = _joined(key, pieces)
            out.append(split)
        return out


def _type_of(t) -> int | None:
    import pyarrow as pa

    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return 0
    if pa.types.is_floating(t):
        return 1
    if pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t):
        return 2
    return None


def _piece(file_no: int, record: np.ndarray, col, lens, held: np.ndarray | None) -> _Piece | None:
    """One file's column of a key as a piece: the records holding it (`held`, when known apart
    from the column's nulls), their counts and values."""
    import pyarrow as pa

    valid = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=bool) if held is None else held
    rows = np.flatnonzero(valid)
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        vt = _type_of(col.type.value_type)
        if vt is None:
            return None
        held = col.filter(pa.array(valid))
        kept = np.asarray(held.value_lengths().to_numpy(zero_copy_only=False), dtype=np.int64)
        values = held.flatten()
        count = (
            np.asarray(lens.filter(pa.array(valid)).to_numpy(zero_copy_only=False), dtype=np.int64)
            if lens is not None
            else kept
        )
        value_rows = np.repeat(np.arange(len(rows)), kept)
        cut = bool((count > kept).any())
    else:
        vt = _type_of(col.type)
        if vt is None:
            return None
        values = col.filter(pa.array(valid))
        count = np.ones(len(rows), dtype=np.int64)
        value_rows = np.arange(len(rows))
        cut = False
    return _Piece(file_no, rows, record[rows], count, vt, values, value_rows, cut)


def _joined(key: str, pieces: list[_Piece]) -> Feature:
    import pyarrow as pa

    starts = np.cumsum([0] + [len(p.rows) for p in pieces])
    numbers, number_rows, texts, text_rows = [], [], [], []
    for p, at in zip(pieces, starts, strict=False):
        if p.vtype == 2:
            v = p.values
            if pa.types.is_large_string(v.type):
                v = v.cast(pa.string())
            texts.append(v)
            text_rows.append(p.value_rows + at)
        else:
            numbers.append(np.asarray(p.values.to_numpy(zero_copy_only=False), dtype=np.float64))
            number_rows.append(p.value_rows + at)
    binary = any(pa.types.is_binary(t.type) for t in texts)
    if texts:
        text_arr = pa.concat_arrays([t.cast(pa.binary()) if binary else t for t in texts])
    else:
        text_arr = pa.array([], pa.string())
    left_out = int(text_arr.null_count)
    return Feature(
        key=key,
        file=np.concatenate([np.full(len(p.rows), p.file, dtype=np.int32) for p in pieces]),
        record=np.concatenate([p.record for p in pieces]),
        count=np.concatenate([p.count for p in pieces]),
        type_of=np.concatenate([np.full(len(p.rows), p.vtype, dtype=np.uint8) for p in pieces]),
        numbers=np.concatenate(numbers) if numbers else np.empty(0),
        number_row=np.concatenate(number_rows) if number_rows else np.empty(0, np.int64),
        texts=text_arr,
        text_row=np.concatenate(text_rows) if text_rows else np.empty(0, np.int64),
        cut=any(p.cut for p in pieces),
        left_out=left_out,
        binary=binary,
    )


def splits_of(analysis) -> list[Split]:
    """Every split's features, from one read of each deep file's fact table (and each record's
    own type of a key some file holds in more than one type: `_exact_types`)."""
    splits = read(analysis, [FeatureGatherer(analysis)])[0]
    _exact_types(analysis, splits)
    _say_left_out(analysis, splits)
    return splits


def _say_left_out(analysis, splits: list[Split]) -> None:
    """Keys the pass counted that no fact table holds (past `limits.FACT_KEYS` a file): said once,
    by name of the limit, never left out in silence."""
    seen = {k for s in splits for k in s.features}
    counted = {
        k
        for sh in analysis.shards
        if sh.deep is not None
        for d in sh.deep.parts or (sh.deep,)
        if d.summary is not None
        for k in d.summary.keys
    }
    missing = counted - seen
    if missing:
        log.warning(
            "%d feature keys have no TFDV statistics, schema entry or checks: the fact table keeps "
            "the first %d keys a file (limits.FACT_KEYS); first left out: %s",
            len(missing),
            FACT_KEYS,
            ", ".join(sorted(missing)[:5]),
        )


def _exact_types(analysis, splits: list[Split]) -> None:
    """A key a file holds in more than one type (an int label in most records, a float in one) is
    one unified column in its fact table, which cannot say which record held which: the pass's
    summary says the file mixes types, and only those records of only those files are read again
    to say each one's type (the one case where validation reads records; a clean dataset none)."""
    from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST
    from tfrview.core.records.payload import decode
    from tfrview.core.tfrecord.payload_bytes import bounded_payload
    from tfrview.core.tfrecord.source import open_source

    code = {INT64_LIST: 0, FLOAT_LIST: 1, BYTES_LIST: 2}
    for fi, s in enumerate(analysis.shards):
        if s.deep is None:
            continue
        mixed = {
            k
            for d in s.deep.parts or (s.deep,)
            if d.summary is not None
            for k, ks in d.summary.keys.items()
            if len(ks.types) > 1
        }
        if not mixed:
            continue
        try:
            src = open_source(s.path)
        except TfrviewError as exc:  # gone since the pass: the unified column's type stays, said
            log.warning("%s: cannot read it again for its records' own types (%s)", s.path, exc)
            continue
        try:
            for split in splits:
                for key in sorted(mixed):
                    f = split.features.get(key)
                    if f is None:
                        continue
                    for row in np.flatnonzero(f.file == fi).tolist():
                        n = int(f.record[row])
                        p = decode(bounded_payload(src.read, int(s.offsets[n]), int(s.lengths[n])))
                        got = p.features.get(key)
                        if got is not None and got.type in code:
                            f.type_of[row] = code[got.type]
        finally:
            src.close()


def whole(splits: list[Split]) -> Split:
    """The splits as one dataset (schema inference and validation judge every record)."""
    if len(splits) == 1:
        return splits[0]
    out = Split(
        "",
        np.concatenate([s.file for s in splits]) if splits else np.empty(0, np.int32),
        np.concatenate([s.record for s in splits]) if splits else np.empty(0, np.int64),
    )
    keys = sorted({k for s in splits for k in s.features})
    import pyarrow as pa

    for k in keys:
        fs = [s.features[k] for s in splits if k in s.features]
        starts = np.cumsum([0] + [f.present for f in fs])
        binary = any(f.binary or pa.types.is_binary(f.texts.type) for f in fs)
        texts = [f.texts.cast(pa.binary()) if binary else f.texts for f in fs]
        out.features[k] = Feature(
            key=k,
            file=np.concatenate([f.file for f in fs]),
            record=np.concatenate([f.record for f in fs]),
            count=np.concatenate([f.count for f in fs]),
            type_of=np.concatenate([f.type_of for f in fs]),
            numbers=np.concatenate([f.numbers for f in fs]),
            number_row=np.concatenate([f.number_row + a for f, a in zip(fs, starts, strict=False)]),
            texts=pa.concat_arrays(texts),
            text_row=np.concatenate([f.text_row + a for f, a in zip(fs, starts, strict=False)]),
            cut=any(f.cut for f in fs),
            left_out=sum(f.left_out for f in fs),
            binary=any(f.binary for f in fs),
        )
    return out
