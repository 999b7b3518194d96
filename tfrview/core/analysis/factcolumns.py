"""The fact tables of every analysed file, read once for the whole dataset step (`datasetqa`).

Each step says up front what it reads (`Step`: numeric columns, or a `Gatherer` for what else it
keeps of a table, as the label rules keep boxes); `read` then reads each file's table once, with
only the union of the columns every step asks for (a stored table's other columns are never
decompressed: `DeepResult.read_facts(pick)`), hands it to every step's gatherer, which copies out
what it keeps as numpy arrays, and lets it go before the next (a big file's parts one at a time).
Three steps reading every whole table three times cost a 2,000,000-record file ~290 MB of peak
memory (24 columns decompressed a part, 43 MB each, 3 times over) and a 2,048-shard split three
store reads a file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

RECORD = "record"  # every fact table's record number in its file


class Gatherer(Protocol):
    """What a step keeps of each file's fact table: `needs` names the columns it reads of a table
    with that schema (asked before the table is read), `add` copies out of the table read (it may
    hold more columns than asked: other steps'), `done` gives what was kept."""

    def needs(self, schema) -> Iterable[str]: ...

    def add(self, file_no: int, table) -> None: ...

    def done(self) -> object: ...


@dataclass(frozen=True)
class Step:
    """A step of the dataset QA: `run(analysis, rules, qa, got) -> [(file_no, record, Finding)]`
    over what it read. `columns`: the numeric fact columns it judges, given as one `Columns` that
    every step asking for columns shares (the union read once, the file, record and split arrays
    made once); else `gather(analysis)`: a `Gatherer` for what it keeps of each table, given as
    its `done()`."""

    name: str
    run: Callable
    columns: tuple[str, ...] = ()
    gather: Callable[[object], Gatherer] | None = None


@dataclass
class Columns:
    """Some fact columns of every analysed file, joined in dataset order: `file` (file number),
    `record` (number in its file), `split` (a code into `split_names`) and the asked columns as
    numpy arrays (a missing or null value: NaN for floats, 0 for integers, False for booleans, None
    for texts; `valid[name]` says which rows hold one). Rows are the records of files that have a
    fact table. A column no file holds a value of is one read-only view of NaN (a dataset without
    images asked for eight scores held 8 x 16 MB of NaN a 2 M rows)."""

    file: np.ndarray
    record: np.ndarray
    split: np.ndarray
    split_names: list[str]
    values: dict[str, np.ndarray] = field(default_factory=dict)
    valid: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.file)


class Growing:
    """One array filled piece by piece in place: allocated once for the rows expected (a dataset's
    records), doubled past them, never its pieces held beside their join (a 2 M-row column's
    pieces and join cost twice its size at once, and freed pieces stay in the process's heap).
    Missing rows (`skip`) cost nothing until some piece brings values; then they are NaN, 0, False
    or None in the array's type. Only missing rows: one read-only view of NaN (a `mask`: False)."""

    def __init__(self, expected: int, mask: bool = False) -> None:
        self.expected, self.mask = expected, mask
        self.arr: np.ndarray | None = None
        self.n = 0

    def skip(self, k: int) -> None:
        if self.arr is not None:
            self._room(k)
            self.arr[self.n : self.n + k] = _missing(self.arr.dtype)
        self.n += k

    def extend(self, piece: np.ndarray) -> None:
        if self.arr is None:
            self.arr = np.empty(max(self.expected, self.n + len(piece)), piece.dtype)
            self.arr[: self.n] = _missing(piece.dtype)
        elif np.result_type(self.arr.dtype, piece.dtype) != self.arr.dtype:  # a wider type: kept whole
            self.arr = self.arr.astype(np.result_type(self.arr.dtype, piece.dtype))
        self._room(len(piece))
        self.arr[self.n : self.n + len(piece)] = piece
        self.n += len(piece)

    def _room(self, k: int) -> None:
        if self.n + k > len(self.arr):
            bigger = np.empty(max(2 * len(self.arr), self.n + k), self.arr.dtype)
            bigger[: self.n] = self.arr[: self.n]
            self.arr = bigger

    def array(self) -> np.ndarray:
        """The rows so far (this object let go of them)."""
        arr, self.arr = self.arr, None
        if arr is None:
            return np.broadcast_to(np.asarray(False if self.mask else np.nan), (self.n,))
        if len(arr) != self.n:
            arr.resize(self.n, refcheck=False)  # fewer rows than expected: the rest given back
        return arr


