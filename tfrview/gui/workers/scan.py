"""The indexer: frames every file of the dataset, then checks every data CRC, on a worker thread
(large plain files in a child process, so the GIL stays free for the UI)."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from PySide6.QtCore import Signal

from tfrview.core import childproc
from tfrview.core.analysis.sample import SampleFacts, sample_facts
from tfrview.core.limits import SMALL_FILE_WHOLE_BYTES, inflation_note
from tfrview.core.procs.messages import Failed
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.index import VERIFIED, IndexChunk, verify
from tfrview.core.tfrecord.smallfile import frame_whole
from tfrview.gui.scan_phase import ScanPhase
from tfrview.gui.workers.base import Worker, stop_child

log = logging.getLogger(__name__)

CHILD_MIN_BYTES = 32 << 20  # smaller files are done in well under a second in this process
STORE_BATCH = 256  # files whose stored results one query to the store asks for (reopening a split)
POOL_MIN_FILES = 64  # a split of at least this many small files is framed by the pass's worker pool
# the longest the scan waits, once the first file's rows are out, for the window to paint them
# before it takes every file's index from the split's stored scan: the table's paint calls Python
# for every cell, and each call waits its turn for the GIL while this thread runs Python (a paint
# then took ~0.2 s). What mostly lets the GIL go (stats, the store's reads, whole-array
# operations) is done meanwhile.
FIRST_PAINT_WAIT_S = 0.3


def _first_unverified(index) -> int:
    """The first record whose data CRC was not checked yet (a scan stopped in its verify pass)."""
    unchecked = np.flatnonzero((index.status & VERIFIED) == 0)
    return int(unchecked[0]) if len(unchecked) else index.count


def _failed(exc: Exception) -> Failed:
    """What a scan process's failure says: its own `Failed`, or the error reading its frames."""
    from tfrview.core.procs.scanproc import ChildFailed

    return exc.failed if isinstance(exc, ChildFailed) else Failed.of(exc)


@dataclass(frozen=True, slots=True)
class IndexProgress:
    phase: ScanPhase
    records: int  # records framed so far (whole dataset)
    problems: int
    done_bytes: int
    total_bytes: int
    message: str = ""
    file_no: int = 0  # with phase "error": the file being read when it happened
    note: str = ""  # e.g. a compressed file that inflates like a decompression bomb


def _facts_from(text: bytes) -> SampleFacts | None:
    """The sample `ScanWorker._remember_sample` stored; None if it cannot be read (logged: the
    sample is read again)."""
    try:
        doc = json.loads(text)
        return SampleFacts(
            {PayloadKind(k): int(v) for k, v in doc["kinds"].items()},
            frozenset(int(i) for i in doc["class_ids"]),
            frozenset(str(k) for k in doc["keys"]),
        )
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        log.info("a stored sample is unreadable (%s): read again", exc)
        return None


def _maybe_plain(src) -> bool:
    """A plain file, or one not read yet (`lazyfile`): a stored result of the file may say which,
    without opening it."""
    return not getattr(src, "sniffed", True) or src.compression == "none"


