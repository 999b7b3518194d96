"""One big plain file framed and CRC-checked in parts (`tfrecord.parts`): whatever the damage and
wherever the parts are cut, the numbering, statuses and problems are those of one core."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from tests.fuzz.strategies import FUZZ, damaged_files, frame, header
from tfrview.core import childproc, limits
from tfrview.core.tfrecord import parts as P
from tfrview.core.tfrecord.index import BAD_DATA_CRC, VERIFIED
from tfrview.core.tfrecord.report import index_and_verify, joined_parts, sort_problems
from tfrview.core.tfrecord.source import open_source, source_from_bytes


def _same(a, b) -> None:
    (ia, fa), (ib, fb) = a, b
    assert (ia.count, ia.scanned, ia.done) == (ib.count, ib.scanned, ib.done)
    assert np.array_equal(ia.offsets, ib.offsets)
    assert np.array_equal(ia.lengths, ib.lengths)
    assert np.array_equal(ia.status, ib.status)
    assert sort_problems(list(ia.problems) + fa) == sort_problems(list(ib.problems) + fb)


def _in_parts(src, cuts: list[int], window: int):
    size = src.file_size
    at = sorted({c % size for c in cuts if c % size} | {0, size}) if size else [0, 0]
    old = P._WINDOW
    P._WINDOW = window
    try:
        return [P.frame_range(src, lo, hi) for lo, hi in pairwise(at)]
    finally:
        P._WINDOW = old


@FUZZ
@given(
    damaged_files(), st.lists(st.integers(1, 1 << 20), max_size=6), st.sampled_from([16, 40, 200, 1 << 20])
)
def test_parts_frame_as_one_core_does(case, cuts, window):
    """Flipped bytes, zeroed runs, cuts, junk and fake headers inserted, records holding valid-looking
    headers, overstated lengths; parts of a few bytes and windows smaller than a record."""
    src = source_from_bytes(case.data)
    assume(src.compression == "none" and src.file_size)
    parts = _in_parts(src, cuts, window)
    _same(joined_parts(src, parts), index_and_verify(src))


def _records(n: int, seed: int = 0) -> list[bytes]:
    rnd = np.random.default_rng(seed)
    return [frame(rnd.bytes(int(k))) for k in rnd.integers(0, 300, n)]


def test_a_clean_file_is_joined_whole_and_late_damage_keeps_the_parts_before_it():
    recs = _records(400)
    data = b"".join(recs)
    src = source_from_bytes(data)
    parts = _in_parts(src, [len(data) // 3, 2 * len(data) // 3], 1000)
    prefix, start, whole = P.clean_prefix(parts, len(data))
    assert whole and start == len(data) and prefix.count == 400
    assert (prefix.status == VERIFIED).all()
    _same(joined_parts(src, parts), index_and_verify(src))

    bad = bytearray(data)
    at = sum(map(len, recs[:350])) + 20  # inside record 350's data
    bad[at] ^= 0x40
    src = source_from_bytes(bytes(bad))
    parts = _in_parts(src, [len(data) // 3, 2 * len(data) // 3], 1000)
    prefix, start, whole = P.clean_prefix(parts, len(data))
    assert not whole and prefix.count == 350 - P._MARGIN and start == sum(map(len, recs[: 350 - P._MARGIN]))
    idx, found = joined_parts(src, parts)
    _same((idx, found), index_and_verify(src))
    assert idx.count == 400 and idx.status[350] & BAD_DATA_CRC and [p.record for p in found] == [350]


def test_a_false_sync_inside_a_record_is_dropped_where_the_true_framing_meets_it():
    """A part that starts inside a record whose payload is itself framing (valid headers and CRCs)
    frames the inner records; the join takes its records only from the true boundary on."""
    inner = b"".join(frame(b"x" * 30) for _ in range(20))
    recs = _records(50, 1) + [frame(inner)] + _records(50, 2)
    data = b"".join(recs)
    src = source_from_bytes(data)
    cut = sum(map(len, recs[:50])) + 12 + 5  # just inside the outer record's payload
    parts = _in_parts(src, [cut], 1 << 20)
    assert parts[1].start > cut - 5 and parts[1].start != sum(map(len, recs[:51]))  # a false sync
    _same(joined_parts(src, parts), index_and_verify(src))
    assert joined_parts(src, parts)[0].count == 101


def test_a_record_longer_than_a_range_spans_it():
    recs = _records(5, 3) + [frame(bytes(range(256)) * 40)] + _records(5, 4)
    data = b"".join(recs)
    src = source_from_bytes(data)
    mid = sum(map(len, recs[:5]))
    parts = _in_parts(src, [mid + 100, mid + 2000, mid + 5000], 64)
    prefix, start, whole = P.clean_prefix(parts, len(data))
    assert whole and prefix.count == 11 and int(prefix.lengths[5]) == 10240
    _same(joined_parts(src, parts), index_and_verify(src))


def test_jobs_frame_a_file_on_disk_in_child_processes(tmp_path, monkeypatch):
    """The real thing: ranges in spawned processes, damage (a header rewritten to claim more, junk)
    in the second half; the answer is one core's."""
    recs = _records(3000, 5)
    data = bytearray(b"".join(recs))
    at = sum(map(len, recs[:2000]))
    data[at : at + 12] = header(len(recs[2000]) - 16 + 50)
    data[at + 4000 : at + 4000] = b"junk" * 9
    path = tmp_path / "big.tfrecord"
    path.write_bytes(bytes(data))
    monkeypatch.setattr(limits, "FRAME_PARTS_BYTES", 1)
    monkeypatch.setattr(limits, "FRAME_PART_MIN_BYTES", 1)
    src = open_source(path)
    try:
        assert P.worth_splitting(src, 3)
        parts = P.frame_in_parts(src, 3)
        chunk, n = childproc.chunk_plan(src.file_size, 3)
        assert parts is not None and [p.lo for p in parts] == [k * chunk for k in range(n)] and n >= 6
        assert parts[0].clean and sum(len(p.offsets) for p in parts) > 2000
        got = index_and_verify(src, jobs=3)
        _same(got, index_and_verify(src))
        kinds = sorted(str(p.kind) for p in list(got[0].problems) + got[1])
        assert kinds and got[0].count > 2990
    finally:
        src.close()


