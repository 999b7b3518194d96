"""Riegeli transposed chunks ('t', core/arrayrecord/transposed.py) read by tfrview's own decoder,
record by record against what the official array-record writer wrote and its reader returns; damaged
and cut chunks fuzzed: one-line errors, never an exception of another kind, a hang or a runaway."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import write_arrayrecord
from tfrview.core.arrayrecord.reader import open_arrayrecord
from tfrview.core.arrayrecord.riegeli import ChunkType, RiegeliError, read_chunk_header, read_logical
from tfrview.core.arrayrecord.transposed import chunk_records, transposed_chunk_records
from tfrview.core.limits import AR_TRANSPOSED_STEPS
from tfrview.core.problems import ProblemKind
from tfrview.core.records.proto import example_pb2

m = pytest.importorskip(
    "array_record.python.array_record_module",
    reason="the official array-record wheel is not installed here (it has no Windows build)",
)


def _example(rnd: random.Random, i: int) -> bytes:
    ex = example_pb2.Example()
    f = ex.features.feature
    f["label"].int64_list.value.append(i % 7)
    f["id"].bytes_list.value.append(f"rec-{i}".encode())
    f["big"].int64_list.value.extend([rnd.randrange(-(1 << 63), 1 << 63) for _ in range(rnd.randrange(0, 4))])
    f["box"].float_list.value.extend([rnd.random() for _ in range(rnd.randrange(0, 5))])
    if rnd.random() < 0.5:
        f["image/encoded"].bytes_list.value.append(rnd.randbytes(rnd.randrange(0, 300)))
    return ex.SerializeToString()


def _sequence_example(rnd: random.Random, i: int) -> bytes:
    se = example_pb2.SequenceExample()
    se.context.feature["episode"].int64_list.value.append(i)
    steps = se.feature_lists.feature_list["steps/action"]
    for _ in range(rnd.randrange(0, 4)):
        steps.feature.add().float_list.value.extend([rnd.random(), -rnd.random()])
    return se.SerializeToString()


def _hand_made(rnd: random.Random, i: int) -> bytes:
    """Wire types the Example messages do not use: fixed32/64, groups, a 10-byte varint, a long
    field number, a packed field that itself reads as a message."""
    parts = [
        b"\x0d" + struct.pack("<I", i),  # 1: fixed32
        b"\x11" + struct.pack("<Q", rnd.getrandbits(64)),  # 2: fixed64
        b"\x1b\x08" + bytes([i % 100]) + b"\x1c",  # 3: a group holding a varint
        b"\x20\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",  # 4: the largest varint
        b"\xf8\xff\xff\xff\x0f\x05",  # field 2**29 - 1: a 5-byte tag
        b"\x2a\x02\x08\x01",  # 5: bytes that read as a message
    ]
    rnd.shuffle(parts)
    return b"".join(parts[: rnd.randrange(1, len(parts) + 1)])


def _non_proto(rnd: random.Random, i: int) -> bytes:
    return [b"", b"plain text, not a proto", rnd.randbytes(rnd.randrange(1, 50)), b"\x08"][i % 4]


MAKERS = {"example": _example, "sequence": _sequence_example, "wire": _hand_made, "nonproto": _non_proto}


def _records(n: int, kinds: tuple[str, ...], seed: int = 0) -> list[bytes]:
    rnd = random.Random(seed)
    return [MAKERS[kinds[i % len(kinds)]](rnd, i) for i in range(n)]


MIXED = _records(600, ("example", "sequence", "wire", "nonproto"))


def _same_as_official(path: Path, recs: list[bytes]) -> None:
    official = m.ArrayRecordReader(str(path))
    theirs = official.read(list(range(official.num_records())))
    with open_arrayrecord(path) as f:
        kinds = {read_chunk_header(f.read, int(b)).chunk_type for b in f.chunks.begin}
        assert kinds == {ChunkType.TRANSPOSED}
        ours = [f.record(i) for i in range(f.num_records)]
        assert ours == theirs == recs
        assert f.record_lengths().tolist() == [len(r) for r in recs]
        assert f.problems == [] and f.verify(data=True) == []


@pytest.mark.parametrize("codec", ["uncompressed", "zstd:3", "brotli:6", "snappy"])
@pytest.mark.parametrize("group", [1, 64, 65536])
def test_every_record_equals_the_official_readers(tmp_path: Path, codec: str, group: int) -> None:
    recs = MIXED if group > 1 else MIXED[:120]
    path = write_arrayrecord(tmp_path / "t.array_record", f"group_size:{group},transpose:true,{codec}", recs)
    _same_as_official(path, recs)


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_each_kind_of_record_alone(tmp_path: Path, kind: str) -> None:
    recs = _records(300, (kind,), seed=1)
    path = write_arrayrecord(tmp_path / "k.array_record", "group_size:1000,transpose:true,zstd:3", recs)
    _same_as_official(path, recs)


def test_many_small_buckets_and_empty_records(tmp_path: Path) -> None:
    recs = [b""] * 5 + _records(200, ("example",), seed=2) + [b""] * 3
    path = write_arrayrecord(
        tmp_path / "b.array_record", "group_size:1000,transpose:true,transpose_bucket_size:64,zstd:1", recs
    )
    _same_as_official(path, recs)
    empty = write_arrayrecord(
        tmp_path / "e.array_record", "group_size:10,transpose:true,uncompressed", [b""] * 25
    )
    _same_as_official(empty, [b""] * 25)


def _chunk(tmp_path: Path, options: str, recs: list[bytes]):
    path = write_arrayrecord(tmp_path / "c.array_record", options, recs)
    with open_arrayrecord(path) as f:
        h = read_chunk_header(f.read, int(f.chunks.begin[0]))
        return h, read_logical(f.read, h.data_begin, h.data_size)


@pytest.fixture(scope="module")
def chunks(tmp_path_factory) -> list:
    d = tmp_path_factory.mktemp("tc")
    recs = _records(40, ("example", "wire", "nonproto", "sequence"), seed=3)
    return [
        _chunk(d, f"group_size:100,transpose:true,{c}", recs) for c in ("uncompressed", "zstd:3", "snappy")
    ]


def _decodes_or_says_why(header, data: bytes) -> None:
    try:
        values, offsets = chunk_records(header, data)
    except RiegeliError as exc:  # a limit: one line
        assert "\n" not in str(exc)
    except ValueError as exc:  # damage: one line
        assert "\n" not in str(exc) and str(exc)
    else:
        assert offsets[0] == 0 and offsets[-1] == len(values) and bool((np.diff(offsets) >= 0).all())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    which=st.integers(0, 2),
    cut=st.integers(0, 10_000),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(1, 255)), max_size=4),
)
def test_damaged_chunks_fail_in_one_line(chunks, which: int, cut: int, flips) -> None:
    header, data = chunks[which]
    buf = bytearray(data)
    for at, x in flips:
        buf[at % len(buf)] ^= x
    _decodes_or_says_why(header, bytes(buf))
    _decodes_or_says_why(header, bytes(data[: cut % len(data)]))


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200), st.integers(0, 1000), st.integers(0, 5000))
def test_arbitrary_bytes_as_a_transposed_chunk_fail_in_one_line(data: bytes, records: int, size: int) -> None:
    header = _header(records, size)
    _decodes_or_says_why(header, data)


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _header(records: int, size: int):
    from tfrview.core.arrayrecord.riegeli import ChunkHeader

    return ChunkHeader(0, 0, 0, 0, ChunkType.TRANSPOSED, records, size, True)


def test_absurd_claims_are_refused_before_anything_is_allocated() -> None:
    with pytest.raises(RiegeliError, match="AR_CHUNK_BYTES"):
        transposed_chunk_records(_header(1, 1 << 40), b"\0\x00")
    # a header that claims 2**31 buckets and buffers in a few bytes
    with pytest.raises(ValueError, match="claims"):
        transposed_chunk_records(_header(1, 10), b"\0\x0a\xff\xff\xff\xff\x07\xff\xff\xff\xff\x07")
    # an uncompressed chunk: no buckets, one no-op node with an explicit self-loop, and a million
    # transition bytes each repeating it three times: more steps than 10 bytes of records need
    hdr = b"\x00\x00" + b"\x01" + b"\x00" + b"\x00" + b"\x00"
    data = b"\x00" + bytes([len(hdr)]) + hdr + b"\x03" * 1_000_000
    with pytest.raises(ValueError, match="steps"):
        transposed_chunk_records(_header(1, 10), data)
    # 1,000 no-ops in a ring (all but the last implicit): each byte walks the ring four times;
    # within what 10 MB of records could need, but past AR_TRANSPOSED_STEPS
    n = 1000
    nexts = [n + i + 1 for i in range(n - 1)] + [0]
    hdr = b"\x00\x00" + _varint(n) + b"\x00" * n + b"".join(_varint(x) for x in nexts) + b"\x00"
    data = b"\x00" + _varint(len(hdr)) + hdr + b"\x03" * (AR_TRANSPOSED_STEPS // (4 * n) + 8)
    with pytest.raises(RiegeliError, match="AR_TRANSPOSED_STEPS"):
        transposed_chunk_records(_header(1, 10 << 20), data)
    # 200 nodes for one empty record: more than its records can need
    hdr = b"\x00\x00" + _varint(200) + b"\x03" * 200 + b"\x00" * 200 + b"\x00"
    with pytest.raises(ValueError, match="200 nodes"):
        transposed_chunk_records(_header(1, 0), b"\x00" + _varint(len(hdr)) + hdr)
    # an implicit loop: node 0 -> node 0 without a byte
    hdr = b"\x00\x00" + b"\x01" + b"\x00" + b"\x01" + b"\x00"
    with pytest.raises(ValueError, match="loop"):
        transposed_chunk_records(_header(1, 10), b"\x00" + bytes([len(hdr)]) + hdr)


def test_a_damaged_transposed_chunk_is_named_in_the_file(tmp_path: Path) -> None:
    recs = _records(300, ("example",), seed=4)
    path = write_arrayrecord(tmp_path / "d.array_record", "group_size:100,transpose:true,uncompressed", recs)
    raw = bytearray(path.read_bytes())
    with open_arrayrecord(path) as f:
        begin = int(f.chunks.begin[1])
        h = read_chunk_header(f.read, begin)
    raw[h.data_begin + h.data_size // 2] ^= 0x55  # inside a value: decodes, but its hash fails
    bad = tmp_path / "bad.array_record"
    bad.write_bytes(bytes(raw))
    with open_arrayrecord(bad, check_data=True) as f:
        assert f.record(0) == recs[0] and f.record(250) == recs[250]
        with pytest.raises(RiegeliError, match=r"chunk 1 at byte .* records \(100-199\) are lost"):
            f.record(150)
        found = f.verify(data=True)
        assert [p.kind for p in found] == [ProblemKind.CHUNK_DAMAGED] and "records (100-199)" in found[
            0
        ].message
    raw[h.data_begin + 1] ^= 0x40  # its header size: it no longer decodes, hash or not
    bad.write_bytes(bytes(raw))
    with (
        open_arrayrecord(bad) as f,
        pytest.raises(RiegeliError, match=r"chunk 1 at byte .*(hash mismatch|decoded)"),
    ):
        f.record(150)


def _wrap(depth: int, i: int) -> bytes:
    """A message nested `depth` deep (each level a length-delimited field 1 or 2 holding the next),
    the innermost a varint and a string."""
    msg = b"\x08" + bytes([i % 100]) + b"\x1a\x03abc"
    for d in range(depth):
        n = len(msg)
        head = bytearray([0x0A if d % 2 else 0x12])
        while n >= 0x80:
            head.append(n & 0x7F | 0x80)
            n >>= 7
        head.append(n)
        msg = bytes(head) + msg
    return msg


@pytest.mark.parametrize("depth", [3, 40, 70])
def test_deeply_nested_submessages(tmp_path: Path, depth: int) -> None:
    recs = [_wrap(depth + i % 3, i) for i in range(30)]
    path = write_arrayrecord(tmp_path / "n.array_record", "group_size:100,transpose:true,zstd:3", recs)
    _same_as_official(path, recs)


def test_a_plain_riegeli_file_of_transposed_chunks_is_walked(tmp_path: Path) -> None:
    """A Riegeli file without ArrayRecord's footer (plain Riegeli, as TFDS writes it, or a writer
    never closed): its transposed chunks found by their headers and decoded."""
    recs = _records(500, ("example", "sequence", "nonproto"), seed=5)
    path = write_arrayrecord(tmp_path / "w.array_record", "group_size:64,transpose:true,brotli:6", recs)
    with open_arrayrecord(path) as f:
        footer = f.footer.offset
    plain = tmp_path / "plain.riegeli"
    plain.write_bytes(path.read_bytes()[:footer])
    with open_arrayrecord(plain) as f:
        assert [p.kind for p in f.problems] == [ProblemKind.FOOTER_MISSING]
        assert [f.record(i) for i in range(f.num_records)] == recs


def test_lengths_that_would_wrap_around_when_summed_are_refused() -> None:
    huge = _varint(1 << 63)
    hdr = b"\x01\x02" + b"\x00" + huge + huge  # one empty bucket, two buffers of 2**63 bytes
    with pytest.raises(ValueError, match="buffers claim"):
        transposed_chunk_records(_header(1, 10), b"\x00" + _varint(len(hdr)) + hdr)
    hdr = b"\x02\x00" + huge + huge  # two buckets of 2**63 bytes
    with pytest.raises(ValueError, match="buckets claim"):
        transposed_chunk_records(_header(1, 10), b"\x00" + _varint(len(hdr)) + hdr)


def _random_message(rnd: random.Random, depth: int) -> bytes:
    """A random valid protobuf message: every wire type, field numbers up to 2**29 - 1, varints of
    every length, strings that are messages, groups, nesting up to 6 deep."""
    parts = []
    for _ in range(rnd.randrange(0, 6)):
        field = rnd.choice([1, 2, 15, 16, 2047, 2048, (1 << 29) - 1, rnd.randrange(1, 1 << 29)])
        wire = rnd.choice([0, 0, 1, 2, 2, 5, 3])
        if wire == 0:
            v = rnd.choice([0, 1, 127, 128, 300, rnd.getrandbits(rnd.randrange(1, 65))])
            parts.append(_varint(field << 3) + _varint(v))
        elif wire in (1, 5):
            parts.append(_varint(field << 3 | wire) + rnd.randbytes(8 if wire == 1 else 4))
        elif wire == 2:
            inner = depth < 6 and rnd.random() < 0.6
            body = _random_message(rnd, depth + 1) if inner else rnd.randbytes(rnd.randrange(0, 200))
            parts.append(_varint(field << 3 | 2) + _varint(len(body)) + body)
        elif depth < 6:
            parts.append(_varint(field << 3 | 3) + _random_message(rnd, depth + 1) + _varint(field << 3 | 4))
    return b"".join(parts)


@pytest.mark.parametrize("seed", range(3))
def test_random_messages_equal_the_official_readers(tmp_path: Path, seed: int) -> None:
    rnd = random.Random(seed)
    for t in range(3):
        recs = [
            _random_message(rnd, 0) if rnd.random() < 0.85 else rnd.randbytes(rnd.randrange(0, 30))
            for _ in range(rnd.randrange(1, 200))
        ]
        codec = ("uncompressed", "zstd:1", "snappy", "brotli:1")[(seed * 3 + t) % 4]
        group = (1, 7, 1000)[t % 3]
        path = write_arrayrecord(
            tmp_path / f"r{t}.array_record", f"group_size:{group},transpose:true,{codec}", recs
        )
        official = m.ArrayRecordReader(str(path)).read_all()
        with open_arrayrecord(path) as f:
            assert [f.record(i) for i in range(f.num_records)] == list(official) == recs


@pytest.mark.parametrize("steps", [20, 300])
def test_small_batches_and_block_chains_decode_the_same(tmp_path: Path, monkeypatch, steps: int) -> None:
    """The decoder's batches (cut where a record begins, buffers' read positions carried) and the
    block-wise chaining of string buffers, forced small so that every record spans batches and
    every string buffer is chained by blocks: the official reader's records still."""
    from tfrview.core.arrayrecord import transposed

    monkeypatch.setattr(transposed, "_BATCH_STEPS", steps)
    monkeypatch.setattr(transposed, "_CHAIN_BLOCKS_FROM", 64)
    monkeypatch.setattr(transposed, "_CHAIN_SAMPLE", 1024)
    monkeypatch.setattr(transposed, "_CHAIN_BLOCK", 32)
    recs = MIXED[:100] + _records(60, ("example",), seed=5)
    path = write_arrayrecord(tmp_path / "s.array_record", "group_size:1000,transpose:true,zstd:3", recs)
    _same_as_official(path, recs)


