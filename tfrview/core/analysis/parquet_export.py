"""A dataset's fact table as one Parquet file, for DuckDB, polars or pandas: one row per record,
with its problems, and (when asked) each record's first image's bytes. Problems that belong to no
record (unreadable bytes, trailing bytes, a file that cannot be read) are rows too, after their
file's records: `n` and `record` null, `file` and `offset` set, `problems` their kind. Written one file's rows
at a time (a row group each), so images never sit in memory together; to a temporary file, then
renamed."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from tfrview.core.analysis.merge import DatasetAnalysis
from tfrview.core.analysis.shard import intact_numbers_of
from tfrview.core.output.atomic import atomic_file
from tfrview.core.records.images import find_images, image_features
from tfrview.core.records.payload import decode
from tfrview.core.tfrecord.payload_bytes import bounded_payload
from tfrview.core.tfrecord.source import open_source


@dataclass(frozen=True)
class ParquetSummary:
    rows: int
    images: int
    columns: int
    file_problems: int = 0  # rows of problems that belong to no record (n and record null)


def problems_column(a: DatasetAnalysis, file_no: int, n: int) -> pa.Array:
    """The kinds of each record's problems (damage beside a record is not the record's)."""
    kinds: list[list[str]] = [[] for _ in range(n)]
    for p in a.problems(file_no):
        if p.record is not None and 0 <= p.record < n:
            kinds[p.record].append(str(p.kind))
    return pa.array(kinds, pa.list_(pa.string()))


def write_parquet(
    a: DatasetAnalysis, out: Path, images: bool = False, progress: Callable[[int, int], None] | None = None
) -> ParquetSummary:
    import pyarrow.parquet as pq  # heavy: pyarrow on first use only

    facts = a.facts()
    if facts is None:
        facts = pa.table({"n": pa.array([], pa.int64())})
    facts = with_name_columns(facts)
    starts = np.concatenate(
        [[0], np.cumsum([s.deep.facts.num_rows if s.deep is not None else 0 for s in a.shards])]
    )
    written = n_images = file_rows = 0
    unreadable = [
        (s.path, [{"offset": 0, "problems": ["unreadable_file"]}]) for s in a.shards if s.error is not None
    ]
    with atomic_file(out, "wb") as fh:  # a temporary file, renamed only when complete
        schema = None
        writer = None
        for fi, s in enumerate(a.shards):
            if s.deep is None:
                continue
            part = facts.slice(int(starts[fi]), int(starts[fi + 1] - starts[fi]))
            part = part.append_column("problems", problems_column(a, fi, part.num_rows))
            if images:
                col, got = _images(s)
                part = part.append_column("image", col)
                n_images += got
            if writer is None:
                schema = part.schema
                writer = pq.ParquetWriter(fh, schema, compression="zstd")
            writer.write_table(part.cast(schema))
            written += part.num_rows
            beside = file_problem_rows(a, fi)
            if beside:
                writer.write_table(_rows_of(s.path, beside, schema))
                file_rows += len(beside)
            if progress:
                progress(fi + 1, len(a.shards))
        if writer is None:
            schema = facts.append_column("problems", pa.array([], pa.list_(pa.string()))).schema
            writer = pq.ParquetWriter(fh, schema, compression="zstd")
        for path, rows in unreadable:
            writer.write_table(_rows_of(path, rows, schema))
            file_rows += len(rows)
        writer.close()
    return ParquetSummary(written, n_images, len(facts.column_names) + 1 + int(images), file_rows)


NAME_SUFFIX = "#name"  # a class id column's names beside it (a single `#`: no feature key's column)


def with_name_columns(facts: pa.Table) -> pa.Table:
    """Each class id column a TFDS ClassLabel names (`facts.class_names`, also kept in the file's
    schema metadata) followed by `<column>#name`: each id's name (null where it has none), a list
    where the ids are, so a reader of the Parquet file sees `cat`, not `3`."""
    import pyarrow.compute as pc

    from tfrview.core.analysis.facts import class_names

    for col, names in class_names(facts.schema).items():
        if col not in facts.column_names or col + NAME_SUFFIX in facts.column_names:
            continue
        c = facts[col].combine_chunks()
        listed = pa.types.is_list(c.type)
        values = c.flatten() if listed else c
        if not pa.types.is_integer(values.type):
            continue
        ids = pa.array(sorted(names), pa.int64())
        words = pa.array([names[i] for i in sorted(names)], pa.string())
        at = pc.index_in(values.cast(pa.int64()), value_set=ids)
        named = pc.take(words, at).dictionary_encode()
        if listed:
            offsets = pc.subtract(c.offsets, c.offsets[0])  # flatten() starts at the first list's values
            named = pa.ListArray.from_arrays(offsets, named, mask=c.is_null())
        facts = facts.add_column(facts.column_names.index(col) + 1, col + NAME_SUFFIX, named)
    return facts


def file_problem_rows(a: DatasetAnalysis, file_no: int) -> list[dict]:
    """A file's problems that belong to no record, one row each (offset and kind)."""
    return [{"offset": p.offset, "problems": [str(p.kind)]} for p in a.problems(file_no) if p.record is None]


def _rows_of(path: str, rows: list[dict], schema: pa.Schema) -> pa.Table:
    """Rows of file-level problems in the table's schema: every other column null."""

    return pa.Table.from_pylist([{**r, "file": os.path.basename(path)} for r in rows], schema=schema)


def _images(s) -> tuple[pa.Array, int]:
    """Each record's first encoded image (null when it has none, or is damaged)."""

    out: list[bytes | None] = [None] * len(s.offsets)
    with open_source(s.path) as src:
        read = src.bulk_reader()
        for n in intact_numbers_of(s):
            n = int(n)
            feats = image_features(decode(bounded_payload(read, int(s.offsets[n]), int(s.lengths[n]))))
            refs = [r for r in find_images(feats) if r.storage == "encoded"]
            if refs:
                out[n] = bytes(feats[refs[0].key].values[refs[0].index])
    return pa.array(out, pa.binary()), sum(b is not None for b in out)
