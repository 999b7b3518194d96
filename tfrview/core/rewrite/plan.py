"""A rewrite's plan: which input records are written, where, and changed how — all as arrays.

Every input is framed first; only intact records can be written (a damaged record's bytes are never
copied). Its CRCs are checked by the copy in the bytes it reads (`run._check_window`) against the
framing planned here: the analysis's (stored or run now), or, for a big plain file a plain copy
reads, its framing alone (`index.scan`, the headers of 250 KB records read, not their data). A
record that fails there starts the rewrite again with every input verified first (`verify_first`,
`Dataset`'s framing and every CRC, a big plain file in parts on every core), so the answer is the
one a verification first gives. What a filter, a class map, a stratified split or a grouping needs is
read from the analysis pass's fact table (run once, stored, so the window's filter job answers from
the same facts), only the columns they name: the selection is `vfilter` over it, the class keys are
the box spec it stored and the record label keys, the groups its `source_id`/filename/episode
columns or the dataset step's `dup_group` (the dataset step runs only when one of its columns is
named)."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tfrview.core.rewrite.classes import Remap, build_remap
from tfrview.core.rewrite.options import DEFAULT_SHARD_BYTES, GroupBy, RewriteError, RewriteOptions
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]

NO_SPLIT = "data"  # the output split of records whose input names none
GROUP_KEYS = {
    GroupBy.SOURCE_ID: ("image/source_id", "source_id", "image/id", "id"),
    GroupBy.STEM: ("image/filename", "filename", "image/file_name", "file_name", "image/path", "path"),
    GroupBy.EPISODE: (
        "episode_id",
        "episode/id",
        "episode_metadata/episode_id",
        "episode_metadata/file_path",
    ),
}


@dataclass
class PlannedFile:
    path: Path
    source: object
    count: int  # records framed
    intact: np.ndarray  # bool a record: its data passed its CRC
    raw_ok: np.ndarray  # bool a record: both CRCs passed, copied as framed bytes
    offsets: np.ndarray
    lengths: np.ndarray
    split: str


@dataclass
class Plan:
    """The inputs and, for every record written (in output order within each split), where from."""

    files: list[PlannedFile]
    tfds: object | None  # the one TFDS dataset the inputs are, if they are one
    records_in: int
    dropped: dict[str, int]  # damaged, filter, tag
    splits: dict[str, np.ndarray] = field(default_factory=dict)  # split -> global record numbers, in order
    shard_of: dict[str, np.ndarray] = field(default_factory=dict)  # split -> each record's shard
    shards: dict[str, int] = field(default_factory=dict)
    changed: np.ndarray | None = None  # bool a global record: its class keys may change
    class_keys: tuple[str, ...] = ()
    remap: Remap | None = None
    starts: np.ndarray = field(default_factory=lambda: np.zeros(1, np.int64))
    notes: list[str] = field(default_factory=list)
    verified_first: bool = False  # every input's CRCs checked before the plan (else by the copy)

    def locate(self, numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fi = np.searchsorted(self.starts, numbers, side="right") - 1
        return fi, numbers - self.starts[fi]

    @property
    def kept(self) -> int:
        return sum(len(v) for v in self.splits.values())


def open_inputs(
    args: list[str],
    opts: RewriteOptions,
    label_map,
    progress: Progress | None,
    verify_first: bool = False,
    needs_step: bool = False,
) -> tuple[list[PlannedFile], object, object]:
    """Every input framed on the analysis pass's pool (files side by side, a big plain file in
    parts on every core), with the deep pass when a filter, class map or split needs the facts
    (their stored results reused). Without `verify_first`, a stored result's framing and statuses
    are taken as they are and a big plain file a plain copy reads is framed alone (`_scan_only`):
    the copy checks the CRCs of what it reads. With it, every input is verified now (a file whose
    result came from the store framed and verified again). A file that cannot be opened or a shard
    that is missing is an error (a rewrite of part of a dataset would be silent loss).
    (files, the one TFDS dataset the inputs are or None, the merged analysis or None)."""
    from tfrview.core.analysis import plan as plan_tasks
    from tfrview.core.analysis import run_tasks
    from tfrview.core.analysis.merge import join_parts, merge
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.core.tfrecord.report import index_and_verify
    from tfrview.core.tfrecord.splits import split_of_files

    ds = Dataset.open(args)
    for f in ds.files:
        if f.source is None:
            raise RewriteError(f"{printable(str(f.path))}: {printable(f.error or 'cannot be read')}")
    splits = [s or NO_SPLIT for s in split_of_files([f.path for f in ds.files])]
    deep = bool(opts.where or opts.class_map or opts.split or opts.group_by)
    framed: dict[int, tuple] = {}  # file -> (offsets, lengths, status) of a framing alone
    if not deep and not verify_first:
        for fi, f in enumerate(ds.files):
            got = _scan_only(f.source, opts.jobs)
            if got is not None:
                framed[fi] = got
    todo = [fi for fi in range(len(ds.files)) if fi not in framed]
    lm = {str(k): v for k, v in label_map.items()} if (deep and label_map) else None
    tasks = plan_tasks([str(ds.files[fi].path) for fi in todo], deep, lm, read_cache=deep)
    phase = "reading records (analysis)" if deep else "verifying inputs"
    results = []
    for r in run_tasks(tasks, opts.jobs) if todo else ():
        results.append(r)
        if progress is not None:
            progress(phase, len(results), len(tasks))
    for r in results:
        if r.error is not None:
            raise RewriteError(printable(r.error))
    a = merge(results, splits=splits, step=needs_step) if deep else None
    shards = a.shards if a is not None else join_parts(results)
    by_file = dict(zip(todo, shards, strict=True))
    cached = {todo[r.file_no] for r in results if r.from_cache}
    out = []
    for fi, f in enumerate(ds.files):
        if fi in framed:
            offsets, lengths, status = framed[fi]
            out.append(_planned(f.path, f.source, offsets, lengths, status, splits[fi]))
            continue
        s = by_file[fi]
        offsets, lengths, status = s.offsets, s.lengths, s.status
        if fi in cached and verify_first:
            if progress is not None:
                progress("verifying inputs", fi, len(ds.files))
            idx, _ = index_and_verify(f.source, jobs=opts.jobs)
            offsets, lengths, status = (
                idx.offsets[: idx.count],
                idx.lengths[: idx.count],
                idx.status[: idx.count],
            )
            if len(offsets) != len(s.offsets) or not np.array_equal(offsets, s.offsets):
                raise RewriteError(
                    f"{printable(str(f.path))}: frames otherwise than its stored analysis; run `tfrview cache --clear`"
                )
        out.append(_planned(f.path, f.source, offsets, lengths, status, splits[fi]))
    tfds = ds.tfds[0] if len(ds.tfds) == 1 and ds.tfds[0].info is not None else None
    return out, tfds, a


def _scan_only(source, jobs: int) -> tuple | None:
    """A big local plain file's framing alone (`index.scan`: its headers, not its data), every
    record taken as intact for the copy to check; None (verify it on the pool) for any other file,
    or one whose framing finds a problem."""
    from tfrview.core.errors import TfrviewError
    from tfrview.core.limits import FRAME_PARTS_BYTES
    from tfrview.core.tfrecord.framing import Compression
    from tfrview.core.tfrecord.index import VERIFIED, RecordIndex, scan

    try:
        if (
            source.compression != Compression.NONE
            or getattr(source, "remote", False)
            or getattr(source, "file_size", 0) < FRAME_PARTS_BYTES
        ):
            return None
        idx = RecordIndex()
        for chunk in scan(source):
            if chunk.problems:
                return None
            idx.apply(chunk)
    except (OSError, TfrviewError) as exc:  # said by the verification on the pool that follows
        log.debug("%s: framed on the pool instead (%s)", getattr(source, "path", "?"), exc)
        return None
    n = idx.count  # framed whole: each taken as verified (VERIFIED), which the copy makes true
    return idx.offsets[:n].copy(), idx.lengths[:n].copy(), idx.status[:n] | VERIFIED


def _planned(path, source, offsets, lengths, status, split) -> PlannedFile:
    from tfrview.core.tfrecord.status import WORDS, RecordStatus, intact_mask, status_codes

    st = np.asarray(status)
    intact = intact_mask(st)
    raw_ok = (status_codes(st) == WORDS.index(RecordStatus.OK)) & intact
    return PlannedFile(
        path,
        source,
        len(st),
        intact,
        raw_ok,
        np.asarray(offsets, dtype=np.int64),
        np.asarray(lengths, dtype=np.int64),
        split,
    )


def make_plan(
    args: list[str],
    opts: RewriteOptions,
    *,
    drop: frozenset[tuple[str, int]] = frozenset(),
    keep: frozenset[tuple[str, int]] | None = None,
    label_map: dict[int, str] | None = None,
    progress: Progress | None = None,
    verify_first: bool = False,
) -> Plan:
    """Inputs framed (verified with `verify_first`, else the copy checks them), records selected,
    split, ordered and sharded. `drop`/`keep`: (path, offset) of records a tag drops or keeps
    (`keep` None: no keep tag asked)."""
    files, tfds, a = open_inputs(args, opts, label_map, progress, verify_first, _needs_step(opts))
    counts = np.array([f.count for f in files], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)])
    n = int(starts[-1])
    intact = np.concatenate([f.intact for f in files]) if files else np.zeros(0, bool)
    plan = Plan(
        files,
        tfds,
        n,
        {"damaged": int(n - intact.sum()), "filter": 0, "tag": 0},
        starts=starts,
        verified_first=verify_first,
    )
    selected = intact.copy()
    table = known = None
    if a is not None and n:
        table, known = _facts(a, opts)
        if table is None or table.num_rows != n:
            raise RewriteError(
                "the analysis framed the inputs otherwise than their verification; run `tfrview cache --clear`"
            )
    if opts.where:
        hit = _where(table, opts.where, a, known) if table is not None else np.zeros(n, bool)
        plan.dropped["filter"] = int((selected & ~hit).sum())
        selected &= hit
    if drop or keep is not None:
        tagged = _tagged(files, starts, drop, keep)
        plan.dropped["tag"] = int((selected & tagged).sum())
        selected &= ~tagged
    if opts.class_map:
        _classes(plan, table, opts, label_map)
    numbers = np.flatnonzero(selected)
    if opts.split:
        assign = _assign_splits(plan, table, numbers, opts)
    else:
        fi, _ = plan.locate(numbers)
        names = np.array([f.split for f in files], dtype=object)
        assign = {s: numbers[names[fi] == s] for s in dict.fromkeys(f.split for f in files)}
    rng_seed = opts.seed
    lengths = np.concatenate([f.lengths for f in files]) if files else np.zeros(0, np.int64)
    for s, nums in assign.items():
        if not len(nums):
            continue
        if opts.shuffle:
            rng = np.random.default_rng([rng_seed, _stable(s)])
            nums = nums[rng.permutation(len(nums))]
        plan.splits[s] = nums
        sizes = lengths[nums] + 16
        total = int(sizes.sum())
        k = opts.shards or max(1, math.ceil(total / (opts.shard_bytes or DEFAULT_SHARD_BYTES)))
        k = max(1, min(k, len(nums)))
        before = np.cumsum(sizes) - sizes
        plan.shard_of[s] = np.minimum(before * k // max(total, 1), k - 1).astype(np.int64)
        plan.shards[s] = k
    return plan


def _stable(word: str) -> int:
    """A number from a split's name that is the same in every process (str hash is salted)."""
    import zlib

    return zlib.crc32(word.encode("utf-8"))


