"""Issue 18.9: causes the bytes show but that went unnamed. A run of zeros across many small records
(unreadable bytes, with records cut on both sides) is named as zeroed blocks, like zeros inside one
big record; appended text (an HTTP error page) is quoted, like prepended text."""

from __future__ import annotations

from tests.helpers import framed, index_bytes, payloads
from tfrview.core.tfrecord.forensics import name_causes


def _causes(content: bytes) -> list[tuple[str, int | None, str]]:
    src, idx, vprobs = index_bytes(content)
    return [
        (str(p.kind), p.record, p.cause)
        for p in name_causes(src, list(idx.problems) + vprobs, idx.offsets, idx.lengths)
    ]


def _zeroed(start: int, n: int) -> bytes:
    data, _ = framed(payloads(600, base=80))  # records of about 100 bytes
    b = bytearray(data)
    b[start : start + n] = bytes(n)
    return bytes(b)


def test_a_run_of_zeros_across_small_records_is_named_with_where_it_lies():
    got = _causes(_zeroed(3001, 5000))
    region = [c for k, _, c in got if k == "unreadable_bytes"]
    assert region == [
        "5.0 KB of zeros at bytes 3,001..8,001, across records: blocks a disk or filesystem lost"
    ]
    cut = [(r, c) for k, r, c in got if k == "bad_data_crc"]  # the record the zeros begin in
    assert cut == [
        (
            26,
            "part of its bytes lie in 5.0 KB of zeros at bytes 3,001..8,001, across records: "
            "blocks a disk or filesystem lost",
        )
    ]


def test_a_block_aligned_zeroed_run_is_named_in_whole_4_kib_blocks():
    got = _causes(_zeroed(8192, 8192))
    region = [c for k, _, c in got if k == "unreadable_bytes"]
    assert region == [
        "8.2 KB of zeros at bytes 8,192..16,384, 2 whole 4 KiB blocks, across records: blocks a disk or filesystem lost"
    ]


def test_damage_without_a_run_of_zeros_gets_no_zero_cause():
    data, offs = framed(payloads(600, base=80))
    b = bytearray(data)
    b[3001:8001] = bytes(range(250)) * 20  # garbage, not zeros
    assert not any("zeros" in c for _, _, c in _causes(bytes(b)))


def test_appended_http_error_text_is_quoted():
    data, _ = framed(payloads(60, base=80))
    page = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\n\r\n<html>retry later</html>\n"
    (got,) = _causes(data + page)
    assert got[0] == "trailing_bytes"
    assert got[2] == (
        f"{len(page)} B appended after the last record (text starting 'HTTP/1.1 503 Service "
        "Unavailable': an HTTP header or an error page saved with the data?)"
    )
    # framed as unreadable bytes, or not
    long_page = page + b"<p>Internal error, please retry later.</p>\n" * 60
    assert all("text starting 'HTTP/1.1 503" in c for _, _, c in _causes(data + long_page))
    (binary,) = _causes(data + bytes(range(256)) * 2)
    assert (
        binary[2]
        == "512 B appended after the last record (another file's bytes? binary, starting 00 01 02 03 04 05 06 07)"
    )
