"""The one pass over one file: every record read once for the index, both CRCs and (deep) the QA
checks, the statistics and the fact table. A plain function of plain data, so it runs the same in
this process, in a pool of worker processes, or on a cluster; its results merge (see merge.py).
"""

from __future__ import annotations

import logging
import os
import sys
import time

import numpy as np

from tfrview.core import limits
from tfrview.core.analysis.results import (
    IDENTITY_ENDS,
    DeepResult,
    ResultList,
    ShardResult,
    ShardTask,
    identity_from_crc,
    identity_of,
    picked,
)
from tfrview.core.errors import TfrviewError
from tfrview.core.limits import CLASS_IDS_TRACKED, MAX_PARTS, PART_BYTES, PART_SAMPLE_BYTES
from tfrview.core.problems import Problem
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import HEADER, HEADER_SIZE, OVERHEAD, length_crc
from tfrview.core.tfrecord.index import VERIFIED
from tfrview.core.tfrecord.source import open_source
from tfrview.core.tfrecord.status import bytes_all, intact_numbers


def analyze_shard(task: ShardTask, progress=None, jobs: int = 1) -> ShardResult:
    """The whole pass over one file (or its cached result, when the file is unchanged).
    `progress(phase, done, total)` hears the framing and CRC pass when it runs in the caller's
    process (a long file then says how far it is). `jobs`: the cores a big plain file's framing and
    CRCs may take (`tfrecord.parts`; a part of a deep pass frames on one)."""
    from tfrview.core.analysis.cache import load, store  # start-up: kept off the CLI's path

    if task.read_cache:
        hit = load(task)
        if hit is not None:
            return hit
    result = _analyze(task, progress, jobs)
    if task.write_cache and result.error is None:
        store(task, result)
    return result


def analyze_batch(tasks: list[ShardTask]) -> ResultList:
    """`analyze_shard` of many (small) files in one call, a result each: the store is asked and
    written once for all of them, and a pool pickles one call and one answer, not one a file."""
    from tfrview.core.analysis.cache import load_many, store_many  # start-up: kept off the CLI's path
    from tfrview.core.tfrecord.remote import fetch_ahead  # start-up: kept off the CLI's path

    tasks = list(tasks)
    hits = load_many([t for t in tasks if t.read_cache]) if any(t.read_cache for t in tasks) else []
    found = iter(hits)
    got = [next(found) if t.read_cache else None for t in tasks]
    out, fresh = ResultList(), []
    ahead = [(t.path, t.listed) for t, h in zip(tasks, got, strict=True) if h is None]
    wholes = _wholes_of(tasks, got)
    with fetch_ahead(ahead):  # remote objects: many requests in flight
        for k, (t, hit) in enumerate(zip(tasks, got, strict=True)):
            if hit is not None:
                r = hit
            elif k in wholes:
                r = wholes[k] or _analyze(t, whole=False)  # None: not clean, the usual path says why
            else:
                r = _analyze(t)
            if hit is None and t.write_cache and r.error is None:
                fresh.append((t, r))
            out.append(r)
    if fresh:
        from tfrview.core.analysis.cache import _key  # start-up: kept off the CLI's path

        stored = store_many(fresh)
        for t, r in fresh:  # the caller reads a stored fact table only if it wants it (verify does not)
            key = _key(t, r.identity) if r.deep is not None and r.identity is not None else None
            if key in stored:
                r.deep._facts = StoredFacts(key, t)
    return out


class StoredFacts:
    """A fact table a worker stored, read from the store when asked: a worker's results reach the
    caller without it (a 2 M-record file's is 240 MB, held until the end by a `verify` that never
    reads it). Stored results are loaded the same way (cache.load); one evicted meanwhile (a store
    fuller than limits.CACHE_MAX_BYTES) is computed again from the file."""

    def __init__(self, key: str, task: ShardTask) -> None:
        self.key, self.task = key, task

    def __call__(self, pick=None):
        """The table (`pick`: only the columns it names of the schema, `DeepResult.read_facts`)."""
        from tfrview.core.analysis.cache import StoreError, _read_facts  # start-up: kept off the CLI's path

        try:
            return _read_facts(self.key, self.task.path, pick)
        except StoreError as exc:
            logging.getLogger(__name__).info("%s: reading the file again", exc)
            from dataclasses import replace

            r = _analyze(replace(self.task, read_cache=False, write_cache=False))
            if r.error is not None or r.deep is None:
                raise TfrviewError(r.error or f"{self.task.path}: no fact table") from None
            return picked(r.deep.facts, pick)


