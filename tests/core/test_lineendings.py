"""Line-ending conversions undone record by record (issue 12): CR bytes put back where the CRCs
prove them, in data, headers and stored CRCs; nothing unproven kept; no conversion seen where
there was none."""

from __future__ import annotations

import random
import re

from tests.helpers import RACCOON, framed, payloads_of
from tfrview.core.tfrecord.framing import masked_crc
from tfrview.core.tfrecord.lineendings import Conversion, detect, put_back_crs, undone, walk


def _unix2dos(b: bytes) -> bytes:
    """LF -> CR LF where no CR stands before it (unix2dos, git's autocrlf on checkout)."""
    return re.sub(rb"(?<!\r)\n", b"\r\n", b)


def _with_crlfs(rnd: random.Random, n: int, k: int) -> bytes:
    b = bytearray(rnd.randbytes(n).replace(b"\r\n", b"\r_"))
    for p in rnd.sample(range(n - 1), k):
        b[p : p + 2] = b"\r\n"
    return bytes(b)


def test_the_one_placement_that_passes_the_crc_is_found():
    rnd = random.Random(3)
    for n, k in ((40, 1), (40, 3), (5000, 1), (5000, 2), (60_000, 2), (20_000, 3)):
        orig = _with_crlfs(rnd, n, k)
        k = orig.count(b"\r\n")
        got, why = put_back_crs(orig.replace(b"\r\n", b"\n"), k, masked_crc(orig))
        assert got == orig, (n, k, why)


def test_placements_the_crc_cannot_single_out_are_refused():
    rnd = random.Random(4)
    orig = _with_crlfs(rnd, 1 << 20, 12)  # ~4,000 LF bytes, 12 lost: far more ways than 2^32
    got, why = put_back_crs(orig.replace(b"\r\n", b"\n"), 12, masked_crc(orig))
    assert got is None and "cannot single one out" in why
    other = bytearray(_with_crlfs(rnd, 3000, 1))  # damaged some other way too: nothing passes
    crc = masked_crc(bytes(other))
    other[10] ^= 0x55
    got, why = put_back_crs(bytes(other).replace(b"\r\n", b"\n"), 1, crc)
    assert got is None and "passes" in why


def _records_with_crlf_framing(rnd: random.Random) -> list[bytes]:
    """Payloads whose framing holds CR LF: a length of 0x0a0d bytes, and a stored CRC with one."""
    pls = [_with_crlfs(rnd, 0x0A0D, 1)]
    while True:
        p = _with_crlfs(rnd, 300, 1)
        if b"\r\n" in masked_crc(p).to_bytes(4, "little"):
            return [*pls, p]


def test_dos2unix_is_undone_with_framing_and_real_jpegs():
    rnd = random.Random(5)
    pls = (
        payloads_of(RACCOON) + _records_with_crlf_framing(rnd) + [_with_crlfs(rnd, 800, 2) for _ in range(20)]
    )
    data, _ = framed(pls)
    lost = data.replace(b"\r\n", b"\n")
    ev = detect(lost)
    assert ev is not None and ev.conversion is Conversion.TO_LF and ev.restored >= 10
    got = list(walk(lost))
    assert len(got) == len(pls)
    proven = [w.data == p for w, p in zip(got, pls, strict=True) if w.data is not None]
    assert all(proven) and len(proven) >= len(pls) - 2  # the raccoon images with 4+ CR LF may stay out
    assert got[12].data == pls[12] and got[13].data == pls[13]  # CR LF in a length and in a stored CRC


def test_unix2dos_is_undone_and_records_own_crlf_restored():
    rnd = random.Random(6)
    pls = payloads_of(RACCOON)[:6] + [_with_crlfs(rnd, 500, 1) for _ in range(30)]
    data, _ = framed(pls)
    converted = _unix2dos(data)
    ev = detect(converted)
    assert ev is not None and ev.conversion is Conversion.TO_CRLF
    got = [w.data for w in walk(undone(ev.conversion, converted))]
    assert len(got) == len(pls) and all(g == p for g, p in zip(got, pls, strict=True) if g is not None)
    assert sum(g is not None for g in got) >= len(pls) - 2


def test_no_conversion_is_seen_in_a_file_that_only_holds_crlf_in_its_data():
    rnd = random.Random(7)
    pls = [_with_crlfs(rnd, 700, 2) for _ in range(50)]
    data, offs = framed(pls)
    b = bytearray(data)
    b[offs[3] + 40] ^= 0x08  # damaged otherwise: a flipped bit
    assert detect(bytes(b)) is None