def test_holes_and_a_damaged_start_are_never_read_by_the_parts(tmp_path, monkeypatch):
    """A sparse hole inside a file: a part that starts in it skips it by SEEK_DATA (a 2 GiB sparse
    file of zeros took 20 s of reading in parts, 0.5 s on one core). A file whose first header is
    bad is the sequential framing's, not split. Both answer as one core does."""
    monkeypatch.setattr(limits, "FRAME_PARTS_BYTES", 1)
    monkeypatch.setattr(limits, "FRAME_PART_MIN_BYTES", 1)
    data = b"".join(_records(2000, 7))
    holey = tmp_path / "holey.tfrecord"
    with open(holey, "wb") as fh:
        fh.write(data)
        fh.seek(len(data) + (64 << 20))  # a 64 MB hole: most of the parts' ranges
        fh.write(data)
    zeros = tmp_path / "zeros.tfrecord"
    with open(zeros, "wb") as fh:
        fh.truncate(8 << 20)
    for path in (holey, zeros):
        with open_source(path) as src:
            got = index_and_verify(src, jobs=3)
            _same(got, index_and_verify(src))
    with open_source(holey) as src:
        reads: list[int] = []
        real_span = src.span
        monkeypatch.setattr(src, "span", lambda o, n, buf=None: (reads.append(n), real_span(o, n, buf))[1])
        lo = (len(data) // 4096 + 1) * 4096  # past the page the data ends in: the hole's first
        assert P._first_header(src, lo, lo + (32 << 20), bytearray()) == -1
        assert reads == []  # the hole was never read
    kinds = [(str(p.kind), p.offset, p.length) for p in got[0].problems]
    assert got[0].count == 0 and kinds == [("not_tfrecord", 0, 8 << 20)]


def test_the_window_s_verify_process_sends_the_parts_agreed_records_then_checks_the_rest(
    tmp_path, monkeypatch
):
    """scanproc's verify mode: what it streams, applied to the window's own index (a plain scan),
    marks the same records verified and damaged as a verify pass on one core."""
    import io

    from tfrview.core.procs.scanproc import _verify_all, read_frames
    from tfrview.core.tfrecord.index import RecordIndex, scan, verify

    recs = _records(3000, 6)
    data = bytearray(b"".join(recs))
    at = sum(map(len, recs[:2500])) + 14
    data[at] ^= 1  # record 2500's data
    path = tmp_path / "big.tfrecord"
    path.write_bytes(bytes(data))
    monkeypatch.setattr(limits, "FRAME_PARTS_BYTES", 1)
    monkeypatch.setattr(limits, "FRAME_PART_MIN_BYTES", 1)
    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: {0, 1, 2}, raising=False)

    def plain_index(src) -> RecordIndex:
        idx = RecordIndex()
        for c in scan(src):
            idx.apply(c)
        return idx

    out = io.BytesIO()
    assert _verify_all(open_source(path), out) == 0
    src = open_source(path)
    mine, ref = plain_index(src), plain_index(src)
    frames = list(read_frames(io.BytesIO(out.getvalue())))
    for vc in frames:
        mine.apply_verify(vc)
    problems = [p for vc in verify(src, ref) for p in vc.problems]
    src.close()
    assert frames[0].start == 0 and frames[0].stop >= 2000  # the parts' records, sent at once
    assert np.array_equal(mine.status, ref.status) and mine.count == 3000
    assert [p.record for p in mine.problems] == [p.record for p in problems] == [2500]


