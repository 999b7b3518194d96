"""Fact columns of every analysed file as numpy arrays, for the dataset step (`datasetqa`) and its
steps: only the columns asked for, copied out of each file's table, which is read and let go one
file at a time."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def tables_of(shard):
    """A file's fact table in its parts, each read and let go in turn: a big file's deep pass ran in
    parts (`merge._joined`), and their 2 M rows joined cost 240 MB more than the widest part."""
    for d in shard.deep.parts or (shard.deep,):
        yield d.read_facts()


@dataclass
class Columns:
    """Some fact columns of every analysed file, joined in dataset order: `file` (file number),
    `record` (number in its file), `split` (a code into `split_names`) and the asked columns as
    numpy arrays (a missing or null value: NaN for floats, -1 for integers; `valid[name]` says
    which rows hold one). Rows are the records of files that have a fact table."""

    file: np.ndarray
    record: np.ndarray
    split: np.ndarray
    split_names: list[str]
    values: dict[str, np.ndarray] = field(default_factory=dict)
    valid: dict[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.file)


def columns(analysis, names: list[str]) -> Columns:
    """`names` of every file's fact table (a file without one of them: all missing)."""
    import pyarrow as pa  # heavy: pyarrow on first use only

    files, records, splits = [], [], []
    split_names = sorted(set(analysis.splits)) if analysis.splits else [""]
    code = {s: i for i, s in enumerate(split_names)}
    vals: dict[str, list[np.ndarray]] = {n: [] for n in names}
    ok: dict[str, list[np.ndarray]] = {n: [] for n in names}
    for fi, s in enumerate(analysis.shards):
        if s.deep is None:
            continue
        for t in tables_of(s):  # a big file's parts one at a time, never joined
            n = t.num_rows
            files.append(np.full(n, fi, dtype=np.int32))
            records.append(t.column("record").to_numpy().astype(np.int64))
            splits.append(np.full(n, code[analysis.splits[fi]] if analysis.splits else 0, dtype=np.int16))
            for name in names:
                if name not in t.column_names:
                    vals[name].append(n)  # a count of missing rows: filled only if another file has it
                    ok[name].append(n)
                    continue
                col = t.column(name).combine_chunks()
                if pa.types.is_dictionary(col.type):
                    col = col.cast(col.type.value_type)
                valid = ~np.asarray(col.is_null().to_numpy(zero_copy_only=False), dtype=bool)
                if (
                    pa.types.is_floating(col.type)
                    or pa.types.is_integer(col.type)
                    or pa.types.is_boolean(col.type)
                ):
                    filled = col.fill_null(0 if not pa.types.is_floating(col.type) else np.nan)
                    arr = np.array(
                        filled.to_numpy(zero_copy_only=False)
                    )  # a copy: the stored table is let go
                else:
                    arr = np.array(col.to_pylist(), dtype=object)
                vals[name].append(arr)
                ok[name].append(valid)
    if not files:
        empty = np.empty(0, np.int64)
        return Columns(empty.astype(np.int32), empty, empty.astype(np.int16), split_names)
    return Columns(
        np.concatenate(files),
        np.concatenate(records),
        np.concatenate(splits),
        split_names,
        {n: _joined(v, np.nan) for n, v in vals.items()},
        {n: _joined(v, False) for n, v in ok.items()},
    )


def _joined(pieces: list, missing) -> np.ndarray:
    """Arrays and counts of missing rows as one array; a column no file has is one read-only view
    of `missing` (a dataset without images asked for eight scores held 8 x 16 MB of NaN a 2 M rows)."""
    if all(isinstance(p, int) for p in pieces):
        return np.broadcast_to(np.asarray(missing), (sum(pieces),))
    return np.concatenate(
        [
            np.full(p, missing, dtype=bool if missing is False else float) if isinstance(p, int) else p
            for p in pieces
        ]
    )
