"""Every kind of damage the issue lists: the exact problems reported and every intact record kept."""

import struct

from tests.helpers import framed, index_bytes, payloads, problem_tuples, read_all, statuses
from tfrview.core.tfrecord.framing import length_crc
from tfrview.core.tfrecord.index import BAD_DATA_CRC, BAD_LENGTH_CRC, VERIFIED

PL = payloads(10)
GOOD, OFF = framed(PL)


def damaged(fn) -> bytes:
    b = bytearray(GOOD)
    fn(b)
    return bytes(b)


def test_clean_file_all_records_verified():
    src, idx, vp = index_bytes(GOOD)
    assert idx.problems == [] and vp == []
    assert read_all(src, idx) == PL
    assert statuses(idx) == [VERIFIED] * 10
    assert [int(o) for o in idx.offsets] == OFF[:-1]


def test_flipped_data_byte():
    src, idx, vp = index_bytes(damaged(lambda b: b.__setitem__(OFF[3] + 14, b[OFF[3] + 14] ^ 1)))
    assert idx.problems == []
    assert problem_tuples(vp) == [("bad_data_crc", OFF[3] + 12, len(PL[3]) + 4, 3)]
    assert "corrupted record at" in vp[0].message
    assert statuses(idx)[3] == VERIFIED | BAD_DATA_CRC
    assert [r for i, r in enumerate(read_all(src, idx)) if i != 3] == PL[:3] + PL[4:]


def test_flipped_data_crc_footer():
    _, idx, vp = index_bytes(damaged(lambda b: b.__setitem__(OFF[4] - 1, b[OFF[4] - 1] ^ 0x80)))
    assert problem_tuples(vp) == [("bad_data_crc", OFF[3] + 12, len(PL[3]) + 4, 3)]
    assert idx.count == 10


def test_flipped_length_byte_record_still_framed():
    src, idx, vp = index_bytes(damaged(lambda b: b.__setitem__(OFF[5] + 1, b[OFF[5] + 1] ^ 4)))
    assert problem_tuples(idx.problems) == [("bad_length_crc", OFF[5], OFF[6] - OFF[5], 5)]
    assert vp == []  # its data CRC still matches
    assert read_all(src, idx) == PL
    assert statuses(idx)[5] == VERIFIED | BAD_LENGTH_CRC


def test_flipped_length_crc_byte():
    src, idx, _ = index_bytes(damaged(lambda b: b.__setitem__(OFF[0] + 9, b[OFF[0] + 9] ^ 1)))
    assert problem_tuples(idx.problems) == [("bad_length_crc", 0, OFF[1], 0)]
    assert read_all(src, idx) == PL


def test_zeroed_header_record_recovered_by_data_crc():
    src, idx, vp = index_bytes(damaged(lambda b: b.__setitem__(slice(OFF[2], OFF[2] + 12), bytes(12))))
    assert problem_tuples(idx.problems) == [("bad_length_crc", OFF[2], OFF[3] - OFF[2], 2)]
    assert read_all(src, idx) == PL and vp == []


def test_truncated_inside_header():
    src, idx, _ = index_bytes(GOOD[: OFF[9] + 5])
    assert problem_tuples(idx.problems) == [("truncated", OFF[9], 5, None)]
    assert read_all(src, idx) == PL[:9]


def test_truncated_inside_data():
    # Issue 18.3: a record cut short is a damaged row (its bytes as they stand), not a gap
    src, idx, vp = index_bytes(GOOD[: OFF[9] + 20])
    assert problem_tuples(idx.problems) == [("truncated", OFF[9], 20, 9)]
    assert "truncated record at" in idx.problems[0].message and "record 9, damaged" in idx.problems[0].message
    assert read_all(src, idx)[:9] == PL[:9] and idx.count == 10 and vp == []
    assert statuses(idx)[9] & BAD_DATA_CRC and int(idx.lengths[9]) == 4


def test_truncated_inside_footer():
    # Issue 18.3: record 9's data is all there (the 2 CRC bytes left agree with it): a record, unverified
    from tfrview.core.tfrecord.index import CRC_CUT

    src, idx, _ = index_bytes(GOOD[: OFF[10] - 2])
    assert problem_tuples(idx.problems) == [("truncated", OFF[9], OFF[10] - 2 - OFF[9], 9)]
    assert read_all(src, idx) == PL and statuses(idx)[9] == CRC_CUT