def _analyze(task: ShardTask, progress=None, jobs: int = 1, whole: bool = True) -> ShardResult:
    """`whole`: a small file is tried read whole first (False: it was, with the others of its batch)."""
    from tfrview.core.tfrecord.report import index_and_verify, sort_problems

    t0 = time.perf_counter()
    if whole and not task.deep and task.parts == 1:
        whole = _whole_small(task, t0)
        if whole is not None:
            return whole
    out = ShardResult(
        task.file_no,
        task.path,
        identity_of(task.path),
        analysed_at=time.time(),
        part=task.part,
        parts=task.parts,
    )
    try:
        src = open_source(task.path)
    except TfrviewError as exc:
        out.error = str(exc)
        return out
    try:
        out.compression, out.file_size = src.compression, src.file_size
        idx, data_problems = index_and_verify(
            src, progress, _say if task.notices else None, jobs if task.parts == 1 else 1
        )
        out.scanned = int(idx.scanned)
        # the index's own arrays, no copy: it is this call's alone, and let go below
        out.offsets = np.asarray(idx.offsets, dtype=np.uint64)
        out.lengths = np.asarray(idx.lengths, dtype=np.uint64)
        out.status = np.asarray(idx.status, dtype=np.uint8)
        problems = list(sort_problems(list(idx.problems) + data_problems)) if task.part == 0 else []
        if problems:  # why, where the bytes show it: one flipped bit, zeroed blocks, a cut copy
            from tfrview.core.tfrecord.forensics import file_cause, name_causes

            out.cause = file_cause(src, problems)
            if not out.cause:  # else every problem follows from the file's cause
                problems = name_causes(src, problems, idx.offsets, idx.lengths)
        del idx  # its arrays are the result's now: held once through the deep pass (34 MB for 2 M records)
        out.lo, out.hi = part_range(len(out.offsets), task.part, task.parts)
        if task.deep:
            found, out.deep = _deep(task, src, out)
            problems += found
        out.problems = problems
    except TfrviewError as exc:
        out.error = str(exc)
    finally:
        src.close()
    out.seconds = time.perf_counter() - t0
    return out


def _wholes_of(tasks: list[ShardTask], got: list) -> dict[int, ShardResult | None]:
    """The results of the batch's small local files whose look was not found stored, read whole and
    framed together (`smallfile.frame_many`): by their place in `tasks`, None for a file that is not
    clean (its own pass says why). A file's `seconds` are its share, by bytes, of the time all took."""
    from tfrview.core.tfrecord.remote import is_url  # start-up: kept off the CLI's path
    from tfrview.core.tfrecord.smallfile import frame_many  # start-up: kept off the CLI's path

    picked = [
        k
        for k, (t, h) in enumerate(zip(tasks, got, strict=True))
        if h is None and not t.deep and t.parts == 1 and not is_url(t.path)
    ]
    if not picked:
        return {}
    t0 = time.perf_counter()
    framed = frame_many([tasks[k].path for k in picked], IDENTITY_ENDS)
    took = (time.perf_counter() - t0) / max(1, sum(w.stat.st_size for w in framed if w is not None))
    now = time.time()
    out: dict[int, ShardResult | None] = {}
    for k, w in zip(picked, framed, strict=True):
        out[k] = None if w is None else _whole_result(tasks[k], w, now, took * w.stat.st_size)
    return out


def _whole_result(task: ShardTask, w, analysed_at: float, seconds: float) -> ShardResult:
    """A clean small file's result from its framing (smallfile.WholeFile)."""
    size = w.stat.st_size
    r = ShardResult(
        task.file_no,
        task.path,
        identity_from_crc(w.stat, *w.ends),
        "none",
        size,
        size,
        w.offsets,
        w.lengths,
        w.status,
        analysed_at=analysed_at,
        lo=0,
        hi=len(w.offsets),
        seconds=seconds,
    )
    r.known_status_bytes(bytes_all(VERIFIED, len(w.status)))  # every record VERIFIED (WholeFile)
    return r