def test_cli_verify_of_one_big_file_frames_it_in_parts_and_says_what_one_core_says(
    tmp_path, monkeypatch, capsys
):
    import json

    from tfrview.cli import main

    recs = _records(4000, 7)
    data = bytearray(b"".join(recs))
    at = sum(map(len, recs[:3000]))
    data[at + 3 : at + 40] = bytes(37)  # record 3000's header and first data bytes zeroed
    path = tmp_path / "big.tfrecord"
    path.write_bytes(bytes(data))
    monkeypatch.setattr(limits, "FRAME_PARTS_BYTES", 1)
    monkeypatch.setattr(limits, "FRAME_PART_MIN_BYTES", 1)
    calls = []
    real = P.frame_in_parts
    monkeypatch.setattr(
        P, "frame_in_parts", lambda src, jobs, progress=None: calls.append(jobs) or real(src, jobs)
    )
    docs = []
    for jobs in ("2", "1"):
        assert main(["verify", "--json", "-j", jobs, str(path)]) == 1
        docs.append(json.loads(capsys.readouterr().out))
    assert calls == [2]  # only the run on two cores split the file
    assert docs[0] == docs[1]
    entry = docs[0]["files"][0]
    assert entry["records"] == 3999 and entry["damaged_records"] == 1
    assert {p["record"] for p in entry["problems"]} == {3000}