def test_zero_run_across_record_boundaries():
    a, z = OFF[3] + 5, OFF[5] + 7  # from inside record 3 to inside record 5
    src, idx, vp = index_bytes(damaged(lambda b: b.__setitem__(slice(a, z), bytes(z - a))))
    assert problem_tuples(idx.problems) == [("unreadable_bytes", OFF[3], OFF[6] - OFF[3], None)]
    assert read_all(src, idx) == PL[:3] + PL[6:]
    assert vp == []


def test_garbage_before_between_and_after():
    junk = b"\xde\xad\xbe\xef garbage \x00\x01"
    data = junk + GOOD[: OFF[4]] + junk + GOOD[OFF[4] :] + junk
    src, idx, vp = index_bytes(data)
    n = len(junk)
    assert problem_tuples(idx.problems) == [
        ("unreadable_bytes", 0, n, None),
        ("unreadable_bytes", n + OFF[4], n, None),
        ("trailing_bytes", 2 * n + OFF[10], n, None),
    ]
    assert read_all(src, idx) == PL and vp == []


def test_zero_padding_after_last_record():
    src, idx, _ = index_bytes(GOOD + bytes(7))
    assert problem_tuples(idx.problems) == [("trailing_bytes", OFF[10], 7, None)]
    assert read_all(src, idx) == PL


def test_huge_length_with_valid_crc_in_the_middle():
    # A length of 2^60 whose CRC is valid: never allocated; the record's intact data is still found.
    head = struct.pack("<QI", 2**60, length_crc(2**60))
    data = damaged(lambda b: b.__setitem__(slice(OFF[5], OFF[5] + 12), head))
    src, idx, vp = index_bytes(data)
    assert problem_tuples(idx.problems) == [("bad_length_crc", OFF[5], OFF[6] - OFF[5], 5)]
    assert read_all(src, idx) == PL and vp == []


def test_huge_length_with_valid_crc_at_the_end():
    head = struct.pack("<QI", 2**60, length_crc(2**60))
    data = GOOD + head + b"x" * 40
    src, idx, _ = index_bytes(data)
    assert problem_tuples(idx.problems) == [("truncated", OFF[10], 52, 10)]
    assert str(2**60) in idx.problems[0].message
    assert read_all(src, idx)[:10] == PL and statuses(idx)[10] & BAD_DATA_CRC


def test_truncated_record_followed_by_more_records():
    # A file cut inside record 4 with the rest of another copy appended.
    data = GOOD[: OFF[4] + 20] + GOOD[OFF[6] :]
    src, idx, vp = index_bytes(data)
    assert problem_tuples(idx.problems) == [("truncated", OFF[4], 20, 4)]  # record 4, framed short
    assert read_all(src, idx) == PL[:4] + [PL[4][:4]] + PL[6:] and vp == []
    assert [s & BAD_DATA_CRC != 0 for s in statuses(idx)] == [False] * 4 + [True] + [False] * 4


def test_empty_file_is_valid_and_empty():
    src, idx, vp = index_bytes(b"")
    assert idx.count == 0 and idx.problems == [] and vp == []


def test_only_garbage_is_not_a_tfrecord():
    _, idx, _ = index_bytes(b"hello, this is a text file\n" * 10)
    assert problem_tuples(idx.problems) == [("not_tfrecord", 0, 270, None)]
    assert "looks like text" in idx.problems[0].message


def test_records_of_zero_length():
    pls = [b"", b"a", b"", b""]
    data, _ = framed(pls)
    src, idx, vp = index_bytes(data)
    assert read_all(src, idx) == pls and idx.problems == [] and vp == []


