"""Boxes read back from a fact table: the one home of that reading (the QA plots and the dataset's
label rules use it), so no second box reader grows beside `records.reading`.

A fact table keeps each box key's values (its first limits.FACT_VALUES a record, and the length
before that in `<key>#len`) and the box spec most of its records were read with (schema metadata
`facts.BOX_META`); the boxes come out of those columns by that spec and `reading.corners`, the one
coordinate rule, as arrays over every box of the table: never an object a box.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfrview.core.analysis.facts import BOX_META, LEN_SUFFIX, column_of
from tfrview.core.records.reading import BoxConvention, BoxSpec, class_name, corners

log = logging.getLogger(__name__)


def is_list(t) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t)


def box_spec(table: pa.Table) -> BoxSpec:
    """The box spec the records' readings found (`facts.BOX_META`); a table stored without one is
    read by the Object Detection API's keys, as before that was stored."""
    return schema_box_spec(table.schema)


def schema_box_spec(schema: pa.Schema) -> BoxSpec:
    """`box_spec` from a table's schema alone (which columns to read of a stored table)."""
    raw = (schema.metadata or {}).get(BOX_META)
    if raw:
        try:
            return BoxSpec.from_json(raw)
        except (ValueError, KeyError, TypeError):
            log.warning("fact table box spec unreadable: %r", raw[:200])
    return BoxSpec(
        BoxConvention.OD_NORMALIZED, tuple(f"image/object/bbox/{c}" for c in ("xmin", "ymin", "xmax", "ymax"))
    )


def list_values(col) -> tuple[np.ndarray, np.ndarray] | None:
    """A numeric fact column's values flattened (float64) and each row's count of them (a plain
    column: 1, or 0 when null); None for a column of text."""
    if is_list(col.type):
        lengths = np.asarray(pc.list_value_length(col).fill_null(0).to_numpy(zero_copy_only=False))
        flat = pc.list_flatten(col).to_numpy(zero_copy_only=False)
    elif pa.types.is_floating(col.type) or pa.types.is_integer(col.type):
        lengths = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=np.int64)
        flat = col.drop_null().to_numpy(zero_copy_only=False)
    else:
        return None
    return np.asarray(flat, dtype=np.float64), lengths.astype(np.int64)


@dataclass(frozen=True)
class TableBoxes:
    """Every box a fact table keeps, flattened in row order: its corners in the boxes' own units
    (pixels or [0, 1], as `spec.convention` says), its row in the table and its number in its
    record. `cut`: boxes the records hold past the values the table keeps (limits.FACT_VALUES),
    in `cut_rows` records; those are not here."""

    spec: BoxSpec
    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    row: np.ndarray
    slot: np.ndarray
    cut: int = 0
    cut_rows: int = 0

    def __len__(self) -> int:
        return len(self.row)


