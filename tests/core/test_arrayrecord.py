"""ArrayRecord files read by tfrview's own reader (core/arrayrecord), compared record by record with
what the official writer wrote and its reader reads; cut and damaged copies; absurd footers."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import write_arrayrecord
from tfrview.core.arrayrecord import riegeli
from tfrview.core.arrayrecord.highway import hash64, hash_many, hash_rows
from tfrview.core.arrayrecord.reader import open_arrayrecord
from tfrview.core.errors import SourceError
from tfrview.core.problems import ProblemKind

m = pytest.importorskip(
    "array_record.python.array_record_module",
    reason="the official array-record wheel is not installed here (it has no Windows build)",
)


def _records(n: int, seed: int = 0) -> list[bytes]:
    rnd = random.Random(seed)
    return [rnd.randbytes(rnd.randrange(0, 200)) + b"x" * rnd.randrange(0, 300) for _ in range(n)]


RECS = _records(2000)


@pytest.fixture(scope="module")
def zstd1(tmp_path_factory) -> Path:
    return write_arrayrecord(tmp_path_factory.mktemp("ar") / "z.array_record", "group_size:1,zstd:3", RECS)


@pytest.mark.parametrize(
    "options",
    [
        "group_size:1,uncompressed",
        "group_size:1,zstd:3",
        "group_size:1,brotli:6",
        "group_size:1,snappy",
        "group_size:65536,uncompressed",
        "group_size:65536,zstd:3",
        "group_size:65536,brotli:6",
        "group_size:65536,snappy",
    ],
)
def test_every_record_equals_the_official_readers(tmp_path: Path, options: str) -> None:
    path = write_arrayrecord(tmp_path / "f.array_record", options, RECS)
    official = m.ArrayRecordReader(str(path))
    theirs = official.read(list(range(official.num_records())))
    with open_arrayrecord(path) as f:
        assert f.num_records == official.num_records() == len(RECS)
        ours = [f.record(i) for i in range(f.num_records)]
        assert ours == theirs == RECS
        assert f.problems == [] and f.verify(data=True) == []
        group = int(options.split(",")[0].split(":")[1])
        assert f.group_size == group
        notes = f.notes()
        assert [p.kind for p in notes] == ([ProblemKind.ARRAYRECORD_GROUP_SIZE] if group > 1 else [])
        assert len(f.chunks) == (len(RECS) if group == 1 else 1)


def test_highwayhash_forms_agree_with_the_writers_hashes(zstd1: Path) -> None:
    data = zstd1.read_bytes()
    stored = struct.unpack_from("<Q", data, 0)[0]
    assert hash64(data[8:24]) == stored  # the first block header
    assert riegeli.is_riegeli(data[:64]) and not riegeli.is_riegeli(b"\0" * 64)
    with open_arrayrecord(zstd1) as f:
        heads = [riegeli.read_logical(f.read, int(b), 40) for b in f.chunks.begin[:300]]
    rows = np.frombuffer(b"".join(heads), dtype=np.uint8).reshape(-1, 40)
    words = rows.copy().view("<u8")
    assert (hash_rows(rows[:, 8:]) == words[:, 0]).all()
    assert [hash64(h[8:]) for h in heads[:20]] == words[:20, 0].tolist()
    bufs = [data[i : i + n] for i, n in zip(range(0, 3000, 97), range(0, 300, 10), strict=False)]
    assert hash_many(bufs).tolist() == [hash64(b) for b in bufs]


def _chunk_ends(path: Path) -> list[int]:
    with open_arrayrecord(path) as f:
        return [riegeli.read_chunk_header(f.read, int(b)).end for b in f.chunks.begin]


def test_a_cut_file_gives_back_every_whole_chunk(tmp_path: Path, zstd1: Path) -> None:
    path = write_arrayrecord(tmp_path / "g.array_record", "group_size:10,zstd:3", RECS)
    data = path.read_bytes()
    ends = _chunk_ends(path)
    official = m.ArrayRecordReader(str(path)).read(list(range(len(RECS))))
    rnd = random.Random(7)
    cut_path = tmp_path / "cut.array_record"
    for cut in sorted(rnd.randrange(65, len(data)) for _ in range(10)):
        cut_path.write_bytes(data[:cut])
        with open_arrayrecord(cut_path) as f:
            whole = 10 * sum(1 for e in ends if e <= cut)
            assert f.num_records == whole, cut
            assert [f.record(i) for i in range(whole)] == official[:whole]
            if f.footer is not None:  # the cut took only the padding after the postscript
                assert whole == len(RECS) and f.problems == []
                continue
            kinds = [p.kind for p in f.problems]
            assert kinds[0] == ProblemKind.FOOTER_MISSING and "block headers" in f.problems[0].message
            if cut not in ends:
                assert ProblemKind.TRUNCATED in kinds


def test_a_flipped_byte_is_named_at_its_chunk(tmp_path: Path, zstd1: Path) -> None:
    data = bytearray(zstd1.read_bytes())
    with open_arrayrecord(zstd1) as f:
        begin = int(f.chunks.begin[1234])
    for where, words in ((begin + 60, "damaged data"), (begin + 12, "a damaged header")):
        b = bytearray(data)
        b[where] ^= 0x10
        path = tmp_path / "flip.array_record"
        path.write_bytes(b)
        with open_arrayrecord(path, check_data=True) as f:
            found = f.verify(data=True)
            assert [(p.kind, p.offset, p.record) for p in found] == [(ProblemKind.CHUNK_DAMAGED, begin, 1234)]
            assert f"chunk 1,234 at byte {begin:,} has {words}" in found[0].message
            assert "1 records (1,234-1,234) are lost" in found[0].message
            with pytest.raises(SourceError, match="chunk 1,234"):
                f.record(1234)
            assert f.record(1233) == RECS[1233] and f.record(1235) == RECS[1235]


def test_a_damaged_header_without_a_footer_is_walked_past(tmp_path: Path) -> None:
    recs = _records(3000, seed=3)
    path = write_arrayrecord(tmp_path / "a.array_record", "group_size:3,uncompressed", recs)
    data = bytearray(path.read_bytes())
    with open_arrayrecord(path) as f:
        footer = f.footer.offset
        begin = int(f.chunks.begin[100])  # records 300-302
    cut = bytearray(data[:footer])  # never closed: no footer, no postscript
    cut[begin + 8] ^= 1
    path.write_bytes(cut)
    with open_arrayrecord(path) as f:
        kinds = [p.kind for p in f.problems]
        assert kinds == [ProblemKind.FOOTER_MISSING, ProblemKind.CHUNK_DAMAGED]
        lost = f.problems[1]
        assert lost.offset == begin and lost.length > 0
        got = [f.record(i) for i in range(f.num_records)]
        assert got[:300] == recs[:300]
        # the walk goes on at the next block header that passes: every record after it is there
        tail = recs[-(len(got) - 300) :]
        assert got[300:] == tail and len(got) > 2000


def _with_footer_records(tmp_path: Path, meta_fields: bytes) -> Path:
    """A copy of a small file whose footer's metadata is replaced (a new footer chunk written over
    the old one, hashes made right), to show absurd claims are refused before allocating."""
    path = write_arrayrecord(tmp_path / "s.array_record", "group_size:1,uncompressed", RECS[:5])
    data = bytearray(path.read_bytes())
    with open_arrayrecord(path) as f:
        at = f.footer.offset
        h = riegeli.read_chunk_header(f.read, at)
        values, offsets = riegeli.simple_chunk_records(
            h, riegeli.read_logical(f.read, h.data_begin, h.data_size)
        )
    entries = [values[offsets[i] : offsets[i + 1]] for i in range(1, len(offsets) - 1)]
    recs = [meta_fields, *entries]
    sizes = b"".join(bytes([len(r)]) for r in recs)
    body = b"\0" + bytes([len(sizes)]) + sizes + b"".join(recs)
    header = struct.pack("<QQQQ", len(body), hash64(body), ord("r") | (len(recs) << 8), sum(map(len, recs)))
    chunk = struct.pack("<Q", hash64(header)) + header + body
    data[at : at + len(chunk)] = chunk
    path.write_bytes(data)
    return path


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def test_absurd_footer_claims_fall_back_to_the_walk_in_one_line(tmp_path: Path) -> None:
    inner = b"\x08\x01\x10" + _varint(5) + b"\x18" + _varint(10**15)
    path = _with_footer_records(tmp_path, b"\x0a" + bytes([len(inner)]) + inner)
    with open_arrayrecord(path) as f:
        assert f.problems[0].kind == ProblemKind.FOOTER_MISSING
        assert "limits.AR_MAX_RECORDS" in f.problems[0].message
        assert "\n" not in f.problems[0].message
        assert [f.record(i) for i in range(f.num_records)] == RECS[:5]
    inner = b"\x08\x01\x10" + _varint(10**12) + b"\x18\x05"
    path = _with_footer_records(tmp_path, b"\x0a" + bytes([len(inner)]) + inner)
    with open_arrayrecord(path) as f:
        assert "says 1,000,000,000,000 chunks and lists 5" in f.problems[0].message
        assert f.num_records == 5


def test_absurd_chunk_sizes_are_checked_before_allocating(tmp_path: Path) -> None:
    header = riegeli.ChunkHeader(64, 0, 10, 0, ord("r"), 3, 1 << 40, True)
    with pytest.raises(SourceError, match=r"limits\.AR_CHUNK_BYTES"):
        riegeli.simple_chunk_records(header, b"\0\x03\x01\x01\x01abc")
    header = riegeli.ChunkHeader(64, 0, 10, 0, ord("r"), 1, 100, True)
    sizes = _varint(1 << 40) + b"\x28\xb5"
    with pytest.raises(ValueError, match=r"the sizes table is .* over the .* \(limits.AR_CHUNK_BYTES\)"):
        riegeli.simple_chunk_records(header, b"z" + bytes([len(sizes)]) + sizes + b"\x28\xb5")
    import cramjam

    sizes = b"\x01" + bytes(cramjam.zstd.compress(b"\x64"))
    values = _varint(1 << 40) + b"\x28\xb5"
    with pytest.raises(ValueError, match="1,099,511,627,776 bytes decompressed by their own count, 100 by"):
        riegeli.simple_chunk_records(header, b"z" + bytes([len(sizes)]) + sizes + values)


def test_not_a_riegeli_file_is_one_line(tmp_path: Path) -> None:
    p = tmp_path / "x.array_record"
    p.write_bytes(b"\0" * 100)
    with pytest.raises(SourceError, match="not an ArrayRecord/Riegeli file"):
        open_arrayrecord(p)


class _Planted:
    """Unpickling this writes a file: the test proves nothing unpickles it."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __reduce__(self):
        return (Path.write_text, (Path(self.target), "ran"))