def _needs_step(opts: RewriteOptions) -> bool:
    """Whether the rewrite reads a column of the dataset step (`dup_group`, `leak`, an evaluation's):
    the step (copies across the dataset, image quality, label rules) runs in the merge only then."""
    from tfrview.core.analysis.filterexpr import keys_used, parse
    from tfrview.core.analysis.stepcolumns import NAMES

    if opts.group_by == GroupBy.DUP_GROUP:
        return True
    return bool(opts.where) and bool(keys_used(parse(opts.where)) & set(NAMES))


# the fact columns every reading of the facts keeps (small; what the filter's facts read)
_BASE_COLUMNS = ("file", "record", "offset", "size", "crc", "kind")


def _facts(analysis, opts: RewriteOptions):
    """The dataset's fact table with only the columns the filter, the class map and the grouping
    read (each file's stored table decompressed only there: `DeepResult.read_facts(pick)`), and the
    feature keys every file's table holds (what the filter's keys are checked against).

    The filter's keys are resolved against the keys the analysis's schema counted (no table read);
    when that fails, against the keys every file's table holds (each file's schema message read:
    the exact answer and the message the window's filter gives)."""
    from tfrview.core.analysis.facts import column_of, key_of, len_column_of
    from tfrview.core.analysis.filterexpr import FilterError, keys_used, parse, resolve_keys

    names: set[str] = set()

    def learn(schema) -> list[str]:
        names.update(schema.names)
        return []

    known = set(analysis.schema.types)
    used: set[str] = set()
    if opts.where:
        node = parse(opts.where)
        try:
            used |= keys_used(resolve_keys(node, known, complete=True))
        except FilterError:
            for s in analysis.shards:
                if s.deep is not None:
                    s.deep.read_facts(learn)
            known = {got[0] for c in names if (got := key_of(c)) is not None}
            used |= keys_used(resolve_keys(node, known, complete=True))
    if opts.group_by is not None and opts.group_by != GroupBy.DUP_GROUP:
        used |= set(GROUP_KEYS[opts.group_by])

    def pick(schema) -> set[str]:
        want = set(_BASE_COLUMNS) | (used & set(schema.names))
        for k in used:
            want |= {column_of(k), len_column_of(k)}
        if opts.class_map or opts.split:
            ids, texts, label = class_columns(schema)
            for k in (*ids, *texts, *([label] if label else [])):
                want |= {column_of(k), len_column_of(k)}
        return want

    return analysis.facts(pick), known