def _whole_small(task: ShardTask, t0: float) -> ShardResult | None:
    """A small clean plain file's look (framing and CRCs) read whole and framed from memory
    (tfrecord.smallfile), the same result as the usual path's; None sends it down that path."""
    from tfrview.core.tfrecord.remote import is_url  # start-up: kept off the CLI's path
    from tfrview.core.tfrecord.smallfile import frame_whole  # start-up: kept off the CLI's path

    if is_url(task.path):
        return _fetched_small(task, t0)
    w = frame_whole(task.path, IDENTITY_ENDS)
    return None if w is None else _whole_result(task, w, time.time(), time.perf_counter() - t0)


def _fetched_small(task: ShardTask, t0: float) -> ShardResult | None:
    """`_whole_small` of a remote object its task fetched ahead whole (remote.fetch_ahead): framed
    from memory, ~0.5 ms for 1,000 records where the usual path's Source and chunked reads of
    its kept pages cost ~2 ms. None (damage, compression, not fetched ahead, a network error)
    sends it down the usual path, which says why."""
    from tfrview.core.tfrecord.remote import NetworkError, fetched_whole  # start-up: kept off the CLI's path
    from tfrview.core.tfrecord.smallfile import frame_bytes  # start-up: kept off the CLI's path

    try:
        got = fetched_whole(task.path)
    except NetworkError:
        return None
    framed = frame_bytes(got[1]) if got is not None else None
    identity = identity_of(task.path) if framed is not None else None  # the listing's: no request
    if identity is None:
        return None
    offsets, lengths, status = framed
    return ShardResult(
        task.file_no,
        task.path,
        identity,
        "none",
        len(got[1]),
        len(got[1]),
        offsets,
        lengths,
        status,
        analysed_at=time.time(),
        lo=0,
        hi=len(offsets),
        seconds=time.perf_counter() - t0,
    )


def _say(msg: str) -> None:

    print(f"tfrview: {printable(msg)}; Ctrl-C stops", file=sys.stderr, flush=True)


# The first image's hashes and quality scores in the fact table. Off only for the benchmark that
# measures what they cost (bench/bench_analysis.py sets TFRVIEW_BENCH_NO_SIGNALS in a child).
SIGNALS = not os.environ.get("TFRVIEW_BENCH_NO_SIGNALS")