class ScanWorker(Worker):
    """Frames every file of a dataset, then verifies every data CRC. Chunks land in the dataset's
    own RecordIndex objects; the UI polls counts on a timer. `progress` carries IndexProgress,
    `result` the SampleFacts of a sample of records once every file is framed, `error` a file
    that could not be read (its number is `file_no`)."""

    problem_found = Signal(int, object)  # file number, Problem
    reframed = Signal(int, object)  # file number, its RecordIndex as `index_and_verify` frames it
    # file number, messages.Failed: its scan process failed (done here instead)
    child_failed = Signal(int, object)
    # the first file's results came from a store written before this scan: the split was analysed before
    stored_found = Signal()

    def __init__(
        self, dataset: Dataset, parent=None, use_subprocess: bool = True, class_ids: bool = False
    ) -> None:
        super().__init__(parent)
        self.dataset = dataset
        self.class_ids = class_ids  # sample class ids too (only to judge a label map found beside the data)
        self.ids_files: list[int] | None = None  # ... of these files only: the dataset beside the label map
        self.use_subprocess = use_subprocess
        self._last = 0.0
        self.file_no = 0
        self._note = ""
        self.label_map_json: dict | None = None  # the window's, for the stored analysis it made
        self.stored_files = 0  # files whose index and CRCs came from a stored analysis
        self.stored_at: float | None = None  # when the oldest of those was read
        self._stored_by_file: dict[int, list] = {}  # a batch of stored results asked ahead
        # every file's records and problems as last seen (`_totals`): a report sums these, not
        # every file's index (10,000 files summed twice a report was most of this thread's time)
        self._counts: np.ndarray | None = None
        self._problems: np.ndarray | None = None
        self._pool = None  # the pass's results for the small files (`_pooled`), as they finish
        self._pool_files: set[int] = set()
        self._pool_got: dict[int, object] = {}
        self._began = 0.0  # when `work` started (a stored result read before it: `stored_found`)
        self._verified: set[int] = set()  # files taken whole with every data CRC checked: no verify pass
        # the analysis the window would ask for (set by its session): when the split's stored answer
        # serves, that analysis's stored answer is read here too, with the same file identities
        self.analysis_request = None
        self.stored_analysis: tuple | None = None  # (that request, its stored messages)
        self._reframed: dict[int, object] = {}  # files framed again (`_reframe`): their new index
        self._settled = False  # every file taken from a stored scan stored after `_reframe`
        self.first_painted = threading.Event()  # set by the window once the first rows are painted
        # (bytes to frame, bytes to verify) when every file came from the split's stored scan
        # (`_take_all`): the passes then have nothing to do, and no file need be walked to say so
        self._all_taken: tuple[int, int] | None = None
        self._sample_memo: tuple[str, SampleFacts] | None = None  # a sample read here, to store

    def _total(self, phase: ScanPhase) -> int:
        if self._all_taken is not None:  # every file from the split's stored scan (`_take_all`)
            return self._all_taken[0 if phase is ScanPhase.INDEX else 1]
        files = [f for f in self.dataset.files if f.source is not None]
        if phase is ScanPhase.INDEX:
            return sum(f.source.file_size for f in files)
        return sum(int(f.index.scanned) for f in files)

    def problems(self) -> int:
        return self._totals()[1]

    def _totals(self) -> tuple[int, int]:
        """(records, problems) of every file: the mirror made once a phase, the file being read
        brought up to date (only it changes while it is read)."""
        files = self.dataset.files
        if self._counts is None or len(self._counts) != len(files):
            self._counts = np.fromiter((f.index.count for f in files), np.int64, len(files))
            self._problems = np.fromiter((len(f.index.problems) for f in files), np.int64, len(files))
        self._seen(self.file_no)
        return int(self._counts.sum()), int(self._problems.sum())

    def _seen(self, fi: int) -> None:
        """File `fi`'s records and problems into the mirror."""
        if self._counts is not None and 0 <= fi < len(self._counts):
            f = self.dataset.files[fi]
            self._counts[fi] = f.index.count
            self._problems[fi] = len(f.index.problems)

    def _at(self, fi: int) -> None:
        """The scan moves to file `fi`: the file it leaves is final in the mirror."""
        self._seen(self.file_no)
        self.file_no = fi

    def _use_child(self, f) -> bool:
        """Large plain files are framed and verified in a child process (the GIL stays free for the
        UI); compressed ones stay here, where their inflater checkpoints are needed."""
        return (
            self.use_subprocess and f.source.compression == "none" and f.source.file_size >= CHILD_MIN_BYTES
        )

    def work(self) -> None:
        self._began = time.time()  # results stored before this are an earlier run's
        memo = answer = None
        if self._answer_may_serve():
            # the first rows at once, as without an answer: its key reads every file's identity first
            self._at(0)
            first = self._whole_here(0, self.dataset.files[0], 0, self._total(ScanPhase.INDEX))
            # while the window paints the first rows: what lets the GIL go most of the time (a stat
            # a file, the store's reads, array operations on the stored scan's records: ~0.1 s at
            # 2,000,000 records) ...
            memo = answer = self._split_answer()
            split = None if memo is None else self._stored_split(memo[0])
            if first:  # ... then the per-file Python after the paint (the window's turn: not both at once)
                self.first_painted.wait(FIRST_PAINT_WAIT_S)
            if memo is not None:
                self._read_stored_analysis(memo[2])
            if split is not None:
                self._take_split(split)
                memo = None  # taken: nothing new to remember
        taken = self._all_taken is not None  # every file from the split's stored scan: no pass runs
        ahead = None if taken else self._reader_ahead()
        try:
            if not taken:
                self._start_pool()
            framed = self._phase(
                ScanPhase.INDEX, self._index_child, self._index_here, lambda f: f.source.file_size, ahead
            )
        finally:
            if ahead is not None:
                ahead.shutdown(wait=False, cancel_futures=True)
            if self._pool is not None:
                self._pool.close()  # its worker processes end (a stop: at once)
                self._pool = None
        if framed:
            self.result.emit(self._sample(answer))
            total = self._total(ScanPhase.VERIFY)
            if self._phase(
                ScanPhase.VERIFY, self._verify_child, self._verify_here, lambda f: int(f.index.scanned)
            ):
                self._reframe()
                self._emit(ScanPhase.DONE, total, total)
                if memo is None and answer is not None and not self._settled:
                    memo = answer  # a stored scan from before `_reframe` ran: stored anew, settled, once
                if answer is not None:  # (`memo` is `answer` or None)
                    unchanged = self._unchanged_since(answer[1])
                    if memo is not None:
                        self._remember_answer(memo[0], unchanged)
                    if self._sample_memo is not None:
                        self._remember_sample(unchanged, *self._sample_memo)

    def _sample(self, answer: tuple | None) -> SampleFacts:
        """What a sample of records says (`sample_facts`, read here: on a cold file each read
        waits), from the store when this unchanged split's sample was stored there (`answer`: its
        key, identities and digest, `_split_answer`): reading and decoding the sample's records was
        ~40 ms of this thread between a reopened split's first rows and its CRC status."""
        from tfrview.core.analysis.cache import load_answer, split_key

        ids_of = 64 if self.class_ids else 0
        key = None
        if answer is not None:
            key = split_key(answer[2], ["sample", ids_of, self.ids_files])
            got = load_answer(key)
            facts = None if got is None else _facts_from(got[0])
            if facts is not None:
                return facts
        facts = sample_facts(self.dataset, ids_of=ids_of, ids_files=self.ids_files)
        if key is not None:
            self._sample_memo = (key, facts)
        return facts

    def _unchanged_since(self, identities: list) -> Callable[[], bool]:
        """Whether every file is unchanged since its identity was taken (`cache.still`: a stat a
        file), asked at most once however many answers are remembered."""
        from tfrview.core.analysis.cache import still

        paths = [str(f.path) for f in self.dataset.files]
        return functools.cache(lambda: still(paths, identities))

    def _remember_sample(self, unchanged: Callable[[], bool], key: str, facts: SampleFacts) -> None:
        """The sample stored for the next reopen, when every file is `unchanged()` since its
        identity was taken (the records sampled would be another file's)."""
        from tfrview.core.analysis.cache import store_answer

        if self.cancelled or not unchanged():
            return
        text = {"kinds": facts.kinds, "class_ids": sorted(facts.class_ids), "keys": sorted(facts.keys)}
        store_answer(key, json.dumps(text).encode())

    def _answer_may_serve(self) -> bool:
        """Whether a stored scan of the whole split may serve: a split of at least POOL_MIN_FILES
        local files, none framed yet and none known to be compressed (any other is scanned file by
        file)."""
        files = self.dataset.files
        return len(files) >= POOL_MIN_FILES and not any(
            f.source is None or f.source.remote or f.index.count or not _maybe_plain(f.source) for f in files
        )

    def _split_answer(self) -> tuple[str, list, str] | None:
        """The key of this split's stored scan (every file's index: `analysis.splitindex`), the
        files' identities (`cache.split_identities`: an unchanged file's as last read, from a stat) and
        their digest (`cache.split_digest`); None if a file has no identity."""
        from tfrview.core.analysis.cache import split_identities, split_key

        got = split_identities([str(f.path) for f in self.dataset.files])
        if got is None:
            return None
        ids, digest = got
        return split_key(digest, ["scan"]), ids, digest

    def _read_stored_analysis(self, digest: str) -> None:
        """The stored answer of the analysis the window would start (`analysis_request`), keyed by
        the identities just read: the session says it instead of starting a job (`StoredJob`)."""
        from tfrview.core.procs.stored import analysis_key, stored_messages

        req = self.analysis_request
        if req is None or list(req.paths) != [str(f.path) for f in self.dataset.files]:
            return
        told = stored_messages(analysis_key(req, digest))
        if told is not None:
            self.stored_analysis = (req, told)

    def _stored_split(self, key: str):
        """The split's stored scan (`splitindex.SplitIndex`: every file's index and CRC status), or
        None if there is none (or it cannot be read: said in the log, and the files are scanned)."""
        from tfrview.core.analysis import splitindex
        from tfrview.core.analysis.cache import load_answer

        got = load_answer(key)
        if got is None:
            return None
        try:
            split = splitindex.unpack_split(*got)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            log.info("the stored scan of %s is unreadable (%s): scanned again", self.dataset.name, exc)
            return None
        return split if len(split) == len(self.dataset.files) else None

    def _take_split(self, split) -> None:
        """Every file's index and CRC status from the split's stored scan, at once."""
        self._take_all(split)
        self._settled = split.settled

    def _take_all(self, split) -> None:
        """Every file not framed yet takes its index from the split's stored scan
        (`splitindex.SplitIndex`), as `_take_whole` takes one, in one sweep: each file's arrays
        adopted as views of the answer's (`RecordIndex.adopt_whole`, no chunk a file), the files
        whose every data CRC was checked, the records, problems and bytes of every file found by
        array operations, one report at the end (10,000 files one by one, a progress check and a
        reduction each, were ~0.5 s of this thread, which shares the GIL with the UI's; objects
        made a file and walks of every file for counts ~0.15 s more)."""
        files = self.dataset.files
        starts = split.starts
        counts = np.diff(starts)
        unchecked = np.flatnonzero((split.status & VERIFIED) == 0)  # the records whose data CRC was not
        verified = counts > 0
        if len(unchecked):  # ... and the files they are in
            verified[np.searchsorted(starts[1:], unchecked, side="right")] = False
        at = split.at
        if at < self._began and not self.stored_files:  # analysed before: its analysis may start now
            self.stored_found.emit()
        problems = split.problems
        offsets, lengths, status, scanned = split.offsets, split.lengths, split.status, split.scanned.tolist()
        bounds = starts.tolist()
        sizes = [0] * len(files)
        taken = 0
        for fi, f in enumerate(files):
            src = f.source
            sizes[fi] = src.file_size
            index = f.index
            if index.count:  # the first file, framed for the first rows: the same records
                continue
            if not getattr(src, "sniffed", True):
                src.assume_plain()
            a, b = bounds[fi], bounds[fi + 1]
            index.adopt_whole(
                offsets[a:b], lengths[a:b], status[a:b], problems.get(fi, ()), scanned[fi], sizes[fi]
            )
            if verified[fi]:
                self._verified.add(fi)
            if fi in problems:
                self._report(fi, problems[fi])
            if f.expected_records is not None:  # a TFDS split: counts checked
                self._report(fi, self.dataset.check_length(fi))
            taken += 1
            if fi % 1024 == 0:
                time.sleep(0)  # the UI thread's turn for the GIL
        if taken:
            self.stored_files += taken
            self.stored_at = at if self.stored_at is None else min(self.stored_at, at)
        self.file_no = len(files) - 1
        # the mirror of every file's records and problems, and the passes' totals, known at once
        self._counts = counts.astype(np.int64)
        self._counts[0] = files[0].index.count
        self._problems = np.zeros(len(files), np.int64)
        for fi in [0, *problems]:
            self._problems[fi] = len(files[fi].index.problems)
        self._all_taken = (sum(sizes), int(split.scanned.sum()))
        self._tick(ScanPhase.INDEX, self._all_taken[0], self._all_taken[0], True)

    def _remember_answer(self, key: str, unchanged: Callable[[], bool]) -> None:
        """Every file's index stored as the split's scan, when each file is plain, framed to its end
        and `unchanged()` since its identity was taken (its records would be another file's)."""
        from tfrview.core.analysis import splitindex
        from tfrview.core.analysis.cache import store_answer

        files = self.dataset.files
        if self.cancelled or any(
            f.source is None or not f.index.done or f.source.compression != "none" for f in files
        ):
            return
        if not unchanged():
            return
        # a file framed again is stored as framed again (the window swaps its index in later)
        indexes = [self._reframed.get(fi, f.index) for fi, f in enumerate(files)]
        text, arrays = splitindex.pack(
            [
                splitindex.FileIndex(x.offsets, x.lengths, x.status, tuple(x.problems), x.scanned)
                for x in indexes
            ],
            settled=True,  # (after `_reframe`)
        )
        store_answer(key, text, arrays)

    def _reframe(self) -> None:
        """A damaged file that `index_and_verify` frames otherwise (records a header swallowed, a
        line-ending conversion) is framed again as it frames it, so the window numbers records as
        `verify`, `dump`, `repair` and the exports do. The window swaps the index (`reframed`)."""
        from tfrview.core.tfrecord.report import index_and_verify, reframing_needed, sort_problems

        if self._settled:  # the split's stored scan was framed so (its damaged files' bytes not walked)
            return
        for fi, f in enumerate(self.dataset.files):
            if self.cancelled:
                return
            if f.source is None or not f.index.problems or not reframing_needed(f.source, f.index):
                continue
            idx, found = index_and_verify(f.source)
            idx.problems[:] = sort_problems(list(idx.problems) + found)
            self.reframed.emit(fi, idx)
            self._reframed[fi] = idx
            self._counts = None  # counted again from every file at the next report

    def _reader_ahead(self):
        """Threads that fetch the next remote files while one is framed (they wait on the network,
        they do not compute); None for a local dataset."""
        if not any(f.source is not None and f.source.remote for f in self.dataset.files):
            return None
        from concurrent.futures import ThreadPoolExecutor

        from tfrview.core.limits import READ_AHEAD_FILES

        self._ahead_sent: set[int] = set()
        return ThreadPoolExecutor(READ_AHEAD_FILES, thread_name_prefix="tfrview-read-ahead")

    def _read_ahead(self, pool, fi: int) -> None:
        from tfrview.core.errors import SourceError
        from tfrview.core.limits import READ_AHEAD_BYTES, READ_AHEAD_FILES

        def fetch(src) -> None:
            with contextlib.suppress(SourceError, OSError):  # said when the scan reads it
                src.read_ahead(READ_AHEAD_BYTES)

        for k in range(fi + 1, min(fi + 1 + READ_AHEAD_FILES, len(self.dataset.files))):
            f = self.dataset.files[k]
            if k not in self._ahead_sent and f.source is not None and f.source.remote and not f.index.done:
                self._ahead_sent.add(k)
                pool.submit(fetch, f.source)

    def _phase(self, name: ScanPhase, in_child, here, size, ahead=None) -> bool:
        """Run one pass over every open file, in a child process or here; False if cancelled."""
        total = self._total(name)
        if self._nothing_to_do(name):  # a reopened split, every file taken whole from the store
            self._emit(name, total, total)
            return True
        base = 0
        for fi, f in enumerate(self.dataset.files):
            if f.source is None or (name is ScanPhase.VERIFY and not f.index.count):
                continue
            if ahead is not None:
                self._read_ahead(ahead, fi)
            self._at(fi)
            if name is ScanPhase.VERIFY and fi in self._verified:  # taken whole, every CRC checked
                base += size(f)
                continue
            if name is ScanPhase.INDEX and f.index.done:  # a resumed scan: this file is framed already
                base += size(f)
                continue
            if name is ScanPhase.INDEX and not f.index.count and self._pooled(fi, f, base, total):
                base += size(f)
                continue
            if name is ScanPhase.INDEX and not f.index.count and self._from_store(fi, f, base, total):
                base += size(f)
                continue
            if not self.dataset.opens(fi):  # removed or replaced since it was listed: said, not read
                continue
            step = in_child if self._use_child(f) else here
            if name is ScanPhase.INDEX and f.index.count:  # framed in part: go on, keeping what is known
                step = self._index_rest_here
            if name is ScanPhase.VERIFY:
                first = _first_unverified(f.index)
                if first >= f.index.count:
                    base += size(f)
                    continue
                if first:
                    step = functools.partial(self._verify_here, start=first)
            if not step(fi, f, base, total):
                self._emit(ScanPhase.CANCELLED, base, total)
                return False
            base += size(f)
        self._emit(name, total, total)
        return True

    def _nothing_to_do(self, name: ScanPhase) -> bool:
        """Whether every open file is framed to its end (INDEX) or, besides, had every data CRC
        checked (VERIFY): the pass would only walk 10,000 files to skip each."""
        if self._all_taken is not None and (
            name is ScanPhase.INDEX or len(self._verified) == int(np.count_nonzero(self._counts))
        ):
            return True
        done = all(f.source is None or f.index.done for f in self.dataset.files)
        if name is ScanPhase.VERIFY:
            return done and all(
                f.source is None or not f.index.count or fi in self._verified
                for fi, f in enumerate(self.dataset.files)
            )
        return done

    def _tick(self, phase: ScanPhase, done: int, total: int, force: bool = False) -> None:
        """Progress at most every 50 ms; `force` (a file's first rows or its end) only before the
        first report: each report sums every file's records and problems, and a report forced at
        the end of each of 10,000 small files was 10,000 x 10,000 steps on this thread."""
        now = time.monotonic()
        if (force and self._last == 0.0) or now - self._last > 0.05:
            self._emit(phase, done, total)
            self._last = now

    def _report(self, fi: int, problems) -> None:
        for p in problems:
            self.problem_found.emit(fi, p)

    def _stored(self, fi: int) -> list:
        """The stored results that could give file `fi` its index (the deep pass's first part, then
        the scan's), asked of the store for STORE_BATCH files at a time: reopening 10,000 shards
        was 20,000 queries, one file after another."""
        from tfrview.core.analysis.cache import load_many
        from tfrview.core.analysis.results import ShardTask
        from tfrview.core.analysis.shard import plan

        got = self._stored_by_file
        if fi not in got:
            files = self.dataset.files
            batch = [
                k
                for k in range(fi, min(fi + STORE_BATCH, len(files)))
                if files[k].source is not None
                and _maybe_plain(files[k].source)
                and not files[k].index.count
                and k not in got
            ]
            paths = [str(files[k].path) for k in batch]
            first_part = {}
            for t in plan(paths, True, self.label_map_json):
                first_part.setdefault(t.file_no, t)
            both = load_many(
                [first_part[i] for i in range(len(batch))]  # one query, one identity a file
                + [ShardTask(p, k) for p, k in zip(paths, batch, strict=True)],
                index_only=True,
            )
            deep, scan = both[: len(batch)], both[len(batch) :]
            got.clear()  # files before this batch are done with
            for k, a, b in zip(batch, deep, scan, strict=True):
                got[k] = [r for r in (b, a) if r is not None]
        return got.pop(fi, [])

    def _start_pool(self) -> None:
        """A split of many small local files is framed and verified as `verify` does it: by the
        pass's worker processes (`analysis.pool.run_tasks`, stored results taken as they are), so
        this thread only waits and copies arrays, and the UI thread it shares the GIL with stays
        free (10,000 shards: every CRC in ~4 s, ~11 s framed here). The first file is framed here
        at once for the first rows; a file the pool finds damaged, compressed or changed is framed
        here too, as any other, and said in the scan's own words."""
        if not self.use_subprocess:
            return
        from tfrview.core.analysis.pool import run_tasks  # start-up: kept off the first paint
        from tfrview.core.analysis.shard import plan  # start-up: kept off the first paint

        files = self.dataset.files
        picks = [
            fi
            for fi, f in enumerate(files)
            if fi > 0
            and f.source is not None
            and not f.source.remote
            and not f.index.count
            and f.source.file_size <= SMALL_FILE_WHOLE_BYTES
            and _maybe_plain(f.source)
        ]
        if len(picks) < POOL_MIN_FILES:
            return
        tasks = [
            replace(t, file_no=fi)
            for t, fi in zip(plan([str(files[fi].path) for fi in picks], False), picks, strict=True)
        ]
        self._pool_files = set(picks)
        self._pool = run_tasks(tasks, childproc.cores(), cancelled=lambda: self.cancelled)

    def _pooled(self, fi, f, base, total) -> bool:
        """File `fi`'s index and CRC status from the pool, when it found the file whole and plain."""
        if self._pool is None or fi not in self._pool_files:
            return False
        while fi not in self._pool_got:
            r = next(self._pool, None)  # waits (the GIL free) for the next task's files
            if r is None:
                return False
            self._pool_got[r.file_no] = r
        r = self._pool_got.pop(fi)
        src = f.source
        whole = r.error is None and r.compression == "none" and not r.problems and not r.damaged
        if not whole or r.identity is None or tuple(r.identity[:2]) != tuple(src.identity or ()):
            return False  # framed here, which says why
        stored_at = r.analysed_at if r.from_cache else None
        self._take_whole(fi, f, r.offsets, r.lengths, r.status, (), r.scanned, base, total, stored_at)
        return True

    def _from_store(self, fi, f, base, total) -> bool:
        """An unchanged plain file analysed before: its index, CRC status and framing problems at
        once, as stored (compressed files are scanned: random reads need the scan's checkpoints)."""
        from tfrview.core.problems import QA_KINDS

        if not _maybe_plain(f.source):
            return False
        for r in self._stored(fi):
            if r.error is not None or r.compression != "none":
                continue
            problems = tuple(p for p in r.problems if p.kind not in QA_KINDS)
            self._take_whole(
                fi, f, r.offsets, r.lengths, r.status, problems, r.scanned, base, total, r.analysed_at
            )
            return True
        return False

    def _index_here(self, fi, f, base, total, limit: int | None = None) -> bool:
        if limit is None and self._whole_here(fi, f, base, total):
            return True
        seen = len(f.index.problems)
        for _, chunk in self.dataset.scan_file(fi, chunk_records=1000, first_chunk=500):
            self._report(fi, f.index.problems[seen:])
            seen = len(f.index.problems)
            if not self._note:
                self._note = (
                    inflation_note(str(f.path), f.source.compression, chunk.reached, chunk.consumed) or ""
                )
            if self.cancelled:
                return False
            self._tick(ScanPhase.INDEX, base + chunk.consumed, total, chunk.done)
            if limit is not None and f.index.count >= limit:
                return True
            time.sleep(0)  # let the UI thread take the GIL between chunks
        return True

    def _whole_here(self, fi, f, base, total) -> bool:
        """A small clean plain local file framed and verified at once from one read, as the CLI's
        pass does it (`smallfile.frame_whole`: ~0.1 ms a 100-record shard, where framing and then
        verifying it record by record took ~1.7 ms); False for any other (the scan frames it and
        says why)."""
        src = f.source
        if src.remote or f.index.count or src.identity is None:
            return False
        whole = frame_whole(str(src.path), 0)
        if whole is None or (whole.stat.st_dev, whole.stat.st_ino) != tuple(src.identity):
            return False
        self._take_whole(fi, f, whole.offsets, whole.lengths, whole.status, (), src.file_size, base, total)
        return True

    def _take_whole(
        self, fi, f, offsets, lengths, status, problems, scanned: int, base, total, stored_at=None
    ) -> None:
        """A file framed and verified elsewhere (by the pool, in the store, from one read) taken at
        once: its index as one chunk, its problems said, its compression plain (this very file, by
        its identity); `stored_at`: when a stored result read it. (A stored split's files are
        adopted without copies by `_take_all`.)"""
        src = f.source
        if not getattr(src, "sniffed", True):
            src.assume_plain()
        chunk = IndexChunk(0, offsets, lengths, status, problems, scanned, src.file_size, True, scanned)
        f.index.apply(chunk)
        if len(status) and int(np.bitwise_and.reduce(status & VERIFIED)):  # every data CRC checked
            self._verified.add(fi)
        self._report(fi, tuple(problems) + tuple(self.dataset.check_length(fi)))
        if stored_at is not None:
            if not self.stored_files and stored_at < self._began:  # (not stored by this scan's pool)
                self.stored_found.emit()
            self.stored_files += 1
            self.stored_at = stored_at if self.stored_at is None else min(self.stored_at, stored_at)
        self._tick(ScanPhase.INDEX, base + src.file_size, total, True)

    def _index_child(self, fi, f, base, total) -> bool:
        from tfrview.core.procs.scanproc import read_frames, spawn
        from tfrview.core.tfrecord.index import scan

        first = next(scan(f.source, first_chunk=1000))  # the first rows at once, while the child starts
        f.index.apply(first)
        self._report(fi, first.problems)
        self._tick(ScanPhase.INDEX, base + first.consumed, total, True)
        if first.done:
            return True
        known = first.scanned
        try:
            proc = spawn(str(f.path), "index")
        except OSError as exc:
            self._child_failed(fi, Failed.of(exc))
            return self._index_rest_here(fi, f, base, total)
        try:
            for chunk in read_frames(proc.stdout):
                if self.cancelled:
                    return False
                self._apply_tail(fi, f, chunk, known, base, total)
        except (RuntimeError, ValueError) as exc:  # ChildFailed, or frames that make no sense
            self._child_failed(fi, _failed(exc))
        else:
            if not f.index.done:  # it ended without a word before the file's end
                self._child_failed(fi, Failed("the scan process ended before the end of the file", "exited"))
        finally:
            stop_child(proc)
        return True if f.index.done else self._index_rest_here(fi, f, base, total)

    def _index_rest_here(self, fi, f, base, total) -> bool:
        """The child could not run or died: frame here, keeping what is already known."""
        from tfrview.core.tfrecord.index import scan

        known = f.index.scanned
        for chunk in scan(f.source, chunk_records=1000):
            if self.cancelled:
                return False
            self._apply_tail(fi, f, chunk, known, base, total)
            time.sleep(0)
        return True

    def _apply_tail(self, fi, f, chunk, known: int, base: int, total: int) -> None:
        """A chunk from a scan that restarted at 0: apply what is new, report it, show progress."""
        seen = len(f.index.problems)
        f.index.apply_tail(chunk, known)
        self.dataset.check_length(fi)  # a TFDS shard against its shardLengths, once framed
        self._report(fi, f.index.problems[seen:])
        self._tick(ScanPhase.INDEX, base + chunk.consumed, total, chunk.done)

    def _verify_here(self, fi, f, vbase, vtotal, start: int = 0) -> bool:
        for vc in verify(f.source, f.index, start=start, chunk_bytes=1 << 20, chunk_records=1000):
            for p in vc.problems:
                f.index.problems.append(p)
            self._report(fi, vc.problems)
            if self.cancelled:
                return False
            done = int(f.index.offsets[vc.stop - 1] + f.index.lengths[vc.stop - 1])
            self._tick(ScanPhase.VERIFY, vbase + done, vtotal)
            time.sleep(0)
        return True

    def _verify_child(self, fi, f, vbase, vtotal) -> bool:
        from tfrview.core.procs.scanproc import read_frames, spawn

        try:
            proc = spawn(str(f.path), "verify")
        except OSError as exc:
            self._child_failed(fi, Failed.of(exc))
            return self._verify_here(fi, f, vbase, vtotal)
        stop = 0
        try:
            for vc in read_frames(proc.stdout):
                if self.cancelled:
                    return False
                if vc.stop > f.index.count:  # the file changed under us: trust only what we framed
                    break
                f.index.apply_verify(vc)
                self._report(fi, vc.problems)
                stop = vc.stop
                done = int(f.index.offsets[vc.stop - 1] + f.index.lengths[vc.stop - 1])
                self._tick(ScanPhase.VERIFY, vbase + done, vtotal)
        except (RuntimeError, ValueError) as exc:  # ChildFailed, or frames that make no sense
            self._child_failed(fi, _failed(exc))
        finally:
            stop_child(proc)
        if stop < f.index.count:  # finish here whatever the child did not
            return self._verify_here(fi, f, vbase, vtotal, start=stop)
        return True

    def _child_failed(self, fi: int, failed: Failed) -> None:
        """A scan process failed: the file is framed here instead, and the window and the log say so
        (never silence: a failing child is a bug or a broken install worth knowing of)."""
        if self.cancelled:
            return  # we killed it
        log.warning(
            "the scan process for %s failed (%s: %s); framed in the window's process instead",
            self.dataset.files[fi].path,
            failed.kind,
            failed.message,
        )
        self.child_failed.emit(fi, failed)

    def _emit(self, phase: ScanPhase, done: int, total: int) -> None:
        self.progress.emit(IndexProgress(phase, *self._totals(), done, total, note=self._note))