def test_part_processes_started_ahead_frame_chunks_and_idle_ones_end(tmp_path, monkeypatch):
    """`verify` of one big plain file starts its part processes before its parser and plan
    (cli._prestart_parts), each given the file and the token pipe of its chunks at once, so they
    frame while it imports and it takes what chunks are left; the answer is one core's, damage
    included. One started without a path waits for one, and ends when its stdin closes; ones given
    another file, or that nothing took, are killed."""
    from tfrview import cli

    recs = _records(3000, 7)
    data = bytearray(b"".join(recs))
    at = sum(map(len, recs[:2600])) + 14
    data[at] ^= 1  # record 2600's data
    path = tmp_path / "big.tfrecord"
    path.write_bytes(bytes(data))
    (tmp_path / "gz.tfrecord").write_bytes(b"\x1f\x8b" + bytes(60))
    monkeypatch.setattr(limits, "FRAME_PARTS_BYTES", 1)
    monkeypatch.setattr(limits, "FRAME_PART_MIN_BYTES", 1)
    cli._prestart(["verify", "--checks", str(path), "-j", "3"])
    cli._prestart(["verify", str(tmp_path / "gz.tfrecord"), "-j", "3"])
    ahead = childproc.started_ahead(P.__name__)
    assert ahead == []  # a deep pass, a file that is no plain TFRecord: none
    cli._prestart(["verify", "--quiet", str(path), "-j", "3"])
    started = list(ahead)
    assert len(started) == 2 and {p.part[:2] for p in started} == {(str(path), len(data))}
    import time

    time.sleep(1.0)  # they take chunks before this process does
    src = open_source(path)
    try:
        got = index_and_verify(src, jobs=3)
        assert ahead == [] and all(p.returncode == 0 for p in started)
        _same(got, index_and_verify(src))
        assert got[0].count == 3000 and int(got[0].status[2600]) == VERIFIED | BAD_DATA_CRC
        assert int((got[0].status == VERIFIED).sum()) == 2999
    finally:
        src.close()
    idle = P.prestart(len(data), 2)
    assert idle == 1
    proc = ahead.pop()
    proc.stdin.close()  # what the caller's exit does
    assert proc.wait(timeout=30) == 0 and proc.stdout.read() == b""
    proc.stdout.close()
    childproc.close_tokens([proc])
    other = tmp_path / "other.tfrecord"
    other.write_bytes(bytes(data))
    cli._prestart(["verify", "--quiet", str(other), "-j", "2"])  # given another file
    wrong = list(ahead)
    src = open_source(path)
    try:
        got = index_and_verify(src, jobs=2)  # frames with its own processes; the others killed
        assert ahead == [] and all(p.returncode is not None for p in wrong)
        _same(got, index_and_verify(src))
    finally:
        src.close()
    P.prestart(len(data), 2)  # waiting for a path: given this file's when it is framed
    waiting = list(ahead)
    src = open_source(path)
    try:
        _same(index_and_verify(src, jobs=2), index_and_verify(src))
        assert ahead == [] and all(p.returncode == 0 for p in waiting)
    finally:
        src.close()
    cli._prestart(["verify", "--quiet", str(path), "-j", "2"])
    left = list(ahead)
    cli._drop_prestarted()  # nothing took them: killed, not left framing for nobody
    assert ahead == [] and all(p.returncode is not None for p in left)