def test_a_cr_lf_across_a_header_and_its_example_is_put_back():
    """An Example's first byte is 0x0a: a header whose CRC ends in 0x0d makes a CR LF with it
    (one Example in 256), and a data CRC that ends in 0x0d with the next header's first byte."""
    from tfrview.core.tfrecord.framing import encode_header

    rnd = random.Random(8)
    length = next(n for n in range(300, 100_000) if encode_header(n)[-1] == 0x0D)
    across = b"\n" + rnd.randbytes(length - 1).replace(b"\r\n", b"\r_")
    pls = [_with_crlfs(rnd, 400, 1), across, _with_crlfs(rnd, 400, 1)]
    data, offs = framed(pls)
    assert data[offs[1] + 11 : offs[1] + 13] == b"\r\n"  # the header's last byte, the Example's first
    got = [w.data for w in walk(data.replace(b"\r\n", b"\n"))]
    assert got == pls


# --- counts from the data, bounded before they are enumerated (issues 25.3, 26.2) -------------------


def _lfs_with_crs(rnd: random.Random, m: int, k: int, lf_after: bool = False) -> tuple[bytes, bytes]:
    """(data as written, data with its CR bytes lost): m LF bytes, k of them after a CR; with
    `lf_after`, the last CR ends the data (its LF begins what follows)."""
    cr = set(rnd.sample(range(m), k))
    body = rnd.randbytes(m).replace(b"\n", b"x").replace(b"\r", b"y")
    orig = b"".join((b"\r\n" if i in cr else b"\n") + body[i : i + 1] for i in range(m))
    if lf_after:
        orig = orig[: orig.rindex(b"\n")]
    return orig, orig.replace(b"\r\n", b"\n").rstrip(b"\r")


