"""The window's scan of a split of many small shards runs on the pass's worker pool (as `verify`
does) and gives every file the index, CRC status and problems the scan in this process gives."""

from __future__ import annotations

import gzip
from dataclasses import replace

import numpy as np

from tests.helpers import framed, payloads
from tfrview.core.analysis import cache
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.gui.workers import scan
from tfrview.gui.workers.scan import ScanWorker


def _split(folder, n: int):
    folder.mkdir()
    data, offs = framed(payloads(30))
    for i in range(n):
        b = bytearray(data)
        if i == 7:
            b[offs[4] + 20] ^= 1  # a data byte: a bad data CRC
        if i == 9:
            b = b[: offs[12] + 5]  # cut short inside a record
        path = folder / f"s-{i:05d}-of-{n:05d}.tfrecord"
        path.write_bytes(gzip.compress(bytes(b)) if i == 11 else bytes(b))
    return folder


def _scanned(folder, use_subprocess: bool):
    ds = Dataset.open([str(folder)])
    w = ScanWorker(ds, use_subprocess=use_subprocess)
    problems: list = []
    w.problem_found.connect(lambda fi, p: problems.append((fi, p.kind, p.offset, p.length)))
    w.samples = []
    w.result.connect(w.samples.append)
    w.said_stored = []  # stored_found: the window's analysis then starts beside the scan
    w.stored_found.connect(lambda: w.said_stored.append(True))
    w.work()
    return ds, w, sorted(problems)


def test_a_split_of_small_shards_is_framed_by_the_pool_as_here(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(scan, "POOL_MIN_FILES", 16)
    folder = _split(tmp_path / "split", 24)
    here, _, here_problems = _scanned(folder, False)
    pooled, w, pooled_problems = _scanned(folder, True)
    assert len(w._pool_files) == 23  # every shard but the first, framed by the pool
    # a damaged shard's result the pool stored during this scan is no sign of an earlier analysis
    assert not w.said_stored
    for a, b in zip(here.files, pooled.files, strict=True):
        assert a.index.count == b.index.count and a.index.done and b.index.done, a.path
        for name in ("offsets", "lengths", "status"):
            assert np.array_equal(getattr(a.index, name), getattr(b.index, name)), (a.path, name)
    assert pooled_problems == here_problems and {fi for fi, *_ in here_problems} == {7, 9}
    assert pooled.files[11].source.compression == "gzip"  # framed here, with its checkpoints
    n, _ = cache.usage()
    assert n >= 20  # the pool stored what it framed: a reopen or `info` takes it from the store
    again, w2, again_problems = _scanned(folder, True)
    assert again_problems == here_problems and w2.stored_files >= 20 and w2.said_stored == [True]
    assert [f.index.count for f in again.files] == [f.index.count for f in here.files]


def test_a_reopened_split_takes_every_index_from_its_stored_scan(qtbot, tmp_path, monkeypatch):
    """The whole split's scan is stored as one answer (analysis.splitindex): a reopen takes every
    file's index, CRC status and framing problems from it, as the first scan found them, without a
    pool or a file's own stored result; a file changed since is scanned again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(scan, "POOL_MIN_FILES", 16)
    folder = _split(tmp_path / "split", 20)
    (folder / "s-00011-of-00020.tfrecord").write_bytes(framed(payloads(30))[0])  # no gzip: all plain
    first, _, first_problems = _scanned(folder, True)
    again, w, again_problems = _scanned(folder, True)
    # every file but the first (framed at once for the first rows) from the answer: no pool started
    assert w.stored_files == 19 and not w._pool_files
    # the sample of records from the store, as read the first time (no record read for it)
    read: list = []
    monkeypatch.setattr(scan, "sample_facts", lambda *a, **k: read.append(a))
    again2, w2, _ = _scanned(folder, True)
    assert w2.samples == w.samples and len(w.samples) == 1 and w.samples[0].kinds and not read
    monkeypatch.undo()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(scan, "POOL_MIN_FILES", 16)
    assert again_problems == first_problems and {fi for fi, *_ in first_problems} == {7, 9}
    for a, b in zip(first.files, again.files, strict=True):
        assert b.index.done and b.index.scanned == a.index.scanned, a.path
        for name in ("offsets", "lengths", "status"):
            assert np.array_equal(getattr(a.index, name), getattr(b.index, name)), (a.path, name)
    data, _ = framed(payloads(31))
    (folder / "s-00003-of-00020.tfrecord").write_bytes(data)  # changed: one more record
    changed, w3, _ = _scanned(folder, True)
    assert changed.files[3].index.count == 31 and w3.stored_files < 20  # not the stored answer
    assert w3._sample_memo is not None  # the changed split's sample read again, not the stored one


def test_a_reopened_split_says_its_stored_analysis_without_a_job(qtbot, tmp_path, monkeypatch):
    """Reopening an unchanged split analysed before: the scan reads the analysis's stored answer with
    the identities it read for its own (`procs.stored`), and the session says it (`StoredJob`): the
    same findings and summary, every file from the store, no job process. A shard changed since is
    scanned again, and its analysis is a job again."""
    import io

    from tfrview.core.procs import jobs
    from tfrview.core.procs.messages import Progress, Summary, decode
    from tfrview.gui.job_state import Phase
    from tfrview.gui.session import DatasetSession
    from tfrview.gui.workers.jobs import JobWorker, StoredJob

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(scan, "POOL_MIN_FILES", 16)
    folder = _split(tmp_path / "split", 20)
    (folder / "s-00011-of-00020.tfrecord").write_bytes(framed(payloads(30))[0])  # no gzip: all plain
    _scanned(folder, False)  # the split's scan stored whole

    def session() -> DatasetSession:
        s = DatasetSession(Dataset.open([str(folder)]), run_checks=True)
        s.found = []
        s.problem_found.connect(lambda fi, p: s.found.append((fi, p.kind, p.offset)))
        return s

    first = session()
    out = io.StringIO()
    monkeypatch.setattr(jobs, "_OUT", out)
    jobs.job_analyze(replace(first._early_request(), jobs=1))  # as the window's job: its answer stored
    told = [decode(line) for line in out.getvalue().splitlines()]
    first.ds.close()

    s = session()
    try:
        s.start()
        qtbot.waitUntil(lambda: s.scan_over and s.checks.phase is Phase.DONE, timeout=20000)
        assert isinstance(s.analyzer, StoredJob) and s.indexer.stored_analysis is not None
        # what the job said, said again (its summary now says every file came from the store)
        kept = [m for m in told if not isinstance(m, (Progress, Summary))]
        again = s.analyzer.messages
        assert [m for m in again if not isinstance(m, (Progress, Summary))] == kept
        assert again[-1].summary == told[-1].summary and again[-1].cached == again[-1].files == 20
        assert not s.summary_partial and s.summary == told[-1].summary
        assert s.analysis_note.startswith("checked ")  # every file's stored analysis still holds
        assert sorted({fi for fi, *_ in s.found}) == [7, 9]
    finally:
        s.shutdown()
        s.ds.close()

    (folder / "s-00003-of-00020.tfrecord").write_bytes(framed(payloads(31))[0])  # changed: one more record
    s = session()
    try:
        s.start()
        qtbot.waitUntil(lambda: s.scan_over, timeout=20000)
        assert s.ds.files[3].index.count == 31 and s.indexer.stored_analysis is None
        assert s.analyzer is None or isinstance(s.analyzer, JobWorker)  # the pass runs again
    finally:
        s.shutdown()
        s.ds.close()