def _where(table, expr: str, analysis, known: set[str] | None = None) -> np.ndarray:
    """Which records the filter keeps, as the window's filter job evaluates it over the facts.
    `known`: every feature key of the dataset (default: those the table's columns hold)."""
    from tfrview.core.analysis.facts import key_of
    from tfrview.core.analysis.filterexpr import facts_used, parse, resolve_keys
    from tfrview.core.analysis.vfilter import Matcher

    if known is None:
        known = {k for c in table.column_names if (got := key_of(c)) is not None for k in [got[0]]}
    node = resolve_keys(parse(expr), known, complete=True)
    problems: dict[str, list[int]] = {}
    base = 0
    for s in analysis.shards:
        for p in s.problems:
            if p.record is not None:
                problems.setdefault(str(p.kind), []).append(base + int(p.record))
        base += len(s.offsets)
    tags = None
    if "tag" in facts_used(node):  # the person's tags, read from their store now, as the window's filter does
        from tfrview.core.tags import TagStore, rows_by_word

        with TagStore.open() as store:
            if store.note:
                log.warning("%s", store.note)
            codes, stale = store.codes_over(
                [s.path for s in analysis.shards], [s.offsets for s in analysis.shards]
            )
        if stale:
            log.warning("%s tags no longer match their record (the file changed): not applied", f"{stale:,}")
        tags = rows_by_word(codes)
    m = Matcher(table, {k: np.array(sorted(v), dtype=np.int64) for k, v in problems.items()}, tags=tags)
    mask = np.asarray(m.mask(node), dtype=bool)
    if m.blind:
        log.warning(
            "the facts keep %s only in part: a record could match beyond them", ", ".join(sorted(m.blind))
        )
    return mask


