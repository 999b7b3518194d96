"""Merging the results of files into the dataset's: summed schema and statistics, the checks that
compare a record with the rest of its dataset (payload kind, missing features, feature types,
class id 0 in an Object Detection API dataset, images by the data), duplicate images, and one fact
table. The files may hold several datasets (`tfrecord.groups`): each is judged against itself
(a duplicate image is still found across them: the same image in train and val is worth knowing).

Associative: results arrive in any order (a pool, a cluster) and merge to the same answer, because
everything order-dependent is decided by file number here, at the end.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from tfrview.core.analysis.checks import (
    ImageKeys,
    Schema,
    check_signature,
    duplicate_finding,
    image_key_findings,
    label_zero_finding,
    other_keys_finding,
)
from tfrview.core.analysis.datasummary import DatasetSummary
from tfrview.core.analysis.results import DeepResult, ShardResult
from tfrview.core.analysis.rules import DatasetRules
from tfrview.core.errors import FileChangedError
from tfrview.core.limits import DUPLICATES_TRACKED
from tfrview.core.problems import Problem
from tfrview.core.tfrecord.groups import DatasetGroup, group_files
from tfrview.core.tfrecord.splits import split_of_files

if TYPE_CHECKING:
    from tfrview.core.analysis.datasetqa import DatasetQA


@dataclass
class DatasetAnalysis:
    """The merged results of every file, in file order."""

    shards: list[ShardResult]
    schema: Schema = field(default_factory=Schema)
    summary: DatasetSummary = field(default_factory=DatasetSummary)
    image_keys: ImageKeys = field(default_factory=ImageKeys)
    # file -> problems found by merging
    dataset_problems: dict[int, list[Problem]] = field(default_factory=dict)
    groups: list[DatasetGroup] = field(default_factory=list)  # the datasets the files hold, each judged alone
    splits: list[str] = field(default_factory=list)  # each file's split (tfrecord.splits; "" none)
    rules: DatasetRules = field(default_factory=DatasetRules)  # the dataset step's thresholds
    qa: DatasetQA | None = None  # the dataset step's tables and notes (a deep analysis only)

    def problems(self, file_no: int) -> list[Problem]:
        """Every problem of one file: its own and those only the whole dataset shows."""
        return self.shards[file_no].problems + self.dataset_problems.get(file_no, [])

    @property
    def class_ids(self) -> set[int]:
        return self.class_ids_of(range(len(self.shards)))

    def class_ids_of(self, files) -> set[int]:
        """The class ids some files use (one dataset's, to judge a label map found beside it)."""
        return set().union(
            *(self.shards[fi].deep.class_ids for fi in files if self.shards[fi].deep is not None)
        )

    @property
    def deep(self) -> bool:
        return all(s.deep is not None for s in self.shards if s.error is None)

    def _step_columns(self, t, fi: int):
        """The dataset step's per-record columns: `dup_group` (null when in no group) and `leak`
        (true, or null when no copy is in another split: the filter's `leak` alone asks for a value);
        the evaluation's `tp`, `fp`, `fn` (null: a record not evaluated) and `max_fp_score` (null:
        no false positive)."""
        import pyarrow as pa  # heavy: pyarrow on first use only

        from tfrview.core.analysis.stepcolumns import NAMES

        made = self.qa.record_columns if self.qa is not None else {}
        for name, how in NAMES.items():
            if name not in made:
                continue
            arr = made[name].get(fi)
            floats, flags = how.endswith("f4"), how == "u1"  # a score; a yes (leak) or null
            if arr is None or len(arr) != t.num_rows:
                arr = np.full(t.num_rows, np.nan if floats else False if flags else -1)
            if flags:
                t = t.append_column(name, pa.array(arr.astype(bool), mask=~arr.astype(bool)))
            elif floats:
                t = t.append_column(name, pa.array(arr.astype(np.float64), mask=np.isnan(arr)))
            else:
                t = t.append_column(name, pa.array(arr.astype(np.int64), mask=arr < 0))
        return t

    def facts(self, pick=None):
        """One fact table for the dataset (pyarrow), with `n`, each record's number in the dataset.
        `pick` (a pyarrow schema -> column names): only those columns of each file's table, read
        and not kept (`DeepResult.read_facts`: a stored table decompressed only there)."""
        import pyarrow as pa  # heavy: pyarrow on first use only

        from tfrview.core.analysis.facts import concat  # heavy: pyarrow on first use only

        tables, base = [], 0
        for fi, s in enumerate(self.shards):
            if s.deep is not None:
                t = s.deep.facts if pick is None else s.deep.read_facts(pick)
                t = t.add_column(0, "n", pa.array(np.arange(base, base + t.num_rows, dtype=np.int64)))
                split = self.splits[fi] if fi < len(self.splits) else ""
                t = t.append_column(
                    "split",
                    pa.DictionaryArray.from_arrays(
                        pa.array(np.zeros(t.num_rows, dtype=np.int32)), pa.array([split])
                    ),
                )
                tables.append(self._step_columns(t, fi))
            base += len(s.offsets)
        if not tables:
            return None
        return concat(tables)


def _length_mismatches(shards: list[ShardResult]) -> list[tuple[int, Problem]]:
    """`shard_length_mismatch` of each framed TFDS shard whose intact records differ from its
    dataset_info.json's `shardLengths` (tfrecord.tfdsfiles: the window's and `verify`'s rule)."""
    from tfrview.core.tfrecord.tfdsfiles import expected, problem_of_expected

    out = []
    folders: dict = {}  # each folder's TFDS dataset, found once for all its shards
    for fi, s in enumerate(shards):
        # (the intact records counted of a shard the metadata names only)
        if s.error is None and (want := expected(s.path, folders)) is not None:
            p = problem_of_expected(want, s.records)
            if p is not None:
                out.append((fi, p))
    return out


def merge(
    results: list[ShardResult],
    groups: list[DatasetGroup] | None = None,
    splits: list[str] | None = None,
    rules: DatasetRules | None = None,
    step: bool = True,
) -> DatasetAnalysis:
    """The files' results as one analysis. `groups`: which files form one dataset (default: by
    their names, `tfrecord.groups.group_files`); each is judged against its own schema. `splits`:
    each file's split (default: by their paths, `tfrecord.splits`). `rules`: the thresholds of the
    dataset step (`datasetqa`), run when every file was decoded and `step` (a caller that reads
    none of its findings or columns, as a rewrite whose filter names none, leaves it out)."""
    shards = join_parts(results)
    out = DatasetAnalysis(shards, rules=rules or DatasetRules())
    out.groups = groups if groups is not None else group_files([s.path for s in shards])
    out.splits = list(splits) if splits is not None else split_of_files([s.path for s in shards])
    for s in shards:
        if s.deep is not None:
            out.summary.merge(s.deep.summary)
    for g in out.groups:
        deep = [(fi, shards[fi]) for fi in g.files if fi < len(shards) and shards[fi].deep is not None]
        schema, image_keys = Schema(), ImageKeys()
        for _, s in deep:
            schema.merge(s.deep.schema)
            if s.deep.image_keys is not None:
                image_keys.merge(s.deep.image_keys)
        out.schema.merge(schema)
        out.image_keys.merge(image_keys)
        for fi, s in deep:
            found = _schema_problems(s, schema)
            if schema.od_dataset:
                found += [_at(s, n, label_zero_finding(key)) for n, key in s.deep.class_zero]
            if s.deep.image_keys is not None:
                found += [_at(s, n, f) for n, f in image_key_findings(s.deep.image_keys, image_keys)]
            if found:
                out.dataset_problems.setdefault(fi, []).extend(found)
    names = [s.path for s in shards]
    for fi, p in _duplicates(shards, names):
        out.dataset_problems.setdefault(fi, []).append(p)
    for fi, p in _length_mismatches(shards):
        out.dataset_problems.setdefault(fi, []).append(p)
    _say_other_keys(out)
    if step and any(s.deep is not None for s in shards):
        from tfrview.core.analysis import datasetqa  # pyarrow and the steps: a deep analysis only

        out.qa = datasetqa.run(out, out.rules)
    return out


def _say_other_keys(out: DatasetAnalysis) -> None:
    """Keys past limits.TRACKED_KEYS (or FACT_KEYS), said once: at the first record that holds
    one, found by the file's schema or by its signatures (a file's key the dataset did not keep)."""
    finding = other_keys_finding(out.schema, len(out.schema.types))
    if finding is None:
        return
    for fi, s in enumerate(out.shards):
        if s.deep is None:
            continue
        first = [s.deep.schema.first_other] if s.deep.schema.first_other >= 0 else []
        for i, sig in enumerate(s.deep.signatures):
            if sig[2] or any(k not in out.schema.types for k, _ in sig[1]):
                hits = np.flatnonzero(s.deep.signature_of == i)
                first += [int(hits[0])] if len(hits) else []
        if first or out.schema.other == 0:  # the fact table's limit alone: the dataset's first record
            n = min(first) if first else int(next(iter(np.flatnonzero(s.deep.signature_of >= 0)), 0))
            if n < len(s.offsets):
                out.dataset_problems.setdefault(fi, []).append(_at(s, n, finding))
                return


def join_parts(results: list[ShardResult]) -> list[ShardResult]:
    """One result per file, in file order: the parts of a big file joined in record order."""
    by_file: dict[int, list[ShardResult]] = {}
    for r in results:
        by_file.setdefault(r.file_no, []).append(r)
    out = []
    for fi in sorted(by_file):
        parts = sorted(by_file[fi], key=lambda r: r.part)
        out.append(parts[0] if len(parts) == 1 else _joined(parts))
    return out


def _joined(parts: list[ShardResult]) -> ShardResult:

    first = parts[0]
    failed = next((p for p in parts if p.error is not None), None)
    if failed is not None:
        return replace(first, error=failed.error, deep=None, problems=[])
    changed = next((p for p in parts[1:] if not _same_framing(first, p)), None)
    if changed is not None:  # each part framed the file itself: one that grew between them differs
        detail = (
            f" (one part of its pass framed {len(first.offsets):,} records, another {len(changed.offsets):,})"
        )
        return replace(first, error=str(FileChangedError(first.path, detail)), deep=None, problems=[])
    problems = [pr for p in parts for pr in p.problems]
    deep = None
    if all(p.deep is not None for p in parts):
        from tfrview.core.analysis.facts import concat  # pyarrow: only a deep pass needs it

        schema, summary, image_keys = Schema(), DatasetSummary(), ImageKeys()
        ids: dict = {}
        sig_of = np.full(len(first.offsets), -1, dtype=np.int32)
        for p in parts:
            schema.merge(p.deep.schema)
            summary.merge(p.deep.summary)
            if p.deep.image_keys is not None:
                image_keys.merge(p.deep.image_keys)
            remap = np.array(
                [ids.setdefault(sig, len(ids)) for sig in p.deep.signatures] + [-1], dtype=np.int32
            )
            mine = p.deep.signature_of  # the part's records (a result stored before: the file's)
            mine = mine if len(mine) == p.hi - p.lo else mine[p.lo : p.hi]
            sig_of[p.lo : p.hi] = remap[mine]  # -1 indexes the trailing -1
        facts = [p.deep for p in parts]  # joined when asked: stored parts are read only then
        deep = DeepResult(
            schema,
            summary,
            lambda pick=None: concat([d.read_facts(pick) for d in facts]),
            list(ids),
            sig_of,
            [d for p in parts for d in p.deep.digests],
            [z for p in parts for z in p.deep.class_zero],
            set().union(*(p.deep.class_ids for p in parts)),
            image_keys,
            parts=facts,
        )
    return replace(
        first,
        problems=problems,
        deep=deep,
        part=0,
        parts=1,
        lo=0,
        hi=len(first.offsets),
        from_cache=all(p.from_cache for p in parts),
        analysed_at=min(p.analysed_at for p in parts),
        seconds=sum(p.seconds for p in parts),
    )


def _same_framing(a: ShardResult, b: ShardResult) -> bool:
    """Two parts of one file's pass read the same file: the same identity (size, times, ends) and
    the same records (a file rewritten within one tick of its times keeps them)."""
    return (
        a.identity == b.identity
        and (a.file_size, a.scanned, a.compression) == (b.file_size, b.scanned, b.compression)
        and np.array_equal(a.offsets, b.offsets)
        and np.array_equal(a.lengths, b.lengths)
    )


def _at(s: ShardResult, n: int, finding) -> Problem:
    return finding.at(s.offsets[n], s.lengths[n], n)


def _schema_problems(s: ShardResult, schema: Schema) -> list[Problem]:
    """The schema checks, once per distinct signature, then for each record that has it."""
    out: list[Problem] = []
    untracked = [
        k for k in schema.expected_keys() if k not in s.deep.schema.types
    ]  # maybe among its other keys
    for i, sig in enumerate(s.deep.signatures):
        findings = check_signature(sig, schema, untracked if sig[2] else ())
        if not findings:
            continue
        for n in np.flatnonzero(s.deep.signature_of == i):
            out.extend(_at(s, int(n), f) for f in findings)
    return out


def _duplicates(shards: list[ShardResult], names: list[str]):
    """The same image's bytes stored twice: each later copy names where it was first seen. The
    pass keeps byte digests only of records whose image it could not hash (`shard._deep`): a hashed
    image is the dataset step's (`analysis.duplicates`, exact and near copies by their pixels, a
    copy in another split a leak), so no pair is said twice."""
    first: dict[bytes, tuple[int, int]] = {}
    for fi, s in enumerate(shards):
        if s.deep is None:
            continue
        for n, key, h in s.deep.digests:
            seen = first.get(h)
            if seen is None:
                if len(first) < DUPLICATES_TRACKED:
                    first[h] = (fi, n)
            elif seen != (fi, n):
                where = f" of {names[seen[0]]}" if seen[0] != fi else ""
                yield fi, _at(s, n, duplicate_finding(key, seen[1], where))