def table_boxes(table: pa.Table) -> TableBoxes | None:
    """The boxes of a fact table by its spec; records whose corner lists differ in length, or whose
    flat list is no whole number of boxes, are left out (a record check reports them). None: the
    table has no box columns, or they hold no box."""
    spec = box_spec(table)
    cols = [column_of(k) for k in spec.keys]
    if any(c not in table.column_names for c in cols):
        return None
    got = [list_values(table[c].combine_chunks()) for c in cols]
    if any(g is None for g in got):
        return None
    lengths = [g[1] for g in got]
    if spec.convention.corners:
        same = np.all([ln == lengths[0] for ln in lengths], axis=0)
        flat = [g[0][np.repeat(same, ln)] for g, ln in zip(got, lengths, strict=True)]
        per = np.where(same, lengths[0], 0)
    else:
        whole = lengths[0] % 4 == 0
        flat = [got[0][0][np.repeat(whole, lengths[0])]]
        per = np.where(whole, lengths[0] // 4, 0)
    if not len(flat[0]):
        return None
    x0, y0, x1, y1 = corners(spec.convention, flat)
    rows = np.repeat(np.arange(len(per), dtype=np.int64), per)
    starts = np.concatenate([[0], np.cumsum(per)[:-1]])
    slot = np.arange(len(rows), dtype=np.int64) - np.repeat(starts, per)
    cut, cut_rows = _cut(table, cols[0], per, 1 if spec.convention.corners else 4)
    return TableBoxes(spec, x0, y0, x1, y1, rows, slot, cut, cut_rows)


def _cut(table: pa.Table, col: str, per: np.ndarray, values_a_box: int) -> tuple[int, int]:
    """Boxes past limits.FACT_VALUES (the `#len` column's counts less the boxes kept), and records."""
    lens = col + LEN_SUFFIX
    if lens not in table.column_names:
        return 0, 0
    total = (
        np.asarray(table[lens].combine_chunks().fill_null(0).to_numpy(zero_copy_only=False)) // values_a_box
    )
    over = np.maximum(total - per, 0)
    over[per == 0] = 0  # a record left out for its lists' lengths is a record check's, not a limit's
    return int(over.sum()), int(np.count_nonzero(over))


def value_codes(col) -> tuple[np.ndarray, np.ndarray, list[str]] | None:
    """A class column (ids or texts, a list a record or one value) as each row's count of values,
    each value's code into the names returned (-1: a null text), and those names: a text as it
    is, an id as `reading.class_name` names it (no label map here: the dataset step runs after the
    merge). Texts are dictionary-encoded by Arrow: a name a class, never a string a value."""
    if is_list(col.type):
        lengths = np.asarray(pc.list_value_length(col).fill_null(0).to_numpy(zero_copy_only=False))
        flat = pc.list_flatten(col)
    else:
        lengths = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=np.int64)
        flat = col.drop_null()
    if pa.types.is_dictionary(flat.type):
        flat = flat.cast(flat.type.value_type)
    if pa.types.is_string(flat.type) or pa.types.is_binary(flat.type):
        enc = pc.dictionary_encode(flat)
        idx = np.asarray(enc.indices.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
        words = [
            w.decode("utf-8", "replace") if isinstance(w, bytes) else str(w)
            for w in enc.dictionary.to_pylist()
        ]
    elif pa.types.is_integer(flat.type):
        ids = np.asarray(flat.to_numpy(zero_copy_only=False), dtype=np.int64)
        uniq, idx = np.unique(ids, return_inverse=True)
        words = [class_name(int(i)) for i in uniq.tolist()]
    else:
        return None
    return lengths.astype(np.int64), np.asarray(idx, dtype=np.int64).reshape(-1), words


def box_classes(table: pa.Table, boxes: TableBoxes) -> tuple[np.ndarray, list[str]]:
    """Each box's class as a code into the names returned (-1: its record gives none for it): its
    class text, else its class id (`value_codes`), the i-th value of the class lists for box i, as
    a reading reads them."""
    code: dict[str, int] = {}
    out = np.full(len(boxes), -1, dtype=np.int64)
    for key in (boxes.spec.class_id, boxes.spec.class_text):  # the text, where there is one, wins
        col = column_of(key) if key else None
        got = value_codes(table[col].combine_chunks()) if col in table.column_names else None
        if got is None:
            continue
        lengths, idx, words = got
        local = np.array([code.setdefault(w, len(code)) for w in words] + [-1], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        has = boxes.slot < lengths[boxes.row]
        mine = local[idx[starts[boxes.row[has]] + boxes.slot[has]]]  # -1 indexes the trailing -1
        keep = mine >= 0
        out[np.flatnonzero(has)[keep]] = mine[keep]
    return out, list(code)


@dataclass(frozen=True)
class TablePredictions:
    """Every prediction a fact table keeps of the OD API's detection keys (`records.predictions`),
    flattened in row order: corners in [0, 1] of the image, class id (-1: none), score (1.0: none),
    its row in the table and its number in its record."""

    x0: np.ndarray
    y0: np.ndarray
    x1: np.ndarray
    y1: np.ndarray
    classes: np.ndarray
    scores: np.ndarray
    row: np.ndarray
    slot: np.ndarray
    cut: int = 0
    cut_rows: int = 0

    def __len__(self) -> int:
        return len(self.row)


def prediction_columns(schema: pa.Schema) -> list[str]:
    """The fact columns `table_predictions` reads, of those a table with `schema` holds."""
    from tfrview.core.records.predictions import DETECTION_KEYS

    cols = [column_of(k) for k in DETECTION_KEYS]
    cols.append(cols[0] + LEN_SUFFIX)
    return [c for c in cols if c in schema.names]


def table_predictions(table: pa.Table) -> TablePredictions | None:
    """The detection keys' predictions of a fact table (the one reader of them from facts, beside
    `table_boxes` for the ground truth): records whose four corner lists differ in length are left
    out; labels and scores are the i-th values for prediction i (fewer: -1 and 1.0). None: the
    table holds no detection box columns, or they hold no prediction."""
    from tfrview.core.records.predictions import DETECTION_BOX_KEYS, DETECTION_LABEL_KEY, DETECTION_SCORE_KEY

    cols = [column_of(k) for k in DETECTION_BOX_KEYS]
    if any(c not in table.column_names for c in cols):
        return None
    got = [list_values(table[c].combine_chunks()) for c in cols]
    if any(g is None for g in got):
        return None
    lengths = [g[1] for g in got]
    same = np.all([ln == lengths[0] for ln in lengths], axis=0)
    flat = [g[0][np.repeat(same, ln)] for g, ln in zip(got, lengths, strict=True)]
    per = np.where(same, lengths[0], 0)
    if not len(flat[0]):
        return None
    rows = np.repeat(np.arange(len(per), dtype=np.int64), per)
    starts = np.concatenate([[0], np.cumsum(per)[:-1]]).astype(np.int64)
    slot = np.arange(len(rows), dtype=np.int64) - np.repeat(starts, per)
    classes = _ith(table, column_of(DETECTION_LABEL_KEY), rows, slot, -1.0).astype(np.int64)
    scores = _ith(table, column_of(DETECTION_SCORE_KEY), rows, slot, 1.0)
    cut, cut_rows = _cut(table, cols[0], per, 1)
    return TablePredictions(*flat, classes, scores, rows, slot, cut, cut_rows)


def _ith(table: pa.Table, col: str, rows: np.ndarray, slot: np.ndarray, missing: float) -> np.ndarray:
    """The slot-th value of a list column at each (row, slot) (`missing` where a record holds fewer)."""
    out = np.full(len(rows), missing, dtype=np.float64)
    got = list_values(table[col].combine_chunks()) if col in table.column_names else None
    if got is None:
        return out
    flat, lengths = got
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    has = slot < lengths[rows]
    out[has] = flat[starts[rows[has]] + slot[has]]
    return out


def box_class_ids(table: pa.Table, boxes: TableBoxes) -> tuple[np.ndarray, dict[int, str]]:
    """Each ground-truth box's class id (-1: its record gives none) from the spec's class id key,
    and each id's name from the class texts beside it (the first text seen with the id): the ids
    predictions are matched by. A table whose boxes have texts only gives ids -1 (the caller
    names them through a label map)."""
    key = boxes.spec.class_id
    col = column_of(key) if key else None
    ids = np.full(len(boxes), -1, dtype=np.int64)
    if col is None or col not in table.column_names:
        return ids, {}
    got = list_values(table[col].combine_chunks())
    if got is None:
        return ids, {}
    flat, lengths = got
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    has = boxes.slot < lengths[boxes.row]
    ids[has] = flat[starts[boxes.row[has]] + boxes.slot[has]].astype(np.int64)
    names: dict[int, str] = {}
    if boxes.spec.class_text:
        codes, words = box_classes(table, boxes)
        ok = (codes >= 0) & (ids >= 0)
        if ok.any():
            uniq, first = np.unique(ids[ok], return_index=True)
            names = {int(i): words[int(c)] for i, c in zip(uniq, codes[ok][first], strict=True)}
    return ids, names
