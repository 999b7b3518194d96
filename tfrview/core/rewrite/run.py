"""`rewrite`: a plan (`plan.make_plan`) written as a new dataset (`outdir.write_shards`), with its
label map, TFDS metadata and provenance, all or nothing. The CLI and the window's job call this."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tfrview.core.rewrite.classes import label_map_text, rewrite_example
from tfrview.core.rewrite.options import RewriteError, RewriteOptions
from tfrview.core.rewrite.outdir import Shard, ShardWriter, WrittenShard, check_outdir, write_shards
from tfrview.core.rewrite.plan import Plan, make_plan
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import OVERHEAD

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
RUN_BYTES = 8 << 20  # records that follow each other read in one read of at most this much
GAP_BYTES = 64 << 10  # a gap (records left out) a window reads over rather than reading again
LABEL_MAP_FILE = "label_map.pbtxt"
PROVENANCE_FILE = "provenance.parquet"
PROVENANCE_JSONL = "provenance.jsonl"


@dataclass(frozen=True)
class RewriteResult:
    outdir: str
    records_in: int
    kept: int
    dropped: dict[str, int]
    shards: tuple[dict, ...]  # name, split, records, bytes
    changed: int  # records re-serialised by the class map
    files: tuple[str, ...] = ()  # other files written beside the shards
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict:
        splits: dict[str, int] = {}
        for s in self.shards:
            splits[s["split"]] = splits.get(s["split"], 0) + s["records"]
        return {
            "outdir": self.outdir,
            "records_in": self.records_in,
            "kept": self.kept,
            "dropped": self.dropped,
            "written": {"splits": splits, "shards": list(self.shards)},
            "changed_by_class_map": self.changed,
            "files": list(self.files),
            "notes": list(self.notes),
        }


def shard_names(plan: Plan) -> dict[str, list[str]]:
    """Each split's shard file names: TFDS's when the input was one TFDS dataset, else
    `{split}-NNNNN-of-NNNNN.tfrecord`."""
    out = {}
    for s, k in plan.shards.items():
        if plan.tfds is not None:
            name = plan.tfds.info.name or "dataset"
            out[s] = [f"{name}-{s}.tfrecord-{i:05d}-of-{k:05d}" for i in range(k)]
        else:
            out[s] = [f"{s}-{i:05d}-of-{k:05d}.tfrecord" for i in range(k)]
    return out


def rewrite(
    args: list[str],
    outdir: str | os.PathLike,
    opts: RewriteOptions,
    *,
    drop: frozenset[tuple[str, int]] = frozenset(),
    keep: frozenset[tuple[str, int]] | None = None,
    label_map: dict[int, str] | None = None,
    progress: Progress | None = None,
) -> RewriteResult:
    """Write the records `opts` selects from the dataset `args` names into a new OUTDIR (see the
    package's docstring). Raises RewriteError (a one-line reason, nothing written) or Cancelled.

    The inputs' CRCs are checked by the copy, in the bytes it reads anyway, against the framing the
    plan holds (a stored analysis's, or a big plain file's framing alone): no separate pass reads
    every input first. A record that fails there, which only a verification of the input would have
    said, starts the whole rewrite again with every input verified first (`verify_first`), so
    damaged records are dropped and counted exactly as that verification says."""
    kw = dict(drop=drop, keep=keep, label_map=label_map, progress=progress)
    try:
        return _rewrite(args, outdir, opts, verify_first=False, **kw)
    except CopyCheckFailed as exc:
        log.info("%s; the inputs are verified first and the rewrite done again", exc)
        return _rewrite(args, outdir, opts, verify_first=True, **kw)


class CopyCheckFailed(RewriteError):
    """A record copied fails a CRC its plan expected to pass (the input was not verified first)."""


def _rewrite(
    args: list[str],
    outdir: str | os.PathLike,
    opts: RewriteOptions,
    *,
    verify_first: bool,
    drop: frozenset[tuple[str, int]],
    keep: frozenset[tuple[str, int]] | None,
    label_map: dict[int, str] | None,
    progress: Progress | None,
) -> RewriteResult:
    outdir = Path(outdir)
    from tfrview.core.tfrecord.dataset import expand_paths

    inputs = list(args) + [str(p) for p in expand_paths(list(args))]
    check_outdir(outdir, inputs, opts.force)  # before any work, and again before writing
    plan = make_plan(
        args, opts, drop=drop, keep=keep, label_map=label_map, progress=progress, verify_first=verify_first
    )
    if not plan.kept:
        raise RewriteError(
            f"{outdir}: not written: no record is left to write ({_dropped_words(plan.dropped)})"
        )
    names = shard_names(plan)
    shards: list[Shard] = []
    where: list[tuple[str, int]] = []  # (split, shard) of each Shard
    counter = _Counter(plan.kept, progress)
    for s, nums in plan.splits.items():
        of = plan.shard_of[s]
        bounds = np.searchsorted(of, np.arange(plan.shards[s] + 1))
        for i, name in enumerate(names[s]):
            part = nums[bounds[i] : bounds[i + 1]]
            shards.append(Shard(name, len(part), _filler(plan, part, counter)))
            where.append((s, i))
    extra_files: list[str] = []

    def extra(tmp: Path, written: list[WrittenShard]) -> None:
        extra_files.extend(_extras(tmp, plan, names, written, opts))

    written = write_shards(
        outdir,
        shards,
        opts.compression,
        inputs=inputs,
        force=opts.force,
        index=opts.index,
        extra=extra,
        jobs=opts.jobs,
        progress=progress,
    )
    rows = tuple(
        {"name": w.name, "split": s, "records": w.records, "bytes": w.bytes}
        for w, (s, _) in zip(written, where, strict=True)
    )
    return RewriteResult(
        str(outdir),
        plan.records_in,
        plan.kept,
        dict(plan.dropped),
        rows,
        counter.changed,
        tuple(extra_files),
        tuple(plan.notes),
    )


def _dropped_words(d: dict[str, int]) -> str:
    return ", ".join(f"{v:,} dropped as {k}" for k, v in d.items() if v) or "the inputs hold no records"


class _Counter:
    """Records written so far, said every 4,096 (the progress callback may raise Cancelled)."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total, self.progress, self.done, self.changed = total, progress, 0, 0
        self._said = 0

    def add(self, k: int) -> None:
        self.done += k
        if self.progress is not None and self.done - self._said >= 4096:
            self._said = self.done
            self.progress("writing records", self.done, self.total)


def _filler(plan: Plan, numbers: np.ndarray, counter: _Counter) -> Callable[[ShardWriter], None]:
    def fill(w: ShardWriter) -> None:
        _copy(plan, numbers, w, counter)

    return fill


def _copy(plan: Plan, numbers: np.ndarray, w: ShardWriter, counter: _Counter) -> None:
    """The records `numbers` (global, in output order) into `w`, read in windows: records that
    follow each other in a file, with gaps of at most GAP_BYTES between them (records the filter or
    a tag left out), read in one read of at most RUN_BYTES; in it, runs of consecutive records whose
    CRCs both passed and that no class map changes copied as framed bytes, the rest one by one (a
    rebuilt header, or a re-serialised Example). Half of 2,000,000 small records kept by a filter
    are then ~30 reads, not a million."""
    from tfrview.core.tfrecord.payload_bytes import bounded_payload

    if not len(numbers):
        return
    fi, local = plan.locate(numbers)
    offs = np.empty(len(numbers), np.int64)
    lens = np.empty(len(numbers), np.int64)
    raw = np.empty(len(numbers), bool)
    for f in np.unique(fi):
        m = fi == f
        pf = plan.files[int(f)]
        offs[m], lens[m], raw[m] = pf.offsets[local[m]], pf.lengths[local[m]], pf.raw_ok[local[m]]
    changing = plan.changed[numbers] if plan.changed is not None else np.zeros(len(numbers), bool)
    raw &= ~changing
    stop = offs + lens + OVERHEAD  # where each record's bytes end
    small = lens + OVERHEAD <= RUN_BYTES  # a record bigger than a window is read on its own
    # a window may go on from record j-1 to j: same file, j after j-1 within GAP_BYTES, both small
    bridge = np.r_[
        False,
        (fi[1:] == fi[:-1])
        & (offs[1:] >= stop[:-1])
        & (offs[1:] - stop[:-1] <= GAP_BYTES)
        & small[1:]
        & small[:-1],
    ]
    # a framed run goes on from j-1 to j: the next record at once, both copied as framed bytes
    follows = bridge & np.r_[False, (offs[1:] == stop[:-1]) & raw[1:] & raw[:-1]]
    breaks = np.r_[np.flatnonzero(~bridge), len(numbers)]  # where windows must start anew
    # a window read, and the CRC check's copy of it: one window's size each, never grown (a view of
    # the last window may still be held when the next is read)
    buf, scratch = bytearray(RUN_BYTES), bytearray(RUN_BYTES)
    a = 0
    for seg_end in breaks[1:].tolist():
        while a < seg_end:  # one segment of bridged records: windows of at most RUN_BYTES
            src = plan.files[int(fi[a])].source
            lo = int(offs[a])
            if not small[a]:
                cut, data = a + 1, None
            else:
                cut = max(int(np.searchsorted(stop[a:seg_end], lo + RUN_BYTES, side="right")) + a, a + 1)
                hi = int(stop[cut - 1])
                span = getattr(src, "span", None)  # a plain file: into one buffer, reused
                data = span(lo, hi - lo, buf) if span is not None else src.read(lo, hi - lo)
                if len(data) != hi - lo:
                    raise RewriteError(f"{src.path}: changed while being read (records at {lo:,} are gone)")
                view = memoryview(data)
                _check_window(plan, int(fi[a]), local[a:cut], lo, view, scratch)
            j = a
            while j < cut:
                if data is not None and raw[j]:
                    k = j + 1
                    while k < cut and follows[k]:
                        k += 1
                    w.write_framed(view[int(offs[j]) - lo : int(stop[k - 1]) - lo], k - j, lens[j:k])
                    counter.add(k - j)
                    j = k
                    continue
                o, ln = int(offs[j]), int(lens[j])
                if data is not None:
                    payload = bytes(view[o - lo + 12 : o - lo + 12 + ln])
                else:
                    from tfrview.core.tfrecord.index import data_crc_ok

                    if not data_crc_ok(src, o, ln):
                        _failed(plan, int(fi[j]), int(local[j]))
                    payload = bounded_payload(src.read, o, ln, getattr(src, "pieces", None))
                if changing[j] and isinstance(payload, bytes) and plan.remap is not None:
                    new = rewrite_example(payload, plan.class_keys, plan.remap)
                    if new is not None:
                        payload = new
                        counter.changed += 1
                w.write(payload)
                counter.add(1)
                j += 1
            a = cut


def _check_window(
    plan: Plan, f: int, kept: np.ndarray, lo: int, view: memoryview, scratch: bytearray | None = None
) -> None:
    """The CRCs of the kept records `kept` (local numbers in file `f`, ascending) in a window read
    from `lo`: every record of the file between the first and the last of them is checked at once
    (they follow each other in a clean file: one CRC over the window); a kept record whose data CRC
    fails, or whose header fails where the plan expected it whole, stops the copy (`_failed`)."""
    from tfrview.core.tfrecord.window import records_failing

    pf = plan.files[f]
    if len(kept) <= 4:  # a window of a few records (a shuffle's): numpy's set-up would cost more
        for r in kept.tolist():
            if not _record_ok(view, int(pf.offsets[r]) - lo, int(pf.lengths[r]), bool(pf.raw_ok[r])):
                _failed(plan, f, r)
        return
    la, lb = int(kept[0]), int(kept[-1]) + 1
    offs, lens = pf.offsets[la:lb], pf.lengths[la:lb]
    inside = (offs >= lo) & (offs + lens + OVERHEAD <= lo + len(view))
    if not inside.all():  # a damaged record's span reaching out of the window: the kept ones alone
        offs, lens, numbers = pf.offsets[kept], pf.lengths[kept], kept
    else:
        numbers = np.arange(la, lb)
    bad_header, bad_data = records_failing(view, offs - lo, lens, scratch)
    bad = bad_data | (bad_header & pf.raw_ok[numbers])
    if bad.any():
        hit = numbers[bad]
        hit = hit[np.isin(hit, kept)]
        if len(hit):
            _failed(plan, f, int(hit[0]))


def _record_ok(view: memoryview, at: int, length: int, header_whole: bool) -> bool:
    """One record's data CRC (and its header, where the plan expects it whole) in a window."""
    from tfrview.core.tfrecord.framing import HEADER_SIZE, U32, encode_header, masked_crc

    if header_whole and view[at : at + HEADER_SIZE] != encode_header(length):
        return False
    end = at + HEADER_SIZE + length
    return masked_crc(view[at + HEADER_SIZE : end]) == U32.unpack_from(view, end)[0]


def _failed(plan: Plan, f: int, record: int) -> None:
    path = printable(str(plan.files[f].path))
    if plan.verified_first:  # verified a moment ago: the bytes changed since
        raise RewriteError(f"{path}: changed while being read (record {record:,} no longer passes its CRC)")
    raise CopyCheckFailed(f"{path}: record {record:,} fails its CRC while copied")


def _extras(
    tmp: Path, plan: Plan, names: dict[str, list[str]], written: list[WrittenShard], opts: RewriteOptions
) -> list[str]:
    """The label map (after a class map), TFDS metadata with the new shard lengths, provenance."""
    from tfrview.core.output.atomic import atomic_write_text

    out = []
    if plan.remap is not None and plan.remap.label_map:
        atomic_write_text(tmp / LABEL_MAP_FILE, label_map_text(plan.remap.label_map))
        out.append(LABEL_MAP_FILE)
    if plan.tfds is not None:
        out += _tfds_files(tmp, plan, names, written)
    out.append(_provenance(tmp, plan, names, opts.provenance))
    return out


def _tfds_files(tmp: Path, plan: Plan, names: dict[str, list[str]], written: list[WrittenShard]) -> list[str]:
    """`dataset_info.json` with each split's `shardLengths` and `numBytes` as written (every other
    field as it was; the splits are the ones written), and `features.json` and labels files copied."""
    from tfrview.core.limits import MAX_TFDS_INFO_BYTES
    from tfrview.core.output.atomic import atomic_write_bytes, atomic_write_text

    root = plan.tfds.root
    info_path = root / "dataset_info.json"
    with open(info_path, "rb") as fh:
        doc = json.loads(fh.read(MAX_TFDS_INFO_BYTES + 1))
    by_name = {w.name: w for w in written}
    old = {s.get("name"): s for s in doc.get("splits", []) if isinstance(s, dict)}
    splits = []
    for s, files in names.items():
        ws = [by_name[f] for f in files]
        entry = {
            k: v
            for k, v in old.get(s, {}).items()
            if k not in ("shardLengths", "numBytes", "numShards", "filepathTemplate", "statistics")
        }
        entry.update(
            name=s,
            filepathTemplate="{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}",
            shardLengths=[str(w.records) for w in ws],
            numBytes=str(sum(w.bytes for w in ws)),
        )
        splits.append(entry)
    doc["splits"] = splits
    doc["fileFormat"] = "tfrecord"
    atomic_write_text(tmp / "dataset_info.json", json.dumps(doc, indent=2))
    out = ["dataset_info.json"]
    for p in sorted(root.iterdir()):
        if p.name == "features.json" or p.name.endswith(".labels.txt"):
            atomic_write_bytes(tmp / p.name, p.read_bytes())
            out.append(p.name)
    return out


def _provenance(tmp: Path, plan: Plan, names: dict[str, list[str]], kind: str) -> str:
    """Where every output record came from: output file and record, input file, offset, record."""
    out_file, out_rec, numbers = [], [], []
    file_names: list[str] = []
    for s, nums in plan.splits.items():
        of = plan.shard_of[s]
        bounds = np.searchsorted(of, np.arange(plan.shards[s] + 1))
        for i, name in enumerate(names[s]):
            k = bounds[i + 1] - bounds[i]
            out_file.append(np.full(k, len(file_names), np.int32))
            out_rec.append(np.arange(k, dtype=np.int64))
            numbers.append(nums[bounds[i] : bounds[i + 1]])
            file_names.append(name)
    nums = np.concatenate(numbers)
    fi, local = plan.locate(nums)
    offs = np.concatenate([f.offsets for f in plan.files])[nums]
    inputs = [str(f.path) for f in plan.files]
    of_ = np.concatenate(out_file)
    orec = np.concatenate(out_rec)
    if kind == "jsonl":
        from tfrview.core.output.atomic import atomic_file

        with atomic_file(tmp / PROVENANCE_JSONL) as fh:
            for a, b, c, d, e in zip(
                of_.tolist(), orec.tolist(), fi.tolist(), offs.tolist(), local.tolist(), strict=True
            ):
                fh.write(
                    json.dumps(
                        {
                            "output_file": file_names[a],
                            "output_record": b,
                            "input_file": inputs[c],
                            "input_offset": d,
                            "input_record": e,
                        }
                    )
                    + "\n"
                )
        return PROVENANCE_JSONL
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "output_file": pa.DictionaryArray.from_arrays(pa.array(of_), pa.array(file_names)),
            "output_record": pa.array(orec),
            "input_file": pa.DictionaryArray.from_arrays(pa.array(fi.astype(np.int32)), pa.array(inputs)),
            "input_offset": pa.array(offs),
            "input_record": pa.array(local.astype(np.int64)),
        }
    )
    pq.write_table(table, tmp / PROVENANCE_FILE)
    return PROVENANCE_FILE
