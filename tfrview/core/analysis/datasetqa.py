"""The dataset-level QA, run once after the merge over the fact table's columns: copies and
leakage across splits (`duplicates`), image quality relative to the dataset (`imagequality`),
label rules across the dataset (`labelrules`). Each step reads the columns it needs as numpy
arrays (`Columns`: only those columns, copied out of the stored tables so a file's whole table is
never held), and gives findings at records plus the tables a report shows (a leakage table, the
thresholds a dataset's images were judged by).

The per-record scores and hashes come from the pass (`shard.py`, stored with each file's result);
thresholds only from `rules.DatasetRules`, here: a new threshold needs no new pass.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.analysis.rules import DatasetRules

log = logging.getLogger(__name__)


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
        t = s.deep.facts
        n = t.num_rows
        files.append(np.full(n, fi, dtype=np.int32))
        records.append(t.column("record").to_numpy().astype(np.int64))
        splits.append(np.full(n, code[analysis.splits[fi]] if analysis.splits else 0, dtype=np.int16))
        for name in names:
            if name not in t.column_names:
                vals[name].append(np.full(n, np.nan))
                ok[name].append(np.zeros(n, dtype=bool))
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
                arr = np.array(filled.to_numpy(zero_copy_only=False))  # a copy: the stored table is let go
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
        {n: np.concatenate(v) for n, v in vals.items()},
        {n: np.concatenate(v) for n, v in ok.items()},
    )


@dataclass
class DatasetQA:
    """What the dataset step found beyond findings at records: each step's tables, as plain data
    (JSON-ready), and notes said once (a dataset without images gets no image checks)."""

    tables: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # per-record columns a step adds to the merged fact table: name -> {file: array a row}
    # (`DatasetAnalysis.facts`; `duplicates`: dup_group, leak); never in the JSON
    record_columns: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"tables": self.tables, "notes": self.notes}


# The steps, in order: each `step(analysis, rules, qa) -> list[(file_no, record, Finding)]`, named
# "module:function" and imported when run: a step reads `columns` from here, so this module
# importing it would be an import cycle (tests/test_import_cycles.py).
STEPS: list = ["tfrview.core.analysis.duplicates:step"]


def run(analysis, rules: DatasetRules) -> DatasetQA:
    """Every step over a merged, deep analysis; its findings go to `analysis.dataset_problems`."""
    import importlib

    qa = DatasetQA()
    for name in STEPS:
        if callable(name):
            step = name
        else:
            module, _, func = name.partition(":")
            step = getattr(importlib.import_module(module), func)
        for fi, n, finding in step(analysis, rules, qa):
            s = analysis.shards[fi]
            analysis.dataset_problems.setdefault(fi, []).append(finding.at(s.offsets[n], s.lengths[n], n))
    return qa
