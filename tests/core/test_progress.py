"""The analysis says how far it is in records from its first second (issue 19.3): the pool's
workers add the records they decode to one shared counter, and the job reports it while a task
(a part of a big file, a minute long) is still running."""

from __future__ import annotations

import pytest

from tests.helpers import framed, payloads
from tfrview.core.analysis import progress


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # workers inherit it
    monkeypatch.setattr(progress, "_shared", None)  # this process's counter, restored after


def _file(path, n: int, bad: int | None = None) -> str:
    data, offs = framed(payloads(n))
    if bad is not None:  # a data byte of record `bad`: its data CRC fails, it is not decoded
        data = bytearray(data)
        data[offs[bad] + 12 + 2] ^= 0x01
        data = bytes(data)
    path.write_bytes(data)
    return str(path)


def test_every_worker_adds_the_records_it_decodes_to_one_counter(tmp_path):
    from tfrview.core.analysis import plan, run_tasks

    paths = [_file(tmp_path / "a.tfrecord", 5_000), _file(tmp_path / "b.tfrecord", 9_000, bad=10)]
    counter = progress.make_counter()
    results = list(run_tasks(plan(paths, True), 2, counter=counter))  # two workers, a file each
    assert sorted(len(r.offsets) for r in results) == [5_000, 9_000]
    assert progress.counted(counter) == 5_000 + 9_000 - 1  # every intact record, the damaged one not


def test_the_analysis_job_reports_records_from_the_start_and_while_a_file_runs(tmp_path):
    from tfrview.core.procs.launch import read_lines, spawn
    from tfrview.core.procs.messages import Done, Progress, Summary
    from tfrview.core.procs.requests import AnalyzeRequest

    n = 60_000
    path = _file(tmp_path / "one.tfrecord", n)
    proc = spawn(AnalyzeRequest(paths=(path,), counts=(n,), jobs=1))
    lines = list(read_lines(proc))
    proc.wait()
    assert lines[0] == Progress("records", 0, n)  # before any record is decoded
    said = [m for m in lines if isinstance(m, Progress)]
    assert all(m.phase == "records" and m.total == n for m in said)
    done = [m.done for m in said]
    assert done == sorted(done) and done[-1] <= n
    first_result = next(i for i, m in enumerate(lines) if isinstance(m, Summary))
    before = [m.done for m in lines[:first_result] if isinstance(m, Progress)]
    assert any(0 < d < n for d in before)  # counted while the one file's pass ran, not at its end
    assert isinstance(lines[-1], Done)


def test_a_part_being_decoded_sends_its_summary_so_far(tmp_path, monkeypatch):
    """The Dataset Summary fills while a long part runs: the deep pass sends its summary so far
    (every SUMMARY_SECONDS; here at every EVERY records)."""
    import pickle

    from tfrview.core.analysis import plan, run_tasks

    monkeypatch.setattr(progress, "_summaries", None)
    monkeypatch.setattr(progress, "SUMMARY_SECONDS", 0.0)
    n = 3 * progress.EVERY + 10
    path = _file(tmp_path / "one.tfrecord", n)
    q = progress.make_summaries()
    (r,) = list(run_tasks(plan([path], True), 1, summaries=q))  # one worker: decoded here
    sent = []
    while len(sent) < 3:
        key, data = q.get(timeout=10)
        sent.append((key, pickle.loads(data).records))
    assert [k for k, _ in sent] == [(path, 0)] * 3
    assert [records for _, records in sent] == [progress.EVERY, 2 * progress.EVERY, 3 * progress.EVERY]
    assert r.deep.summary.records == n


def test_the_partial_summary_joins_parts_finished_and_parts_so_far_once_each():
    import pickle

    from tfrview.core.analysis.datasummary import DatasetSummary
    from tfrview.core.procs.jobs import _RecordProgress
    from tfrview.core.procs.requests import AnalyzeRequest

    said = _RecordProgress(AnalyzeRequest(paths=("a",), counts=(100,)), DatasetSummary())
    said.summaries = progress.make_summaries()
    done, so_far = DatasetSummary(records=60), DatasetSummary(records=25)
    said.finished(("a", 0), done)
    said.summaries.put((("a", 1), pickle.dumps(so_far)))
    assert _take(said) and said.summary_json()["records"] == 85
    said.finished(("a", 1), DatasetSummary(records=40))  # its result: the summary so far goes
    said.summaries.put((("a", 1), pickle.dumps(so_far)))  # sent before the result, read after it
    said.summaries.put((("b", 0), pickle.dumps(DatasetSummary(records=7))))  # read after it (one queue)
    assert _take(said)
    assert said.summary_json()["records"] == 60 + 40 + 7


def _take(said) -> bool:
    import time

    end = time.monotonic() + 10
    while time.monotonic() < end:  # a queue's put reaches its reader through a feeder thread
        if said._take_summaries():
            return True
        time.sleep(0.01)
    return False