def test_a_pickle_record_is_disassembled_never_unpickled(tmp_path: Path) -> None:
    import pickle

    from tfrview.core.records.payload import decode, payload_json, sniff_kind
    from tfrview.core.records.textfmt import format_payload

    target = tmp_path / "ran.txt"
    recs = [
        pickle.dumps({"label": i, "x": _Planted(str(target))}, protocol=p) for i, p in enumerate((2, 4, 5))
    ]
    path = write_arrayrecord(tmp_path / "p.array_record", "group_size:1,zstd:3", recs)
    with open_arrayrecord(path) as f:
        got = [f.record(i) for i in range(f.num_records)]
    assert got == recs
    for rec in got:
        assert sniff_kind(rec) == "pickle"
        p = decode(rec)
        text = format_payload(p)
        assert "never unpickled" in text and "PROTO" in text and "'label'" in text and "STOP" in text
        assert "write_text" in text  # the callable it names is shown, not called
        assert payload_json(p)["kind"] == "pickle" and payload_json(p)["pickle"]
    cut = decode(recs[1][:-1] + b".")  # a pickle whose stack does not add up: what was read, and why
    assert cut.kind == "pickle"
    assert not target.exists()


def _varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b, v = v & 0x7F, v >> 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def test_varints_of_every_length_decode_as_one_at_a_time() -> None:
    """The packed decoder (one 64-bit word a varint, 7-bit groups packed by shifts) against the
    byte-by-byte one, for values of 1 to 64 bits (1 to 10 bytes) mixed."""
    rnd = random.Random(5)
    for bits in (7, 14, 28, 49, 56, 57, 63, 64):
        vals = [rnd.getrandbits(rnd.randint(1, bits)) for _ in range(500)]
        got = riegeli.varints(b"".join(_varint(v) for v in vals), len(vals))
        assert got.tolist() == vals
    with pytest.raises(ValueError, match="longer than 10 bytes"):
        riegeli.varints(b"\xff" * 11 + b"\x01" + b"\x01", 2)


