"""The `tfrview` command: headless subcommands over the core, or the window when given only files.

Exit codes: 0 clean, 1 problems found, 2 usage or I/O error. Errors are one line, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import logging
import os
import sys
import time
from pathlib import Path

from tfrview import __version__
from tfrview.cli import _interrupt  # first: Ctrl-C while the rest loads is one line, not a traceback
from tfrview.core.errors import Cancelled, TfrviewError, one_line
from tfrview.core.termtext import printable
from tfrview.core.units import human_bytes

COMMANDS = (
    "info",
    "verify",
    "dump",
    "export",
    "index",
    "salvage",
    "repair",
    "cache",
    "compare",
    "rules",
    "install-desktop",
    "uninstall-desktop",
)
# Commands with a module of their own in this package, imported only when the parser is built. Each
# module has HELP (one line), EXAMPLES (indented lines), `configure(p)` adding its arguments to its
# parser and `run(args) -> int`; it may import this package's helpers (`fail`, `_add_splits`, ...)
# inside its functions. New commands go here, not into this file.
MODULE_COMMANDS: dict[str, str] = {
    "schema": "tfrview.cli.schema",  # issue 23: TFDV schema inference
    "validate": "tfrview.cli.validate",  # issue 23: TFDV validation
    "import-coco": "tfrview.cli.import_coco",  # issue 23: corrected COCO annotations back in
    "tags": "tfrview.cli.tags",  # issue 23: the person's tags
    "evaluate": "tfrview.cli.evaluate",  # issue 24: predictions against the ground truth
    "rewrite": "tfrview.cli.rewrite",  # issue 23: a clean copy of a dataset
}
COMMANDS = COMMANDS + tuple(MODULE_COMMANDS)

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
  tfrview verify --checks --split train=a/ --split validation='b/*'   splits named by the person
  tfrview rules                             every --rule NAME=VALUE, its default and what it does
  tfrview cache --clear                     forget stored results and fetched remote bytes
  tfrview compare train validation data/    how validation differs from train; exit 1 past a threshold
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
        # said shown before the write: a Ctrl-C often lands inside it (the write to the terminal is
        # where the process waits), and the error line must still clear what reached the terminal
        self._shown = True
        Progress.shown = self
        sys.stderr.write(f"\r{phase}: {human_bytes(done)} of {human_bytes(total)} {pct}\033[K")
        sys.stderr.flush()

    def clear(self) -> None:
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            self._shown = False
        if Progress.shown is self:
            Progress.shown = None

    shown: Progress | None = None  # the display still on the terminal's last line, if any


def fail(msg: str, escaped: bool = False) -> int:
    """The one-line error on stderr (`escaped`: `msg` is `errors.one_line`'s, printable already)."""
    if Progress.shown is not None:  # an error (Ctrl-C included) may come mid-display: its own line
        Progress.shown.clear()
    print(f"tfrview: {msg if escaped else printable(msg)}", file=sys.stderr)
    return 2


def notice(msg: str) -> None:
    """A one-line note on stderr (whatever the output format): a likely decompression bomb."""
    print(f"tfrview: {printable(msg)}; Ctrl-C stops", file=sys.stderr)


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


# --- splits and rules ---------------------------------------------------------------------------------


def _files_and_splits(args) -> tuple[list, list, list[str]]:
    """What the arguments name (`name_files`: (argument, why) for those naming nothing, the files)
    with the files each `--split NAME=PATH` names added, and each file's split (`tfrecord.splits`:
    the person's words first, then the paths' own names). A --split naming nothing: SplitError."""
    from tfrview.core.tfrecord.dataset import name_files
    from tfrview.core.tfrecord.splits import named_splits, split_of_files

    named = named_splits(getattr(args, "split", None) or [])
    if not args.paths and not named:
        raise TfrviewError("name at least one PATH (or --split NAME=PATH)")
    failed, paths = name_files(list(args.paths) + [p for _, ps in named for p in ps])
    return failed, paths, split_of_files(paths, named)


def _shows_splits(splits: list[str], args) -> bool:
    """Whether the output names splits: the person named some, or the files are in more than one
    (shards all of `train-*` are one dataset, not a dataset with splits: their output is as it was)."""
    return bool(getattr(args, "split", None)) or len(set(splits)) > 1


def _rules(args):
    """The dataset step's thresholds with `--rule NAME=VALUE` applied (a bad word: RuleError)."""
    from tfrview.core.analysis.rules import DatasetRules

    return DatasetRules().with_words(getattr(args, "rule", None) or [])


def _split_totals(entries: list[dict]) -> dict:
    """Files, records and bytes of each split, in the order splits first appear ("" is a file in no
    split, listed last as "(none)"); {} when no entry names a split (`_shows_splits`)."""
    if not any("split" in e for e in entries):
        return {}
    out: dict[str, dict] = {}
    for e in sorted(entries, key=lambda e: not e.get("split")):
        t = out.setdefault(e.get("split") or "(none)", {"files": 0, "records": 0, "bytes": 0})
        t["files"] += 1
        t["records"] += e.get("records", 0) if "error" not in e else 0
        t["bytes"] += e.get("bytes", 0) if "error" not in e else 0
    return out


def _splits_line(splits: dict) -> str:
    """One line of records per split: `splits: train 1,024 files 9,800,000 records · validation ...`."""
    return "splits: " + " · ".join(
        f"{printable(name)} {t['files']:,} file{'s' if t['files'] != 1 else ''} {t['records']:,} records"
        for name, t in splits.items()
    )


def cmd_rules(args) -> int:
    """Every rule of the dataset step (`--rule NAME=VALUE`), its default and what it does."""
    from tfrview.core.analysis.rules import DatasetRules

    docs = DatasetRules().docs()
    if args.json:
        print(
            json.dumps(
                {
                    "rules": [
                        {
                            "name": d.name,
                            "concern": d.concern,
                            "type": d.type,
                            "default": d.default,
                            "doc": d.doc,
                        }
                        for d in docs
                    ]
                }
            )
        )
        return 0
    width = max((len(f"{d.name}={d.default}") for d in docs), default=0)
    concern = None
    for d in docs:
        if d.concern != concern:
            concern = d.concern
            print(f"{concern}:")
        print(f"  {f'{d.name}={d.default}':<{width}}  {d.doc}")
    return 0


# --- verify -------------------------------------------------------------------------------------------


def cmd_verify(args) -> int:
    """Every file through the analysis pass on `--jobs` worker processes (framing and both CRCs;
    with --checks, every record decoded once for the QA checks). The bytes are always read again:
    a stored result is never taken for a verification, as a bit can rot without changing a file's
    size or time. Results are stored for the window and `info`. The files may hold several
    datasets (`tfrecord.groups`): each is judged against itself, with its own label map."""
    failed, paths, splits = _files_and_splits(args)
    tfds = _tfds_said(args)
    rules = _rules(args)
    shows = _shows_splits(splits, args)
    if len(paths) > 1 and args.jobs > 1 and not args.dask:
        from tfrview.core.analysis.early import start_early

        start_early(args.jobs, share=not args.checks)  # (started by _prestart already when the words said so)
    from tfrview.core.analysis.merge import merge
    from tfrview.core.records.labelmap import label_map_misfit
    from tfrview.core.tfrecord.groups import group_files, group_of
    from tfrview.core.tfrecord.report import FileReport, sort_problems
    from tfrview.core.tfrecord.status import counts_of_bytes

    entries: list[dict | None] = [None] * (len(failed) + len(paths))
    errors = 0
    for i, (path, err) in enumerate(failed):
        errors += 1
        if not args.json:
            print(f"tfrview: {printable(err)}", file=sys.stderr)
        entries[i] = {"path": str(path), "ok": False, "error": err, "problems": []}
    groups = group_files(paths, args.one_dataset)
    maps = [
        _label_map_for_checks(args, [paths[i] for i in g.files]) if args.checks else (None, None)
        for g in groups
    ]
    tasks = _grouped_plan(paths, groups, args.checks, [lm for lm, _ in maps], read_cache=False, notices=True)
    results = _run_pass(tasks, args.jobs, Progress(not args.json and not args.quiet), "verify", args.dask)
    analysis = merge(results, groups, splits=splits, rules=rules)
    if args.checks and args.predictions:  # issue 24: where a predictions file disagrees with the labels
        from tfrview.cli.evaluate import add_likely_errors

        add_likely_errors(analysis, args.predictions, rules, next((lm for lm, _ in maps if lm), None))
    misfits = [
        None if lm_path is None or args.label_map else label_map_misfit(analysis.class_ids_of(g.files), lm)
        for g, (lm, lm_path) in zip(groups, maps, strict=True)
    ]
    fits = [lm_path is not None and m is None for (_, lm_path), m in zip(maps, misfits, strict=True)]
    used = {str(lm_path) for (_, lm_path), fit in zip(maps, fits, strict=True) if fit}
    for g, (_, lm_path), fit, misfit in zip(groups, maps, fits, misfits, strict=True):
        if lm_path is None:
            continue
        named = f" for {printable(g.name)}" if len(groups) > 1 else ""
        if not fit:
            _without_label_map(analysis, g.files)
        say = not args.json and not args.quiet
        if say and not fit and str(lm_path) not in used:  # a map another dataset beside it uses is no news
            print(
                f"not using {printable(str(lm_path))} found beside the data{named}: {misfit} "
                "(--label-map uses it anyway)",
                file=sys.stderr,
            )
        elif say and fit:
            print(f"label map{named}: {printable(str(lm_path))}", file=sys.stderr)
    of = group_of(groups, len(paths))
    reports: dict[int, FileReport] = {}
    for fi, r in enumerate(analysis.shards):
        at = len(failed) + fi
        if r.error is not None:
            errors += 1
            if not args.json:
                print(f"tfrview: {printable(r.error)}", file=sys.stderr)
            entries[at] = {"path": r.path, "ok": False, "error": r.error, "problems": []}
        else:
            rep = reports[fi] = FileReport(
                r.path,
                r.compression,
                r.file_size,
                r.records,
                r.damaged,
                sort_problems(analysis.problems(fi)),
                r.cause,
                r.crc_cut,
            )
            entries[at] = {**rep.to_json(), "record_status": counts_of_bytes(r.status_bytes())}
        entries[at]["dataset"] = groups[of[fi]].name
        if shows:
            entries[at]["split"] = splits[fi]
    totals = _totals([e for e in entries if e is not None])
    by_split = _split_totals([e for e in entries if e is not None])
    gaps = _add_missing(paths, entries, totals, tfds)
    if args.json:
        doc = {
            "files": entries,
            "datasets": [g.to_json([str(p) for p in paths]) for g in groups],
            "totals": totals,
        }
        _report_dataset_step(analysis, doc)
        if by_split:
            doc["splits"] = by_split
        print(json.dumps(doc))
    else:
        every = args.verbose or len(paths) <= FILES_LISTED
        for g in groups:
            t = _totals([entries[len(failed) + fi] for fi in g.files])
            clean = not t.get("files_with_problems") and not t["unreadable_files"]
            if (
                len(groups) > 1 and not args.quiet and (every or not clean)
            ):  # 1,024 clean datasets: the total says
                print(
                    f"dataset {printable(g.name)} (judged on its own): {_totals_line(t, True)[len('total: ') :]}"
                )
            for fi in g.files:
                if fi in reports and (every or not reports[fi].ok):
                    _print_verify(reports[fi], args.quiet, splits[fi] if shows else None)
        for entry in gaps:
            print(f"{printable(entry['path'])}: MISSING  1 problem")
            print(f"  {entry['problems'][0]['kind']}: {entry['problems'][0]['message']}")
        if not args.quiet:
            _report_dataset_step(analysis, None, args.verbose)
        if by_split and not args.quiet:
            print(_splits_line(by_split))
        if len(failed) + len(paths) > 1 and not args.quiet:
            print(_totals_line(totals, every, len(groups)))
    if errors:
        return 2
    return 0 if all(r.ok for r in reports.values()) and not gaps else 1


def _report_dataset_step(analysis, doc: dict | None, verbose: bool = False) -> None:
    """What the dataset step found beyond findings (`analysis.datasetqa`): into the --json `doc`
    (`leakage`, a row per split pair; `duplicate_groups`; `duplicates`; `image_quality`, the
    thresholds used and counts; `classes`, per class and split; `dataset_notes`), or as text when
    `doc` is None: a note of a limit hit on stderr (in the words every limit is said in), the
    others (a step with nothing to judge: no image, no box) with -v only, and the copies and leakage
    lines before the totals line."""
    if analysis.qa is None:
        return
    tables = analysis.qa.tables
    if doc is not None:
        for name in ("leakage", "duplicate_groups", "duplicates", "image_quality", "classes"):
            if name in tables:
                doc[name] = tables[name]
        doc["dataset_notes"] = list(analysis.qa.notes)
        return
    for note in analysis.qa.notes:
        if "(limits." in note:
            print(f"tfrview: {printable(note)}", file=sys.stderr)
        elif verbose:
            print(f"note: {printable(note)}", file=sys.stderr)
    d = tables.get("duplicates")
    if d is None or "leakage" not in tables:
        return  # no image hashed: its note said so
    print(
        f"copies: {d['groups']:,} groups of exact or near copies, {d['in_groups']:,} of {d['images']:,} images"
    )
    for row in tables["leakage"]:
        share = 100.0 * row["with_copy"] / max(row["images"], 1)
        print(
            f"  {row['with_copy']:,} of {row['images']:,} {printable(row['split'] or 'unsplit')} images "
            f"({share:.1f} %) have a copy in {printable(row['other'] or 'no split')}: "
            f"{row['exact']:,} exact, {row['near']:,} near"
        )


FILES_LISTED = 8  # past this many files, text output lists only the files with problems (-v: all)


def _grouped_plan(paths, groups, deep: bool, label_maps: list, **kw) -> list:
    """The pass's tasks, in file order, each file with its own dataset's label map."""
    from dataclasses import replace

    from tfrview.core.analysis import plan

    tasks = []
    for g, lm in zip(groups, label_maps, strict=True):
        lm_json = lm.to_json() if lm is not None else None
        tasks += [
            t if g.files[t.file_no] == t.file_no else replace(t, file_no=g.files[t.file_no])
            for t in plan([paths[i] for i in g.files], deep, lm_json, **kw)
        ]
    return sorted(tasks, key=lambda t: (t.file_no, t.part))


def _totals(entries: list[dict]) -> dict:
    """The dataset's totals over every file's entry (verify or info)."""
    read = [e for e in entries if "error" not in e]
    t = {
        "files": len(entries),
        "unreadable_files": len(entries) - len(read),
        "records": sum(e.get("records", 0) for e in read),
        "damaged_records": sum(e.get("damaged_records", 0) for e in read),
        "bytes": sum(e.get("bytes", 0) for e in read),
    }
    if any("record_status" in e for e in read):  # verify: the record status words, summed
        t["record_status"] = {
            w: sum(e.get("record_status", {}).get(w, 0) for e in read)
            for w in next(e["record_status"] for e in read if "record_status" in e)
        }
    if any("problems" in e for e in read):  # verify
        t["files_with_problems"] = sum(1 for e in read if e["problems"])
        t["problems"] = sum(len(e["problems"]) for e in read)
    elif read:  # info
        t["framing_problems"] = sum(e.get("framing_problems", 0) for e in read)
    return t


def _totals_line(t: dict, every: bool, datasets: int = 1) -> str:
    """One line of totals: files (in how many datasets), records, bytes, and what is wrong."""
    parts = [
        f"{t['files']:,} file{'s' if t['files'] != 1 else ''}"
        + (f" in {datasets:,} datasets" if datasets > 1 else "")
    ]
    if "files_with_problems" in t:
        bad = t["files_with_problems"]
        parts[0] += f" ({t['files'] - bad - t['unreadable_files']:,} OK, {bad:,} with problems"
        parts[0] += f", {t['unreadable_files']:,} unreadable)" if t["unreadable_files"] else ")"
    elif t["unreadable_files"]:
        parts[0] += f" ({t['unreadable_files']:,} unreadable)"
    intact = "intact " if "problems" in t else ""
    parts.append(
        f"{t['records']:,} {intact}records"
        + (f", {t['damaged_records']:,} damaged" if t["damaged_records"] else "")
    )
    parts.append(human_bytes(t["bytes"]))
    if "problems" in t:
        parts.append(f"{t['problems']:,} problem{'s' if t['problems'] != 1 else ''}")
    if t.get("framing_problems"):
        parts.append(f"{t['framing_problems']:,} framing problem{'s' if t['framing_problems'] != 1 else ''}")
    if t.get("missing_shards"):
        parts.append(f"{t['missing_shards']:,} shard{'s' if t['missing_shards'] != 1 else ''} missing")
    hidden = (
        ""
        if every
        else f" (more than {FILES_LISTED} files: only files with problems are listed; -v lists all)"
    )
    return "total: " + " · ".join(parts) + hidden


def _tfds_said(args) -> list:
    """The TFDS datasets the arguments are (tfds.layout), with which version was chosen and what is
    wrong with their metadata said on stderr in one line each (not with --json: it is in the doc)."""
    from tfrview.core.tfrecord.dataset import tfds_datasets

    found = tfds_datasets(list(args.paths))
    if not getattr(args, "json", False) and not getattr(args, "quiet", False):
        for ds in found:
            if ds.chosen:
                print(f"TFDS dataset {printable(ds.title)}: opened {printable(ds.chosen)}", file=sys.stderr)
    for ds in found:
        if ds.problem and not getattr(args, "json", False):
            print(f"tfrview: {ds.problem}", file=sys.stderr)
    return found


def _tfds_json(ds) -> dict:
    """A TFDS dataset's metadata as `info --json` gives it (`tfds` list)."""
    i = ds.info
    doc: dict = {"root": str(ds.root), "chosen": ds.chosen, "problem": ds.problem}
    if i is None:
        return doc
    return doc | {
        "name": i.name,
        "version": i.version,
        "config": i.config_name,
        "description": i.description,
        "citation": i.citation,
        "file_format": i.file_format,
        "download_size": i.download_size,
        "supervised_keys": list(i.supervised_keys),
        "records": i.num_examples,
        "splits": [
            {
                "name": s.name,
                "shards": s.num_shards,
                "records": s.num_examples,
                "num_bytes": s.num_bytes,
                "shard_lengths": list(s.shard_lengths) if s.shard_lengths is not None else None,
                "filepath_template": s.template,
            }
            for s in i.splits
        ],
    }


def _print_tfds(ds) -> None:
    """`info`'s first lines for a TFDS folder: what its dataset_info.json says."""
    i = ds.info
    print(f"TFDS {printable(ds.title)}  ({printable(str(ds.root))})")
    if i is None:
        print("  metadata      unreadable: the folder's files are read as they are")
        return
    total = i.num_examples
    shards = sum(s.num_shards for s in i.splits)
    print(f"  format        {printable(i.file_format)}")
    if i.description:
        print(f"  description   {printable(i.description.strip().splitlines()[0])[:100]}")
    if i.supervised_keys:
        print(f"  supervised    {', '.join(printable(k) for k in i.supervised_keys)}")
    if i.download_size is not None:
        print(f"  download      {human_bytes(i.download_size)}")
    count = f"{total:,} records" if total is not None else "records not said"
    print(
        f"  splits        {len(i.splits)} ({count} in {shards:,} shard{'s' if shards != 1 else ''}, by dataset_info.json)"
    )
    for s in i.splits:
        n = f"{s.num_examples:,} records" if s.num_examples is not None else "records not said"
        size = f", {human_bytes(s.num_bytes)}" if s.num_bytes is not None else ""
        print(
            f"    {printable(s.name):<12} {n} in {s.num_shards:,} shard{'s' if s.num_shards != 1 else ''}{size}"
        )


def _add_missing(paths, entries: list, totals: dict, tfds: list | None = None) -> list[dict]:
    """A `verify`/`info` entry for each shard a `-of-N` set names that is not there (a problem of
    kind missing_shard, named by the file expected: an incomplete upload is never 'clean'), or a
    TFDS folder's dataset_info.json names (split_missing_shard), added after the files' entries and
    counted in the totals; the entries, for the text output."""
    from tfrview.core.tfrecord.dataset import gap_problems

    gaps = [
        {
            "path": str(p),
            "ok": False,
            "missing": True,
            "records": 0,
            "damaged_records": 0,
            "problems": [problem.to_json()],
        }
        for p, problem in gap_problems(paths, tfds)
    ]
    entries += gaps
    if gaps:
        totals["missing_shards"] = len(gaps)
    return gaps


def _run_pass(tasks, jobs: int, progress: Progress, what: str, dask: str | None = None) -> list:
    """The analysis pass's tasks on `jobs` workers (or a Dask cluster), with progress in bytes of
    the files read (a part of a big file counts its share) and files finished."""
    from collections import Counter

    from tfrview.core.analysis import run_tasks

    sizes = {t.file_no: _size_of(t.path) for t in tasks}
    total = sum(sizes.values())  # once: a sum a result was 4 M additions over 2,048 shards
    parts_left = Counter(t.file_no for t in tasks)
    done, finished, results = 0.0, 0, []
    if dask:
        from tfrview.core.analysis.cluster import run_tasks_on_cluster

        stream = run_tasks_on_cluster(tasks, dask)
    else:
        # a file read in this process (one file, or -j 1) says how far it is: a long one is not silent
        inner = (lambda phase, d, total: progress(f"{what}: {phase}", d, total)) if progress.enabled else None
        stream = run_tasks(tasks, jobs, progress=inner, share=True)  # (this process frames too)
    for r in stream:
        results.append(r)
        done += sizes[r.file_no] / r.parts
        parts_left[r.file_no] -= 1
        finished += parts_left[r.file_no] == 0
        progress(f"{what} ({finished:,} of {len(sizes):,} files)", int(done), total)
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

    notes: list[str] = []
    lm_path = Path(args.label_map) if args.label_map else find_label_map(paths, notes)
    quiet = getattr(args, "json", False) or getattr(args, "quiet", False)  # export has neither flag
    for note in notes if not quiet else ():
        print(f"tfrview: {printable(note)}", file=sys.stderr)
    label_map = load_label_map(lm_path) if lm_path else None
    return (label_map, lm_path) if label_map else (None, None)


_LABEL_MAP_KINDS = ("label_not_in_map", "label_text_mismatch", "label_text_case", "mask_class_not_in_map")


def _without_label_map(analysis, files) -> None:
    """The checks' answer for these files had no label map been found: its findings go."""
    for fi in files:
        s = analysis.shards[fi]
        s.problems = [p for p in s.problems if str(p.kind) not in _LABEL_MAP_KINDS]


def _print_verify(rep, quiet: bool, split: str | None = None) -> None:
    """A file's verdict (with its split when the dataset has splits: `_shows_splits`)."""
    in_split = f", split {printable(split or '(none)')}" if split is not None else ""
    if rep.ok:
        if not quiet:
            extra = "" if rep.records else "  (empty: TensorFlow reads this as zero records)"
            print(
                f"{printable(rep.path)}: OK  {rep.records:,} records, {human_bytes(rep.bytes)}, "
                f"compression {rep.compression}{in_split}{extra}"
            )
            for line in _grouped_lines(rep.problems)[:20]:  # notes only: an OK file may have some
                print(line)
        return
    n = len(rep.problems)
    print(
        f"{printable(rep.path)}: {n} problem{'s' if n != 1 else ''}  {rep.records:,} intact records, "
        f"{rep.damaged_records:,} damaged, "
        + (f"{rep.unverified_records:,} unverified, " if rep.unverified_records else "")
        + f"compression {rep.compression}{in_split}"
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
    """One line a problem, repeats folded (problemgroups.Repeats: same kind and feature, or same kind
    and message but for the record, offset or CRC) into one line with their count and records; JSON
    keeps them all, each with its detail. A cause is part of what repeats: a flipped bit and a
    zeroed block stay apart, and the cause goes on a line of its own."""
    from tfrview.core.analysis.problemgroups import Repeats

    by_cause: dict[str, Repeats] = {}
    members: dict[tuple[str, int], list] = {}
    for p in problems:
        rep = by_cause.setdefault(p.cause, Repeats())
        members.setdefault((p.cause, rep.add(p)), []).append(p)
    out = []
    for (cause, gid), ps in members.items():
        tail = f"\n    cause: {cause}" if cause else ""
        if len(ps) == 1:
            out.append(f"  {ps[0].kind}: {ps[0].text}{tail}")
            continue
        recs = [p.record for p in ps if p.record is not None]
        where = f" (records {', '.join(map(str, recs[:8]))}{', …' if len(recs) > 8 else ''})" if recs else ""
        out.append(f"  {ps[0].kind} ×{len(ps)}: {by_cause[cause].title(gid)}{where}{tail}")
    return out


# --- info ---------------------------------------------------------------------------------------------


def cmd_info(args) -> int:
    """The analysis pass (stored results of unchanged files are used: info is a look, not a
    verification); the feature table from every record when the pass decoded them (--all, or an
    earlier `verify --checks` or the window), else from a sample. Past FILES_LISTED files, a block
    for each file with framing problems and one for each dataset (-v: every file)."""
    from tfrview.cli.stats import tfdv_info  # issue 23: TFDV statistics, schema, anomalies files

    told = tfdv_info(args)
    if told is not None:
        return told
    failed, paths, splits = _files_and_splits(args)
    tfds = _tfds_said(args)
    if tfds and not args.json:  # the metadata's answer at once, before any shard is read or the
        for ds in tfds:  # analysis pass imported
            _print_tfds(ds)
        sys.stdout.flush()
    from tfrview.core.analysis import plan
    from tfrview.core.problems import Problem
    from tfrview.core.tfrecord.groups import group_files, group_of
    from tfrview.core.tfrecord.tfdsfiles import length_problem

    shows = _shows_splits(splits, args)
    out: list[dict] = []
    errors = 0
    for path, err in failed:
        errors += 1
        if args.json:
            out.append({"path": str(path), "error": err})
        else:
            print(f"tfrview: {printable(err)}", file=sys.stderr)
    groups = group_files(paths, args.one_dataset)
    of = group_of(groups, len(paths))
    every = args.verbose or len(paths) <= FILES_LISTED
    tasks = plan(paths, args.all, None, notices=True)
    from tfrview.cli import _info_answer

    keyed = _info_answer.key_of(tasks, [bool(args.all), args.sample, bool(args.one_dataset)])
    stored = _info_answer.load(keyed[0]) if keyed is not None else None
    if stored is not None:  # a split looked at before, unchanged: one stored row
        rows, datasets = stored["rows"], stored["datasets"]
    else:
        from tfrview.core.analysis.merge import join_parts  # checks and their vocabularies: ~0.2 s

        # one per file, in order
        results = join_parts(_run_pass(tasks, args.jobs, Progress(not args.json), "reading", args.dask))
        rows, summaries = _info_rows(results, args.sample)
        datasets = [_dataset_info(g, summaries) for g in groups]
        if keyed is not None:
            _info_answer.store(keyed[0], tasks, keyed[1], results, rows, datasets)
    printed: set[int] = set()  # files whose block is printed
    folders: dict = {}  # each folder's TFDS dataset found once for all its shards (`length_problem`)
    for row in rows:
        fi = row["file_no"]
        if "error" in row:
            errors += 1
            if args.json:
                out.append({"path": row["path"], "error": row["error"], "dataset": groups[of[fi]].name})
                if shows:
                    out[-1]["split"] = splits[fi]
            else:
                print(f"tfrview: {printable(row['error'])}", file=sys.stderr)
            continue
        info = row["info"]
        if row["at"] is not None:
            info["analysed_at"] = _stamp(int(row["at"]))
        info["dataset"] = groups[of[fi]].name
        if shows:
            info["split"] = splits[fi]
        out.append(info)
        mismatch = (  # by its dataset_info.json
            length_problem(info["path"], row["records"], folders=folders) if tfds else None
        )
        if mismatch is not None:
            info["problems"] = [*info.get("problems", []), mismatch.to_json()]
        framing = Problem.from_json(row["framing"]) if row["framing"] is not None else None
        if not args.json and (every or framing or info["damaged_records"] or mismatch):
            _print_info(info, row["sizes"], framing)
            if mismatch is not None:
                print(f"  {mismatch.kind}  {printable(mismatch.message)}")
            printed.add(fi)
    totals = _totals(out)
    by_split = _split_totals([e for e in out if "path" in e])
    gaps = _add_missing(paths, out, totals, tfds)
    if args.json:
        doc = {"files": out, "datasets": datasets, "totals": totals}
        if tfds:
            doc["tfds"] = [_tfds_json(ds) for ds in tfds]
        if by_split:
            doc["splits"] = by_split
        print(json.dumps(doc))
    else:
        if len(paths) > 1:
            shown = [
                d
                for d, g in zip(datasets, groups, strict=True)  # a one-file dataset's block is its file's
                if d["files"] > 1 or (not every and not any(fi in printed for fi in g.files))
            ]
            if not args.verbose and len(shown) > FILES_LISTED:  # a folder of 1,024 datasets: the damaged ones
                shown = [d for d in shown if d["framing_problems"] or d["damaged_records"]]
            for d in shown:
                _print_info(d, None, None)
        for entry in gaps:
            print(printable(entry["path"]))
            print(f"  problem       {entry['problems'][0]['message']}")
        if by_split:
            print(_splits_line(by_split))
        if len(paths) > 1 or gaps:
            print(_totals_line(totals, every, len(groups)))
    return 2 if errors else 0


def _info_rows(results: list, sample: int) -> tuple[list[dict], dict]:
    """Each file's part of `info`'s answer, as plain data (`_info_answer` stores it): its entry (no
    read time, said afresh), its record sizes, its first framing problem, its intact records; or its
    error. And each file's (entry, feature summary, record lengths), for its dataset's entry."""
    rows: list[dict] = []
    summaries: dict[int, tuple[dict, object, object]] = {}
    picks = _sample_picks([r for r in results if r.error is None and r.deep is None], sample)
    for r in results:
        if r.error is not None:
            rows.append({"file_no": r.file_no, "path": r.path, "error": r.error})
            continue
        info, framing, cs = _info_of(r, picks.get(r.file_no))
        at = float(r.analysed_at) if info.pop("analysed_at", None) is not None else None
        sizes = (
            [int(r.lengths.min()), int(r.lengths.mean()), int(r.lengths.max())] if len(r.lengths) else None
        )
        rows.append(
            {
                "file_no": r.file_no,
                "info": info,
                "at": at,
                "sizes": sizes,
                "framing": framing[0].to_json() if framing else None,
                "records": r.records,
            }
        )
        summaries[r.file_no] = (info, cs, r.lengths)
    return rows, summaries


def _dataset_info(g, summaries: dict) -> dict:
    """`info` of one dataset: its files' counts summed and their feature summaries merged."""
    from tfrview.core.analysis.datasummary import DatasetSummary

    cs, infos, sizes = DatasetSummary(), [], []
    for fi in g.files:
        if fi in summaries:
            info, s, lengths = summaries[fi]
            cs.merge(s)
            infos.append(info)
            if len(lengths):
                sizes.append((int(lengths.min()), int(lengths.sum()), int(lengths.max())))
    records = sum(i["records"] for i in infos)
    d = {
        "path": f"dataset {g.name}",
        "name": g.name,
        "files": len(g.files),
        "compression": "/".join(sorted({i["compression"] for i in infos})) or "none",
        "bytes": sum(i["bytes"] for i in infos),
        "stream_bytes": sum(i["stream_bytes"] for i in infos),
        "records": records,
        "framing_problems": sum(i["framing_problems"] for i in infos),
        "damaged_records": sum(i["damaged_records"] for i in infos),
        **_summary_json(cs),
    }
    if sizes:
        d["record_size"] = {
            "min": min(a for a, _, _ in sizes),
            "mean": sum(b for _, b, _ in sizes) // max(records, 1),
            "max": max(c for _, _, c in sizes),
        }
    return d


def _info_of(r, picks) -> tuple[dict, list, object]:
    """A file's `info` entry, its framing problems and its feature summary: from every record when
    a deep pass is stored, else from the records `picks` names (`_sample_picks`)."""
    from tfrview.core.problems import FRAMING_KINDS, ProblemKind

    cs = r.deep.summary if r.deep is not None else _sampled_summary(r, picks)
    framing = [p for p in r.problems if p.kind in FRAMING_KINDS and p.kind != ProblemKind.BAD_DATA_CRC]
    info = {
        "path": r.path,
        "compression": r.compression,
        "bytes": r.file_size,
        "stream_bytes": r.scanned,
        "records": len(r.offsets),
        "framing_problems": len(framing),
        "damaged_records": r.damaged,
        **_summary_json(cs),
    }
    if r.from_cache:
        info["analysed_at"] = _stamp(int(r.analysed_at))
    from tfrview.core.tfrecord.framing import Compression
    from tfrview.core.tfrecord.remote import is_url

    if r.compression == Compression.ARRAYRECORD and not is_url(r.path):
        info["arrayrecord"] = _arrayrecord_info(r.path)
    return info, framing, cs


def _arrayrecord_info(path: str) -> dict:
    """An ArrayRecord or Riegeli file's chunks, writer options and metadata chunk (its footer and
    the chunk after the signature: two small reads); what could not be read, in one line."""
    from tfrview.core.arrayrecord.reader import open_arrayrecord

    try:
        with open_arrayrecord(path) as f:
            return f.info()
    except (TfrviewError, OSError) as exc:
        return {"error": one_line(exc)}


@functools.lru_cache(maxsize=256)
def _stamp(seconds: int) -> str:
    """A local time in words, once a second: the shards of one pass were read within a few."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _summary_json(cs) -> dict:
    """The feature summary part of `info`: payload kinds, feature keys and their types."""
    from tfrview.core.records.feature import TYPE_SHORT

    return {
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


def _sample_picks(results: list, sample: int) -> dict:
    """The records `info` decodes for its feature summary: `sample` spread evenly over all the
    files' records together (so 2,048 shards decode ~2,000 records, not 2,000 each: that was 93 %
    of info's time on a stored split), and at least one of each file that has any, so every file's
    entry names its features. {file_no: record numbers}."""
    import numpy as np

    from tfrview.core.tfrecord.report import sample_numbers

    counts = np.array([len(r.offsets) for r in results], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)))
    picked = sample_numbers(int(starts[-1]), sample)
    at = np.searchsorted(starts, picked, side="right") - 1  # the file each picked record is in
    out = {}
    for i, r in enumerate(results):
        mine = picked[at == i] - starts[i] if len(picked) else picked
        out[r.file_no] = mine if len(mine) or not counts[i] else np.array([counts[i] // 2])
    return out


def _sampled_summary(r, picks):
    from tfrview.core.analysis.datasummary import DatasetSummary
    from tfrview.core.records.payload import decode
    from tfrview.core.tfrecord.framing import Compression
    from tfrview.core.tfrecord.payload_bytes import bounded_payload
    from tfrview.core.tfrecord.remote import is_url
    from tfrview.core.tfrecord.source import open_source

    cs = DatasetSummary()
    if picks is None or not len(picks):
        return cs
    if r.compression == Compression.NONE and not is_url(
        r.path
    ):  # a plain file: a descriptor and a read a record
        from tfrview.core.tfrecord.source import open_regular

        fd, _ = open_regular(r.path)
        try:
            for k in picks:
                cs.add(
                    decode(
                        bounded_payload(
                            lambda at, n: os.pread(fd, n, at), int(r.offsets[k]), int(r.lengths[k])
                        )
                    )
                )
        finally:
            os.close(fd)
        return cs
    with open_source(r.path) as src:
        for k in picks:
            cs.add(decode(bounded_payload(src.read, int(r.offsets[k]), int(r.lengths[k]))))
    return cs


def _print_arrayrecord(ar: dict) -> None:
    """An ArrayRecord file's chunks and options, and its metadata chunk, one line each."""
    from tfrview.core.arrayrecord.reader import info_lines

    said = ""
    for label, text in info_lines(ar):
        print(f"  {label if label != said else '':<13} {text}")
        said = label


def _print_info(info: dict, sizes, framing) -> None:
    """One block of `info`: a file's (with its record sizes: min, mean, max), or a dataset's (sizes
    None). `framing`: the file's first framing problem, if any."""
    from tfrview.core.problems import ProblemKind
    from tfrview.core.tfrecord.framing import Compression

    print(printable(info["path"]))
    if "files" in info:
        print(f"  files         {info['files']:,}")
    elif info.get("dataset") and info["dataset"] != Path(info["path"]).name:  # one of a dataset's files
        print(f"  dataset       {printable(info['dataset'])}")
    if info.get("split"):
        print(f"  split         {printable(info['split'])}")
    size = human_bytes(info["bytes"])
    if info["compression"] != Compression.NONE:
        size += f" ({human_bytes(info['stream_bytes'])} uncompressed)"
    print(f"  compression   {info['compression']}")
    print(f"  size          {size}")
    print(
        f"  records       {info['records']:,}"
        + (f" ({info['damaged_records']:,} damaged)" if info["damaged_records"] else "")
    )
    if framing is not None:
        if framing.kind == ProblemKind.NOT_TFRECORD:
            print(f"  problem       {printable(framing.message)}")
        else:
            print(f"  problems      {info['framing_problems']} in framing (run `tfrview verify` for details)")
    if "analysed_at" in info:
        print(f"  read          {info['analysed_at']} (unchanged since; `tfrview verify` reads it again)")
    ar = info.get("arrayrecord")
    if ar:
        _print_arrayrecord(ar)
    if "files" in info and info["framing_problems"]:
        print(f"  problems      {info['framing_problems']:,} in framing (run `tfrview verify` for details)")
    if info["records"] and sizes is not None:
        print(f"  record size   min {sizes[0]:,}  mean {sizes[1]:,}  max {sizes[2]:,} bytes")
    elif "record_size" in info:
        n = info["record_size"]["min"], info["record_size"]["mean"], info["record_size"]["max"]
        print(f"  record size   min {n[0]:,}  mean {n[1]:,}  max {n[2]:,} bytes")
    sampled = info["sampled_records"]
    of = f" (sampled {sampled:,} of {info['records']:,})" if sampled < info["records"] else ""
    kinds = ", ".join(f"{k} {v:,}" for k, v in sorted(info["payload_kinds"].items()))
    if kinds:
        print(f"  payloads      {kinds}{of}")
    if info["features"]:
        print("  features")
        width = min(max(len(printable(k)) for k in info["features"]), 60)
        for key, s in info["features"].items():
            k = printable(key)
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
            print(f"    {printable(k)}  {'/'.join(s['types'])}")
    if info["other_keys"]:
        from tfrview.core.limits import TRACKED_KEYS

        print(
            f"  other keys    {info['other_keys']:,} features of keys past the first {TRACKED_KEYS:,} "
            "(limits.TRACKED_KEYS): counted, not listed"
        )


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
    from tfrview.core.records.kinds import PayloadKind
    from tfrview.core.records.payload import decode, payload_json
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.core.tfrecord.report import DECODED_AS_IS
    from tfrview.core.tfrecord.status import RecordStatus, record_status

    schema = None
    if args.proto:
        from tfrview.core.records.protoschema import decode_with, load_schema

        schema = load_schema(args.proto, args.message)
    elif args.message:
        raise TfrviewError("--message needs --proto FILE (a descriptor set or a .proto file)")
    with Dataset.open(args.paths) as ds:
        errs = [f.error for f in ds.files if f.error and not f.missing]
        for f in ds.files:
            if f.error:  # a missing shard is a problem (exit 1), a file that cannot be read an error (2)
                print(
                    f"tfrview: {printable(f.error if not f.missing else str(f.path) + ': ' + f.error)}",
                    file=sys.stderr,
                )
        ds.frame_and_verify()  # verify's framing and numbering: every record it frames is dumped
        rng = parse_range(args.records, ds.count)
        out = sys.stdout
        declared = _Declared()  # what a TFDS dataset's features.json says of each key (a folder's)
        try:
            for n in rng:
                f, k, off, ln = ds.record_span(n)
                status = record_status(int(f.index.status[k]))
                p = decode(ds.read(n))  # only the head of a record over the decode limit
                tfds = declared.of(f.path)
                cut: list[str] = []  # the list limit hit by the schema's decode, said like an Example's
                named = (
                    decode_with(p.raw, schema, cut) if schema is not None and p.full_size is None else None
                )
                if named is not None:  # the person's schema: field names, not numbers
                    d = {
                        "record": n,
                        "offset": off,
                        "length": ln,
                        "kind": PayloadKind.MESSAGE,
                        "message_type": schema.name,
                        "message": named,
                    }
                    if status != RecordStatus.OK:
                        d["status"] = status
                    if cut:
                        d["limits"] = cut
                    if args.json:
                        out.write(json.dumps(d) + "\n")
                    else:
                        body = json.dumps(named, indent=2, ensure_ascii=False).replace("\n", "\n  ")
                        limits = "".join(f"  limit: {printable(note)}\n" for note in cut)
                        out.write(
                            f"record {n}  offset {off}  length {ln}  {schema.name}"
                            f"{'  ' + status.upper() if status != RecordStatus.OK else ''}\n{limits}  {body}\n"
                        )
                    continue
                if args.json:
                    d = {"record": n, "offset": off, "length": ln, **payload_json(p)}
                    if len(ds.files) > 1:
                        d["file"] = str(f.path)
                    if tfds is not None:
                        d["tfds"] = declared.json(tfds, p)
                    if status != RecordStatus.OK:
                        d["status"] = status
                        d["note"] = DECODED_AS_IS[status]
                    out.write(json.dumps(d) + "\n")
                else:
                    out.write(
                        _text_record(
                            n, off, ln, p, status, args.max_values, f.path if len(ds.files) > 1 else None
                        )
                        + (declared.text(tfds, p) if tfds is not None else "")
                    )
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        problems = ds.problems() + [f for f in ds.files if f.missing]
        _say_framing(ds)
    return 2 if errs else (1 if problems else 0)


class _Declared:
    """A TFDS dataset's features.json beside a file, loaded once a folder (`tfds.features_of_folder`:
    read as data, never imported), and what it says of a record's keys, for `dump`."""

    def __init__(self) -> None:
        self._folders: dict[str, object] = {}

    def of(self, path):
        from tfrview.core.tfds.features import features_of_folder  # start-up: kept off the CLI's path
        from tfrview.core.tfrecord.remote import is_url  # start-up: kept off the CLI's path

        if is_url(str(path)):
            return None
        folder = os.path.dirname(str(path)) or "."
        if folder not in self._folders:
            got = self._folders[folder] = features_of_folder(folder)
            if got is not None:
                for line in (got.error, *got.notes):
                    if line:
                        print(f"tfrview: {printable(line)}", file=sys.stderr)
        got = self._folders[folder]
        return got if got is not None and got.root is not None else None

    @staticmethod
    def text(tfds, p) -> str:
        """`tfds {...}`: each declared key, what features.json says of it and its values read so."""
        from tfrview.core.records.reading import ReadingContext, read_record
        from tfrview.core.records.tfdsvalues import declared

        got = declared(tfds, p.features)
        if not got:
            return ""
        lines = ["  tfds {"]
        r = read_record(p, ReadingContext(tfds=tfds))
        if r.label_key is not None:
            lines.append(f"    record label {printable(r.label_key)!r}: {printable(r.label_text or '')}")
        for k, d in got.items():
            shown = d.error or d.value
            lines.append(
                f"    {printable(k)!r}: {printable(d.text)}" + (f" = {printable(shown)}" if shown else "")
            )
        return "\n".join(lines) + "\n  }\n"

    @staticmethod
    def json(tfds, p) -> dict:
        """{"label": ..., "features": {key: {"feature": words, "value": ..., "array": [...]}}}."""
        from tfrview.core.records.reading import ReadingContext, read_record
        from tfrview.core.records.tfdsvalues import declared

        feats = {}
        for k, d in declared(tfds, p.features).items():
            one: dict = {"feature": d.text}
            if d.array is not None:
                one["shape"] = list(d.array.shape)
                one["array"] = d.array.tolist()
            elif d.value is not None:
                one["value"] = d.value
            if d.error:
                one["error"] = d.error
            feats[k] = one
        r = read_record(p, ReadingContext(tfds=tfds))
        return {"label": r.label_text, "features": feats}


def _say_framing(ds) -> None:
    """Why `dump` exits 1, on stderr, one line a file: the file is not a TFRecord, or how many framing
    problems it has (printing records is dump's work; `verify` lists the problems)."""
    from tfrview.core.problems import ProblemKind

    for f in ds.files:
        ps = f.index.problems
        if not ps:
            continue
        if len(ps) == 1 or ps[0].kind == ProblemKind.NOT_TFRECORD:
            print(
                f"tfrview: {printable(str(f.path))}: {ps[0].kind}: {printable(ps[0].message)}",
                file=sys.stderr,
            )
        else:
            print(
                f"tfrview: {printable(str(f.path))}: {len(ps):,} framing problems (`tfrview verify` lists them)",
                file=sys.stderr,
            )


def _text_record(n, off, ln, p, status, max_values, path) -> str:
    from tfrview.core.records.textfmt import format_payload

    where = f"  file {printable(str(path))}" if path else ""
    from tfrview.core.tfrecord.report import DECODED_AS_IS
    from tfrview.core.tfrecord.status import RecordStatus

    head = f"record {n}  offset {off}  length {ln}  {p.kind}{'  ' + status.upper() if status != RecordStatus.OK else ''}{where}\n"
    note = f"  ({DECODED_AS_IS[status]})\n" if status != RecordStatus.OK else ""
    return head + note + format_payload(p, max_values, indent="  ") + "\n"


# --- index --------------------------------------------------------------------------------------------


def cmd_index(args) -> int:
    from tfrview.core.output.index_files import check_index, format_index
    from tfrview.core.tfrecord.framing import Compression
    from tfrview.core.tfrecord.report import index_source
    from tfrview.core.tfrecord.source import open_source

    if not args.output and not args.check:
        return fail("index: give -o OUT to write an index, or --check IDX to check one")
    if args.output:
        _check_output(Path(args.output), [Path(args.path)], args.force)
    src = open_source(args.path)
    with src:
        if src.compression == Compression.ARRAYRECORD:
            return fail(
                f"not for ArrayRecord: {printable(args.path)}: an 'offset size' index locates TFRecord "
                "frames in a file's bytes (DALI, tfrecord); an ArrayRecord file's footer is its own index "
                "(`tfrview info` shows its chunks)"
            )
        idx = index_source(src, Progress(True), notice)
    Progress(True).clear()
    code = 0
    if idx.problems:
        for p in idx.problems:
            print(f"tfrview: {printable(args.path)}: {p.kind}: {p.message}", file=sys.stderr)
        code = 1
    if args.check:
        res = check_index(args.check, idx)
        if res.ok:
            print(f"{printable(args.check)}: matches {printable(args.path)} ({idx.count:,} records)")
        else:
            print(f"{printable(args.check)}: does not match {printable(args.path)}")
            for m in res.messages:
                print(f"  {m}")
            code = 1
    if args.output:
        out = Path(args.output)
        from tfrview.core.output.atomic import atomic_write_text

        atomic_write_text(out, format_index(idx))
        print(f"{printable(str(out))}: {idx.count:,} records indexed")
    return code


def _check_output(out: Path, inputs: list[Path], force: bool) -> None:
    """Before any work: the output is not an input, and exists only if --force says replace it."""
    from tfrview.core.output.atomic import refuse_overwriting_inputs

    refuse_overwriting_inputs(out, inputs)
    if os.path.lexists(out) and not force:
        raise TfrviewError(f"{out}: exists (use --force to replace it)")


# --- salvage ------------------------------------------------------------------------------------------


@contextlib.contextmanager
def _verified_input(args, refuse=None):
    """The input of salvage and repair, checked against the output first, then framed and verified
    with a progress line: (source, index, report), the source open while the caller writes. With
    `refuse`, the opened source is given to it before the output is looked at (repair refuses an
    ArrayRecord file at once): the source is opened once."""
    from tfrview.core.childproc import cores
    from tfrview.core.tfrecord.report import verify_source
    from tfrview.core.tfrecord.source import open_source

    if refuse is None:
        _check_output(Path(args.output), [Path(args.path)], args.force)
    with open_source(args.path) as src:
        if refuse is not None:
            refuse([src])
            _check_output(Path(args.output), [Path(args.path)], args.force)
        progress = Progress(True)
        idx, rep = verify_source(src, progress, notice, cores())  # a big plain file: in parts, every core
        progress.clear()
        yield src, idx, rep


def cmd_salvage(args) -> int:
    from tfrview.core.output.salvage import default_format, salvage

    out = Path(args.output)
    with _verified_input(args) as (src, idx, rep):
        fmt = args.format or default_format(src)
        res = salvage(src, idx, out, args.compression, keep_unverified=args.keep_unverified, fmt=fmt)
    from tfrview.core.tfrecord.framing import Compression

    # the format said when it is not the input's own (an ArrayRecord input written as TFRecord, or as ArrayRecord)
    said = f" ({fmt})" if src.compression is Compression.ARRAYRECORD else ""
    print(
        f"{printable(str(out))}: wrote {res.written:,} intact records{said}; dropped {res.dropped:,} damaged records "
        f"and {res.damaged_regions} unreadable region{'s' if res.damaged_regions != 1 else ''}"
        + (f"; {res.reheadered} records kept with a rebuilt header" if res.reheadered else "")
        + (_kept_unverified(res.unverified) if res.unverified else "")
    )
    for p in rep.problems:
        print(f"  {p.kind}: {p.message}")
    return 0


def _kept_unverified(n: int) -> str:
    return f"; {n} unverified record{'s' if n != 1 else ''} kept (the input lost its data CRC; written with a CRC computed now)"


def cmd_repair(args) -> int:
    """Salvage, plus every damaged record whose bytes can be proven whole again (one flipped bit
    in its data or its stored CRC); the report says what was repaired, how, and what was left out."""
    from tfrview.core.output.repair import refuse_arrayrecord, repair

    out = Path(args.output)
    with _verified_input(args, refuse_arrayrecord) as (src, idx, _):  # an ArrayRecord file refused at once
        res = repair(src, idx, out, args.compression or src.compression)
    if args.json:
        print(
            json.dumps(
                {
                    "output": str(out),
                    "written": res.written,
                    "reheadered": res.reheadered,
                    "file_fix": res.file_fix,
                    "damaged_regions": res.damaged_regions,
                    "repaired": [
                        {
                            "record": r.record,
                            "how": r.how,
                            **({"offset": r.offset} if r.record is None else {}),
                        }
                        for r in res.repaired
                    ],
                    "dropped": [{"record": k, "why": why} for k, why in res.dropped],
                }
            )
        )
        return 0
    print(
        f"{printable(str(out))}: wrote {res.written:,} records: {len(res.repaired):,} repaired, "
        f"{len(res.dropped):,} left out, {res.damaged_regions} unreadable region{'s' if res.damaged_regions != 1 else ''}"
        + (f"; {res.reheadered} kept with a rebuilt header" if res.reheadered else "")
    )
    if res.file_fix:
        print(f"  repaired the file: {res.file_fix}")
    for r in res.repaired:
        print(f"  repaired {r.where}: {r.how}")
    for k, why in res.dropped[:50]:
        print(f"  left out {f'record {k}' if k is not None else 'a record'}: {why}")
    if len(res.dropped) > 50:
        print(f"  ... and {len(res.dropped) - 50} more left out (use --json for all)")
    return 0


# --- compare ------------------------------------------------------------------------------------------


def cmd_compare(args) -> int:
    """Side A against side B (two splits of the dataset the PATHs name, or two paths) from their
    fact tables (stored deep passes are taken, others made and stored): the features that shifted
    first, with the measure and its threshold. Exit 1 when a threshold is passed."""
    from tfrview.core.analysis.compare import compare, side_of
    from tfrview.core.analysis.merge import join_parts
    from tfrview.core.analysis.rules import DatasetRules
    from tfrview.core.tfrecord.dataset import name_files
    from tfrview.core.tfrecord.groups import group_files
    from tfrview.core.tfrecord.splits import ALIASES, named_splits, split_of_files

    rules = DatasetRules().with_words(args.rule or []).drift

    def named(words: list[str]) -> list[str]:
        failed, paths = name_files(words)
        for _, err in failed:
            raise TfrviewError(err)
        return [str(p) for p in paths]

    if args.paths:
        paths = named(args.paths)
        splits = split_of_files(paths, named_splits(args.split or []))
        found = sorted({s for s in splits if s})
        wanted = []
        for name in (args.a, args.b):
            s = name if name in found else ALIASES.get(name.lower(), name)
            if s not in found:
                raise TfrviewError(
                    f"no split {name!r} in {len(paths):,} file{'s' if len(paths) != 1 else ''} (splits found: "
                    + (", ".join(found) if found else "none; name them with --split NAME=PATH")
                    + ")"
                )
            wanted.append(s)
        sides = [[i for i, s in enumerate(splits) if s == w] for w in wanted]
        names = wanted
    else:
        if args.split:
            raise TfrviewError("--split names splits of the PATHs: give the dataset's PATHs after A and B")
        pa_, pb_ = named([args.a]), named([args.b])
        paths = pa_ + pb_
        sides = [list(range(len(pa_))), list(range(len(pa_), len(paths)))]
        names = [args.a, args.b]
    groups = group_files(paths, False)
    wanted_files = {i for files in sides for i in files}  # a split compared with neither is not read
    tasks = [
        t
        for t in _grouped_plan(paths, groups, True, [None] * len(groups), notices=True)
        if t.file_no in wanted_files
    ]
    results = join_parts(_run_pass(tasks, args.jobs, Progress(not args.json), "reading", args.dask))
    by_file = {r.file_no: r for r in results}
    for r in results:
        if r.error is not None:
            print(f"tfrview: {printable(r.error)}", file=sys.stderr)
    a, b = (
        side_of(n, [by_file[i] for i in files if i in by_file]) for n, files in zip(names, sides, strict=True)
    )
    c = compare(a, b, rules)
    if args.json:
        print(json.dumps(c.to_json()))
    else:
        _print_compare(c, args.verbose)
    return 1 if c.drifted else 0


def _print_compare(c, every: bool) -> None:
    from tfrview.core.analysis.compare import Shift, shift_words

    print(
        f"{printable(c.a)}: {c.records_a:,} records in {c.files_a:,} file{'s' if c.files_a != 1 else ''}"
        f" · {printable(c.b)}: {c.records_b:,} records in {c.files_b:,} file{'s' if c.files_b != 1 else ''}"
    )
    drifted = c.drifted
    print(f"shifted: {len(drifted)} of {len(c.features)} features" + (":" if drifted else ""))
    width = max((len(printable(f.key)) for f in c.features), default=0)
    for f in c.features if every else drifted:
        words = shift_words(f, printable(c.a), printable(c.b), c.rules.presence_change)
        if f.measure is not None:
            op = ">" if Shift.DISTRIBUTION in f.shifts else "≤"
            words.append(f"{f.measure} {f.value:.4f} {op} {f.threshold:g}")
        print(f"  {'✗' if f.drifted else ' '} {printable(f.key):<{width}}  {'; '.join(words)}")
    if not every and len(c.features) > len(drifted):
        print(f"  ({len(c.features) - len(drifted)} unchanged: -v lists every feature)")


# --- export and cache ---------------------------------------------------------------------------------


def cmd_export(args) -> int:
    """The fact table (one row per record: its facts, features and problems) as Parquet, and the
    records as training formats (COCO, YOLO, VOC, HF Parquet, WebDataset: `cli/trainexport.py`)."""
    from tfrview.cli import trainexport

    formats = trainexport.wanted(args)
    if args.stats:  # issue 23: TFDV statistics (tfrview/cli/stats.py)
        if args.parquet or formats:
            raise TfrviewError("--stats is written alone: export the other outputs with another command")
        from tfrview.cli.stats import export_stats

        return export_stats(args)
    if not args.parquet and not formats:
        raise TfrviewError(
            "name an output: --parquet, --stats, --coco, --yolo, --voc, --hf-parquet or --webdataset"
        )
    if args.where and args.parquet:
        raise TfrviewError("--where selects the records of --coco, --yolo, --voc, --hf-parquet, --webdataset")
    failed, paths, splits = _files_and_splits(args)
    for _, err in failed:
        raise TfrviewError(err)
    if args.parquet:
        _check_output(Path(args.parquet), paths, args.force)  # every output checked before any is written
    code = trainexport.run_formats(args, paths, splits) if formats else 0
    return _export_parquet(args, paths, splits) if args.parquet else code


def _export_parquet(args, paths, splits) -> int:
    from tfrview.core.analysis.merge import merge
    from tfrview.core.analysis.parquet_export import write_parquet
    from tfrview.core.tfrecord.groups import group_files

    out = Path(args.parquet)
    rules = _rules(args)
    _check_output(out, paths, args.force)
    groups = group_files(paths, args.one_dataset)  # each dataset with the label map beside it
    label_maps = [_label_map_for_checks(args, [paths[i] for i in g.files])[0] for g in groups]
    tasks = _grouped_plan(paths, groups, True, label_maps, notices=True)
    results = _run_pass(tasks, args.jobs, Progress(True), "reading", args.dask)
    unreadable = [r for r in results if r.error is not None]
    for r in unreadable:
        print(f"tfrview: {printable(r.error)}", file=sys.stderr)
    res = write_parquet(merge(results, groups, splits=splits, rules=rules), out, images=args.images)
    print(
        f"{printable(str(out))}: wrote {res.rows:,} records, {res.columns} columns"
        + (f", {res.images:,} images" if args.images else "")
        + (
            f"; {res.file_problems:,} problems of no record as rows with a null record"
            if res.file_problems
            else ""
        )
    )
    return 2 if unreadable else 0


def cmd_cache(args) -> int:
    """What tfrview keeps on disk unasked: the result store and the remote bytes fetched, each with
    its limit; --clear empties both."""
    from tfrview.core.analysis.cache import clear, disk_bytes, store_path, usage
    from tfrview.core.limits import CACHE_MAX_BYTES, REMOTE_SPILL_BYTES
    from tfrview.core.tfrecord.remote import kept_dir, kept_usage, trim_kept

    if args.clear:
        n, size = clear()
        print(f"removed {n:,} stored result{'s' if n != 1 else ''} ({human_bytes(size)}) from {store_path()}")
        k, kept = trim_kept(0)
        print(
            f"removed {k:,} remote file{'s' if k != 1 else ''} kept locally ({human_bytes(kept)}) from {kept_dir()}"
        )
        return 0
    entries, _ = usage()
    print(
        f"{store_path()}: {entries:,} stored results, {human_bytes(disk_bytes())} on disk "
        f"(limit {human_bytes(CACHE_MAX_BYTES)})"
    )
    k, kept = kept_usage()
    print(
        f"{kept_dir()}: {k:,} remote file{'s' if k != 1 else ''} kept locally, {human_bytes(kept)} on disk "
        f"(limit {human_bytes(REMOTE_SPILL_BYTES)})"
    )
    return 0


# --- desktop ------------------------------------------------------------------------------------------


def cmd_desktop(args) -> int:
    from tfrview import desktop

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
        self.exit(2, f"{self.prog}: {printable(message)} (see {self.prog} --help)\n")


def _add_jobs(p) -> None:
    from tfrview.core.childproc import cores

    p.add_argument(
        "-j",
        "--jobs",
        type=_int_at_least(1),
        default=cores(),
        metavar="N",
        help=f"worker processes, one file each at a time (default: {cores()}, the cores here)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="run the pass on a Dask distributed cluster (tcp://scheduler:8786), or 'local' for a "
        "LocalCluster here; needs pip install 'tfrview[dask]'",
    )


def _add_grouping(p) -> None:
    p.add_argument(
        "--one-dataset",
        action="store_true",
        help="judge every file as one dataset (default: files in one folder whose names differ only "
        "in digits, such as the shards of train-?????-of-00016, are one dataset; any other file "
        "is a dataset of its own)",
    )


def _add_splits(p, rules: bool = False) -> None:
    """--split NAME=PATH (every command that analyses files together) and --rule NAME=VALUE (those
    that run the dataset step)."""
    p.add_argument(
        "--split",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="the files PATH names (a file, folder or glob; added to the files analysed) are split NAME "
        "(repeatable; default: the split a path names: train/, val/, test/, train-00000-of-00016, "
        "Split-eval/; val, valid, dev and eval mean validation)",
    )
    if rules:
        p.add_argument(
            "--rule",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a threshold of the dataset-level checks (repeatable; `tfrview rules` lists them)",
        )


def _add_new_file_args(p) -> None:
    """PATH, -o OUT, --compression and --force: a command that writes one new file from one input."""
    from tfrview.core.tfrecord.framing import Compression

    p.add_argument("path", metavar="PATH")
    p.add_argument("-o", "--output", metavar="OUT", required=True)
    p.add_argument(
        "--compression",
        choices=[str(c) for c in Compression if c != Compression.ARRAYRECORD],
        help="default: same as the input (an ArrayRecord input: none)",
    )
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="tfrview",
        description="Inspect TensorFlow TFRecord files. With only file arguments, opens the window.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"tfrview {__version__}")
    from tfrview.core.logs import window_log_path

    ap.add_argument(
        "-v",
        "--verbose",
        dest="log_debug",
        action="store_true",
        help="before the command: debug messages on stderr too (default: warnings, one line "
        f"each); the window logs to {window_log_path()}",
    )
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    def add(name, help_, examples):
        p = sub.add_parser(
            name,
            help=help_,
            description=help_,
            epilog="examples:\n" + examples,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        return p

    p = add(
        "info",
        "what a file holds: compression, records, payload kinds, feature keys and types",
        "  tfrview info train.tfrecord\n  tfrview info 'train-*' --json\n  tfrview info big.tfrecord --all\n",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files, directories, globs or shard patterns")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument(
        "--sample",
        type=_int_at_least(1),
        default=2000,
        help="records to decode for the feature summary, spread over all the files (at least one a file)",
    )
    p.add_argument("--all", action="store_true", help="decode every record for the feature summary")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help=f"a block for every file (past {FILES_LISTED} files: only files with framing problems, "
        "then one block a dataset and the totals)",
    )
    _add_splits(p)
    _add_grouping(p)
    _add_jobs(p)
    p.set_defaults(func=cmd_info)

    p = add(
        "verify",
        "check framing and both CRCs of every record; exit 0 clean, 1 problems, 2 error",
        "  tfrview verify train.tfrecord\n  tfrview verify data/ --quiet || echo damaged\n"
        "  tfrview verify shard.gz --json\n  tfrview verify --checks data/ --label-map label_map.pbtxt\n"
        "  tfrview verify --checks --split train=a/ --split test='b/*' --rule near_distance=6\n",
    )
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument(
        "--json",
        action="store_true",
        help='one JSON object: {"files": [...], "datasets": [...], "totals": {...}}',
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print only damaged files")
    p.add_argument(
        "--checks",
        action="store_true",
        help="also run the QA checks of record contents (boxes, images, labels, values, schema)",
    )
    p.add_argument(
        "--label-map",
        metavar="PBTXT",
        help="label map for the label checks (default: a .pbtxt beside each dataset's files)",
    )
    p.add_argument(
        "--predictions",
        metavar="FILE",
        help="with --checks: a COCO results JSON or TFRecord of predictions joined to the records; "
        "where it disagrees with the labels are possible_* problems (tfrview evaluate measures it)",
    )
    p.add_argument(
        "-v",
        "--verbose",
        "--all",
        dest="verbose",
        action="store_true",
        help=f"list every file (past {FILES_LISTED} files only those with problems are listed, "
        "then the totals)",
    )
    _add_splits(p, rules=True)
    _add_grouping(p)
    _add_jobs(p)
    p.set_defaults(func=cmd_verify)

    p = add(
        "export",
        "write the fact table (one row per record: facts, features, problems) as Parquet",
        "  tfrview export --parquet train.parquet 'train-*'\n"
        "  tfrview export --parquet train.parquet data/ --images\n"
        "  duckdb -c \"select kind, count(*) from 'train.parquet' group by kind\"\n"
        "  tfrview export --parquet all.parquet --split train=train/ --split validation=val/\n"
        "  tfrview export --coco coco/ --yolo yolo/ data/ --label-map labels.pbtxt\n"
        "  tfrview export --hf-parquet train.parquet 'train-*' --where 'len(image/object/bbox/xmin) > 0'\n"
        "  tfrview export --webdataset shards/ --shard-size 500 data/\n",
    )
    p.add_argument("paths", nargs="*", metavar="PATH")
    p.add_argument("--parquet", metavar="OUT", help="the fact table as a Parquet file")
    p.add_argument(
        "--stats",
        metavar="OUT",
        help="TFDV's DatasetFeatureStatisticsList, a dataset a split (OUT.pbtxt: text, else binary)",
    )
    from tfrview.cli import trainexport

    trainexport.add_arguments(p)
    p.add_argument(
        "--images", action="store_true", help="add each record's first image's bytes (column image)"
    )
    p.add_argument(
        "--label-map", metavar="PBTXT", help="label map for class names (default: a .pbtxt beside the data)"
    )
    p.add_argument("--force", action="store_true", help="replace OUT (or DIR) if it exists")
    _add_splits(p, rules=True)
    _add_grouping(p)
    _add_jobs(p)
    p.set_defaults(func=cmd_export)

    p = add(
        "compare",
        "compare two splits of a dataset, or two datasets: presence, types, and TFDV's L-infinity "
        "distance and Jensen-Shannon divergence per feature; exit 0 alike, 1 past a threshold, 2 error",
        "  tfrview compare train validation data/\n  tfrview compare train test 'data/*' --json\n"
        "  tfrview compare old/ new/ --rule infinity_norm=0.05\n"
        "  tfrview compare train val data/ --split val=data/holdout\n",
    )
    p.add_argument("a", metavar="A", help="a split of the PATHs (train, validation, test…), or a path")
    p.add_argument("b", metavar="B", help="the other split, or the other path")
    p.add_argument("paths", nargs="*", metavar="PATH", help="the dataset whose splits A and B are")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.add_argument(
        "--rule",
        action="append",
        metavar="NAME=VALUE",
        help="a threshold: infinity_norm, js_divergence, presence_change (default 0.1 each)",
    )
    p.add_argument(
        "--split", action="append", metavar="NAME=PATH", help="files under PATH are split NAME (repeatable)"
    )
    p.add_argument("-v", "--verbose", action="store_true", help="list every feature, not only shifted ones")
    _add_jobs(p)
    p.set_defaults(func=cmd_compare)

    p = add(
        "rules",
        "every threshold of the dataset-level checks (--rule NAME=VALUE), its default and what it does",
        "  tfrview rules\n  tfrview rules --json\n  tfrview verify --checks data/ --rule near_distance=6\n",
    )
    p.add_argument("--json", action="store_true", help='one JSON object: {"rules": [...]}')
    p.set_defaults(func=cmd_rules)

    p = add(
        "cache",
        "what tfrview keeps on disk (stored results, fetched remote bytes) and how much; --clear removes it",
        "  tfrview cache\n  tfrview cache --clear\n",
    )
    p.add_argument(
        "--clear", action="store_true", help="remove every stored result and the remote bytes kept"
    )
    p.set_defaults(func=cmd_cache)

    p = add(
        "dump",
        "print records as text or JSON lines",
        "  tfrview dump train.tfrecord --records 0:5\n  tfrview dump train.tfrecord --records -1\n"
        "  tfrview dump train.tfrecord --json > records.jsonl\n"
        "  tfrview dump frames.tfrecord --proto waymo.desc --message waymo.open_dataset.Frame\n",
    )
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--records", metavar="A:B", help="record N, or a Python-style range A:B (default: all)")
    p.add_argument("--json", action="store_true", help="one JSON object per record")
    p.add_argument(
        "--max-values", type=_int_at_least(0), default=8, help="values shown per feature in text output"
    )
    p.add_argument(
        "--proto",
        metavar="FILE",
        help="a schema for custom payloads: a descriptor set "
        "(protoc --include_imports --descriptor_set_out) or a .proto file (needs grpcio-tools)",
    )
    p.add_argument(
        "--message", metavar="NAME", help="the message the records hold (default: the schema's only one)"
    )
    p.set_defaults(func=cmd_dump)

    p = add(
        "index",
        "write an 'offset size' index (DALI, tfrecord) or check one against its file",
        "  tfrview index train.tfrecord -o train.idx\n  tfrview index train.tfrecord --check train.idx\n",
    )
    p.add_argument("path", metavar="PATH")
    p.add_argument("-o", "--output", metavar="OUT", help="index file to write")
    p.add_argument("--check", metavar="IDX", help="existing index file to check")
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    p.set_defaults(func=cmd_index)

    p = add(
        "salvage",
        "copy every intact record into a new file TensorFlow reads without error",
        "  tfrview salvage broken.tfrecord -o fixed.tfrecord\n"
        "  tfrview salvage broken.tfrecord.gz -o fixed.tfrecord --compression none\n"
        "  tfrview salvage cut.array_record -o whole.array_record\n",
    )
    _add_new_file_args(p)
    p.add_argument(
        "--keep-unverified",
        action="store_true",
        help="also keep a record whose data is all there but whose data CRC the file lost (it ends "
        "inside it): nothing proves its bytes",
    )
    p.add_argument(
        "--format",
        choices=["tfrecord", "arrayrecord"],
        help="what OUT is (default: an ArrayRecord input's records as ArrayRecord, group_size:1 and the "
        "input's compression, where the official array-record writer is installed; else TFRecord)",
    )
    p.set_defaults(func=cmd_salvage)

    p = add(
        "repair",
        "like salvage, and restore damaged records whose bytes can be proven whole (one flipped bit)",
        "  tfrview repair broken.tfrecord -o repaired.tfrecord\n"
        "  tfrview repair broken.tfrecord -o repaired.tfrecord --json | jq .repaired\n",
    )
    _add_new_file_args(p)
    p.add_argument(
        "--json", action="store_true", help="one JSON object: what was repaired, how, what was left out"
    )
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
    for name, module_name in MODULE_COMMANDS.items():
        import importlib

        module = importlib.import_module(module_name)
        p = add(name, module.HELP, module.EXAMPLES)
        module.configure(p)
        p.set_defaults(func=module.run)
    for p in sub.choices.values():  # every command that opens paths: which TFDS config and version
        if any(a.dest in ("paths", "path") for a in p._actions):
            _add_tfds_choice(p)
    return ap


def _add_tfds_choice(p) -> None:
    p.add_argument(
        "--tfds-config",
        metavar="NAME",
        help="a TFDS folder of several configs (or datasets): the one to open (its newest version)",
    )
    p.add_argument(
        "--tfds-version",
        metavar="V",
        help="a TFDS dataset or config folder: the version to open (default: the newest)",
    )


def _tfds_chosen(args) -> None:
    """--tfds-config and --tfds-version: each TFDS dataset or config folder named is replaced by
    the version folder they choose (`tfds.layout.pick`), before the command reads it. Without
    them, a folder of several configs is one line naming every config and version, and these flags."""
    config, version = getattr(args, "tfds_config", None), getattr(args, "tfds_version", None)
    for dest in ("paths", "path"):
        got = getattr(args, dest, None)
        if isinstance(got, list):
            setattr(args, dest, [_tfds_pick(a, config, version) for a in got])
        elif isinstance(got, str):
            setattr(args, dest, _tfds_pick(got, config, version))


def _tfds_pick(a: str, config: str | None, version: str | None) -> str:
    if "://" in a or not os.path.isdir(a) or os.path.isfile(os.path.join(a, "dataset_info.json")):
        return a  # a file, a URL or a version folder: already one version
    from tfrview.core.tfds.layout import TfdsChoiceError, pick, version_folder

    try:
        if config is None and version is None:
            version_folder(Path(a))  # several configs: said here, with the flags that choose
            return a
        return str(pick(Path(a), config, version))
    except TfdsChoiceError as exc:
        raise TfrviewError(f"{exc} with --tfds-config NAME [--tfds-version V]") from None


def unknown_command(word: str) -> str | None:
    """The message for a first argument that is neither a command nor something to open: a word
    close to a command name, or a bare word (letters and dashes) that names no file. None when it
    may be a file, a directory, a URL or a glob (the window says what is wrong with it)."""
    import difflib
    import glob
    import re

    from tfrview.core.tfrecord.remote import is_url

    if os.path.lexists(word) or is_url(word) or glob.has_magic(word):
        return None
    close = difflib.get_close_matches(word, COMMANDS, n=2, cutoff=0.6)
    if not close and not re.fullmatch(r"[A-Za-z][A-Za-z-]*", word):
        return None  # a path with a dot or a slash: opening it says it is missing
    hint = f"did you mean {' or '.join(close)}?" if close else f"commands: {', '.join(COMMANDS)}"
    return f"unknown command {word!r} ({hint}); no file of that name either"


def main(argv: list[str] | None = None) -> int:
    from tfrview.core.logs import configure_cli

    argv_given = argv
    if argv is None:  # a process of its own: one BLAS thread, asked before numpy loads
        from tfrview.core.childproc import one_blas_thread

        one_blas_thread()
    argv = list(sys.argv[1:] if argv is None else argv)
    # before the command (after it, -v is the command's)
    verbose = bool(argv) and argv[0] in (
        "-v",
        "--verbose",
    )
    if verbose:
        argv = argv[1:]
    if not argv or (argv[0] not in COMMANDS and not argv[0].startswith("-")):
        wrong = unknown_command(argv[0]) if argv else None
        if wrong is not None:
            return fail(wrong)
        if argv or not verbose:
            _interrupt.disarm()  # the window's Ctrl-C is as it was: no os._exit past its own ending
            return open_window(argv, verbose)
    configure_cli(verbose)
    if argv_given is None:  # a process of its own (not a caller's main([...])): pyarrow without pandas
        from tfrview.core.childproc import hide_pandas

        hide_pandas()
    # (as -m, __name__ is __main__)
    logging.getLogger("tfrview.cli").debug("tfrview %s: %s", __version__, " ".join(argv))
    _prestart(argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit:  # a wrong word: what started ahead ends with the message
        _drop_prestarted()
        raise
    if not args.command:
        build_parser().print_help()
        return 2

    def failed(exc: BaseException) -> int:
        """The exception's one line (`errors.one_line`, escaped once); with --json, also as the
        object --json always prints."""
        msg = one_line(exc)
        if getattr(args, "json", False):
            with contextlib.suppress(OSError):
                print(json.dumps({"error": msg}), flush=True)
        return fail(msg, escaped=True)

    def run() -> int:
        try:
            try:
                _tfds_chosen(args)
                return args.func(args)
            except (KeyboardInterrupt, Cancelled) as exc:
                failed(exc)
                return 130
            except BrokenPipeError:  # the reader of our output went away (| head): not an error
                with contextlib.suppress(OSError):
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 0
            except (TfrviewError, OSError, MemoryError, RecursionError) as exc:
                return failed(exc)
            except Exception as exc:  # a bug: still one line, and it says so (TFRVIEW_DEBUG=1 shows where)
                if os.environ.get("TFRVIEW_DEBUG"):
                    raise
                return failed(exc)
        finally:
            _drop_prestarted()

    _interrupt.disarm()
    code = run()
    if argv_given is None and _interrupt.own_process():  # nothing runs after it in this process: it ends now
        _exit_now(code)
    return code


def _exit_now(code: int) -> None:
    """End a command's own process at once once its work is done and said: output flushed, the
    result store closed, exit handlers run, then os._exit. The interpreter's own teardown (every
    module and object freed one by one: a 2 M-record verify's arrays among them) cost ~50 ms of a
    0.8 s `verify`, after its answer. Not while another thread runs (a normal exit waits for it),
    after a multiprocessing pool ran, under a profiler or tracer, nor when the output cannot be
    flushed (the normal exit says why)."""
    import threading

    if threading.active_count() > 1 or not isinstance(code, int):
        return
    tracker = sys.modules.get("multiprocessing.resource_tracker")
    if tracker is not None and getattr(tracker._resource_tracker, "_pid", None) is not None:
        # a multiprocessing pool ran (--checks, a pool started ahead and dropped): its resource
        # tracker, a process writing to our stderr, then now and then warned of a semaphore it
        # could not unlink after os._exit; a normal exit leaves multiprocessing's own teardown whole
        return
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return  # under a profiler, a debugger or coverage: they write what they found after main returns
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader went away (| head): not an error, as above
        pass
    except (OSError, ValueError):
        return
    store = sys.modules.get("tfrview.core.analysis.cache")
    if store is not None:
        store.close()
    import atexit

    atexit._run_exitfuncs()  # logging's last flush, weakref finalizers, any pool's shutdown
    os._exit(code)


def _prestart(argv: list[str]) -> None:
    """`verify`'s worker processes started now, before the parser, the pass's imports and its plan
    (~0.3 s), so their own start-up (~0.2-0.3 s) overlaps this process's instead of following it:
    for one big plain file the part processes that frame it on every core (`tfrecord.parts`), given
    the pipe of its chunks at once, so they frame while this process imports (it takes chunks when
    it is ready), for a folder, a pattern or several files the pool that runs the pass
    (`analysis.early`). A guess from the words alone: a wrong one costs idle processes that end
    with this one."""
    if not argv or argv[0] != "verify" or any(a == "--dask" or a.startswith("--dask=") for a in argv):
        return
    from itertools import pairwise

    from tfrview.core.childproc import cores  # not parts itself: it loads numpy

    jobs = None
    for flag, value in pairwise(argv):
        if flag in ("-j", "--jobs"):
            jobs = int(value) if value.isdigit() else 1
    for a in argv:
        if a.startswith(("--jobs=", "-j")) and a not in ("-j",):
            tail = a.split("=", 1)[1] if "=" in a else a[2:]
            jobs = int(tail) if tail.isdigit() else 1
    jobs = cores() if jobs is None else jobs
    files = [a for a in argv[1:] if not a.startswith("-") and not a.isdigit()]
    if jobs <= 1 or not files:
        return
    if len(files) == 1 and os.path.isfile(files[0]):
        if "--checks" not in argv:
            _prestart_parts(files[0], jobs)
        return
    if len(files) > 1 or os.path.isdir(files[0]) or any(c in files[0] for c in "*?["):
        from tfrview.core.analysis.early import start_early  # loads no numpy

        start_early(
            jobs, share="--checks" not in argv
        )  # local files, not a URL's objects: its listing may say one


def _drop_prestarted() -> None:
    """Processes started ahead that nothing took (an error first, a pass that needed none) end now,
    not after their start-up."""
    from tfrview.core.analysis.early import drop_early
    from tfrview.core.childproc import drop_parts_ahead

    drop_early()
    drop_parts_ahead()


def _prestart_parts(path: str, jobs: int) -> None:
    """One plain file's part processes, when its first length looks like one (a small number)."""
    import stat

    from tfrview.core.childproc import start_parts_ahead

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return
        with open(path, "rb") as f:  # a plain file's first length: a small number, little-endian
            head = f.read(12)
    except OSError:
        return
    if len(head) == 12 and head[:2] != b"\x1f\x8b" and int.from_bytes(head[:8], "little") < st.st_size:
        start_parts_ahead(st.st_size, jobs, path)  # each framing its range while we import


def open_window(paths: list[str], verbose: bool = False) -> int:
    """The GUI, imported only here so headless commands never load Qt."""
    try:
        import importlib

        app = importlib.import_module("tfrview.gui.app")
    except ImportError as exc:
        return fail(f"the window needs PySide6 ({exc}); the CLI works without it: tfrview --help")
    return app.run(paths, verbose)