def _tagged(files, starts, drop, keep) -> np.ndarray:
    """Which records a tag drops: those in `drop`, and with `keep`, every one not in it."""

    def by_path(pairs) -> dict[str, np.ndarray]:  # one walk of the pairs, not one a file
        grouped: dict[str, list[int]] = {}
        for q, o in pairs:
            grouped.setdefault(q, []).append(o)
        return {q: np.array(v, dtype=np.int64) for q, v in grouped.items()}

    none = np.empty(0, dtype=np.int64)
    drops, keeps = by_path(drop), by_path(keep) if keep is not None else None
    out = np.zeros(int(starts[-1]), bool)
    for fi, f in enumerate(files):
        p = os.path.realpath(f.path)
        offs = f.offsets
        d = drops.get(p, none)
        if len(d):
            out[starts[fi] : starts[fi + 1]] |= np.isin(offs, d)
        if keeps is not None:
            out[starts[fi] : starts[fi + 1]] |= ~np.isin(offs, keeps.get(p, none))
    return out


def _box_spec(table) -> dict:
    import json

    from tfrview.core.analysis.facts import BOX_META

    meta = getattr(table, "schema", table).metadata or {}
    try:
        return json.loads(meta.get(BOX_META, b"{}"))
    except ValueError:
        return {}


def class_columns(table) -> tuple[list[str], list[str], str | None]:
    """(id keys, text keys, the record label key) the reading found: the box spec's class keys and
    the first record-label key the facts hold, with its `/text` or `/label` sibling. `table`: a
    fact table or its schema."""
    from tfrview.core.analysis.facts import column_of
    from tfrview.core.records.reading import LABEL_KEYS

    schema = getattr(table, "schema", table)
    spec = _box_spec(schema)
    names = set(schema.names)
    ids, texts = [], []
    if spec.get("class_id"):
        ids.append(spec["class_id"])
    if spec.get("class_text"):
        texts.append(spec["class_text"])
    label = next((k for k in LABEL_KEYS if column_of(k) in names), None)
    if label is not None:
        for k in (label, *_siblings(label)):
            col = column_of(k)
            if col in names and k not in ids and k not in texts:
                (texts if _is_text(schema.field(col).type) else ids).append(k)
    return ids, texts, label


