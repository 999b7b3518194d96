"""The one analysis pass (issue 10): same answers as the two-pass checks, in any order, on any
number of workers, and remembered until a file changes."""

import os
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import framed, payloads
from tfrview.core.analysis import analyze
from tfrview.core.analysis.merge import merge
from tfrview.core.analysis.results import ShardTask
from tfrview.core.analysis.shard import analyze_shard
from tfrview.core.problems import DATASET_STEP_KINDS, QA_KINDS


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # workers inherit it


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from tfrview.demo import build_demo

    return [str(p) for p in build_demo(tmp_path_factory.mktemp("demo"))]


def two_pass(paths, label_map=None):
    from tfrview.core.analysis.checks import check_target, run_checks
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.core.tfrecord.index import verify

    with Dataset.open(paths) as ds:
        for _ in ds.scan():
            pass
        for f in ds.files:
            list(verify(f.source, f.index))
        out = {}
        for ti, p in run_checks([check_target(f.path, f.source, f.index) for f in ds.files], label_map):
            out.setdefault(ti, []).append(p)
    return out


def _qa(problems):
    """The record checks' findings (the two-pass checks have no dataset step after a merge)."""
    return sorted(
        (p.offset, p.record, str(p.kind), p.message)
        for p in problems
        if p.kind in QA_KINDS and p.kind not in DATASET_STEP_KINDS
    )


def test_one_pass_finds_what_the_two_pass_checks_find(demo):
    from tfrview.core.records.labelmap import LabelMap
    from tfrview.demo import CLASSES

    lm = LabelMap(CLASSES)
    old = two_pass(demo, lm)
    a = analyze(demo, deep=True, label_map=lm.to_json(), jobs=1, use_cache=False)
    for fi in range(len(demo)):
        assert _qa(a.problems(fi)) == _qa(old.get(fi, []))
    assert a.summary.records == sum(s.records for s in a.shards)
    # the framing and CRC problems are verify's
    from tfrview.core.tfrecord.report import index_and_verify
    from tfrview.core.tfrecord.source import open_source

    for fi, path in enumerate(demo):
        src = open_source(path)
        idx, found = index_and_verify(src)
        src.close()
        want = sorted((p.offset, str(p.kind)) for p in list(idx.problems) + found)
        assert sorted((p.offset, str(p.kind)) for p in a.problems(fi) if p.kind not in QA_KINDS) == want


def test_results_merge_in_any_order_and_on_any_number_of_workers(demo):
    one = analyze(demo, deep=True, jobs=1, use_cache=False)
    two = analyze(demo, deep=True, jobs=2, use_cache=False)
    backwards = merge(list(reversed(two.shards)))
    for a in (two, backwards):
        assert a.summary.to_json() == one.summary.to_json()
        for fi in range(len(demo)):
            assert sorted(map(str, a.problems(fi))) == sorted(map(str, one.problems(fi)))
    assert one.facts().equals(backwards.facts())


def test_duplicates_across_files_name_the_first_copy(tmp_path):
    from tfrview.demo import build_demo

    src = build_demo(tmp_path / "d")[0]
    copy = tmp_path / "d" / "copy.tfrecord"
    copy.write_bytes(src.read_bytes())
    a = analyze([str(src), str(copy)], deep=True, jobs=1, use_cache=False)
    dups = [p for p in a.problems(1) if p.kind == "duplicate_image"]
    assert len(dups) == a.shards[1].records and all(src.name in p.message for p in dups)
    assert not [p for p in a.problems(0) if p.kind == "duplicate_image"]


def test_results_are_remembered_until_the_file_changes(tmp_path):
    data, offs = framed(payloads(50))
    path = tmp_path / "f.tfrecord"
    path.write_bytes(data)
    task = ShardTask(str(path), 0, deep=True)
    first = analyze_shard(task)
    again = analyze_shard(task)
    assert not first.from_cache and again.from_cache
    assert np.array_equal(again.offsets, first.offsets) and again.records == 50
    assert again.deep.facts.equals(first.deep.facts) and again.analysed_at == first.analysed_at
    assert again.deep.summary.to_json() == first.deep.summary.to_json()
    bad = bytearray(data)
    bad[offs[7] + 20] ^= 1
    path.write_bytes(bytes(bad))  # same size; a new mtime
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 1_000_000))
    changed = analyze_shard(task)
    assert not changed.from_cache and changed.damaged == 1
    from tfrview.core.analysis.cache import analysis_dir, clear, load

    # never beside the data
    assert not list(tmp_path.glob("*.parquet")) and not list(tmp_path.glob(".partial*"))
    n, size = clear()
    assert (
        n >= 1 and size > 0 and load(task) is None and not [p for p in analysis_dir().iterdir() if p.is_dir()]
    )


def test_the_cache_is_trimmed_least_recently_used_first(tmp_path):
    from tfrview.core.analysis.cache import is_stored, trim, usage

    tasks = []
    for i in range(3):
        p = tmp_path / f"f{i}.tfrecord"
        p.write_bytes(framed(payloads(20 + i))[0])
        tasks.append(ShardTask(str(p), 0, deep=True))
        analyze_shard(tasks[-1])
    entries, size = usage()
    assert entries == 3
    trim(size - 1)
    assert usage()[0] == 2 and not is_stored(tasks[0]) and is_stored(tasks[2])


