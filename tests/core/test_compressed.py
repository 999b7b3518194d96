import gzip
import zlib

import pytest

from tests.helpers import framed, index_bytes, payloads, problem_tuples, read_all
from tfrview.core.output.writer import write_records
from tfrview.core.tfrecord.source import detect_compression, open_source

PL = payloads(300, base=200)
GOOD, OFF = framed(PL)


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
def test_writer_roundtrip_and_detection_by_content(tmp_path, compression):
    # Names lie on purpose: detection must not trust them.
    path = tmp_path / ("data.gz" if compression == "none" else "data.tfrecord")
    write_records(path, PL, compression)
    with open_source(path) as src:
        assert src.compression == compression
        from tfrview.core.tfrecord.report import verify_source

        idx, rep = verify_source(src)
        assert rep.ok and rep.records == 300
        assert read_all(src, idx) == PL


def test_multi_member_gzip():
    data = gzip.compress(GOOD[: OFF[100]]) + gzip.compress(GOOD[OFF[100] :])
    src, idx, vp = index_bytes(data)
    assert src.compression == "gzip" and idx.problems == [] and vp == []
    assert read_all(src, idx) == PL


def test_truncated_gzip_keeps_every_whole_record():
    gz = gzip.compress(GOOD)
    src, idx, _ = index_bytes(gz[: len(gz) // 2])
    kinds = [p.kind for p in idx.problems]
    assert "decompression_error" in kinds
    got = read_all(src, idx)
    assert got == PL[: len(got)] and len(got) > 50
    assert any("ends early" in p.message for p in idx.problems)


def test_bit_flipped_gzip_keeps_records_before_the_damage():
    gz = bytearray(gzip.compress(GOOD, compresslevel=1))
    gz[len(gz) // 2] ^= 0x55
    src, idx, vp = index_bytes(bytes(gz))
    assert src.compression == "gzip"
    assert any(p.kind == "decompression_error" for p in idx.problems)
    got = read_all(src, idx)
    bad = {p.record for p in vp + idx.problems}  # a record cut short by the damage is a damaged row too
    assert len(got) > 10
    assert [g for i, g in enumerate(got) if i not in bad] == [
        p for i, p in enumerate(PL[: len(got)]) if i not in bad
    ]


def test_garbage_after_gzip_stream():
    src, idx, _ = index_bytes(gzip.compress(GOOD) + b"xyz")
    assert problem_tuples(idx.problems) == [("decompression_error", OFF[-1], None, None)]
    assert "garbage after the end" in idx.problems[0].message
    assert read_all(src, idx) == PL


def test_damage_inside_zlib_stream_is_resynchronised():
    data = bytearray(GOOD)
    data[OFF[7] + 3] ^= 0xFF  # a length byte of record 7
    src, idx, _ = index_bytes(zlib.compress(bytes(data)))
    assert src.compression == "zlib"
    assert problem_tuples(idx.problems) == [("bad_length_crc", OFF[7], OFF[8] - OFF[7], 7)]
    assert read_all(src, idx) == PL


def test_random_access_uses_checkpoints(tmp_path):
    big = [bytes([i % 251]) * 5000 + i.to_bytes(4, "little") for i in range(4000)]  # ~20 MB inflated
    path = tmp_path / "big.gz"
    write_records(path, big, "gzip")
    with open_source(path) as src:
        from tfrview.core.tfrecord.report import index_source

        idx = index_source(src)
        assert idx.count == 4000
        assert len(src._ckpts.items) >= 4  # one every few MB
        for k in (3999, 0, 2500, 1234, 3998):
            assert src.read(int(idx.offsets[k]) + 12, int(idx.lengths[k])) == big[k]


def test_detect_compression_prefers_valid_framing():
    assert detect_compression(GOOD[:64]) == "none"
    assert detect_compression(gzip.compress(GOOD)[:64]) == "gzip"
    assert detect_compression(zlib.compress(GOOD)[:64]) == "zlib"
    assert detect_compression(b"\x78\x9c" + b"not really zlib") == "none"