def _siblings(key: str) -> tuple[str, ...]:
    head, _, last = key.rpartition("/")
    pre = head + "/" if head else ""
    if last == "label":
        return (pre + "text",)
    if last == "text":
        return (pre + "label",)
    return ()


def _is_text(t) -> bool:
    import pyarrow as pa

    while pa.types.is_list(t) or pa.types.is_large_list(t):
        t = t.value_type
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t)


def _flat(table, key: str):
    """(values, row of each value) of a key's column: scalar or list, nulls left out."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from tfrview.core.analysis.facts import column_of

    col = table.column(column_of(key)).combine_chunks()
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        rows = pc.list_parent_indices(col).to_numpy()
        vals = pc.list_flatten(col)
    else:
        valid = col.is_valid().to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(valid)
        vals = col.filter(pa.array(valid))
    return vals, rows


def _first(table, key: str, n: int) -> list | None:
    """Each record's first value of a key (None: none)."""
    vals, rows = _flat(table, key)
    if not len(rows):
        return None
    out = [None] * n
    firsts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    v = vals.take(firsts).to_pylist()
    for r, x in zip(rows[firsts].tolist(), v, strict=True):
        out[r] = x
    return out


def _classes(plan: Plan, table, opts: RewriteOptions, label_map: dict[int, str] | None) -> None:
    """The class map resolved against the data (`classes.build_remap`) and which records it may
    change (a list the facts keep only in part counts as changing: the write reads it)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from tfrview.core.analysis.facts import column_of, len_column_of
    from tfrview.core.limits import FACT_VALUES

    ids_k, texts_k, _ = class_columns(table)
    if not ids_k and not texts_k:
        raise RewriteError("--map-classes: the records hold no class keys (no class label or text was found)")
    known: dict[int, str] = dict(label_map or {})
    ids_seen: set[int] = set()
    names_seen: set[str] = set()
    for k in ids_k:
        ids_seen |= set(pc.unique(_flat(table, k)[0]).to_pylist())
    for k in texts_k:
        names_seen |= set(pc.unique(_flat(table, k)[0]).to_pylist())
    for ik, tk in zip(ids_k, texts_k, strict=False):  # the pairs held side by side
        iv, ir = _flat(table, ik)
        tv, tr = _flat(table, tk)
        if len(ir) == len(tr) and np.array_equal(ir, tr):
            pairs = pa.table({"i": iv, "t": tv}).group_by(["i", "t"]).aggregate([])
            for i, t in zip(pairs.column("i").to_pylist(), pairs.column("t").to_pylist(), strict=True):
                if i is not None and t and i not in known:
                    known[int(i)] = t
    remap = build_remap(
        opts.class_map, known, {int(i) for i in ids_seen if i is not None}, {t for t in names_seen if t}
    )
    changed = np.zeros(table.num_rows, bool)
    for k in ids_k:
        v, r = _flat(table, k)
        hit = (
            np.isin(v.to_numpy(zero_copy_only=False), np.array(list(remap.ids) or [0], dtype=np.int64))
            if remap.ids
            else np.zeros(len(r), bool)
        )
        changed[r[hit]] = True
    for k in texts_k:
        v, r = _flat(table, k)
        if remap.names:
            hit = pc.is_in(v, value_set=pa.array(list(remap.names))).to_numpy(zero_copy_only=False)
            changed[r[hit]] = True
    for k in (*ids_k, *texts_k):  # lists longer than the facts keep: the write looks at them
        lc = len_column_of(k)
        if lc in table.column_names:
            ln = table.column(lc).to_numpy(zero_copy_only=False)
            changed |= np.nan_to_num(ln.astype(float), nan=0) > FACT_VALUES
        elif column_of(k) not in table.column_names:
            continue
    plan.changed = changed
    plan.class_keys = tuple(dict.fromkeys((*ids_k, *texts_k)))
    plan.remap = remap


def _strata(plan: Plan, table, numbers: np.ndarray) -> np.ndarray:
    """Each selected record's class for stratifying (its label, else its first object's class,
    after the class map), as small integer codes."""
    ids_k, texts_k, label = class_columns(table)
    n = table.num_rows
    order = ([label] if label else []) + ids_k + texts_k
    cls: list = [None] * n
    for k in order:
        got = _first(table, k, n)
        if got is None:
            continue
        for i in range(n):
            if cls[i] is None and got[i] is not None:
                cls[i] = got[i]
    remap = plan.remap
    if remap is not None:
        cls = [
            remap.new_id(c) if isinstance(c, int) else remap.new_name(c) if isinstance(c, str) else c
            for c in cls
        ]
    words = [repr(cls[i]) for i in numbers.tolist()]
    _, codes = np.unique(np.array(words, dtype=object).astype(str), return_inverse=True)
    return codes


def _groups(plan: Plan, table, numbers: np.ndarray, by: GroupBy | None) -> np.ndarray:
    """Each selected record's group code; a record with no key is a group of its own."""
    m = len(numbers)
    own = np.arange(m, dtype=np.int64) + (1 << 40)
    if by is None:
        return own
    if by == GroupBy.DUP_GROUP:
        if "dup_group" not in table.column_names:
            plan.notes.append(
                "--group-by dup_group: the dataset step found no copies (no images?): every record its own group"
            )
            return own
        g = table.column("dup_group").to_numpy(zero_copy_only=False)
        g = np.nan_to_num(np.asarray(g, dtype=float), nan=-1).astype(np.int64)[numbers]
        return np.where(g >= 0, g, own)
    from tfrview.core.analysis.facts import column_of

    key = next((k for k in GROUP_KEYS[by] if column_of(k) in table.column_names), None)
    if key is None:
        raise RewriteError(f"--group-by {by}: the records hold none of {', '.join(GROUP_KEYS[by])}")
    vals = _first(table, key, table.num_rows) or [None] * table.num_rows
    words = []
    for i in numbers.tolist():
        v = vals[i]
        if v is None or v == "":
            words.append(None)
        else:
            v = v if isinstance(v, str) else repr(v)
            words.append(Path(v).stem if by == GroupBy.STEM else v)
    present = np.array([w is not None for w in words], bool)
    out = own.copy()
    if present.any():
        _, codes = np.unique(np.array([w for w in words if w is not None], dtype=str), return_inverse=True)
        out[present] = codes
    return out


