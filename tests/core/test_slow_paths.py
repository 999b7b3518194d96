"""Inputs that were slow without saying so (issue 25.6): runs of zeros, sparse or on disk, are
skipped in big strides, and a GZIP file of one member per byte is inflated without a 256 KB read
and copy per member. These tests check the answers; the speed is measured by bench/bench_engine.py."""

from __future__ import annotations

import gzip
import json
import random

from tests.fuzz import hostile as H
from tests.helpers import framed, payloads, read_all
from tfrview.core.tfrecord.report import index_and_verify, index_source
from tfrview.core.tfrecord.source import open_source, source_from_bytes

GiB = 1 << 30


def _kinds(problems) -> list[tuple[str, int, int | None]]:
    return [(str(p.kind), p.offset, p.length) for p in problems]


def test_a_sparse_hole_between_records_is_one_unreadable_region(tmp_path):
    before, after = payloads(5), payloads(7, base=300)
    a, _ = framed(before)
    b, _ = framed(after)
    hole = 2 * GiB + 3  # odd: the next header is not aligned
    path = tmp_path / "holed.tfrecord"
    with open(path, "wb") as fh:  # sparse: a few KB on disk
        fh.write(a)
        fh.seek(len(a) + hole)
        fh.write(b)
    with open_source(path) as src:
        idx, data_problems = index_and_verify(src)
        assert data_problems == []
        assert _kinds(idx.problems) == [("unreadable_bytes", len(a), hole)]
        assert read_all(src, idx) == before + after


def test_zeros_on_disk_longer_than_a_stride_are_skipped_to_the_byte(tmp_path):
    before, after = payloads(3), payloads(4, base=90)
    a, _ = framed(before)
    b, _ = framed(after)
    for zeros in (9 << 20, (8 << 20) + 11, 5):  # past one 8 MB stride; a header 11 bytes past it; a few
        data = a + bytes(zeros) + b
        path = tmp_path / "zeroed.tfrecord"
        path.write_bytes(data)  # written zeros: no hole for SEEK_DATA to find
        for src in (open_source(path), source_from_bytes(data)):
            with src:
                idx, data_problems = index_and_verify(src)
                assert _kinds(idx.problems) == [("unreadable_bytes", len(a), zeros)] and data_problems == []
                assert read_all(src, idx) == before + after


def test_a_sparse_file_of_zeros_is_said_to_be_zeros_by_every_command(tmp_path):
    path = tmp_path / "zeros.tfrecord"
    with open(path, "wb") as fh:
        fh.truncate(2 * GiB)
    for command in (["verify", "--json"], ["verify", "--checks", "--json"]):
        code, out, err, _, _ = H.run_cli([*command, str(path)], timeout=120)
        (p,) = json.loads(out)["files"][0]["problems"]
        assert code == 1 and "Traceback" not in err, err
        assert (p["kind"], p["offset"], p["length"]) == ("not_tfrecord", 0, 2 * GiB)
        assert "all zero bytes" in p["message"]
    code, out, err, _, _ = H.run_cli(["info", str(path)], timeout=120)
    assert code == 0 and "records       0" in out and "all zero bytes" in out, err


def _per_byte(data: bytes) -> bytes:
    return b"".join(gzip.compress(bytes([c]), mtime=0) for c in data)


def test_a_gzip_member_per_byte_reads_every_record():
    pls = payloads(400, base=150)
    plain, offs = framed(pls)
    src = source_from_bytes(_per_byte(plain))
    assert src.compression == "gzip"
    idx, vp = index_and_verify(src)
    assert idx.count == 400 and not idx.problems and not vp
    assert read_all(src, idx) == pls
    order = list(range(400))
    random.Random(1).shuffle(order)
    again = source_from_bytes(_per_byte(plain))
    assert [again.read(offs[k] + 12, len(pls[k])) for k in order[:12]] == [pls[k] for k in order[:12]]
    jumps = source_from_bytes(_per_byte(plain))  # checkpoints by input too: 21 bytes in per byte out
    jumps.checkpoint_spacing = 64 << 10
    assert index_source(jumps).count == 400 and len(jumps._ckpts.items) >= len(plain) * 21 // (256 << 10)
    assert [jumps.read(offs[k] + 12, len(pls[k])) for k in order] == [pls[k] for k in order]


