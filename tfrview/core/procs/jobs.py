"""Whole-dataset jobs run in a child process, streaming JSON lines, so a window's GIL stays free.

    echo '{"job": "analyze", "paths": [...], "label_map": {...}}' | python -m tfrview.core.procs.jobs

Its stdin is one typed request (`procs.requests`, one JSON object on one line; a line that is
none is the job's `Failed`). Each output line is one typed message (`procs.messages`, one JSON
object a line): progress, a job's results, and last `Done` or `Failed` (its one line and kind; the error is logged here too). The child opens the same files in the same order as the window, so its record
numbers (local per file) are the window's.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tfrview.core.analysis import plan, run_tasks, stepcolumns
from tfrview.core.analysis.cache import (
    is_stored,
    load_answer,
    split_identities,
    store_answer,
    store_many,
)
from tfrview.core.analysis.datasummary import DatasetSummary
from tfrview.core.analysis.filterexpr import compile_filter, facts_for, facts_used, parse, resolve_keys
from tfrview.core.analysis.merge import DatasetAnalysis, merge
from tfrview.core.analysis.plot_names import scalar_to_show
from tfrview.core.analysis.progress import SUMMARY_SECONDS, counted, make_counter, make_summaries
from tfrview.core.analysis.rules import DatasetRules
from tfrview.core.childproc import cores, hide_pandas, lower_priority
from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.limits import QUICK_EVENT_BYTES
from tfrview.core.logs import configure_child
from tfrview.core.output import export as ex
from tfrview.core.output.arwriter import RecordFormat, options_like
from tfrview.core.output.repair import repair_many
from tfrview.core.output.salvage import salvage_many
from tfrview.core.output.words import ExportFormat
from tfrview.core.problems import QA_KINDS
from tfrview.core.procs.messages import (
    CauseFound,
    Compared,
    CopyGroup,
    Done,
    DuplicateGroups,
    Evaluated,
    Failed,
    FileCause,
    Matches,
    Message,
    Note,
    Plot,
    ProblemFound,
    Progress,
    Rewrote,
    Scores,
    SplitSummary,
    Summary,
    Wrote,
    as_array,
    as_lines,
    encode,
)
from tfrview.core.procs.requests import (
    AnalyzeRequest,
    CompareRequest,
    CompareSelectRequest,
    EvaluateRequest,
    ExportRequest,
    FilterRequest,
    OverFiles,
    Request,
    RewriteRequest,
    ScoresRequest,
    SelectRequest,
    SeriesRequest,
    WriteRequest,
)
from tfrview.core.procs.requests import decode as decode_request
from tfrview.core.procs.stored import analysis_key, analysis_tasks
from tfrview.core.records.labelmap import LabelMap
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.framing import crc32c_function
from tfrview.core.tfrecord.payload_bytes import bounded_payload
from tfrview.core.tfrecord.remote import is_url
from tfrview.core.tfrecord.report import index_and_verify
from tfrview.core.tfrecord.source import open_source

log = logging.getLogger(__name__)

_OUT = sys.stdout  # the window's pipe (child_main moves it off fd 1)


_EMIT_LOCK = threading.Lock()  # the analysis's progress thread and its main thread both write lines


def _emit(msg: Message) -> None:
    line = encode(msg)
    with _EMIT_LOCK:
        _OUT.write(line)
        _OUT.flush()


def _keep_pipe_to_ourselves() -> None:
    """The window reads our stdout until its end. Pool workers inherit fd 1, and would hold the
    pipe open (and the window's reader blocked) after this process is killed: so the results go
    out on a private copy of the pipe, and fd 1 becomes stderr for anything we start."""
    global _OUT
    _OUT = os.fdopen(os.dup(1), "w")  # new descriptors are not inheritable
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def _ticker(every: float = 0.1):
    last = [0.0]

    def tick(phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= every:
            last[0] = now
            _emit(Progress(phase, done, total))

    return tick


def job_analyze(req: AnalyzeRequest) -> None:
    """The analysis pass over the window's files on a pool of worker processes: QA problems as each
    file finishes (framing and CRC problems the window has found itself), then those only the whole
    dataset shows, and the summary (partial ones as files finish)."""

    paths, files = list(req.paths), req.files or list(range(len(req.paths)))
    sent_plot = _quick_event_plot(req)
    # the answer depends on the files, their splits and the rules as well as on each file's result;
    # the identities most often as the window's scan just read them (`cache.split_identities`)
    got = None if sent_plot else split_identities(paths)
    ids = None if got is None else got[0]
    memo = None if got is None else (analysis_key(req, got[1]), ids)
    if memo is not None and _say_stored_answer(memo[0]):
        return  # (keyed without planning: `analysis_key`)
    tasks = analysis_tasks(req)
    known = dict(zip(paths, ids, strict=True)) if memo is not None else None
    steps_key = stepcolumns.key(paths, _splits_of(req), list(req.rules), req.label_map, req.box_specs, known)
    told: list[str] = []  # what this pass tells the window, remembered whole (`_remember_answer`)

    def tell(msg: Message) -> None:
        _emit(msg)
        told.append(encode(msg))

    results, cached = [], 0
    last = time.monotonic()
    later: list = []  # files analysed here, stored once the window has the results
    by_files = _ticker() if not req.counts else None  # records not counted yet (started beside the scan)
    with _RecordProgress(req, DatasetSummary()) as said:
        for r in run_tasks(
            tasks, req.jobs, store_later=later, counter=said.counter, summaries=said.summaries
        ):
            results.append(r)
            if by_files is not None:
                by_files("files", len(results), len(tasks))
            cached += r.from_cache
            said.stored += (r.hi - r.lo) if r.from_cache else 0
            for p in r.problems:
                if p.kind in QA_KINDS:
                    tell(ProblemFound(files[r.file_no], p))
                elif p.cause:  # the window framed this one itself: only why it happened is news
                    tell(CauseFound(files[r.file_no], str(p.kind), p.offset, p.cause))
            if r.cause:
                tell(FileCause(files[r.file_no], r.cause))
            if r.deep is not None:
                said.finished((r.path, r.part), r.deep.summary)
                if time.monotonic() - last > 1.0 and len(results) < len(tasks):
                    _emit(Summary(said.summary_json(), True))
                    last = time.monotonic()
    a = merge(results, splits=_splits_of(req), rules=DatasetRules().with_words(list(req.rules)))
    for fi, problems in sorted(a.dataset_problems.items()):
        for p in problems:
            if p.kind in QA_KINDS:  # the window's scan says what framing finds (a shard's length)
                tell(ProblemFound(files[fi], p))
    _emit_duplicates(a, files, tell)
    _remember_step_columns(steps_key, results, a)
    summary = a.summary.to_json()
    if not sent_plot:
        _emit_first_plot(req, a, summary)
    for split, mine in _by_split(a):
        one = DatasetSummary()
        for fi in mine:
            if a.shards[fi].deep is not None:
                one.merge(a.shards[fi].deep.summary)
        tell(SplitSummary(split, one.to_json(), [files[fi] for fi in mine]))
    read = [r.analysed_at for r in results if r.error is None]
    said = Summary(summary, False, cached, len(results), min(read) if read else None)
    _emit(said)
    if later:
        store_many(later)  # one transaction
    if memo is not None and scalar_to_show(summary) is None:  # (a plot is made from the facts)
        told.append(encode(replace(said, cached=len(results))))  # said again: every file stored
        _remember_answer(memo, paths, results, a, told)


def _say_stored_answer(key: str) -> bool:
    """The answer of a pass over these very files stored whole (`_remember_answer`), said as it was
    first said: reopening 10,000 unchanged shards read and merged 10,000 stored results (~9 s on 2
    cores); whether there was one."""
    got = load_answer(key)
    if got is None:
        return False
    with _EMIT_LOCK:
        _OUT.write(as_lines(got[0].decode()))
        _OUT.flush()
    return True


def _remember_answer(memo: tuple[str, list], paths: list[str], results: list, a, told: list[str]) -> None:
    """What the pass told the window, stored whole under the files' identities, when every file was
    read well and none changed since its identity was taken (a file read in another state would make
    the answer wrong for the identity it is stored under). It starts with the records counted."""
    key, ids = memo
    was = dict(zip(paths, ids, strict=True))
    if any(
        r.error is not None or r.identity is None or tuple(r.identity) != tuple(was[r.path]) for r in results
    ):
        return
    records = sum(len(s.offsets) for s in a.shards)
    store_answer(key, as_array(encode(Progress("records", records, records)) + "".join(told)).encode())


def _remember_step_columns(steps_key: tuple[str, list] | None, results: list, a: DatasetAnalysis) -> None:
    """The dataset step's per-record columns (`dup_group`, `leak`) stored for the filter job
    (`stepcolumns`), when every file was read well and as its identity saw it before the pass."""
    if steps_key is None or a.qa is None:
        return
    key, identities = steps_key
    was = {s.path: i for s, i in zip(a.shards, identities, strict=False)}
    if any(
        r.error is not None or r.identity is None or tuple(r.identity) != tuple(was.get(r.path, ()))
        for r in results
    ):
        return
    stepcolumns.store(key, a.qa.record_columns, len(a.shards))


def _emit_duplicates(a: DatasetAnalysis, files: list[int], tell: Callable[[Message], None]) -> None:
    """The dataset step's groups of copies, in the window's file numbers (`DuplicateGroups`)."""
    tables = a.qa.tables if a.qa is not None else {}
    if "duplicate_groups" not in tables:
        return
    groups = tuple(
        CopyGroup(g["group"], g["exact"], tuple((files[f], r, s) for f, r, s in g["members"]), g["more"])
        for g in tables["duplicate_groups"]
    )
    tell(DuplicateGroups(groups, tables["duplicates"]["groups"]))


PROGRESS_SECONDS = 0.25  # how often the analysis says how many records it has decoded


class _RecordProgress:
    """The analysis's progress in records, from its first second: {"progress": ["records", done,
    total]} at once, then every PROGRESS_SECONDS from a thread that reads the pool workers' shared
    counter (analysis.progress) and adds the records of stored results; a task (a part of a big
    file) no longer has to end before the window hears anything. The same thread takes the
    workers' summaries of the parts they are decoding and sends the partial summary (the parts
    finished, and those so far) every SUMMARY_SECONDS."""

    def __init__(self, req: OverFiles, running) -> None:
        self.total = sum(int(c) for c in req.counts or ())
        self.stored = 0  # records of results taken from the store (no worker counted them)
        self.counter = None
        self.summaries = None  # the workers' summaries so far (a queue)
        self._running = running  # the summary of the parts finished
        self._partials: dict = {}  # (path, part) -> its summary so far, for parts still running
        self._finished: set = set()  # parts whose result came: a summary so far of them is stale
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def finished(self, key: tuple, summary) -> None:
        with self._lock:
            self._running.merge(summary)
            self._partials.pop(key, None)
            self._finished.add(key)

    def summary_json(self) -> dict:
        """The parts finished and the parts so far, as one summary."""

        with self._lock:
            if not self._partials:
                return self._running.to_json()
            out = DatasetSummary()
            out.merge(self._running)
            for s in self._partials.values():
                out.merge(s)
        return out.to_json()

    def _take_summaries(self) -> bool:
        """The summaries the workers sent since the last call; whether any was new."""
        import pickle
        import queue

        got = False
        while self.summaries is not None:
            try:
                key, data = self.summaries.get_nowait()
            except (queue.Empty, OSError, EOFError, ValueError):
                break
            with self._lock:
                if key not in self._finished:
                    self._partials[key] = pickle.loads(data)
                    got = True
        return got

    def done(self) -> int:

        return min(self.total, counted(self.counter) + self.stored)

    def __enter__(self) -> _RecordProgress:

        if self.total:
            self.counter = make_counter()
            self.summaries = make_summaries()
            _emit(Progress("records", 0, self.total))
            self._thread = threading.Thread(target=self._run, name="tfrview-progress", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:

        last, said_summary, fresh = -1, time.monotonic(), False
        while not self._stop.wait(PROGRESS_SECONDS):
            done = self.done()
            fresh = self._take_summaries() or fresh
            try:
                if done != last:
                    last = done
                    _emit(Progress("records", done, self.total))
                if fresh and time.monotonic() - said_summary >= SUMMARY_SECONDS and not self._stop.is_set():
                    fresh, said_summary = False, time.monotonic()
                    _emit(Summary(self.summary_json(), True))
            except (BrokenPipeError, OSError, ValueError):
                return  # the window went away: the main thread finds out too

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _quick_event_plot(req: AnalyzeRequest) -> bool:
    """Local TensorBoard event files (by their name) not analysed before: their first scalar's plot
    from a quick read, before the analysis (about 0.3 s for 10,000 steps instead of its 0.6 s).
    Whether it was sent."""
    paths = list(req.paths)
    if not paths or any(is_url(p) or "tfevents" not in os.path.basename(p) for p in paths):
        return False
    from tfrview.core.analysis.plots import event_scalars, plot  # heavy: pyarrow, for event files only

    if all(is_stored(t) for t in plan(paths, True, req.label_map or None, box_specs=req.box_specs)):
        return False  # the stored analysis brings the plot sooner
    try:
        if sum(os.path.getsize(p) for p in paths) > QUICK_EVENT_BYTES:
            return False
        got = event_scalars(paths, None if req.counts is None else list(req.counts))
    except (OSError, TfrviewError):
        return False  # the analysis says what is wrong
    if got is None:
        return False
    _emit(Plot(plot(got[1], got[0])))
    return True


def _emit_first_plot(req: AnalyzeRequest, a, summary: dict) -> None:
    """An event file's scalar plot, from the facts in hand, before the summary: the window would
    otherwise start a plot job that reads them again (about 0.8 s more before the plot shows)."""
    from tfrview.core.analysis.plots import plot  # heavy: pyarrow on first use only

    key = scalar_to_show(summary)
    counts = req.counts
    if key is None or (counts is not None and [len(r.offsets) for r in a.shards] != list(counts)):
        return  # not events, or framed otherwise than the window's records are numbered
    _emit(Plot(plot(a.facts(), key)))


def job_filter(req: FilterRequest) -> None:
    """Record numbers (global, in the window's numbering) whose facts match a filter expression.
    `problems` maps a global record number to the kinds of problem the window knows for it."""

    node = resolve_keys(parse(req.expr), set(req.known_keys), req.complete)
    problems = {int(k): v for k, v in req.problems.items()}
    if _filter_facts(req, node, problems):
        return
    test = compile_filter(node)
    ds = Dataset.open(list(req.paths))
    for _ in ds.scan():
        pass
    total = ds.count
    from tfrview.core.tags.words import WORDS

    tags = (
        _tag_codes([str(f.path) for f in ds.files], [f.index.offsets if f.source else [] for f in ds.files])
        if "tag" in facts_used(node)
        else None
    )
    tick = _ticker()
    matches: list[int] = []
    last = time.monotonic()
    base = 0
    splits = _splits_of(req)
    for fi, f in enumerate(ds.files):
        if f.source is None:
            continue
        name, split = f.path.name, splits[fi] if fi < len(splits) else ""
        offs, lens = f.index.offsets, f.index.lengths
        read = f.source.bulk_reader()
        for k in range(f.index.count):
            n = base + k
            o = int(offs[k])
            data = bounded_payload(read, o, int(lens[k]))
            tag = str(WORDS[tags[n] - 1]) if tags is not None and tags[n] else ""
            if test(facts_for(data, n, name, problems.get(n, []), split=split, tag=tag)):
                matches.append(n)
            if k % 4096 == 0:
                now = time.monotonic()
                if now - last > 0.1:
                    _emit(Matches(matches, n + 1, total))
                    matches, last = [], now
                tick("filter", n, total)
        base += f.index.count
    _emit(Matches(matches, total, total))
    ds.close()


def _filter_facts(req: FilterRequest, node, problems: dict[int, list[str]]) -> bool:
    """The filter over the stored fact tables, as array operations, when the analysis of every file
    is stored and numbers its records as the window does (else False: read the records)."""
    import numpy as np

    from tfrview.core.analysis.vfilter import match  # heavy: pyarrow on first use only

    offsets: list = []
    table = _stored_facts(req, step_columns=_names_step_columns(node), rules=req.rules, offsets_out=offsets)
    if table is None:
        return False
    by_kind: dict[str, list[int]] = {}
    for n, kinds in problems.items():
        for k in kinds:
            by_kind.setdefault(k, []).append(n)
    tags = None
    if "tag" in facts_used(node):
        from tfrview.core.tags import rows_by_word

        tags = rows_by_word(_tag_codes(list(req.paths), offsets))
    hits, blind = match(
        table, node, {k: np.array(sorted(v), dtype=np.int64) for k, v in by_kind.items()}, tags
    )
    total = table.num_rows
    if blind:
        _emit(
            Note(
                f"the stored facts keep {', '.join(sorted(blind)[:3])} only in part: a record could match "
                "beyond what they hold"
            )
        )
    step = 1 << 16
    for i in range(0, len(hits), step):
        _emit(Matches(hits[i : i + step].tolist(), int(hits[min(i + step, len(hits)) - 1]) + 1, total))
    _emit(Matches([], total, total))
    return True


def job_series(req: SeriesRequest) -> None:
    """A plot of one feature or fact over the dataset (`analysis.plots.plot`), from the stored facts
    of the analysis (no record is read)."""
    from tfrview.core.analysis.plots import of_split, overlay, plot  # heavy: pyarrow on first use only

    table = _facts_or_say(req)
    if req.split is not None:
        table = of_split(table, req.split)
    data = overlay(table, req.key, req.histogram) if req.by_split else plot(table, req.key, req.histogram)
    if "error" in data:  # no such key, no finite number: the job's Failed, not a plot
        raise NoPlot(data["error"])
    _emit(Plot(data))


def job_select(req: SelectRequest) -> None:
    """The records behind a clicked bar, cell or point of a plot of facts, as filter matches."""
    from tfrview.core.analysis.plots import of_split, select  # heavy: pyarrow on first use only

    table = _facts_or_say(req)
    total = table.num_rows
    if req.split is not None:  # a bar of one split's plot: that split's records
        table = of_split(table, req.split)
    hits = select(table, req.plot, list(req.lo), list(req.hi), req.closed)
    _emit(Matches(hits.tolist(), total, total))


def job_scores(req: ScoresRequest) -> None:
    """A score of every record from the stored facts (an image quality score, `blur`, ...) saved at
    `req.out` for the gallery's Sort by (`messages.Scores`); NaN where a record has none."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from tfrview.core.output.atomic import atomic_file

    table = _stored_facts(req, step_columns=req.key in stepcolumns.NAMES)
    if table is None:
        raise NotStored("the analysis is not stored yet: the scores come from it")
    if req.key not in table.column_names:
        raise NoPlot(f"the analysis kept no {req.key!r} score (no record's image was decoded)")
    total = sum(req.counts) if req.counts else int(table.num_rows)
    n = table.column("n").to_numpy()
    values = np.full(max(total, int(n.max(initial=-1)) + 1), np.nan)
    values[n] = pc.cast(table.column(req.key), pa.float64()).to_numpy(zero_copy_only=False)
    with atomic_file(Path(req.out), "wb") as f:
        np.save(f, values)
    _emit(Scores(req.key, req.out, len(values), int(np.isfinite(values).sum())))


def job_compare(req: CompareRequest) -> None:
    """Two splits of the window's files (or a split of them and another dataset) compared from
    their fact tables (`analysis.compare`); files not analysed before are analysed here and stored."""
    from tfrview.core.analysis.compare import compare
    from tfrview.core.analysis.rules import DatasetRules

    a, b, selectable = _compare_sides(req)
    rules = DatasetRules().with_words(list(req.rules)).drift
    _emit(Compared(compare(a, b, rules), selectable))


def job_compare_select(req: CompareSelectRequest) -> None:
    """The records of one side behind a clicked bar of the Compare view, as filter matches."""
    from tfrview.core.analysis.compare import records_in_bar

    a, b, selectable = _compare_sides(req)
    if not selectable or (req.side == "b" and req.other):
        raise TfrviewError("those records are not the window's: open that dataset to see them")
    side = a if req.side == "a" else b
    nan = float("nan")
    hits = records_in_bar(
        side,
        req.key,
        req.derived,
        nan if req.lo is None else req.lo,
        nan if req.hi is None else req.hi,
        req.closed,
        req.category,
    )
    total = sum(req.counts or ()) or int(side.table.num_rows)
    _emit(Matches(hits.tolist(), total, total))


def _compare_sides(req: CompareRequest):
    """The two `compare.Side`s a request names, and whether side A's record numbers are the
    window's. A split that names no file is a one-line error listing the splits there are."""
    from tfrview.core.analysis.compare import side_of
    from tfrview.core.analysis.merge import join_parts
    from tfrview.core.tfrecord.dataset import name_files
    from tfrview.core.tfrecord.splits import split_of_files

    def deep(paths: list[str], label_map) -> list:
        tasks = plan(paths, True, label_map, box_specs=req.box_specs)
        return sorted(join_parts(list(run_tasks(tasks, req.jobs))), key=lambda r: r.file_no)

    paths = list(req.paths)
    mine = deep(paths, req.label_map or None)
    firsts, base = [], 0
    for r in mine:
        firsts.append(base)
        base += len(r.offsets)
    selectable = req.counts is None or [len(r.offsets) for r in mine] == list(req.counts)
    splits = split_of_files(paths)
    found = sorted({s for s in splits if s})

    def split(name: str):
        if name and name not in found:
            raise TfrviewError(f"no split {name!r} here (splits found: {', '.join(found) or 'none'})")
        keep = [i for i, s in enumerate(splits) if not name or s == name]
        return side_of(name or "this dataset", [mine[i] for i in keep], [firsts[i] for i in keep])

    a = split(req.a)
    if req.other:
        failed, others = name_files(list(req.other))
        for _, err in failed:
            raise TfrviewError(err)
        return a, side_of(", ".join(req.other), deep([str(p) for p in others], None)), selectable
    return a, split(req.b), selectable


class NotStored(TfrviewError):
    """A plot job asked for facts the store does not hold (yet)."""


class NoPlot(TfrviewError):
    """The stored facts have nothing to plot for the key asked (none such, no finite number)."""


def _facts_or_say(req: OverFiles):
    """The stored fact table for a plot job; NotStored (the job's `Failed`) when it is not stored."""
    table = _stored_facts(req)
    if table is None:
        raise NotStored("the analysis is not stored yet: plots come from it")
    return table


def _tag_codes(paths: list[str], offsets: list):
    """Each record's tag code (`tags.TagWord.code`, 0 none) over the files in dataset order, read
    from the person's tag store when a filter names `tag` (never stored with the facts: tags
    change); stale tags (of a file whose content changed) are said in a note and not applied."""
    from tfrview.core.tags import TagStore

    with TagStore.open() as store:
        if store.note:
            _emit(Note(store.note))
        codes, stale = store.codes_over(paths, offsets)
    if stale:
        _emit(Note(f"{stale:,} tags no longer match their record (the file changed): not applied"))
    return codes


def _stored_facts(
    req: OverFiles,
    step_columns: bool = False,
    rules: tuple[str, ...] = (),
    offsets_out: list | None = None,
):
    """The merged fact table of the dataset's stored analysis, or None when some file's is not
    stored (or frames other records than the window's). `step_columns` (the filter names them):
    with the dataset step's per-record columns (`dup_group`, `leak`, and `tp`, `fp`, `fn`,
    `max_fp_score` of the records' own predictions) as the analysis stored them (`stepcolumns`), or
    when they are not stored, from the step run here over the stored results (and stored for the
    next filter); with `req.predictions`, the last four from that file's predictions instead."""
    from tfrview.core.analysis.pool import stored_deep

    results = []
    for i, path in enumerate(req.paths):
        r = stored_deep(path, i, req.label_map or None, req.box_specs)
        if r is None:
            return None
        results.append(r)
    counts = req.counts
    if counts is not None and [len(r.offsets) for r in results] != list(counts):
        return None
    if offsets_out is not None:  # each file's record offsets, for what is joined by them (tags)
        offsets_out.extend(r.offsets for r in results)
    splits = _splits_of(req)
    a = DatasetAnalysis(results, splits=splits)
    if not step_columns:
        return a.facts()
    key = stepcolumns.key(list(req.paths), splits, list(rules), req.label_map, req.box_specs)
    columns = stepcolumns.load(key[0] if key is not None else None)
    if columns is None:
        merged = merge(results, splits=splits, rules=DatasetRules().with_words(list(rules)))
        columns = merged.qa.record_columns if merged.qa is not None else {}
        if key is not None:
            stepcolumns.store(key[0], columns, len(results))
    if req.predictions:  # the evaluation's columns from the joined predictions, not the records' own
        columns = {**columns, **_joined_columns(a, req, DatasetRules().with_words(list(rules)))}
    if columns:
        from tfrview.core.analysis.datasetqa import DatasetQA  # the steps: on use only

        a.qa = DatasetQA(record_columns=columns)
    return a.facts()


def _joined_columns(a, req: OverFiles, rules: DatasetRules) -> dict:
    """tp, fp, fn and max_fp_score of every record from the predictions file the request names,
    joined to the records (stored after the first join) and evaluated at the rules' eval_iou and
    eval_score: what the dataset step gives for the records' own detection keys."""
    from tfrview.core.analysis import evaluation
    from tfrview.core.analysis.predictions_join import join

    label_map = {int(k): v for k, v in (req.label_map or {}).items()} or None
    data = evaluation.gather_joined(a, join(a, req.predictions, label_map), label_map)
    if data is None:
        return {}
    pr = rules.predictions
    ev = evaluation.evaluate(evaluation.prepare(data), pr.eval_iou, pr.eval_score)
    return evaluation.record_columns(a, data, ev)


def _names_step_columns(node) -> bool:
    """Whether a filter names one of the dataset step's per-record columns (`stepcolumns.NAMES`)."""
    from tfrview.core.analysis.filterexpr import keys_used

    return bool(keys_used(node) & set(stepcolumns.NAMES))


def _by_split(a) -> list[tuple[str, list[int]]]:
    """(split, its files) of a merged analysis, in the order splits first appear; [] when its files
    are all in one split (the whole dataset's summary says it all)."""
    out: dict[str, list[int]] = {}
    for fi, split in enumerate(a.splits):
        out.setdefault(split, []).append(fi)
    return list(out.items()) if len(out) > 1 else []


def _splits_of(req: OverFiles) -> list[str]:
    """Each of the request's files' split: the window's (the person may have chosen), else the
    split its path names."""
    if req.splits is not None and len(req.splits) == len(req.paths):
        return list(req.splits)
    from tfrview.core.tfrecord.splits import split_of_files

    return split_of_files(list(req.paths))


def job_write(req: WriteRequest) -> None:
    """Salvage or repair the window's files into a new file (`what`: "salvage" or "repair"), here
    and not in the window's process: a repair can be seconds of Python per file. The files are
    framed and verified again here, as `tfrview repair` does; {"renumbered": true} when they frame
    otherwise than the window's `counts` (the report's record numbers are then this framing's)."""

    with contextlib.ExitStack() as opened:
        parts = []
        for path in req.paths:
            src = opened.enter_context(open_source(path))
            parts.append((src, index_and_verify(src, None, None, cores())[0]))
        counts = req.counts
        total = sum(idx.count for _, idx in parts)

        def progress(k: int) -> bool:
            _emit(Progress("writing", k, total))
            return True

        if req.what == "salvage" and req.fmt == RecordFormat.ARRAYRECORD:
            # through the official writer, read back and checked before the rename, as `salvage` does
            res = salvage_many(parts, req.out, progress=progress, ar_options=options_like(parts[0][0]))
        else:
            write = repair_many if req.what == "repair" else salvage_many
            res = write(parts, req.out, req.compression, progress)
        _emit(Wrote(res, counts is not None and [i.count for _, i in parts] != list(counts)))


def job_export(req: ExportRequest) -> None:
    """A selection of records exported (`what`: records, jsonl, images, images_boxes) from the
    spans the window saved (`output.export.save_spans`): read, decoded and written here, never in
    the window's process."""

    import numpy as np

    a = np.load(req.spans)
    paths, what, out = req.paths, req.what, req.out
    with contextlib.ExitStack() as opened:
        sources = {f: opened.enter_context(open_source(paths[f])) for f in np.unique(a["file_no"]).tolist()}
        rows = zip(
            a["number"].tolist(),
            a["file_no"].tolist(),
            a["offset"].tolist(),
            a["length"].tolist(),
            a["status"].tolist(),
            strict=True,
        )
        spans = ((n, sources[f], off, ln, st) for n, f, off, ln, st in rows)
        total = len(a["number"])

        def progress(k: int) -> bool:
            if k % 256 == 0 or k == total:
                _emit(Progress("exporting", k, total))
            return True

        inputs = [Path(p) for p in paths]
        if what == "records":
            res = ex.export_records(
                ex.copies_of_spans(spans, req.keep_damaged),
                Path(out),
                req.compression,
                inputs,
                progress,
            )
        elif what == "jsonl":
            problems = req.problems

            def facts(n, src, off, ln, st):
                extra = {"file": str(src.path), "crc": ex.crc_word(st), "problems": problems.get(str(n), [])}
                return n, off, bounded_payload(src.read, off, ln, src.pieces), extra

            res = ex.export_jsonl((facts(*s) for s in spans), Path(out), inputs, progress)
        elif what in set(ExportFormat):
            res = _export_format(req, spans, sources, inputs, progress)
        else:
            from tfrview.core.tfds.features import features_of_folder  # one load a folder

            items = (
                (
                    n,
                    bounded_payload(src.read, off, ln, src.pieces),
                    None if src.remote else features_of_folder(os.path.dirname(str(src.path))),
                )
                for n, src, off, ln, _ in spans
            )

            label_map = LabelMap.from_json(req.label_map)
            from tfrview.core.records.reading import BoxSpec

            specs = tuple(BoxSpec.from_json(s) for s in req.box_specs)  # the person's choices
            res = ex.export_images(items, Path(out), what == "images_boxes", label_map, progress, specs)
        _emit(Wrote(res))


def _export_format(req: ExportRequest, spans, sources: dict, inputs: list[Path], progress) -> ex.ExportResult:
    """A selection in a training format (`output.formats`): damaged records left out and counted,
    each file's split the window's (else its path's), the window's label map and box keys."""
    from tfrview.core.output.formats import export_annotated
    from tfrview.core.records.reading import BoxSpec
    from tfrview.core.tfds.features import features_of_folder
    from tfrview.core.tfrecord.splits import split_of_files

    splits = list(req.splits) if req.splits is not None else split_of_files(list(req.paths))
    split_of = {id(src): splits[f] if f < len(splits) else "" for f, src in sources.items()}
    items = (
        (n, copy.payload if copy is not None else None, split_of.get(id(span[1]), ""))
        for span in spans
        for n, copy in ex.copies_of_spans([span])
    )
    tfds = features_of_folder(Path(req.paths[0]).parent) if req.paths else None
    return export_annotated(
        ExportFormat(req.what),
        items,
        Path(req.out),
        label_map=LabelMap.from_json(req.label_map),
        specs=tuple(BoxSpec.from_json(s) for s in req.box_specs),
        tfds=tfds if tfds is not None and not getattr(tfds, "error", None) else None,
        inputs=inputs,
        force=req.force,
        progress=progress,
    )


def job_evaluate(req: EvaluateRequest) -> None:
    """Predictions against the ground truth from the stored analysis (`analysis.evaluation`), the
    arrays saved at `req.out` (`messages.Evaluated` says what they are). Then, with `converse`, it
    answers each further (iou, score) the window writes on its stdin (`launch.spawn_open`) from
    what it prepared once, so a moved threshold costs only the matching (~0.1 s), never the
    reading and the join again."""
    import json

    import numpy as np

    from tfrview.core.analysis import evaluation
    from tfrview.core.analysis.pool import stored_deep

    results = []
    for i, path in enumerate(req.paths):
        r = stored_deep(path, i, req.label_map or None, req.box_specs)
        if r is None:
            raise NotStored("the analysis is not stored yet: the evaluation comes from it")
        results.append(r)
    a = DatasetAnalysis(results, splits=_splits_of(req))
    label_map = {int(k): v for k, v in (req.label_map or {}).items()} or None
    data, joined = evaluation.gather_for(a, req.predictions, label_map)
    report = joined.lines() if joined is not None else []
    rules = DatasetRules().with_words(list(req.rules)).predictions
    prep = evaluation.prepare(data)
    errs = evaluation.likely_errors(prep, rules)
    base = np.concatenate([[0], np.cumsum([len(r.offsets) for r in results])]).astype(np.int64)
    image_n = base[data.file] + data.record
    _answer_evaluation(
        prep, errs, image_n, int(base[-1]), report, req.iou, req.score, req.score_grid, req.out, req.iou_grid
    )
    # then each further question on stdin (the window's thresholds moved), from what is prepared:
    # {"iou": 0.5, "score": 0.3, "out": "/tmp/....npz"} a line, until the window closes our stdin
    for line in sys.stdin if req.converse else ():
        if not line.strip():
            continue
        try:
            ask = json.loads(line)
            iou, score, out = float(ask["iou"]), float(ask["score"]), str(ask["out"])
            grid = tuple(float(v) for v in ask.get("score_grid", req.score_grid))
            iou_grid = tuple(float(v) for v in ask.get("iou_grid", req.iou_grid))
        except (ValueError, KeyError, TypeError) as exc:
            log.warning("the evaluate job could not read a question: %s", exc)
            continue
        _answer_evaluation(prep, errs, image_n, int(base[-1]), report, iou, score, grid, out, iou_grid)


def _answer_evaluation(
    prep, errs, image_n, total: int, report, iou: float, score: float, score_grid, out: str, iou_grid=()
):
    """One `Evaluated` at (iou, score), its arrays at `out` (the job's first answer and each
    further question's)."""
    import numpy as np

    from tfrview.core.analysis import evaluation
    from tfrview.core.output.atomic import atomic_file

    data = prep.data
    ev = evaluation.evaluate(prep, iou, score)
    arrays = {name: np.full(total, -1, dtype=np.int32) for name in ("record_tp", "record_fp", "record_fn")}
    arrays["record_max_fp_score"] = np.full(total, np.nan, dtype=np.float32)
    ok = image_n < total
    for name, got in (("record_tp", ev.image_tp), ("record_fp", ev.image_fp), ("record_fn", ev.image_fn)):
        arrays[name][image_n[ok]] = got[ok]
    arrays["record_max_fp_score"][image_n[ok]] = ev.image_max_fp_score[ok]
    kinds = [
        (0, errs.missing, data.pred_image),
        (1, errs.wrong_class, data.pred_image),
        (2, errs.spurious, data.gt_image),
    ]
    arrays.update(
        recall_points=evaluation.RECALL_POINTS,
        pr_precision=ev.pr_precision,
        pr_score=ev.pr_score,
        gt_n=image_n[data.gt_image],
        gt_slot=data.gt_slot,
        gt_class=data.gt_class,
        gt_box=data.gt_box,
        gt_outcome=ev.gt_outcome.astype(np.int8),
        gt_partner=ev.gt_partner,
        pred_n=image_n[data.pred_image],
        pred_slot=data.pred_slot,
        pred_class=data.pred_class,
        pred_score=data.pred_score,
        pred_box=data.pred_box,
        pred_outcome=ev.pred_outcome.astype(np.int8),
        pred_partner=ev.pred_partner,
        pred_iou=ev.pred_iou,
        error_kind=np.concatenate([np.full(len(ix), kind, np.int8) for kind, ix, _ in kinds]),
        error_index=np.concatenate([ix for _, ix, _ in kinds]).astype(np.int64),
        error_n=np.concatenate([image_n[img[ix]] for _, ix, img in kinds]).astype(np.int64),
        **evaluation.grid(prep, iou_grid or (iou,), score_grid),
    )
    with atomic_file(Path(out), "wb") as f:
        np.savez(f, **arrays)
    doc = evaluation.summary(ev, data)
    _emit(
        Evaluated(
            path=out,
            iou=iou,
            score=score,
            names=list(data.names),
            confusion=doc["confusion"]["matrix"],
            classes=doc["classes"],
            map=doc["map"],
            map50=doc["map50"],
            images=data.images,
            boxes=len(data.gt_class),
            predictions=len(data.pred_class),
            source=data.source,
            join=report,
            notes=list(data.notes),
            likely_errors=len(arrays["error_kind"]),
        )
    )


def job_rewrite(req: RewriteRequest) -> None:
    """A new dataset from the window's files (`core.rewrite.run.rewrite`), progress as it goes.
    The window cancels by killing this process: the temporary folder it leaves is named as a
    rewrite's, and the window (or the next rewrite beside it) removes it."""
    from tfrview.core.rewrite.options import options_from_words
    from tfrview.core.rewrite.run import rewrite

    opts = options_from_words(
        where=req.where,
        map_classes=req.map_classes or None,
        shards=req.shards,
        shard_size=req.shard_size,
        shuffle=req.shuffle,
        seed=req.seed,
        compression=req.compression,
        split=req.split,
        group_by=req.group_by,
        index=req.index,
        force=req.force,
        jobs=cores(),
    )
    label_map = {
        int(k): (v if isinstance(v, str) else v[0]) for k, v in (req.label_map or {}).items()
    } or None
    tick = _ticker()

    def progress(phase: str, done: int, total: int) -> None:
        tick(phase, done, total)

    from tfrview.core.rewrite.tagged import chosen_records

    drop, keep = chosen_records(  # the person's tags read from their store now
        list(req.paths), {(p, int(o)) for p, o in req.drop_records}, req.drop_tags, req.keep_tags
    )
    res = rewrite(
        list(req.paths),
        req.out,
        opts,
        drop=drop,
        keep=keep,
        label_map=label_map,
        progress=progress,
    )
    shards = tuple((s["name"], s["split"], s["records"], s["bytes"]) for s in res.shards)
    _emit(Rewrote(res.outdir, res.records_in, res.kept, dict(res.dropped), shards, res.changed))


JOBS: dict[type, Callable] = {  # each request's job, by its class
    AnalyzeRequest: job_analyze,
    FilterRequest: job_filter,
    SeriesRequest: job_series,
    SelectRequest: job_select,
    ScoresRequest: job_scores,
    CompareRequest: job_compare,
    CompareSelectRequest: job_compare_select,
    EvaluateRequest: job_evaluate,
    WriteRequest: job_write,
    ExportRequest: job_export,
    RewriteRequest: job_rewrite,
}


class BadRequest(TfrviewError):
    """The window sent a line that is no request (`requests.decode` refused it): said as the job's
    `Failed`, never run."""


def _read_request(text: str) -> Request:
    try:
        return decode_request(text)
    except ValueError as exc:
        raise BadRequest(f"the job process could not read its request: {exc}") from exc


def _import_ahead() -> None:
    """What the jobs import, imported by a spare process while it waits for its request."""
    import pyarrow.compute  # noqa: F401

    import tfrview.core.analysis.checks
    import tfrview.core.analysis.merge
    import tfrview.core.analysis.plots  # heavy: pyarrow on first use only
    import tfrview.core.analysis.shard
    import tfrview.core.records.payload  # noqa: F401

    crc32c_function()


def child_main() -> int:

    hide_pandas()
    lower_priority()
    configure_child()
    _keep_pipe_to_ourselves()
    try:
        _import_ahead()  # a spare process does this while it waits; a job started for a request needs them anyway
        text = sys.stdin.readline()  # one line; a job that converses (`evaluate`) reads on after it
        if not text:
            return 0  # a spare never used: the window closed its stdin
        request = _read_request(text)
        JOBS[type(request)](request)
        _emit(Done())
    except BrokenPipeError:
        return 0
    except Cancelled as exc:  # a person stopped it: said as a stop, never as an error
        log.info("job stopped: %s", exc)
        _emit(Failed.of(exc))
        return 0
    except TfrviewError as exc:  # a one-line message for the person (a file that cannot be written, …)
        log.warning("job failed: %s", exc)
        _emit(Failed.of(exc))
        return 1
    except (
        Exception
    ) as exc:  # a bug: its traceback to our stderr (the window keeps its tail), one line to the window
        log.exception("job failed")
        _emit(Failed.of(exc))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(child_main())