def test_verify_of_a_folder_starts_its_worker_before_parsing_and_the_pass_takes_it(tmp_path):
    """The worker starts before the parser (cli._prestart): a process on pipes (groupproc), not a
    multiprocessing pool, at the command's priority; the pass runs on it, with the answer one
    process gives. --checks starts a pool instead (the command takes no deep group)."""
    import os
    from dataclasses import replace

    from tfrview import cli
    from tfrview.core.analysis import early
    from tfrview.core.analysis.pool import run_tasks
    from tfrview.core.analysis.shard import plan

    for i in range(6):
        (tmp_path / f"s-{i:05d}-of-00006.tfrecord").write_bytes(b"".join(_records(50, 3 + i)))
    cli._prestart(["verify", "-j", "1", str(tmp_path)])
    assert early._EARLY == []  # one worker: nothing to start ahead
    cli._prestart(["verify", "--jobs=2", str(tmp_path)])
    assert [(n, share, len(w)) for n, share, w in early._EARLY] == [(1, True, 1)]  # this process is the other
    proc = early._EARLY[0][2][0].proc
    # the command waits for its worker (it frames beside it): at the command's priority, not lowered
    assert os.getpriority(os.PRIO_PROCESS, proc.pid) == os.nice(0)
    paths = sorted(str(p) for p in tmp_path.iterdir())
    tasks = [replace(t, read_cache=False, write_cache=False) for t in plan(paths, False, None)]
    got = sorted((r.file_no, r.records, r.damaged) for r in run_tasks(tasks, 2, share=True))
    assert early._EARLY == [] and proc.wait(timeout=10) == 0  # taken by the pass, and ended by it
    one = sorted((r.file_no, r.records, r.damaged) for r in run_tasks(tasks, 1))
    assert got == one and [n for _, n, _ in got] == [50] * 6
    from tfrview.core.childproc import worker_start

    early.start_early(1, share=False)  # --checks: a pool of as many workers as jobs, not lowered either
    assert [(n, share) for n, share, _ in early._EARLY] == [(1, False)]
    pool = early._EARLY[0][2]
    assert pool._initializer is worker_start and pool._initargs == (os.getpid(), False)  # lower=False
    early.drop_early()
    from tfrview.core.analysis.progress import initializer

    # a pool pool._pool starts is lowered: the window's own process starts them too (its scan's pool)
    assert initializer(None, None) == (worker_start, (os.getpid(),))


def test_a_shared_pass_whose_worker_dies_frames_its_groups_here(tmp_path, caplog):
    """A group worker killed mid-pass: the groups it held are framed by the command's process, the
    log says why, and every file has its one result."""
    import logging
    import signal
    from dataclasses import replace

    from tfrview.core.analysis.groupproc import GroupWorker, run_shared
    from tfrview.core.analysis.shard import plan

    for i in range(8):
        (tmp_path / f"s-{i:05d}-of-00008.tfrecord").write_bytes(b"".join(_records(40, 3 + i)))
    paths = sorted(str(p) for p in tmp_path.iterdir())
    tasks = [replace(t, read_cache=False, write_cache=False) for t in plan(paths, False, None)]
    worker = GroupWorker()
    worker.proc.send_signal(signal.SIGKILL)
    with caplog.at_level(logging.WARNING, logger="tfrview.core.analysis.groupproc"):
        got = list(run_shared([worker], [[t] for t in tasks], lambda: False))
    assert sorted(r.file_no for r in got) == list(range(8)) and all(r.records == 40 for r in got)
    assert any("group worker" in m and "signal 9" in m for m in caplog.messages), caplog.messages


def _stop_and_continue(proc) -> None:
    """A worker left to fill its pipe, then stopped and continued three times mid-write (Ctrl-Z
    then fg, a profiler's pauses)."""
    import signal
    import time

    time.sleep(0.6)  # its work done; blocked writing into the full pipe
    for _ in range(3):
        proc.send_signal(signal.SIGSTOP)
        time.sleep(0.02)
        proc.send_signal(signal.SIGCONT)
        time.sleep(0.02)


def test_a_part_process_stopped_and_continued_while_it_answers_still_sends_every_offset(
    tmp_path, caplog, monkeypatch
):
    """Ctrl-Z then fg, or a profiler (py-spy) pausing it: a part process stopped while it writes its
    answer (megabytes of offsets into a full pipe) still sends all of it. Through sys.stdout.buffer
    it lost all but the first pipeful and exited 0, and the file was framed on one core."""
    recs = [frame(bytes(4))] * 60_000  # 1.2 MB of 20-byte records: 480 KB of offsets, many pipefuls
    path = tmp_path / "many.tfrecord"
    path.write_bytes(b"".join(recs))
    monkeypatch.setattr(limits, "FRAME_PART_MIN_BYTES", 1)
    src = open_source(path)
    procs, fd, chunk = P._crew(src, 2)  # one process; this one takes no chunk: it frames them all
    (proc,) = procs
    try:
        _stop_and_continue(proc)
        got = P._answer(proc, path.stat().st_ino)
    finally:
        P._end(procs)
        src.close()
    assert got is not None and [p.lo for p in got] == list(range(0, len(recs) * 20, chunk))
    offsets, end, whole = P.join(got, len(recs) * 20)
    assert whole and np.array_equal(offsets, np.arange(60_000, dtype=np.uint64) * 20)
    assert "failed" not in caplog.text


