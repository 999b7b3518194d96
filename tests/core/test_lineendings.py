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
    pls = payloads_of(RACCOON) + _records_with_crlf_framing(rnd) + [_with_crlfs(rnd, 800, 2) for _ in range(20)]
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
