"""A pass over files analysed before and unchanged since is said from one stored row: the analysis
job's whole answer (QA findings, causes, the summary), not every file's result read and merged."""

from __future__ import annotations

import io

import pytest

from tfrview.core.procs import jobs
from tfrview.core.procs.messages import ProblemFound, Progress, Summary, decode
from tfrview.core.procs.requests import AnalyzeRequest


@pytest.fixture
def own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _analyze(paths, monkeypatch) -> list:
    out = io.StringIO()
    monkeypatch.setattr(jobs, "_OUT", out)
    req = AnalyzeRequest(paths=tuple(map(str, paths)), files=(3, 4), counts=None, jobs=1)
    jobs.job_analyze(req)
    return [decode(line) for line in out.getvalue().splitlines()]


def _answer(lines: list) -> list:
    """What the window keeps of a pass: all but its progress and its partial summaries."""
    return [m for m in lines if not isinstance(m, Progress) and not (isinstance(m, Summary) and m.partial)]


def test_an_unchanged_split_is_answered_from_its_stored_answer(tmp_path, monkeypatch, own_store):
    from tfrview.demo import build_demo

    paths = build_demo(tmp_path / "demo")
    first = _analyze(paths, monkeypatch)
    again = _analyze(paths, monkeypatch)
    found = [m for m in _answer(first) if isinstance(m, ProblemFound)]
    assert found and {m.file for m in found} <= {3, 4}  # the window's numbers of the files
    # the same findings, causes and summary, every file now said to come from the store
    *said_first, summary_first = _answer(first)
    *said_again, summary_again = _answer(again)
    assert said_again == said_first
    assert summary_again.summary == summary_first.summary and not summary_again.partial
    assert summary_again.cached == summary_again.files == len(paths) and summary_first.cached == 0
    # first its records counted (every framed one: the intact ones the summary counts, and more)
    assert (
        isinstance(again[0], Progress) and again[0].done == again[0].total >= summary_first.summary["records"]
    )
    assert len(again) == len(said_first) + 2
    # every row, the told answer too, is one standard JSON value SQLite's json functions read
    from tests.helpers import rows_not_json

    assert rows_not_json() == []


def test_a_changed_file_is_analysed_again(tmp_path, monkeypatch, own_store):
    from tfrview.core.analysis.cache import identities, split_digest
    from tfrview.core.procs.stored import analysis_key
    from tfrview.demo import build_demo

    paths = build_demo(tmp_path / "demo")
    before = _answer(_analyze(paths, monkeypatch))[-1].summary["records"]
    names = list(map(str, paths))
    req = AnalyzeRequest(paths=tuple(names), files=(3, 4), counts=None, jobs=1)
    key = analysis_key(req, split_digest(names, identities(names)))
    data = paths[1].read_bytes()
    paths[1].write_bytes(data[: len(data) // 2])  # cut short: other records, another identity
    assert analysis_key(req, split_digest(names, identities(names))) != key
    again = _analyze(paths, monkeypatch)
    *_, summary = _answer(again)
    assert summary.cached == 1 and summary.files == 2  # the changed file was read, the other stored
    assert summary.summary["records"] < before  # the records the cut file still holds


def test_identities_are_taken_from_the_store_until_a_file_changes(tmp_path, monkeypatch, own_store):
    """`cache.identities`: a file's identity as last read while its stat, settled ctime included, is
    unchanged (one stat, not its ends read again); a file rewritten in place with its size and
    mtime kept is read again (its ctime moved), and so is one written too recently to tell."""
    import os
    import time

    from tfrview.core.analysis import cache
    from tfrview.core.analysis.results import identity_of

    paths = []
    for i in range(3):
        p = tmp_path / f"f{i}.tfrecord"
        p.write_bytes(bytes([i]) * 1000)
        paths.append(str(p))
    read: list[str] = []
    real = cache.identity_of
    monkeypatch.setattr(cache, "identity_of", lambda p: read.append(p) or real(p))
    first = cache.identities(paths)
    assert first == [identity_of(p) for p in paths] and read == paths
    read.clear()
    assert cache.identities(paths) == first and read == paths  # just written: not settled, read again
    monkeypatch.setattr(cache, "_SETTLED_NS", 0)  # as if written long before they were last read
    read.clear()
    assert cache.identities(paths) == first and read == []  # from the stored row, a stat each
    time.sleep(0.05)  # the rewrite's ctime on a later tick of the file system's clock
    st = os.stat(paths[1])
    with open(paths[1], "r+b") as f:
        f.write(b"\xff")  # the same size
    os.utime(paths[1], ns=(st.st_atime_ns, st.st_mtime_ns))  # and its mtime set back
    again = cache.identities(paths)
    assert read == [paths[1]] and again[1] != first[1] and again[1] == identity_of(paths[1])
    assert again[0] == first[0] and again[2] == first[2]
    # the digest kept with them is the digest of what is returned, stored row or not
    read.clear()
    kept, digest = cache.split_identities(paths)
    assert read == [] and kept == again and digest == cache.split_digest(paths, again)