def test_the_window_s_scan_process_stopped_and_continued_while_it_streams_sends_every_frame(tmp_path):
    """The same for the window's scan process (`procs.scanproc`): stopped and continued while its
    index frames fill the pipe, it sends every frame whole. Through sys.stdout.buffer the stream lost
    bytes and the window read garbage where the next frame should begin."""
    from tfrview.core.procs import scanproc

    path = tmp_path / "many.tfrecord"
    path.write_bytes(frame(bytes(4)) * 100_000)  # 1.7 MB of index frames: many pipefuls
    proc = scanproc.spawn(str(path), "index")
    try:
        _stop_and_continue(proc)
        chunks = list(scanproc.read_frames(proc.stdout))
    finally:
        proc.kill()
        proc.wait()
    offsets = np.concatenate([c.offsets for c in chunks])
    assert np.array_equal(offsets, np.arange(100_000, dtype=np.uint64) * 20) and chunks[-1].done


def test_chunks_are_sized_to_the_file_s_long_records():
    """Each chunk's first header is searched for byte by byte, so a file of long records gets long
    chunks (`childproc.record_scale` of its first records, `chunk_plan`); small records keep
    FRAME_CHUNK_BYTES; at least two chunks a worker, never more tokens than a pipe holds."""
    data = b"".join(frame(bytes(n)) for n in (10, 300_000, 20, 5))
    read = lambda at, k: data[at : at + k]  # noqa: E731
    assert childproc.record_scale(read, len(data)) == 300_000
    assert childproc.record_scale(read, len(data), records=1) == 10
    assert childproc.record_scale(lambda at, k: b"", 0) == 0
    assert childproc.record_scale(read, 100) == 10  # a length past the file's end: not a record
    small = childproc.chunk_plan(1 << 30, 2, 100)
    assert small == (limits.FRAME_CHUNK_BYTES, (1 << 30) // limits.FRAME_CHUNK_BYTES)
    chunk, n = childproc.chunk_plan(1 << 30, 2, 300_000)
    assert n == -(-(1 << 30) // (512 * 300_000)) >= 4 and chunk * n >= 1 << 30 and chunk > 100 << 20
    assert childproc.chunk_plan(1 << 30, 8, 5_000_000)[1] == 16  # two a worker
    assert childproc.chunk_plan(1 << 50, 2, 100)[1] <= 4096


# --- the chain of lengths guessed where it repeats (window._chain) --------------------------------


def _loop_chain(data: bytes, stop: int) -> tuple[list[int], int]:
    """The chain of starts as the lean loop alone follows it: the reference."""
    out, p = [], 0
    while p <= stop:
        out.append(p)
        p += int.from_bytes(data[p : p + 8], "little") + 16
    return out, p


def _chain(data: bytes, stop: int) -> tuple[list[int], int]:
    from tfrview.core.tfrecord.window import _chain

    starts, p = _chain(memoryview(data), np.frombuffer(data, np.uint8), stop)
    return starts.tolist(), p


def _repeating(lengths: list[int], n: int) -> list[bytes]:
    return [frame(bytes([i % 251]) * lengths[i % len(lengths)]) for i in range(n)]


@FUZZ
@given(
    st.lists(st.integers(0, 120), min_size=1, max_size=40),
    st.integers(1, 3000),
    st.lists(st.tuples(st.floats(0, 1), st.sampled_from(["flip", "length", "big", "zero"])), max_size=4),
    st.floats(0.05, 1.0),
)
def test_a_guessed_chain_is_the_loop_s_chain(pattern, n, damage, where):
    """Lengths that repeat a pattern (one length, a few in turn, up to 40 long), broken by flipped
    bytes, a header's length rewritten, a length over 32 bits, zeroed bytes; stopped anywhere
    (a chunk's end inside a run): the starts and the next start are the lean loop's, byte for byte."""
    data = bytearray(b"".join(_repeating(pattern, n)))
    for at, kind in damage:
        k = int(at * (len(data) - 16))
        if kind == "flip":
            data[k] ^= 0x10
        elif kind == "length":
            data[k : k + 8] = (int.from_bytes(data[k : k + 8], "little") + 4).to_bytes(8, "little")
        elif kind == "big":
            data[k : k + 8] = ((1 << 33) + 5).to_bytes(8, "little")
        else:
            data[k : k + 40] = bytes(len(data[k : k + 40]))
    data = bytes(data)
    stop = max(0, int(where * (len(data) - 12)))
    assert _chain(data, stop) == _loop_chain(data, stop)


def test_a_run_of_equal_lengths_broken_by_a_damaged_header_stops_there():
    """A clean run of one length, then a header whose length is another: the window frames up to it
    and says NOT_WHOLE there (its length CRC fails), as the loop would; a chunk's end inside a run
    stops at the first record at or past it."""
    from tfrview.core.tfrecord.window import MORE, NOT_WHOLE, frame_window

    recs = _repeating([50], 5000)
    data = bytearray(b"".join(recs))
    at = 66 * 3000
    data[at : at + 8] = (51).to_bytes(8, "little")  # record 3000 claims a byte more: its header CRC fails
    starts, p, why = frame_window(bytes(data), len(data), len(data), True)
    assert why == NOT_WHOLE and p == at and starts.tolist() == list(range(0, at, 66))
    clean = b"".join(recs)
    hi = 66 * 4000 + 7  # a chunk's end inside the run
    starts, p, why = frame_window(clean, len(clean), hi, False)
    assert why == MORE and p == 66 * 4001 and len(starts) == 4001


def test_a_file_of_repeating_lengths_framed_in_parts_is_what_one_core_says():
    """Chunk ends inside runs, a flipped data byte late and a header rewritten inside a long run:
    parts framed with the guessed chain join to one core's answer."""
    recs = _repeating([81, 85, 89, 93, 97, 81], 6000)
    data = bytearray(b"".join(recs))
    src = source_from_bytes(bytes(data))
    cuts = [len(data) // 3 + 5, 2 * len(data) // 3 - 7]
    prefix, start, whole = P.clean_prefix(_in_parts(src, cuts, 100_000), len(data))
    assert whole and prefix.count == 6000
    data[sum(map(len, recs[:4500])) + 30] ^= 1
    at = sum(map(len, recs[:1234]))
    data[at : at + 8] = (70).to_bytes(8, "little")
    src = source_from_bytes(bytes(data))
    _same(joined_parts(src, _in_parts(src, cuts, 100_000)), index_and_verify(src))


def test_a_window_s_distinct_lengths_are_np_unique_s():
    """`framing.distinct_lengths` (a table of small lengths, np.unique for long ones) answers as np.unique."""
    from tfrview.core.tfrecord.framing import distinct_lengths as _distinct

    rng = np.random.default_rng(0)
    for lengths in (
        [5],
        [0, 0, 0],
        rng.integers(0, 300, 1000),
        rng.integers(0, 1 << 20, 1000),
        rng.integers(0, 4096, 2000),  # the table
        rng.integers(20_000, 40_000, 100),  # few long records: np.unique
        np.full(4096, 65535),
        [65535, 0],
        [1 << 16, 1],
    ):
        lengths = np.asarray(lengths, np.int64)
        (u, i), (nu, ni) = _distinct(lengths), np.unique(lengths, return_inverse=True)
        assert np.array_equal(u, nu) and np.array_equal(i, ni) and np.array_equal(u[i], lengths)