def _deep(task: ShardTask, src, out: ShardResult) -> tuple[list[Problem], DeepResult]:
    """Decode every intact record once: record checks, schema counts, statistics, facts."""
    from tfrview.core.analysis import progress  # start-up: kept off the CLI's path
    from tfrview.core.analysis.checks import ImageKeys, Schema, image_digests, look_and_check, signature
    from tfrview.core.analysis.datasummary import DatasetSummary  # start-up: kept off the CLI's path
    from tfrview.core.analysis.facts import FactsBuilder  # heavy: pyarrow on first use only
    from tfrview.core.analysis.plain import PlainExamples  # start-up: kept off the CLI's path
    from tfrview.core.records.labelmap import LabelMap  # start-up: kept off the CLI's path
    from tfrview.core.records.payload import decode  # start-up: kept off the CLI's path
    from tfrview.core.records.reading import (  # start-up: kept off the CLI's path
        BoxSpec,
        ReadingContext,
        read_record,
    )

    label_map = LabelMap.from_json(task.label_map) if task.label_map else None
    chosen = tuple(BoxSpec.from_json(s) for s in task.box_specs)  # the person's, as the window draws
    # the file's: each feature layout's box roles found once; a TFDS dataset's declared features
    ctx = ReadingContext(label_map, chosen=chosen, tfds=task.tfds if task.tfds and task.tfds.root else None)
    read = src.bulk_reader()
    offs, lens = out.offsets, out.lengths
    schema, summary, facts, image_keys = Schema(), DatasetSummary(), FactsBuilder(out.lo), ImageKeys()
    sig_ids: dict = {}
    # this part's records only (record n at n - lo): 8 parts of a 2 M-record file held 8 x 8 MB
    sig_of = np.full(out.hi - out.lo, -1, dtype=np.int32)
    digests: list[tuple[int, str, bytes]] = []
    zero: list[tuple[int, str]] = []
    problems: list[Problem] = []
    ids: set[int] = set()
    numbers = intact_numbers(out.status[out.lo : out.hi]) + out.lo  # this part's, as intact_numbers_of
    # the column path reads no BBoxFeature (its key may name no box rule): such a dataset's records
    # each take the reading; record labels it names by their TFDS ClassLabel as the reading does
    columns = ctx.tfds is None or not ctx.tfds.boxes
    plain = PlainExamples(
        schema,
        summary,
        facts,
        image_keys,
        sig_of,
        out.lo,
        problems,
        ids,
        CLASS_IDS_TRACKED,
        label_map,
        offs,
        lens,
        ctx.tfds,
    )

    def one(n: int, data) -> None:
        """Record n: a plain Example `plain.take` counts in its batch, else its reading."""
        if columns and plain.take(n, data):  # a plain Example: counted by columns, a batch at a time
            return
        plain.flush()  # the batch before this record: everything is counted in record order
        p = decode(data)
        r = read_record(p, ctx)  # what the record means, decided once for every consumer below
        other = schema.other
        schema.add(p, r)
        if schema.other > other and schema.first_other < 0:
            schema.first_other = n  # where the notice of keys past limits.TRACKED_KEYS is said
        summary.add(p, label_map, r)
        findings, look = look_and_check(
            p, (0, n), None, label_map, None, od_dataset=False, reading=r, signals=SIGNALS
        )
        for f in findings:
            problems.append(f.at(offs[n], lens[n], n))
        sig = signature(p, schema.types)
        if sig is not None:
            sig_of[n - out.lo] = sig_ids.setdefault(sig, len(sig_ids))
        if (
            p.features and p.kind != PayloadKind.EVENT
        ):  # one sample image logged at many steps is no duplicate
            if look.signals is None:  # a hashed image's copies are the dataset step's (pixel_hash)
                digests.extend((n, k, h) for k, h in image_digests(p.features))
            image_keys.add(n, p.features)
        if look.class_zero_key:
            zero.append((n, look.class_zero_key))
        if len(ids) < CLASS_IDS_TRACKED and p.features:
            ids.update(r.dataset_class_ids)
        facts.add(n, p, look.image_size, look.boxes, r.spec, look.signals)
        plain.learnt(n, int(sig_of[n - out.lo]))

    done = said = 0
    for nums, buf, starts, ends in _spans(read, offs, lens, numbers, progress.EVERY):
        if starts is None:  # one record past a read's span
            one(int(nums[0]), buf)
        elif columns:  # runs of plain Examples parsed at once, the rest a record at a time
            plain.batch(buf, nums, starts, ends, one)
        else:
            for n, a, z in zip(nums.tolist(), starts.tolist(), ends.tolist(), strict=True):
                one(n, buf[a:z])
        done += len(nums)
        if done - said >= progress.EVERY:  # the window says how far the pass is from its first second
            progress.records_done(done - said)
            said = done
            progress.summary_so_far((task.path, task.part), summary)
    plain.flush()
    progress.records_done(done - said)
    table = facts.table(
        os.path.basename(task.path), offs[out.lo : out.hi], lens[out.lo : out.hi], out.status[out.lo : out.hi]
    )
    if ctx.tfds is not None:  # its ClassLabels' names of the ids the table holds (facts.CLASS_META)
        from tfrview.core.analysis.facts import with_class_names  # heavy: pyarrow on first use only

        table = with_class_names(table, ctx.tfds.label_maps)
    return problems, DeepResult(schema, summary, table, list(sig_ids), sig_of, digests, zero, ids, image_keys)


def _payloads(read, offsets: np.ndarray, lengths: np.ndarray, numbers: np.ndarray):
    """(record, payload) of each of `numbers` (ascending), as `_spans` reads them."""
    for nums, buf, starts, ends in _spans(read, offsets, lengths, numbers):
        if starts is None:
            yield int(nums[0]), buf
            continue
        for n, a, z in zip(nums.tolist(), starts.tolist(), ends.tolist(), strict=True):
            yield n, buf[a:z]


def _spans(read, offsets: np.ndarray, lengths: np.ndarray, numbers: np.ndarray, most: int = 1 << 62):
    """(records, bytes, starts, ends) of `numbers` (ascending), read limits.DEEP_READ_BYTES of the
    file (and at most `most` records) at a time (a read a record cost more than decoding a tiny
    one): record records[i] is bytes[starts[i]:ends[i]]. A record larger than that comes alone,
    bounded (`payload.bounded_payload`), as (its number, its payload, None, None)."""
    from tfrview.core.tfrecord.payload_bytes import bounded_payload  # start-up: kept off the CLI's path

    starts = offsets[numbers].astype(np.int64)
    ends = starts + lengths[numbers].astype(np.int64) + OVERHEAD
    i, total = 0, len(numbers)
    while i < total:
        j = min(int(np.searchsorted(ends, starts[i] + limits.DEEP_READ_BYTES, side="right")), i + most)
        if j <= i:  # one record past the span: alone, its head only when it is past the decode limit
            n = int(numbers[i])
            yield numbers[i : i + 1], bounded_payload(read, int(offsets[n]), int(lengths[n])), None, None
            i += 1
            continue
        base = int(starts[i])
        buf = read(base, int(ends[j - 1]) - base)
        yield numbers[i:j], buf, starts[i:j] - base + HEADER_SIZE, ends[i:j] - base - OVERHEAD + HEADER_SIZE
        i = j