def test_the_footer_entries_of_a_writers_shape_and_of_another_agree() -> None:
    """The footer's entries decoded by its fast path (the writer's field order) and, for an entry
    with its fields reordered, by the message reader: the same values."""
    from tfrview.core.arrayrecord.reader import _footer_entries

    rnd = random.Random(6)
    rows = [(rnd.getrandbits(40), rnd.getrandbits(20), rnd.randint(1, 300)) for _ in range(300)]
    entries = [b"\x08" + _varint(a) + b"\x10" + _varint(b) + b"\x18" + _varint(c) for a, b, c in rows]
    meta = b"\x0a\x00"
    for swapped in (False, True):
        if swapped:  # the last entry's fields in another order: read one by one
            a, b, c = rows[-1]
            entries[-1] = b"\x18" + _varint(c) + b"\x08" + _varint(a) + b"\x10" + _varint(b)
        values = meta + b"".join(entries)
        offsets = np.cumsum([0, len(meta), *map(len, entries)])
        begin, decoded, records = _footer_entries(values, offsets)
        assert list(zip(begin.tolist(), decoded.tolist(), records.tolist(), strict=True)) == rows


def test_hash_many_of_buffers_that_all_have_packets_agrees_with_hash64() -> None:
    """Every buffer with at least one 32-byte packet, in lengths out of order (a chunk's data in a
    big file): packet p's rows were once updated in sorted order against unsorted state rows."""
    rnd = random.Random(7)
    for lengths in ([100, 5000, 40, 2000, 32], [64] * 9, [33, 700, 31, 12_000, 0, 95]):
        bufs = [rnd.randbytes(n) for n in lengths]
        assert hash_many(bufs).tolist() == [hash64(b) for b in bufs]


def test_data_hashes_of_a_file_of_big_chunks_find_no_damage_and_find_a_flip(tmp_path: Path) -> None:
    recs = [random.Random(i).randbytes(3000 + 97 * i) for i in range(60)]
    path = write_arrayrecord(tmp_path / "big.array_record", "group_size:1,uncompressed", recs)
    with open_arrayrecord(path) as f:
        assert f.verify(data=True) == []
        begin = int(f.chunks.begin[5])
    data = bytearray(path.read_bytes())
    data[begin + 40 + 500] ^= 8  # chunk 5's data (before the first block header at 64 KiB)
    path.write_bytes(data)
    with open_arrayrecord(path) as f:
        (p,) = f.verify(data=True)
    assert "chunk 5 " in p.message and "damaged data (hash mismatch)" in p.message