def test_record_cut_short_just_before_a_small_last_record():
    # Found by the property test: the cut-short record's frame swallows the start of the last record,
    # leaving fewer than 12 bytes; the last record must still be found.
    pls = [b"\x00"] * 3 + [b"\x00\x00"] * 8 + [b"\x00"]
    data, offs = framed(pls)
    cut = data[: offs[10] + 12] + data[offs[11] :]  # record 10 loses its data and footer
    src, idx, _ = index_bytes(cut)
    assert read_all(src, idx) == pls[:10] + pls[11:]
    assert problem_tuples(idx.problems) == [("truncated", offs[10], 12, None)]


def test_cut_record_whose_remains_look_like_a_valid_record():
    # Found by the property test: record 1 (8 bytes) is cut so that record 2's header sits exactly on
    # its data. A header is byte for byte a valid 8-byte payload with its CRC, so record 1 "passes"
    # and record 2 would be lost; the framing that explains every byte wins.
    pls = [bytes(7), bytes(8), b"\x00"]
    data, offs = framed(pls)
    cut = data[: offs[1] + 12] + data[offs[2] :]
    src, idx, _ = index_bytes(cut)
    assert read_all(src, idx) == [pls[0], pls[2]]
    assert problem_tuples(idx.problems) == [("truncated", offs[1], 12, None)]


def test_resync_through_large_zero_and_garbage_regions():
    import os

    good, offs = framed(payloads(5))
    for junk in (bytes(3 << 20), os.urandom(3 << 20), b"\x01" * (3 << 20)):
        src, idx, _ = index_bytes(good + junk + good)
        assert read_all(src, idx) == payloads(5) * 2
        assert problem_tuples(idx.problems) == [("unreadable_bytes", offs[-1], len(junk), None)]


def test_zero_bytes_after_the_last_record_are_trailing_bytes_not_a_record():
    """16 zeros frame as a header of length 0 with 4 more zeros; they are no record (issue 9)."""
    from tests.helpers import framed, index_bytes, payloads

    data, _ = framed(payloads(50))
    for n in (16, 17, 40):
        src, idx, vprobs = index_bytes(data + bytes(n))
        assert idx.count == 50 and not vprobs
        (p,) = idx.problems
        assert p.kind == "trailing_bytes" and p.message.startswith(f"{n} zero bytes after the last record")


def test_a_damaged_gzip_trailer_costs_no_record_and_is_named():
    import gzip

    from tests.helpers import framed, index_bytes, payloads

    data, offs = framed(payloads(50))
    one = gzip.compress(data, mtime=0)
    for blob in (one[:-8] + bytes(4) + one[-4:], one[:-4] + bytes(4)):  # its CRC, then its size
        src, idx, vprobs = index_bytes(blob)
        assert idx.count == 50 and not vprobs and [p.kind for p in idx.problems] == ["decompression_error"]
        assert "GZIP trailer" in idx.problems[0].message
    a, b = gzip.compress(data[: offs[25]], mtime=0), gzip.compress(data[offs[25] :], mtime=0)
    src, idx, vprobs = index_bytes(a[:-8] + bytes(4) + a[-4:] + b)  # the first member's trailer: read on
    assert idx.count == 50 and not vprobs and len(idx.problems) == 1


def test_a_byte_lost_at_a_boundary_that_the_crc_before_it_repeats_loses_no_record():
    """Found by Hypothesis (test_properties): the byte deleted is the next record's first length
    byte, and the CRC before it ends in that same byte, so the next record frames whole one byte
    early, inside that CRC. Both records pass their CRCs: both are kept, and the shared byte said."""
    from tfrview.core.tfrecord.framing import encode_record

    last = b"\0\0\0\0"
    one = next(bytes([v]) for v in range(256) if encode_record(bytes([v]))[-1] == len(last))
    recs = [encode_record(b"\0\0\0"), encode_record(one), encode_record(last)]
    data = b"".join(recs)
    at = len(recs[0]) + len(recs[1])  # where the last record's header starts
    src, idx, data_problems = index_bytes(data[:at] + data[at + 1 :])
    assert read_all(src, idx) == [b"\0\0\0", one, last] and data_problems == []
    assert list(idx.status) == [VERIFIED] * 3
    assert [(str(p.kind), p.offset, p.length) for p in idx.problems] == [("unreadable_bytes", at - 1, 1)]
    assert "bytes were lost at this boundary" in idx.problems[0].message