def test_fact_table_columns(demo):
    a = analyze(demo[:1], deep=True, jobs=1, use_cache=False)
    t = a.facts()
    assert {"n", "file", "record", "offset", "size", "crc", "kind", "image_width", "boxes"} <= set(
        t.column_names
    )
    # no images
    assert "image/encoded" in t.column_names and t.column("image/encoded").null_count == t.num_rows
    assert "image/object/class/text#len" in t.column_names
    assert t.column("image_width").to_pylist()[0] == 320
    assert t.column("crc").to_pylist().count("ok") == a.shards[0].records


def test_an_unreadable_file_is_an_error_not_a_crash(tmp_path):
    r = analyze_shard(ShardTask(str(tmp_path / "missing.tfrecord"), 0, deep=True))
    assert r.error and r.records == 0


def _marked_processes(mark: str) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                if f"TFRVIEW_TEST_MARK={mark}".encode() in f.read():
                    out.append(int(d))
        except OSError:
            continue
    return out


@pytest.mark.slow  # make test-slow (the suite stays under 5 min on 2 cores)
def test_a_killed_analysis_job_leaves_no_workers_behind(tmp_path, monkeypatch):
    """The window's Cancel kills the job process: its pool workers must end too, never read on
    alone or wait forever holding pipes (they did, before they armed a parent-death signal)."""
    import time
    import uuid

    from tfrview.core.procs.launch import read_lines, spawn
    from tfrview.core.procs.requests import AnalyzeRequest

    paths = []
    for i in range(6):
        p = tmp_path / f"s{i}.tfrecord"
        p.write_bytes(framed(payloads(30_000))[0])
        paths.append(str(p))
    mark = uuid.uuid4().hex
    monkeypatch.setenv("TFRVIEW_TEST_MARK", mark)
    proc = spawn(AnalyzeRequest(paths=tuple(paths), jobs=2))
    from tfrview.core.procs.messages import Progress

    for msg in read_lines(proc):
        if isinstance(msg, Progress) and msg.done > 0:
            break  # records decoded: the workers are busy
    assert len(_marked_processes(mark)) >= 2  # the job and its workers
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while _marked_processes(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _marked_processes(mark) == []


def test_the_filter_job_uses_stored_fact_tables(tmp_path, monkeypatch):
    """Once every file's analysis is stored, the window's filter job answers from the fact tables
    (array operations), with the same matches the record-by-record filter gives."""
    from dataclasses import replace

    from tfrview.core.procs import jobs
    from tfrview.core.procs.requests import FilterRequest

    data, _ = framed(payloads(40))
    paths = []
    for i in range(2):
        p = tmp_path / f"f{i}.tfrecord"
        p.write_bytes(data)
        paths.append(str(p))
    request = FilterRequest(
        expr="size > 25 and not problem",
        paths=tuple(paths),
        problems={"3": ["bad_data_crc"]},
        counts=(40, 40),
    )

    def run_job() -> list[int]:
        got = []
        monkeypatch.setattr(jobs, "_emit", lambda msg: got.extend(getattr(msg, "matches", ())))
        jobs.job_filter(request)
        return got

    slow = run_job()  # nothing stored yet: record by record
    analyze(paths, deep=True, jobs=1)
    import tfrview.core.analysis.filterexpr as fx

    monkeypatch.setattr(fx, "compile_filter", lambda node: pytest.fail("read the records"))
    fast = run_job()
    assert fast == slow and 3 not in fast and len(fast) > 10
    request = replace(request, counts=(41, 40))  # the window frames differently: the facts are not used
    with pytest.raises(pytest.fail.Exception):
        run_job()


def test_a_big_file_is_analysed_in_parts_with_the_same_answer(tmp_path, monkeypatch, demo):
    """The deep pass over one big file is split by record ranges (every core works on it); joined,
    the parts answer exactly as one pass over the whole file."""
    import tfrview.core.analysis.shard as shard_mod

    path = tmp_path / "big.tfrecord"
    path.write_bytes(b"".join(Path(p).read_bytes() for p in demo))  # two demo shards, one file
    whole = analyze([str(path)], deep=True, jobs=1, use_cache=False)
    monkeypatch.setattr(shard_mod, "PART_BYTES", path.stat().st_size // 3)
    tasks = shard_mod.plan([str(path)], True)
    assert [t.parts for t in tasks] == [3, 3, 3]
    split = analyze([str(path)], deep=True, jobs=2, use_cache=False)
    assert sorted(map(str, split.problems(0))) == sorted(map(str, whole.problems(0)))
    assert split.summary.to_json() == whole.summary.to_json()
    a, b = split.facts(), whole.facts()
    assert a.column_names == b.column_names
    for name in a.column_names:  # same values (a part's dictionary of kinds may be its own)
        assert a.column(name).to_pylist() == b.column(name).to_pylist(), name
    assert split.shards[0].records == whole.shards[0].records