def expected_rows(analysis) -> int:
    """The fact tables' rows of a merged analysis: one a framed record of each deep file."""
    return sum(len(s.offsets) for s in analysis.shards if s.deep is not None)


class ColumnGatherer:
    """`Columns` of the names asked, table by table, written into one array a column (`Growing`):
    a column a table lacks, or holds only nulls of (a dataset without images: every hash and
    score), is missing rows there, never an array of its own."""

    def __init__(self, analysis, names: Sequence[str]) -> None:
        self.names = list(dict.fromkeys(names))
        self.split_names = sorted(set(analysis.splits)) if analysis.splits else [""]
        code = {s: i for i, s in enumerate(self.split_names)}
        self.split_of = [code[s] for s in analysis.splits] if analysis.splits else []
        rows = expected_rows(analysis)
        self.file, self.record, self.split = Growing(rows), Growing(rows), Growing(rows)
        self.vals = {n: Growing(rows) for n in self.names}
        self.ok = {n: Growing(rows, mask=True) for n in self.names}

    def needs(self, schema) -> list[str]:
        return [RECORD, *(n for n in self.names if n in schema.names)]

    def add(self, file_no: int, table) -> None:
        self.add_many([(file_no, table)])

    def add_many(self, tables: list) -> None:
        """Many files' tables: each run of tables with one schema (a split's shards) concatenated
        and read as one, its per-column work done once."""
        for run in same_schema_runs(tables):
            files, rows, one = joined(run)
            self._add(files, rows, one)

    def _add(self, files: np.ndarray, rows: np.ndarray, table) -> None:
        import pyarrow as pa  # heavy: pyarrow on first use only

        n = table.num_rows
        self.file.extend(np.repeat(files, rows))
        self.record.extend(np.asarray(table.column(RECORD).to_numpy(), dtype=np.int64))
        codes = np.asarray(
            [self.split_of[fi] for fi in files.tolist()] if self.split_of else [0] * len(files)
        )
        self.split.extend(np.repeat(codes.astype(np.int16), rows))
        for name in self.names:
            col = table.column(name) if name in table.column_names else None
            if col is None or col.null_count == n:
                self.vals[name].skip(n)  # filled only if another file has values
                self.ok[name].skip(n)
                continue
            if pa.types.is_dictionary(col.type):  # each file's own dictionary: decoded before joined
                col = col.cast(col.type.value_type)
            col = col.combine_chunks()
            self.ok[name].extend(np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=bool))
            t = col.type
            if pa.types.is_floating(t) or pa.types.is_integer(t) or pa.types.is_boolean(t):
                filled = col.fill_null(np.nan if pa.types.is_floating(t) else 0)
                self.vals[name].extend(np.asarray(filled.to_numpy(zero_copy_only=False)))
            else:
                self.vals[name].extend(np.array(col.to_pylist(), dtype=object))

    def done(self) -> Columns:
        if not self.file.n:
            empty = np.empty(0, np.int64)
            return Columns(empty.astype(np.int32), empty, empty.astype(np.int16), self.split_names)
        out = Columns(self.file.array(), self.record.array(), self.split.array(), self.split_names)
        for name in self.names:
            out.values[name] = self.vals.pop(name).array()
            out.valid[name] = self.ok.pop(name).array()
        return out


def same_schema_runs(tables: list) -> Iterable[list]:
    """Runs of consecutive (file number, table) pairs whose tables share a schema, metadata and
    all (a split's shards: one run a batch)."""
    at = 0
    while at < len(tables):
        end = at + 1
        first = tables[at][1].schema
        while end < len(tables) and tables[end][1].schema.equals(first, check_metadata=True):
            end += 1
        yield tables[at:end]
        at = end


def joined(run: list) -> tuple[np.ndarray, np.ndarray, object]:
    """A run of one schema as one table (Arrow's chunks, no copy), with each table's file number
    and rows."""
    import pyarrow as pa  # heavy: pyarrow on first use only

    files = np.array([fi for fi, _ in run], np.int32)
    rows = np.array([t.num_rows for _, t in run], np.int64)
    return files, rows, run[0][1] if len(run) == 1 else pa.concat_tables([t for _, t in run])


