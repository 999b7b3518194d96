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
    from tfrview.core.procs.jobs import read_lines, spawn

    n = 60_000
    path = _file(tmp_path / "one.tfrecord", n)
    proc = spawn({"job": "analyze", "paths": [path], "counts": [n], "jobs": 1})
    lines = list(read_lines(proc))
    proc.wait()
    assert lines[0] == {"progress": ["records", 0, n]}  # before any record is decoded
    said = [obj["progress"] for obj in lines if "progress" in obj]
    assert all(step == "records" and total == n for step, _, total in said)
    done = [d for _, d, _ in said]
    assert done == sorted(done) and done[-1] <= n
    first_result = next(i for i, obj in enumerate(lines) if "summary" in obj)
    before = [obj["progress"][1] for obj in lines[:first_result] if "progress" in obj]
    assert any(0 < d < n for d in before)  # counted while the one file's pass ran, not at its end
    assert lines[-1] == {"done": True}
