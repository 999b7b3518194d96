"""The `tfrview` command: headless subcommands over the core, or the window when given only files.

Exit codes: 0 clean, 1 problems found, 2 usage or I/O error. Errors are one line, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from tfrview.core.tfrecord.framing import TfrviewError, one_line
from tfrview.core.tfrecord.index import DAMAGED
from tfrview.core.units import human_bytes

from . import __version__

COMMANDS = ("info", "verify", "dump", "export", "index", "salvage", "repair", "cache", "install-desktop", "uninstall-desktop")

EPILOG = """\
examples:
  tfrview train-00003-of-00016.tfrecord     open the window on a file
  tfrview 'data/train-*'                    open several shards as one dataset
  tfrview info data/*.tfrecord --json       compression, record counts, feature keys and types
  tfrview verify data/ && echo clean        check every CRC; exit 0 clean, 1 problems, 2 error
  tfrview verify --json shard.gz | jq .     one JSON object with every problem
  tfrview verify --checks data/             also boxes, images, labels, NaNs, missing features
  tfrview verify -j 16 'gs-mirror/train-*'  16 worker processes (default: one per core)
  tfrview export --parquet t.parquet data/  one row per record, for DuckDB, polars, pandas
  tfrview cache --clear                     forget stored analysis results
  tfrview dump file.tfrecord --records 10:20
  tfrview dump file.tfrecord --json | head  one JSON object per record
  tfrview index file.tfrecord -o file.idx   DALI / tfrecord-style index
  tfrview index file.tfrecord --check file.idx
  tfrview salvage broken.tfrecord -o fixed.tfrecord
"""


# --- output helpers -----------------------------------------------------------------------------------


class Progress:
    """A one-line progress display on stderr, only when stderr is a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._last = 0.0
        self._shown = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1:
            return
        self._last = now
        pct = f"{100 * done / total:5.1f}%" if total else ""
        sys.stderr.write(f"\r{phase}: {human_bytes(done)} of {human_bytes(total)} {pct}\033[K")
        sys.stderr.flush()
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self._shown = False


def fail(msg: str) -> int:
    print(f"tfrview: {one_line(msg)}", file=sys.stderr)
    return 2


def notice(msg: str) -> None:
    """A one-line note on stderr (whatever the output format): a likely decompression bomb."""
    print(f"tfrview: {one_line(msg)}; Ctrl-C stops", file=sys.stderr)


def _int_at_least(low: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if v < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {v}")
        return v

    return parse


def _open_sources(paths: list[str]):
    """(path, Source | None, error) for each file named by the arguments, opened as a dataset opens
    them (one descriptor per file, the open-file limit raised for thousands of shards)."""
    from tfrview.core.tfrecord.dataset import Dataset

    return [(f.path, f.source, f.error) for f in Dataset.open(paths).files]


# --- verify -------------------------------------------------------------------------------------------


def cmd_verify(args) -> int:
    """Every file through the analysis pass on `--jobs` worker processes (framing and both CRCs;
    with --checks, every record decoded once for the QA checks). The bytes are always read again:
    a stored result is never taken for a verification, as a bit can rot without changing a file's
    size or time. Results are stored for the window and `info`."""
    from tfrview.core.analysis import merge, plan
    from tfrview.core.records.labelmap import label_map_fits
    from tfrview.core.tfrecord.dataset import name_files
    from tfrview.core.tfrecord.report import FileReport, sort_problems

    failed, paths = name_files(args.paths)
    entries: list[dict | None] = [None] * (len(failed) + len(paths))
    errors = 0
    for i, (path, err) in enumerate(failed):
        errors += 1
        if not args.json:
            print(f"tfrview: {one_line(err)}", file=sys.stderr)
        entries[i] = {"path": str(path), "ok": False, "error": err, "problems": []}
    label_map, lm_path = _label_map_for_checks(args, paths) if args.checks else (None, None)
    lm_json = label_map.to_json() if label_map is not None else None
    tasks = plan(paths, args.checks, lm_json, read_cache=False, notices=True)
    results = _run_pass(tasks, args.jobs, Progress(not args.json and not args.quiet), "verify", args.dask)
    analysis = merge(results)
    if lm_path is not None and not args.label_map and not label_map_fits(analysis.class_ids, label_map):
        if not args.json and not args.quiet:
            print(f"not using {one_line(str(lm_path))} found beside the data: it does not name this data's class ids",
                  file=sys.stderr)  # fmt: skip
        lm_path = None
        analysis = _without_label_map(analysis)
    if lm_path is not None and not args.json and not args.quiet:
        print(f"label map: {one_line(str(lm_path))}", file=sys.stderr)
    reports = []
    for fi, r in enumerate(analysis.shards):
        at = len(failed) + fi
        if r.error is not None:
            errors += 1
            if not args.json:
                print(f"tfrview: {one_line(r.error)}", file=sys.stderr)
            entries[at] = {"path": r.path, "ok": False, "error": r.error, "problems": []}
            continue
        rep = FileReport(r.path, r.compression, r.file_size, r.records, r.damaged,
                         sort_problems(analysis.problems(fi)), r.cause)  # fmt: skip
        reports.append(rep)
        entries[at] = rep.to_json()
        if not args.json:
            _print_verify(rep, args.quiet)
    if args.json:
        print(json.dumps({"files": entries}))
    if errors:
        return 2
    return 0 if all(r.ok for r in reports) else 1


def _run_pass(tasks, jobs: int, progress: Progress, what: str, dask: str | None = None) -> list:
    """The analysis pass's tasks on `jobs` workers (or a Dask cluster), with progress in bytes of
    the files read (a part of a big file counts its share) and files finished."""
    from collections import Counter

    from tfrview.core.analysis import run_tasks

    sizes = {t.file_no: _size_of(t.path) for t in tasks}
    parts_left = Counter(t.file_no for t in tasks)
    done, finished, results = 0.0, 0, []
    if dask:
        from tfrview.core.analysis.cluster import run_tasks_on_cluster

        stream = run_tasks_on_cluster(tasks, dask)
    else:
        stream = run_tasks(tasks, jobs)
    for r in stream:
        results.append(r)
        done += sizes[r.file_no] / r.parts
        parts_left[r.file_no] -= 1
        finished += parts_left[r.file_no] == 0
        progress(f"{what} ({finished:,} of {len(sizes):,} files)", int(done), sum(sizes.values()))
    progress.clear()
    return results


def _size_of(path) -> int:
    from tfrview.core.tfrecord.remote import info_of, is_url

    try:
        return info_of(path).size if is_url(path) else os.stat(path).st_size
    except (OSError, TfrviewError):
        return 0


def _label_map_for_checks(args, paths):
    """The label map the checks name classes with: --label-map, else a .pbtxt beside the data
    (kept only if it names the data's class ids, judged once every record is read)."""
    from tfrview.core.records.labelmap import find_label_map, load_label_map

    lm_path = Path(args.label_map) if args.label_map else find_label_map(paths)
    label_map = load_label_map(lm_path) if lm_path else None
    return (label_map, lm_path) if label_map else (None, None)


_LABEL_MAP_KINDS = ("label_not_in_map", "label_text_mismatch", "label_text_case")


def _without_label_map(analysis):
    """The checks' answer had no label map been found: its findings go."""
    for s in analysis.shards:
        s.problems = [p for p in s.problems if str(p.kind) not in _LABEL_MAP_KINDS]
    return analysis


def _print_verify(rep, quiet: bool) -> None:
    if rep.ok:
        if not quiet:
            extra = "" if rep.records else "  (empty: TensorFlow reads this as zero records)"
            print(
                f"{one_line(rep.path)}: OK  {rep.records:,} records, {human_bytes(rep.bytes)}, "
                f"compression {rep.compression}{extra}"
            )
        return
    n = len(rep.problems)
    print(
        f"{one_line(rep.path)}: {n} problem{'s' if n != 1 else ''}  {rep.records:,} intact records, "
        f"{rep.damaged_records:,} damaged, compression {rep.compression}"
    )
    if rep.cause:
        print(f"  cause: {rep.cause}")
    shown = 20 if quiet else 200
    lines = _grouped_lines(rep.problems)
    for line in lines[:shown]:
        print(line)
    if len(lines) > shown:
        print(f"  ... and {len(lines) - shown} more (use --json for all)")


def _grouped_lines(problems) -> list[str]:
    """One line a problem, repeats folded (problemgroups.Repeats: same kind and message but for
    the record, offset or CRC) into one line with their count and records; JSON keeps them all."""
    from dataclasses import replace

    from tfrview.core.analysis.problemgroups import Repeats

    rep = Repeats()
    members: dict[int, list] = {}
    order: list[int] = []
    for p in problems:  # a cause is part of what repeats: a flipped bit and a zeroed block stay apart
        gid = rep.add(replace(p, message=p.message + (f"\n    cause: {p.cause}" if p.cause else "")))
        if gid not in members:
            members[gid] = []
            order.append(gid)
        members[gid].append(p)
    out = []
    for gid in order:
        ps = members[gid]
        if len(ps) == 1:
            out.append(f"  {ps[0].kind}: {ps[0].message}" + (f"\n    cause: {ps[0].cause}" if ps[0].cause else ""))
            continue
        recs = [p.record for p in ps if p.record is not None]
        where = f" (records {', '.join(map(str, recs[:8]))}{', …' if len(recs) > 8 else ''})" if recs else ""
        title, _, cause = rep.title(gid).partition("\n")
        out.append(f"  {ps[0].kind} ×{len(ps)}: {title}{where}" + (f"\n{cause}" if cause else ""))
    return out


# --- info ---------------------------------------------------------------------------------------------


def cmd_info(args) -> int:
    """The analysis pass (stored results of unchanged files are used: info is a look, not a
    verification); the feature table from every record when the pass decoded them (--all, or an
    earlier `verify --checks` or the window), else from a sample."""
    from tfrview.core.analysis import plan
    from tfrview.core.analysis.merge import join_parts
    from tfrview.core.tfrecord.dataset import name_files

    failed, paths = name_files(args.paths)
    out: list[dict] = []
    errors = 0
    for path, err in failed:
        errors += 1
        if args.json:
            out.append({"path": str(path), "error": err})
        else:
            print(f"tfrview: {one_line(err)}", file=sys.stderr)
    tasks = plan(paths, args.all, None, notices=True)
    results = join_parts(_run_pass(tasks, args.jobs, Progress(not args.json), "reading", args.dask))  # one per file, in order
    for r in results:
        if r.error is not None:
            errors += 1
            if args.json:
                out.append({"path": r.path, "error": r.error})
            else:
                print(f"tfrview: {one_line(r.error)}", file=sys.stderr)
            continue
        info, framing = _info_of(r, args)
        out.append(info)
        if not args.json:
            _print_info(info, r, framing)
    if args.json:
        print(json.dumps({"files": out}))
    return 2 if errors else 0


def _info_of(r, args) -> tuple[dict, list]:
    from tfrview.core.records.payload import TYPE_SHORT
    from tfrview.core.tfrecord.framing import FRAMING_KINDS, ProblemKind

    cs = r.deep.summary if r.deep is not None else _sampled_summary(r, args.sample)
    framing = [p for p in r.problems if p.kind in FRAMING_KINDS and p.kind != ProblemKind.BAD_DATA_CRC]
    info = {
        "path": r.path,
        "compression": r.compression,
        "bytes": r.file_size,
        "stream_bytes": r.scanned,
        "records": len(r.offsets),
        "framing_problems": len(framing),
        "damaged_records": r.damaged,
        "sampled_records": cs.records,
        "payload_kinds": dict(cs.kinds),
        "features": {
            k: {
                "types": sorted(TYPE_SHORT[t] for t in s.types),
                "present": s.present,
                "values_min": s.per_record_min,
                "values_max": s.per_record_max,
            }
            for k, s in sorted(cs.keys.items())
        },
        "feature_lists": {
            k: {"types": sorted(TYPE_SHORT[t] for t in s.types), "present": s.present}
            for k, s in sorted(cs.lists.items())
        },
        "other_keys": cs.other_keys,  # features of keys past limits.TRACKED_KEYS: counted, not listed
    }
    if r.from_cache:
        info["analysed_at"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.analysed_at))
    return info, framing


def _sampled_summary(r, sample: int):
    from tfrview.core.analysis.datasummary import DatasetSummary
    from tfrview.core.records.payload import bounded_payload, decode
    from tfrview.core.tfrecord.report import sample_numbers
    from tfrview.core.tfrecord.source import open_source

    cs = DatasetSummary()
    with open_source(r.path) as src:
        for k in sample_numbers(len(r.offsets), sample):
            cs.add(decode(bounded_payload(src.read, int(r.offsets[k]), int(r.lengths[k]))))
    return cs


def _print_info(info: dict, r, framing: list) -> None:
    print(one_line(info["path"]))
    size = human_bytes(info["bytes"])
    if info["compression"] != "none":
        size += f" ({human_bytes(info['stream_bytes'])} uncompressed)"
    print(f"  compression   {info['compression']}")
    print(f"  size          {size}")
    print(f"  records       {info['records']:,}" + (f" ({info['damaged_records']:,} damaged)" if info["damaged_records"] else ""))
    for p in framing[:1]:
        if p.kind == "not_tfrecord":
            print(f"  problem       {one_line(p.message)}")
        else:
            print(f"  problems      {len(framing)} in framing (run `tfrview verify` for details)")
    if "analysed_at" in info:
        print(f"  read          {info['analysed_at']} (unchanged since; `tfrview verify` reads it again)")
    if info["records"]:
        n = int(r.lengths.min()), int(r.lengths.mean()), int(r.lengths.max())
        print(f"  record size   min {n[0]:,}  mean {n[1]:,}  max {n[2]:,} bytes")
    sampled = info["sampled_records"]
    of = f" (sampled {sampled:,} of {info['records']:,})" if sampled < info["records"] else ""
    kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(info["payload_kinds"].items()))
    if kinds:
        print(f"  payloads      {kinds}{of}")
    if info["features"]:
        print("  features")
        width = min(max(len(one_line(k)) for k in info["features"]), 60)
        for key, s in info["features"].items():
            k = one_line(key)
            pres = f"{100 * s['present'] / sampled:.0f}%" if sampled else "-"
            vals = (
                f"{s['values_min']}"
                if s["values_min"] == s["values_max"]
                else f"{s['values_min']}..{s['values_max']}"
            )
            print(f"    {k:<{width}}  {'/'.join(s['types']):<6} x{vals:<8} in {pres} of records")
    if info["feature_lists"]:
        print("  feature lists")
        for k, s in info["feature_lists"].items():
            print(f"    {one_line(k)}  {'/'.join(s['types'])}")
    if info["other_keys"]:
        from tfrview.core.limits import TRACKED_KEYS

        print(f"  other keys    {info['other_keys']:,} features of keys past the first {TRACKED_KEYS:,} "
              "(limits.TRACKED_KEYS): counted, not listed")  # fmt: skip


# --- dump ---------------------------------------------------------------------------------------------


def parse_range(text: str | None, count: int) -> range:
    """--records: N, -N (from the end), or a Python-style range A:B. A record number outside the
    dataset is an error, never quietly clamped to the nearest record."""
    if not text:
        return range(count)

    def number(t: str) -> int:
        try:
            k = int(t)
        except ValueError:
            raise TfrviewError(f"--records: expected N, A:B, A: or :B, got {text!r}") from None
        if not -count <= k <= count:
            raise TfrviewError(f"--records: {k} is outside the dataset's {count:,} records")
        return k

    if ":" in text:
        a, b = text.split(":", 1)
        return range(count)[slice(number(a) if a else None, number(b) if b else None)]
    k = number(text)
    if k == count:
        raise TfrviewError(f"--records: {k} is outside the dataset's {count:,} records (0..{count - 1})")
    return range(count)[k : k + 1] if k >= 0 else range(count)[k:][:1]


def cmd_dump(args) -> int:
    from tfrview.core.records.payload import decode, payload_json
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.core.tfrecord.index import data_crc_ok

    schema = None
    if args.proto:
        from tfrview.core.records.schema import decode_with, load_schema

        schema = load_schema(args.proto, args.message)
    elif args.message:
        raise TfrviewError("--message needs --proto FILE (a descriptor set or a .proto file)")
    with Dataset.open(args.paths) as ds:
        errs = [f.error for f in ds.files if f.error]
        for e in errs:
            print(f"tfrview: {one_line(e)}", file=sys.stderr)
        for _ in ds.scan():
            pass
        rng = parse_range(args.records, ds.count)
        out = sys.stdout
        try:
            for n in rng:
                f, k, off, ln = ds.record_span(n)
                crc_ok = data_crc_ok(f.source, off, ln)  # streamed: a record of gigabytes is fine
                status = "ok" if crc_ok and not f.index.status[k] & DAMAGED else "damaged"
                p = decode(ds.read(n))  # only the head of a record over the decode limit
                named = decode_with(p.raw, schema) if schema is not None and p.full_size is None else None
                if named is not None:  # the person's schema: field names, not numbers
                    d = {"record": n, "offset": off, "length": ln, "kind": "message", "message_type": schema.name,
                         "message": named}  # fmt: skip
                    if status != "ok":
                        d["status"] = status
                    if args.json:
                        out.write(json.dumps(d) + "\n")
                    else:
                        body = json.dumps(named, indent=2, ensure_ascii=False).replace("\n", "\n  ")
                        out.write(f"record {n}  offset {off}  length {ln}  {schema.name}"
                                  f"{'  ' + status.upper() if status != 'ok' else ''}\n  {body}\n")  # fmt: skip
                    continue
                if args.json:
                    d = {"record": n, "offset": off, "length": ln, **payload_json(p)}
                    if len(ds.files) > 1:
                        d["file"] = str(f.path)
                    if status != "ok":
                        d["status"] = status
                    out.write(json.dumps(d) + "\n")
                else:
                    out.write(
                        _text_record(
                            n, off, ln, p, status, args.max_values, f.path if len(ds.files) > 1 else None
                        )
                    )
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        problems = ds.problems()
    return 2 if errs else (1 if problems else 0)


def _text_record(n, off, ln, p, status, max_values, path) -> str:
    from tfrview.core.records.textfmt import format_payload

    where = f"  file {one_line(str(path))}" if path else ""
    head = f"record {n}  offset {off}  length {ln}  {p.kind}{'  ' + status.upper() if status != 'ok' else ''}{where}\n"
    return head + format_payload(p, max_values, indent="  ") + "\n"


# --- index --------------------------------------------------------------------------------------------


def cmd_index(args) -> int:
    from tfrview.core.output.idxfile import check_index, format_index
    from tfrview.core.tfrecord.report import index_source
    from tfrview.core.tfrecord.source import open_source

    if not args.output and not args.check:
        return fail("index: give -o OUT to write an index, or --check IDX to check one")
    if args.output:
        _check_output(Path(args.output), [Path(args.path)], args.force)
    src = open_source(args.path)
    with src:
        idx = index_source(src, Progress(True), notice)
    Progress(True).clear()
    code = 0
    if idx.problems:
        for p in idx.problems:
            print(f"tfrview: {one_line(args.path)}: {p.kind}: {p.message}", file=sys.stderr)
        code = 1
    if args.check:
        res = check_index(args.check, idx)
        if res.ok:
            print(f"{one_line(args.check)}: matches {one_line(args.path)} ({idx.count:,} records)")
        else:
            print(f"{one_line(args.check)}: does not match {one_line(args.path)}")
            for m in res.messages:
                print(f"  {m}")
            code = 1
    if args.output:
        out = Path(args.output)
        from tfrview.core.output.atomic import atomic_write_text

        atomic_write_text(out, format_index(idx))
        print(f"{one_line(str(out))}: {idx.count:,} records indexed")
    return code


def _check_output(out: Path, inputs: list[Path], force: bool) -> None:
    """Before any work: the output is not an input, and exists only if --force says replace it."""
    from tfrview.core.output.atomic import refuse_overwriting_inputs

    refuse_overwriting_inputs(out, inputs)
    if os.path.lexists(out) and not force:
        raise TfrviewError(f"{out}: exists (use --force to replace it)")


# --- salvage ------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _verified_input(args):
    """The input of salvage and repair, checked against the output first, then framed and verified
    with a progress line: (source, index, report), the source open while the caller writes."""
    from tfrview.core.tfrecord.report import verify_source
    from tfrview.core.tfrecord.source import open_source

    _check_output(Path(args.output), [Path(args.path)], args.force)
    with open_source(args.path) as src:
        progress = Progress(True)
        idx, rep = verify_source(src, progress, notice)
        progress.clear()
        yield src, idx, rep


def cmd_salvage(args) -> int:
    from tfrview.core.output.salvage import salvage

    out = Path(args.output)
    with _verified_input(args) as (src, idx, rep):
        res = salvage(src, idx, out, args.compression)
    print(
        f"{one_line(str(out))}: wrote {res.written:,} intact records; dropped {res.dropped:,} damaged records "
        f"and {res.damaged_regions} unreadable region{'s' if res.damaged_regions != 1 else ''}"
        + (f"; {res.reheadered} records kept with a rebuilt header" if res.reheadered else "")
    )
    for p in rep.problems:
        print(f"  {p.kind}: {p.message}")
    return 0


def cmd_repair(args) -> int:
    """Salvage, plus every damaged record whose bytes can be proven whole again (one flipped bit
    in its data or its stored CRC); the report says what was repaired, how, and what was left out."""
    from tfrview.core.output.repair import repair

    out = Path(args.output)
    with _verified_input(args) as (src, idx, _):
        res = repair(src, idx, out, args.compression or src.compression)
    if args.json:
        print(json.dumps({"output": str(out), "written": res.written, "reheadered": res.reheadered, "file_fix": res.file_fix,
                          "damaged_regions": res.damaged_regions,
                          "repaired": [{"record": r.record, "how": r.how} for r in res.repaired],
                          "dropped": [{"record": k, "why": why} for k, why in res.dropped]}))  # fmt: skip
        return 0
    print(f"{one_line(str(out))}: wrote {res.written:,} records: {len(res.repaired):,} repaired, "
          f"{len(res.dropped):,} left out, {res.damaged_regions} unreadable region{'s' if res.damaged_regions != 1 else ''}"
          + (f"; {res.reheadered} kept with a rebuilt header" if res.reheadered else ""))  # fmt: skip
    if res.file_fix:
        print(f"  repaired the file: {res.file_fix}")
    for r in res.repaired:
        print(f"  repaired record {r.record}: {r.how}")
    for k, why in res.dropped[:50]:
        print(f"  left out record {k}: {why}")
    if len(res.dropped) > 50:
        print(f"  ... and {len(res.dropped) - 50} more left out (use --json for all)")
    return 0


# --- export and cache ---------------------------------------------------------------------------------


def cmd_export(args) -> int:
    """The fact table (one row per record: its facts, features and problems) as Parquet."""
    from tfrview.core.analysis import merge, plan
    from tfrview.core.analysis.parquet_export import write_parquet
    from tfrview.core.tfrecord.dataset import name_files

    out = Path(args.parquet)
    failed, paths = name_files(args.paths)
    for _, err in failed:
        raise TfrviewError(err)
    _check_output(out, paths, args.force)
    label_map, _ = _label_map_for_checks(args, paths)
    lm_json = label_map.to_json() if label_map is not None else None
    tasks = plan(paths, True, lm_json, notices=True)
    results = _run_pass(tasks, args.jobs, Progress(True), "reading", args.dask)
    unreadable = [r for r in results if r.error is not None]
    for r in unreadable:
        print(f"tfrview: {one_line(r.error)}", file=sys.stderr)
    res = write_parquet(merge(results), out, images=args.images)
    print(f"{one_line(str(out))}: wrote {res.rows:,} records, {res.columns} columns"
          + (f", {res.images:,} images" if args.images else ""))  # fmt: skip
    return 2 if unreadable else 0


def cmd_cache(args) -> int:
    from tfrview.core.analysis.cache import _entries, analysis_dir, clear
    from tfrview.core.tfrecord.remote import kept_dir, trim_kept

    if args.clear:
        n, size = clear()
        print(f"removed {n:,} stored result{'s' if n != 1 else ''} ({human_bytes(size)}) from {analysis_dir()}")
        k, kept = trim_kept(0)
        print(f"removed {k:,} remote file{'s' if k != 1 else ''} kept locally ({human_bytes(kept)}) from {kept_dir()}")
        return 0
    entries, size = _entries()
    print(f"{analysis_dir()}: {len(entries):,} stored results, {human_bytes(size)}")
    return 0


# --- desktop ------------------------------------------------------------------------------------------


def cmd_desktop(args) -> int:
    from . import desktop

    if args.command == "install-desktop":
        actions = desktop.install(dry_run=args.dry_run, force=args.force)
    else:
        actions = desktop.uninstall(dry_run=args.dry_run)
    for line in actions:
        print(line)
    return 0


# --- entry --------------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, like every other error."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {one_line(message)} (see {self.prog} --help)\n")


def _add_jobs(p) -> None:
    from tfrview.core.analysis import default_jobs

    p.add_argument("-j", "--jobs", type=_int_at_least(1), default=default_jobs(), metavar="N",
                   help=f"worker processes, one file each at a time (default: {default_jobs()}, the cores here)")  # fmt: skip
    p.add_argument("--dask", metavar="ADDRESS", default=None,
                   help="run the pass on a Dask distributed cluster (tcp://scheduler:8786), or 'local' for a "
                        "LocalCluster here; needs pip install 'tfrview[dask]'")  # fmt: skip


def _add_new_file_args(p) -> None:
    """PATH, -o OUT, --compression and --force: a command that writes one new file from one input."""
    p.add_argument("path", metavar="PATH")
    p.add_argument("-o", "--output", metavar="OUT", required=True)
    p.add_argument("--compression", choices=("none", "gzip", "zlib"), help="default: same as the input")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="tfrview",
        description="Inspect TensorFlow TFRecord files. With only file arguments, opens the window.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"tfrview {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    def add(name, help_, examples):
        p = sub.add_parser(
            name, help=help_, description=help_, epilog="examples:\n" + examples,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )  # fmt: skip
        return p

    p = add("info", "what a file holds: compression, records, payload kinds, feature keys and types",
            "  tfrview info train.tfrecord\n  tfrview info 'train-*' --json\n  tfrview info big.tfrecord --all\n")  # fmt: skip
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories, globs or shard patterns")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument("--sample", type=_int_at_least(1), default=2000, help="records to decode for the feature summary")
    p.add_argument("--all", action="store_true", help="decode every record for the feature summary")
    _add_jobs(p)
    p.set_defaults(func=cmd_info)

    p = add("verify", "check framing and both CRCs of every record; exit 0 clean, 1 problems, 2 error",
            "  tfrview verify train.tfrecord\n  tfrview verify data/ --quiet || echo damaged\n"
            "  tfrview verify shard.gz --json\n  tfrview verify --checks data/ --label-map label_map.pbtxt\n")  # fmt: skip
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--json", action="store_true", help='one JSON object: {"files": [...]}')
    p.add_argument("-q", "--quiet", action="store_true", help="print only damaged files")
    p.add_argument(
        "--checks",
        action="store_true",
        help="also run the QA checks of record contents (boxes, images, labels, values, schema)",
    )
    p.add_argument(
        "--label-map",
        metavar="PBTXT",
        help="label map for the label checks (default: a .pbtxt beside the data)",
    )
    _add_jobs(p)
    p.set_defaults(func=cmd_verify)

    p = add("export", "write the fact table (one row per record: facts, features, problems) as Parquet",
            "  tfrview export --parquet train.parquet 'train-*'\n"
            "  tfrview export --parquet train.parquet data/ --images\n"
            "  duckdb -c \"select kind, count(*) from 'train.parquet' group by kind\"\n")  # fmt: skip
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--parquet", metavar="OUT", required=True, help="the Parquet file to write")
    p.add_argument("--images", action="store_true", help="add each record's first image's bytes (column image)")
    p.add_argument("--label-map", metavar="PBTXT", help="label map for class names (default: a .pbtxt beside the data)")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    _add_jobs(p)
    p.set_defaults(func=cmd_export)

    p = add("cache", "where stored analysis results live, and how big they are; --clear removes them",
            "  tfrview cache\n  tfrview cache --clear\n")  # fmt: skip
    p.add_argument("--clear", action="store_true", help="remove every stored result")
    p.set_defaults(func=cmd_cache)

    p = add("dump", "print records as text or JSON lines",
            "  tfrview dump train.tfrecord --records 0:5\n  tfrview dump train.tfrecord --records -1\n"
            "  tfrview dump train.tfrecord --json > records.jsonl\n"
            "  tfrview dump frames.tfrecord --proto waymo.desc --message waymo.open_dataset.Frame\n")  # fmt: skip
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--records", metavar="A:B", help="record N, or a Python-style range A:B (default: all)")
    p.add_argument("--json", action="store_true", help="one JSON object per record")
    p.add_argument("--max-values", type=_int_at_least(0), default=8, help="values shown per feature in text output")
    p.add_argument("--proto", metavar="FILE", help="a schema for custom payloads: a descriptor set "
                   "(protoc --include_imports --descriptor_set_out) or a .proto file (needs grpcio-tools)")  # fmt: skip
    p.add_argument("--message", metavar="NAME", help="the message the records hold (default: the schema's only one)")
    p.set_defaults(func=cmd_dump)

    p = add("index", "write an 'offset size' index (DALI, tfrecord) or check one against its file",
            "  tfrview index train.tfrecord -o train.idx\n  tfrview index train.tfrecord --check train.idx\n")  # fmt: skip
    p.add_argument("path", metavar="PATH")
    p.add_argument("-o", "--output", metavar="OUT", help="index file to write")
    p.add_argument("--check", metavar="IDX", help="existing index file to check")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    p.set_defaults(func=cmd_index)

    p = add("salvage", "copy every intact record into a new file TensorFlow reads without error",
            "  tfrview salvage broken.tfrecord -o fixed.tfrecord\n"
            "  tfrview salvage broken.tfrecord.gz -o fixed.tfrecord --compression none\n")  # fmt: skip
    _add_new_file_args(p)
    p.set_defaults(func=cmd_salvage)

    p = add("repair", "like salvage, and restore damaged records whose bytes can be proven whole (one flipped bit)",
            "  tfrview repair broken.tfrecord -o repaired.tfrecord\n"
            "  tfrview repair broken.tfrecord -o repaired.tfrecord --json | jq .repaired\n")  # fmt: skip
    _add_new_file_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object: what was repaired, how, what was left out")
    p.set_defaults(func=cmd_repair)

    for name, help_ in (
        ("install-desktop", "let file managers open TFRecord files with tfrview (current user)"),
        ("uninstall-desktop", "remove exactly what install-desktop installed"),
    ):
        p = add(name, help_, f"  tfrview {name}\n  tfrview {name} --dry-run\n")
        p.add_argument("--dry-run", action="store_true", help="list the files, change nothing")
        if name == "install-desktop":
            p.add_argument("--force", action="store_true", help="become the default even over another app")
        else:
            p.set_defaults(force=False)
        p.set_defaults(func=cmd_desktop)
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and not argv[0].startswith("-")):
        return open_window(argv)
    args = build_parser().parse_args(argv)
    if not args.command:
        build_parser().print_help()
        return 2
    try:
        return args.func(args)
    except TfrviewError as exc:
        return fail(str(exc))
    except KeyboardInterrupt:
        fail("interrupted")
        return 130
    except BrokenPipeError:  # the reader of our output went away (| head): not an error
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        return fail(f"{getattr(exc, 'filename', '') or ''}: {exc.strerror or exc}".lstrip(": "))
    except (MemoryError, RecursionError) as exc:
        return fail(f"out of {'memory' if isinstance(exc, MemoryError) else 'stack'} ({type(exc).__name__}); please report the input")
    except Exception as exc:  # a bug: still one line, and it says so (TFRVIEW_DEBUG=1 shows where)
        if os.environ.get("TFRVIEW_DEBUG"):
            raise
        return fail(f"internal error: {type(exc).__name__}: {exc} (please report it)")


def open_window(paths: list[str]) -> int:
    """The GUI, imported only here so headless commands never load Qt."""
    try:
        import importlib

        app = importlib.import_module("tfrview.gui.app")
    except ImportError as exc:
        return fail(f"the window needs PySide6 ({exc}); the CLI works without it: tfrview --help")
    return app.run(paths)


if __name__ == "__main__":
    raise SystemExit(main())