def test_ways_are_counted_without_computing_huge_numbers():
    from math import comb

    from tfrview.core.tfrecord.lineendings import ways_within

    for m in (0, 1, 5, 40, 1000):
        for k in {k for k in (0, 1, 2, m // 2, m - 1, m) if k >= 0}:
            exact = comb(m, k)
            assert ways_within(m, k, 1 << 26) == (exact if exact <= 1 << 26 else None), (m, k)
    assert ways_within(10**9, 5 * 10**8, 1 << 26) is None  # C(m, k) has ~300 million digits


def test_k_close_to_m_is_searched_from_the_other_side():
    """1,000 LF bytes, 999 of them lost their CR: 1,000 placements, found as the one LF that kept
    none (the search by the first k-2 would enumerate 1.7e8 heads)."""
    rnd = random.Random(9)
    for m, k, after in (
        (1000, 999, False),
        (1000, 998, True),
        (300, 300, False),
        (50, 47, True),
        (7, 4, False),
    ):
        orig, lost = _lfs_with_crs(rnd, m, k, after)
        assert lost != orig and lost.count(b"\n") + after == m
        got, why = put_back_crs(lost, k, masked_crc(orig), lf_after=after)
        assert got == orig, (m, k, why)


def test_a_search_over_the_work_budget_is_refused_before_it_starts():
    from tfrview.core.limits import PROOF_SPACE, PROOF_WORK
    from tfrview.core.tfrecord.lineendings import search_steps, ways_within

    rnd = random.Random(10)
    orig, lost = _lfs_with_crs(rnd, 33, 8)  # C(33, 8) = 13.9 M placements, but 37 M steps to search
    assert ways_within(33, 8, PROOF_SPACE) and search_steps(33, 8) > PROOF_WORK
    got, why = put_back_crs(lost, 8, masked_crc(orig))
    assert got is None and why.startswith("proof search budget exceeded (limits.PROOF_WORK")


def test_a_walk_out_of_time_says_which_limit():
    from tfrview.core.tfrecord.lineendings import ProofBudget

    rnd = random.Random(11)
    pls = [_with_crlfs(rnd, 400, 1) for _ in range(3)]
    data, _ = framed(pls)
    spent = ProofBudget(seconds=-1, name="PROOF_SECONDS")
    got = list(walk(data.replace(b"\r\n", b"\n"), spent))
    assert len(got) == 3 and all(w.data is None for w in got)
    assert all(w.why.startswith("proof search budget exceeded (limits.PROOF_SECONDS") for w in got)
    assert [w.data for w in walk(data.replace(b"\r\n", b"\n"))] == pls  # with time, every one


def test_too_many_ways_are_said_in_powers_of_ten_not_digits():
    from math import comb, log10

    data = b"ab\n" * 200_000  # C(200,000, 3,000) has ~6,760 digits, past int -> str's 4,300
    got, why = put_back_crs(data, 3000, 0)
    assert got is None and "about 10^" in why and "limits.PROOF_SPACE" in why
    digits = comb(200_000, 3000).bit_length() * log10(2)  # the reference, from bits: no str()
    assert abs(int(why.split("10^")[1].split()[0]) - digits) < 2


def test_crc_registers_move_back_and_far():
    import numpy as np

    from tfrview.core.tfrecord.crcmath import shift, z, z_inverse

    v = np.random.default_rng(1).integers(0, 1 << 32, 1000, dtype=np.uint64).astype(np.uint32)
    assert (z_inverse(z(v)) == v).all() and (z(z_inverse(v)) == v).all()
    q = np.full(len(v), 1 << 26)
    far = shift(v, q * 2)  # 128 MiB: past a fixed 27 powers of two
    assert (far == shift(shift(v, q), q)).all() and not (far == v).all()


def test_record_ends_are_found_together_and_exactly():
    """The ends a record may have (up to 4,097) are tested in arrays: the same ends as header by
    header, whole headers and headers that lost a CR alike, and none tested one by one among
    bytes where no header stands (once ~0.3 s a record of LF bytes: 50,000 CRCs)."""
    from tfrview.core.tfrecord.framing import encode_header
    from tfrview.core.tfrecord.lineendings import _header_at, _maybe_headers, _record_end

    rnd = random.Random(12)
    lost = [h for h in map(encode_header, range(1, 100_000)) if b"\r\n" in h][
        :12
    ]  # CR LF in a length or a CRC
    assert len({h.index(b"\r\n") for h in lost}) >= 3  # in the length and in the CRC
    buf = bytearray(rnd.choice(b"\n\n\0ab") for _ in range(6000))
    for i, h in enumerate(lost):
        p = 400 * i + 17
        buf[p : p + 11] = h.replace(b"\r\n", b"\n", 1)
    buf[5000:5012] = encode_header(12)
    buf = bytes(buf)
    scalar = [e for e in range(len(buf)) if _header_at(buf, e) is not None]
    assert list(_maybe_headers(buf, 0, len(buf) - 1)) == scalar
    assert len(scalar) == len(lost) + 1
    noise = bytes(rnd.choice(b"\n\nab") for _ in range(21_000))
    hostile = encode_header(20_000) + noise
    assert len(_maybe_headers(hostile, 12 + 4, len(hostile) - 1)) == 0  # nothing to confirm one by one
    assert _record_end(hostile + encode_header(5), 0, 12, 20_000) is None


def test_lf_counts_over_overlapping_claims_are_kept_per_block():
    """Headers 1 KB apart, each claiming a span to near the end: each span was counted anew
    (86 ms a header in 32 MB); counts per block answer the same, and the walk still says each
    header frames no record."""
    from tfrview.core.tfrecord.framing import encode_header
    from tfrview.core.tfrecord.lineendings import LfCounts, _record_end

    rnd = random.Random(13)
    buf = bytes(rnd.choice(b"\n\nab\r") for _ in range(300_000))
    lfs = LfCounts(buf)
    for a, b in [(0, len(buf)), (1, 5), (4095, 4097), (100, 299_999), (8191, 200_000), (7, 7), (50, 10**9)]:
        assert lfs.count(a, b) == buf.count(b"\n", a, b), (a, b)
    n = 256 << 10
    hostile = bytearray(b"\n" * n)
    for p in range(0, n - 20_000, 1024):
        hostile[p : p + 12] = encode_header(n - p - 16 - 10_000)
    got = list(walk(bytes(hostile)))
    assert [w.start for w in got] == list(range(0, n - 20_000, 1024)) and all(not w.framed for w in got)
    assert got[-1].end == n
    assert _record_end(bytes(hostile), 0, 12, n + 5000) is None  # past the end even with 4,096 CRs lost


def test_detection_out_of_time_says_so(caplog):
    """Naming a file's cause has its own seconds (limits.PROOF_DETECT_SECONDS): out of them, the
    records that need a search are not proven, and the log says which limit stopped them."""
    import logging

    rnd = random.Random(14)
    pls = [_with_crlfs(rnd, 400, 1) for _ in range(8)]
    lost = framed(pls)[0].replace(b"\r\n", b"\n")
    ev = detect(lost, whole=True)
    assert ev is not None and ev.conversion is Conversion.TO_LF and ev.proven == 8 and ev.cut == ""
    with caplog.at_level(logging.INFO, logger="tfrview.core.tfrecord.lineendings"):
        assert detect(lost, whole=True, seconds=-1) is None
    assert "proof search budget exceeded (limits.PROOF_DETECT_SECONDS" in caplog.text