def _missing(dtype: np.dtype):
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "b":
        return False
    if dtype.kind == "O":
        return None
    return 0


BATCH_FILES = 256  # stored tables fetched with one query and gathered as one table
BATCH_ROWS = 1 << 18  # rows a batch (a big file's part, ~250,000 records, goes about alone)


def read(analysis, gatherers: Sequence[Gatherer]) -> list:
    """Every deep file's fact table (a big file's parts in turn) read once with the columns the
    gatherers need, given to each, and let go; what each kept (`done()`), in their order. Stored
    tables are fetched a batch at a time (`BATCH_FILES`, `BATCH_ROWS`: one query, not one a file),
    and a gatherer that takes many tables at once (`add_many`: `ColumnGatherer`) is given the
    batch's tables together: 2,048 small shards were 2,048 queries and 2,048 rounds of per-column
    work of ~1.6 ms."""
    picks: dict[bytes, set[str]] = {}
    fields_of: dict[bytes, list[int]] = {}  # the fields picked, by a stored stream's schema message

    def pick(schema) -> set[str]:
        """The columns the gatherers need, asked once a distinct schema (a split's shards share one).
        A gatherer asking for fewer once it has seen more (the label rules' record labels) reads a
        few more columns than it needs: never fewer."""
        key = schema.serialize().to_pybytes()
        got = picks.get(key)
        if got is None:
            got = picks[key] = {n for g in gatherers for n in g.needs(schema)}
        return got

    units = [
        (fi, d, len(s.offsets) // max(len(s.deep.parts or ()), 1))
        for fi, s in enumerate(analysis.shards)
        if s.deep is not None
        for d in s.deep.parts or (s.deep,)
    ]
    for batch in _batches(units):
        tables = _tables(analysis, batch, pick, fields_of)
        for g in gatherers:
            add_many = getattr(g, "add_many", None)
            if add_many is not None:
                add_many(tables)
            else:
                for fi, table in tables:
                    g.add(fi, table)
        del tables  # before the next batch is read
    return [g.done() for g in gatherers]


def _batches(units: list) -> Iterable[list]:
    batch: list = []
    rows = 0
    for fi, d, n in units:
        if batch and (len(batch) >= BATCH_FILES or rows + n > BATCH_ROWS):
            yield batch
            batch, rows = [], 0
        batch.append((fi, d))
        rows += n
    if batch:
        yield batch


def _tables(analysis, batch: list, pick, fields_of: dict) -> list:
    """(file number, table) of each of a batch, the stored ones' bytes fetched with one query; a
    table not found there is read as it always was (`DeepResult.read_facts`: one left the store
    is said, or its file read again)."""
    from tfrview.core.analysis.cache import StoreError, fact_blobs, table_of

    keys = {id(d): d.stored_key for _, d in batch}
    blobs = fact_blobs([k for k in keys.values() if k is not None]) if any(keys.values()) else {}
    out = []
    for fi, d in batch:
        key = keys[id(d)]
        table = None
        if key in blobs:
            try:
                table = table_of(blobs.pop(key), key, analysis.shards[fi].path, pick, fields_of)
            except StoreError:
                table = None  # dropped: read as one table alone, which says so or reads the file
        out.append((fi, table if table is not None else d.read_facts(pick)))
    return out


def columns(analysis, names: list[str]) -> Columns:
    """`names` of every file's fact table (a file without one of them: all missing), alone; the
    dataset step reads them with its other steps' (`read`)."""
    return read(analysis, [ColumnGatherer(analysis, names)])[0]


def gathered(analysis, steps: Sequence[Step]) -> list:
    """What each step reads, from one read of every table: the `Columns` of every step's
    `columns` (one object, shared) or its gatherer's result."""
    names = [n for st in steps for n in st.columns]
    shared = ColumnGatherer(analysis, names) if any(st.columns for st in steps) else None
    own = [st.gather(analysis) if st.gather is not None else None for st in steps]
    gatherers = [g for g in [shared, *own] if g is not None]
    got = dict(zip(map(id, gatherers), read(analysis, gatherers), strict=True))
    return [
        got[id(g)] if g is not None else got[id(shared)] if st.columns else None
        for st, g in zip(steps, own, strict=True)
    ]