def test_tiny_members_around_a_big_one_and_a_damaged_trailer():
    """Pieces fed to zlib shrink to a few bytes for tiny members and grow back for a big one; a
    tiny member's damaged trailer is still said, at its place, and reading goes on."""
    rng = random.Random(2)
    pls = [rng.randbytes(rng.randint(10, 3000)) for _ in range(40)] + [rng.randbytes(700_000)] + payloads(30)
    plain, offs = framed(pls)
    cut = offs[40]  # the big record's header starts here
    big_end = offs[41]
    members = [_per_byte(plain[:cut]), gzip.compress(plain[cut:big_end], 6, mtime=0)]
    tail = bytearray(_per_byte(plain[big_end:]))
    tail[15 : 15 + 4] = b"\0\0\0\0"  # the CRC of the first member after the big one (one byte's)
    data = b"".join(members) + bytes(tail)
    src = source_from_bytes(data)
    idx, vp = index_and_verify(src)
    trailer = [p for p in idx.problems if p.kind == "decompression_error"]
    assert len(trailer) == 1 and "GZIP trailer" in trailer[0].message and trailer[0].offset == big_end + 1
    assert read_all(src, idx) == pls and not vp


def _on_a_terminal(args: list[str], interrupt_after: float | None = None) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal (its progress is for terminals): exit code and
    what reached the terminal. With `interrupt_after`, Ctrl-C (SIGINT) once the pass has begun (its
    first progress reached the terminal) and that many seconds have gone by: on a loaded machine
    the imports alone can outlast a fixed delay, and a Ctrl-C there is not what is tested."""
    import os
    import pty
    import select
    import signal
    import subprocess
    import sys
    import time

    master, slave = pty.openpty()
    p = subprocess.Popen(
        [sys.executable, "-m", "tfrview.cli", *args], stdout=subprocess.DEVNULL, stderr=slave
    )
    os.close(slave)
    said = b""
    due = None if interrupt_after is None else time.monotonic() + interrupt_after
    while True:
        if due is not None and said and time.monotonic() >= due:
            p.send_signal(signal.SIGINT)
            due = None
        if due is not None and not select.select([master], [], [], 0.05)[0]:
            continue
        try:
            got = os.read(master, 4096)
        except OSError:  # the child closed the terminal
            break
        if not got:
            break
        said += got
    os.close(master)
    return p.wait(timeout=60), said.decode("utf-8", "replace")


def test_a_long_pass_over_one_file_shows_progress_on_a_terminal(tmp_path):
    path = tmp_path / "many.tfrecord"
    path.write_bytes(framed(payloads(6000, base=2000))[0])  # 12 MB: chunks past the first 8 MB window
    code, said = _on_a_terminal(["info", str(path)])
    assert code == 0 and "Traceback" not in said
    steps = [s for s in said.split("\r") if s.startswith("reading: index: ")]
    assert steps and "%" in steps[0] and not steps[0].split("%")[0].endswith("100.0"), said


def test_ctrl_c_stops_a_gzip_of_a_member_per_byte_in_one_line(tmp_path):
    path = tmp_path / "perbyte.tfrecord.gz"
    path.write_bytes(_per_byte(framed(payloads(2000, base=200))[0]))  # ~9 MB, ~430,000 members
    code, said = _on_a_terminal(["verify", str(path)], interrupt_after=2.0)
    assert code == 130 and "Traceback" not in said, said
    lines = [line.split("\r")[-1] for line in said.replace("\r\n", "\n").replace("\x1b[K", "").split("\n")]
    assert [line for line in lines if line.strip()] == ["tfrview: interrupted"], said


def test_tiny_members_of_every_kind_read_as_a_careful_reader_reads_them():
    """Empty members, tiny ones, one longer than the pieces tiny ones are fed in, and damage in a
    tiny member's body: every record before the damage is read, none after it is invented."""
    rng = random.Random(4)
    pls = payloads(60, base=40)
    plain, offs = framed(pls)
    members, starts = [], []  # each member, and the stream position where its output starts
    for k in range(len(plain)):
        members.append(gzip.compress(plain[k : k + 1], mtime=0))
        starts.append(k)
        if rng.random() < 0.05:
            members.append(gzip.compress(b"", mtime=0))
            starts.append(k + 1)
    whole = b"".join(members)
    src = source_from_bytes(whole)
    idx, vp = index_and_verify(src)
    assert read_all(src, idx) == pls and not vp and not idx.problems
    bad = bytearray(whole)
    at = len(b"".join(members[:3000])) + 12  # inside member 3000's deflate data
    bad[at] ^= 0xFF
    src = source_from_bytes(bytes(bad))
    idx, vp = index_and_verify(src)
    good = starts[3000]  # what the members before the damaged one hold
    before = [k for k, (p, o) in enumerate(zip(pls, offs, strict=False)) if o + len(p) + 16 <= good]
    damaged = {p.record for p in vp}
    got = read_all(src, idx)
    assert len(before) > 10 and len(damaged) <= 1 and int(idx.offsets[before[-1]]) == offs[before[-1]]
    assert [got[k] for k in before if k not in damaged] == [pls[k] for k in before if k not in damaged]
    assert any(p.kind == "decompression_error" for p in idx.problems)