def _lengths_prefixed(rnd: random.Random, kind: int, n: int) -> bytes:
    parts = []
    for i in range(n):
        if kind == 0:  # periodic keys: a walker off the chain never meets it
            s = [b"label", b"score", b"tokens", b"id"][i % 4]
        elif kind == 1:
            s = b"item-%08d" % i
        elif kind == 2:
            s = rnd.randbytes(rnd.randrange(0, 20))
        elif kind == 3:  # a few long strings (two-byte lengths) among short ones
            s = rnd.randbytes(rnd.randrange(0, 12) if rnd.random() < 0.97 else rnd.randrange(128, 600))
        else:
            s = b""
        parts.append(_varint(len(s)) + s)
    return b"".join(parts)


def test_string_chains_by_blocks_equal_the_walk_one_by_one() -> None:
    """Buffers of length-prefixed strings chained by walkers a block at a time equal the walk
    string by string: whole, cut, with stray bytes after, and with bytes flipped."""
    from tfrview.core.arrayrecord import transposed

    rnd = random.Random(7)
    for trial in range(60):
        buf = _lengths_prefixed(rnd, trial % 5, rnd.randrange(1, 400))
        if trial % 3 == 1:
            buf = buf[: rnd.randrange(1, len(buf) + 1)]
        elif trial % 3 == 2:
            b = bytearray(buf + rnd.randbytes(rnd.randrange(0, 4)))
            for _ in range(rnd.randrange(1, 4)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
            buf = bytes(b)
        a = np.frombuffer(buf, dtype=np.uint8)
        want = transposed._chain_walk(buf, 0)
        for block, widest in ((16, 8), (64, 30), (2048, 1)):
            old = transposed._CHAIN_BLOCK
            transposed._CHAIN_BLOCK = block
            try:
                got = transposed._chain_by_blocks(a, widest)
            finally:
                transposed._CHAIN_BLOCK = old
            assert got.tolist() == want.tolist(), (trial, block, widest)


def test_the_non_proto_lengths_are_every_whole_varint_of_their_buffer() -> None:
    """`_all_varints` (decoded by riegeli.varints_at, the one varint gather): values of 1 to 5
    bytes each equal their plain decoding; bytes after the last whole varint are no length; a
    varint over 5 bytes is no 32-bit length and is refused."""
    from tfrview.core.arrayrecord.transposed import _all_varints

    rnd = random.Random(7)
    values = [
        rnd.choice([0, 1, 127, 128, 300, 16383, 16384, 1 << 21, (1 << 28) + 5, (1 << 32) - 1])
        for _ in range(500)
    ]
    values += [rnd.randrange(1 << rnd.randrange(1, 33)) for _ in range(500)]

    def varint(v: int) -> bytes:
        out = bytearray()
        while v >= 0x80:
            out.append(v & 0x7F | 0x80)
            v >>= 7
        return bytes(out) + bytes([v])

    buf = b"".join(map(varint, values)) + b"\x85\x80"  # a varint cut short at the end
    got = _all_varints(np.frombuffer(buf, dtype=np.uint8))
    assert got.dtype == np.uint64 and got.tolist() == values
    assert _all_varints(np.frombuffer(b"\x80\x80", dtype=np.uint8)).tolist() == []
    with pytest.raises(ValueError, match="not a 32-bit varint"):
        _all_varints(np.frombuffer(b"\x05" + varint(1 << 35), dtype=np.uint8))
