"""Fuzzing the framing and compression layers in-process: no exception escapes, time is bounded,
messages are one line, nothing is fabricated, and every record no damage touched is found."""

from __future__ import annotations

import time

from hypothesis import given

from tests.fuzz.reference import record_at
from tests.fuzz.strategies import FUZZ, compressed_files, damaged_files, inflatable_prefix
from tfrview.core.tfrecord.index import DAMAGED, VERIFIED
from tfrview.core.tfrecord.report import index_and_verify
from tfrview.core.tfrecord.source import source_from_bytes


def _intact(src, idx) -> dict[int, bytes]:
    out = {}
    for k in range(idx.count):
        if (int(idx.status[k]) & (VERIFIED | DAMAGED)) == VERIFIED:
            o, n = int(idx.offsets[k]), int(idx.lengths[k])
            out[o] = src.read(o + 12, n)
    return out


def _one_line(problems) -> None:
    for p in problems:
        assert p.message.isprintable() and "\n" not in p.message, p.message


@FUZZ
@given(damaged_files())
def test_damaged_plain_files_lose_no_untouched_record(case):
    src = source_from_bytes(case.data)
    if case.intact:  # (a file of nothing but a GZIP magic may well be called GZIP)
        assert src.compression == "none", f"a plain file taken for {src.compression}: {case.ops}"
    t0 = time.monotonic()
    idx, data_problems = index_and_verify(src)
    assert time.monotonic() - t0 < 20
    _one_line(list(idx.problems) + data_problems)
    found = _intact(src, idx)
    for o, payload in found.items():  # nothing fabricated: the reference agrees it is a whole record
        assert record_at(case.data, o) == payload, f"record at {o} is not a whole record ({case.ops})"
    for o, payload in case.intact:
        assert found.get(o) == payload, f"lost the untouched record at {o} ({len(payload)} bytes; {case.ops})"


@FUZZ
@given(compressed_files())
def test_damaged_compressed_files_keep_everything_before_the_damage(case):
    src = source_from_bytes(case.data)
    idx, data_problems = index_and_verify(src)
    _one_line(list(idx.problems) + data_problems)
    prefix = inflatable_prefix(case.data, case.wbits)
    good = 0  # how much of what inflates is still the stream as written
    while good < min(len(prefix), len(case.plain)) and prefix[good] == case.plain[good]:
        good += 1
    found = _intact(src, idx)
    stream = case.data if src.compression == "none" else prefix  # a broken magic: read as plain bytes
    for o, payload in found.items():
        assert record_at(stream, o) == payload, f"record at {o} is not what is there ({case.ops})"
    recoverable = [(o, p) for o, p in case.records if o + len(p) + 16 <= good]
    if src.compression == "none":  # read as plain (say a stored block holds them verbatim): no fewer
        assert len(found) >= len(recoverable), f"a compressed file read as plain lost records ({case.ops})"
        return
    for o, payload in recoverable:
        assert found.get(o) == payload, f"lost the record at {o} before the damage ({case.ops})"
