"""Naming causes costs what the damage is, not what its count times the file is: a record cut
short reads ahead only while the bytes stay zeros (item 3 of issues 25.3/26.2: once each of
thousands read 16 MB)."""

from __future__ import annotations

import random

from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.tfrecord.forensics import name_causes
from tfrview.core.tfrecord.framing import encode_header, encode_record
from tfrview.core.tfrecord.source import Source, source_from_bytes

ZEROS = "the rest of the file is zeros"


class _Counted:
    """A real in-memory source whose reads are added up."""

    def __init__(self, src: Source) -> None:
        self.src, self.bytes_read = src, 0

    def read(self, offset: int, n: int) -> bytes:
        got = self.src.read(offset, n)
        self.bytes_read += len(got)
        return got

    def __getattr__(self, name: str):
        return getattr(self.src, name)


def _cut(offset: int, length: int) -> Problem:
    return Problem(ProblemKind.TRUNCATED, offset, length, None, f"truncated record at {offset}")


def test_a_copy_cut_short_with_zeros_after_is_named_and_a_nonzero_end_is_not():
    good = encode_record(b"x" * 100)
    zeros = good + encode_header(50_000) + bytes(30_001)  # not a round size
    src = source_from_bytes(zeros)
    [p] = name_causes(src, [_cut(len(good), len(zeros) - len(good))], [0], [100])
    assert p.cause.startswith(ZEROS)
    ends = zeros[:-1] + b"\x01"  # one byte that is not zero, at the very end
    [p] = name_causes(source_from_bytes(ends), [_cut(len(good), len(ends) - len(good))], [0], [100])
    assert p.cause == ""


def test_thousands_of_records_cut_short_read_a_few_kb_each():
    rnd = random.Random(4)
    data, cuts = bytearray(), []
    for _ in range(2000):
        cuts.append(_cut(len(data), 52))
        data += encode_header(1000) + rnd.randbytes(40)
        bad = bytearray(encode_record(rnd.randbytes(300)))
        bad[50] ^= 0xFF  # the record after it is damaged too: no 'two files joined'
        data += bad
    src = _Counted(source_from_bytes(bytes(data)))
    got = name_causes(src, cuts, [], [])
    assert [p.cause for p in got] == [""] * 2000
    assert src.bytes_read < 16 * len(data)  # each read 16 MB or to the end: ~1,000 times the file


def test_the_bytes_searched_for_flipped_bits_are_bounded_a_file():
    """64 damaged records of up to 16 MB each were up to 1 GiB searched (~0.5 s a MB): once
    CAUSE_SEARCH_BYTES are searched, the next damaged record says the limit, the rest are left alone."""
    from tfrview.core.limits import CAUSE_SEARCH_BYTES

    rnd = random.Random(5)
    size = CAUSE_SEARCH_BYTES * 3 // 8  # the third crosses the limit, and is searched; not the fourth
    recs = [bytearray(encode_record(rnd.randbytes(size))) for _ in range(5)]
    offs = [sum(len(r) for r in recs[:i]) for i in range(5)]
    for r in recs:
        r[100] ^= 0x04  # one flipped bit each: a cause, when searched
    src = source_from_bytes(b"".join(bytes(r) for r in recs))
    bad = [Problem(ProblemKind.BAD_DATA_CRC, o, size + 16, k, f"record {k}") for k, o in enumerate(offs)]
    got = [p.cause for p in name_causes(src, bad, offs, [size] * 5)]
    assert all(c.startswith("one flipped bit (data byte 88, bit 2)") for c in got[:3]), got[:3]
    assert "limits.CAUSE_SEARCH_BYTES" in got[3] and got[4] == ""