def share_framing(r: ShardResult, seen: dict[int, ShardResult]) -> ShardResult:
    """Each part of a big file's deep pass frames the whole file and returns its index: of a
    2 M-record file in 8 parts, 8 copies of 34 MB reach the caller, held until the merge. A later
    part's arrays equal to the first part's (the same file, unchanged) are replaced by the first
    part's, so the caller holds the index once; `seen` maps file numbers to the first parts."""
    if r.parts <= 1 or r.error is not None:
        return r
    first = seen.setdefault(r.file_no, r)
    if (
        first is not r
        and first.identity == r.identity
        and np.array_equal(first.offsets, r.offsets)
        and np.array_equal(first.lengths, r.lengths)
        and np.array_equal(first.status, r.status)
    ):
        r.offsets, r.lengths, r.status = first.offsets, first.lengths, first.status
    return r


def part_range(n: int, part: int, parts: int) -> tuple[int, int]:
    """Records [lo, hi) of part `part` of `parts` of a file of n records."""
    return n * part // parts, n * (part + 1) // parts


def plan(paths, deep: bool, label_map: dict | None = None, **kw) -> list[ShardTask]:
    """Tasks for files in the dataset's order: one per file, and for the deep pass over a big file
    one per PART_BYTES of it or per limits.PART_RECORDS records (estimated; at most MAX_PARTS), so
    one 2,000,000-record file keeps every core busy and a worker's memory stays bounded. The parts depend on the file alone, never on `jobs`: stored results stay valid whatever
    the number of workers."""
    from tfrview.core.tfds.features import features_of_folder  # start-up: kept off the CLI's path
    from tfrview.core.tfrecord.remote import is_url  # start-up: kept off the CLI's path

    tasks = []
    declared: dict[str, object] = {}  # folder -> its TFDS features (one look a folder)
    for i, path in enumerate(paths):
        if "tfds" not in kw and not is_url(path):
            folder = os.path.dirname(str(path)) or "."
            if folder not in declared:
                declared[folder] = features_of_folder(folder)
            kw_file = {**kw, "tfds": declared[folder]}
        else:
            kw_file = kw
        parts = 1
        if deep and not is_url(path):  # a remote file is read once: each part would fetch it whole
            try:
                size = os.stat(path).st_size
                by_records = round(estimated_records(path, size) / limits.PART_RECORDS)  # about: an estimate
                parts = max(1, min(MAX_PARTS, max(size // PART_BYTES, by_records)))
            except OSError:
                parts = 1
        tasks += [
            ShardTask(str(path), i, deep, label_map, part=k, parts=parts, **kw_file) for k in range(parts)
        ]
    return tasks


def estimated_records(path: str, size: int) -> int:
    """About how many records a plain file holds, from the lengths in the headers of its first MB
    (0 when they say nothing: a compressed file, garbage first). An estimate for planning, never a
    count: framing later finds the records whatever it said."""
    if size < 16 * limits.PART_RECORDS:  # a record takes 16 bytes at least: too few to matter, unread
        return size // 16
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        head = os.pread(fd, PART_SAMPLE_BYTES, 0)
    finally:
        os.close(fd)

    if len(head) < 12 or length_crc(HEADER.unpack_from(head)[0]) != HEADER.unpack_from(head)[1]:
        return 0  # no record header first: compressed, or not a TFRecord (framed alone, as before)
    at = n = 0
    while at + 12 <= len(head):
        at += 16 + int.from_bytes(head[at : at + 8], "little")
        n += 1
    if at > len(head) and n <= 1:
        return 0  # one record (or a length that is no length) past the sample: nothing to go by
    return int(size * n / max(at, 1))


def intact_numbers_of(r: ShardResult) -> np.ndarray:
    """The records the pass read (`status.intact_numbers`, as `salvage` keeps them)."""
    return intact_numbers(r.status)