def _assign_splits(plan: Plan, table, numbers: np.ndarray, opts: RewriteOptions) -> dict[str, np.ndarray]:
    """Records into the asked splits by fraction, stratified by class, groups kept whole: within each
    class (a group's most common), groups in a seeded random order fill the splits by their
    cumulative size, so each split's share of each class follows its fraction."""
    names = [s for s, _ in opts.split]
    fracs = np.array([f for _, f in opts.split], dtype=float)
    if not len(numbers):
        return {s: numbers for s in names}
    strata = _strata(plan, table, numbers)
    groups = _groups(plan, table, numbers, opts.group_by)
    gu, ginv = np.unique(groups, return_inverse=True)
    sizes = np.bincount(ginv)
    # a group's stratum: its most common class
    pair = ginv.astype(np.int64) * (int(strata.max()) + 1) + strata
    pu, pc_ = np.unique(pair, return_counts=True)
    pg, ps = pu // (int(strata.max()) + 1), pu % (int(strata.max()) + 1)
    order = np.lexsort((-pc_, pg))
    firsts = order[np.r_[True, pg[order][1:] != pg[order][:-1]]]
    gstrat = np.empty(len(gu), np.int64)
    gstrat[pg[firsts]] = ps[firsts]
    rng = np.random.default_rng([opts.seed, 0x5EED])
    perm = rng.permutation(len(gu))
    gsplit = np.empty(len(gu), np.int64)
    cum = np.cumsum(fracs)
    for st in np.unique(gstrat):
        gs = perm[gstrat[perm] == st]  # this class's groups, in the seeded order
        c = np.cumsum(sizes[gs])
        mid = (c - sizes[gs] / 2) / c[-1]
        gsplit[gs] = np.minimum(np.searchsorted(cum, mid, side="right"), len(names) - 1)
    rsplit = gsplit[ginv]
    return {s: numbers[rsplit == k] for k, s in enumerate(names)}


def describe(plan: Plan) -> dict:
    """The plan's counts as plain data (the summary before writing)."""
    return {
        "records_in": plan.records_in,
        "kept": plan.kept,
        "dropped": dict(plan.dropped),
        "splits": {s: len(v) for s, v in plan.splits.items()},
    }
