"""A Riegeli file's metadata chunk ('m', a RecordsMetadata right after the signature): read as data,
shown by `info` (record type, writer options, the file descriptors' names: never built nor run),
never counted as records; a damaged or oversized one said in one line."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from tests.core.test_payload import make_example
from tests.helpers import write_arrayrecord
from tfrview.core.arrayrecord.highway import hash64
from tfrview.core.arrayrecord.reader import open_arrayrecord
from tfrview.core.arrayrecord.riegeli import chunk_end, read_chunk_header, read_logical

pytest.importorskip(
    "array_record.python.array_record_module",
    reason="the official array-record wheel is not installed here (it has no Windows build)",
)


def metadata_bytes(n: int) -> bytes:
    from google.protobuf import descriptor_pb2

    from tfrview.core.arrayrecord.proto.records_metadata_pb2 import RecordsMetadata
    from tfrview.core.records.proto import example_pb2

    m = RecordsMetadata(
        record_type_name="tensorflow.Example",
        record_writer_options="transpose,zstd",
        num_records=n,
        file_comment="made by a test",
    )
    proto = descriptor_pb2.FileDescriptorProto()
    example_pb2.DESCRIPTOR.CopyToProto(proto)
    m.file_descriptor.append(proto)
    return m.SerializeToString()


def _chunk_bytes(path: Path, begin: int) -> tuple[bytes, object]:
    with open_arrayrecord(path) as f:
        h = read_chunk_header(f.read, begin)
        return read_logical(f.read, begin, h.end - begin), h


def riegeli_with_metadata(tmp_path: Path, recs: list[bytes], meta: bytes) -> Path:
    """A plain Riegeli file as riegeli's own writer makes it: signature, metadata chunk (a one-record
    transposed chunk with type 'm' and no records), record chunks; no ArrayRecord footer. The
    chunks come from the official writer's files (under 64 KiB: no block header but the first)."""
    t = write_arrayrecord(tmp_path / "meta.ar", "group_size:1,transpose:true,uncompressed", [meta])
    tchunk, th = _chunk_bytes(t, 64)
    data = tchunk[40 : 40 + th.data_size]
    # data_size, data_hash, chunk_type 'm' with num_records 0 (one 64-bit word), decoded_data_size
    rest = struct.pack("<QQQQ", th.data_size, th.data_hash, ord("m"), th.decoded_size)
    mchunk = struct.pack("<Q", hash64(rest)) + rest + data
    assert chunk_end(64, th.data_size, 0) == 64 + len(mchunk)
    r = write_arrayrecord(tmp_path / "recs.ar", "group_size:1,zstd:3", recs)
    with open_arrayrecord(r) as f:
        begins = [int(b) for b in f.chunks.begin]
        sig = f.read(0, 64)
    body = b"".join(_chunk_bytes(r, b)[0] for b in begins)
    out = tmp_path / "with-metadata.riegeli"
    out.write_bytes(sig + mchunk + body)
    assert len(out.read_bytes()) < 65536
    return out


RECS = [make_example(label=[i]) for i in range(5)]


def test_metadata_is_read_and_never_a_record(tmp_path: Path) -> None:
    path = riegeli_with_metadata(tmp_path, RECS, metadata_bytes(len(RECS)))
    with open_arrayrecord(path) as f:
        assert [f.record(i) for i in range(f.num_records)] == RECS  # the metadata is no record
        m = f.metadata
    assert m is not None and not m.error
    assert m.record_type == "tensorflow.Example" and m.writer_options == "transpose,zstd"
    assert m.num_records == 5 and m.comment == "made by a test"
    ((name, messages),) = m.descriptors
    assert name == "tfrview/core/records/proto/example.proto"
    assert "tfrview.proto.Example" in messages and "tfrview.proto.SequenceExample" in messages
    lines = m.lines()
    assert lines[0] == "record type tensorflow.Example" and "writer options transpose,zstd" in lines
    assert any(x.startswith("file descriptor ") and "tfrview.proto.BytesList" in x for x in lines)
    assert m.to_json()["record_type_name"] == "tensorflow.Example"
    assert type(m).from_json(m.to_json()) == m  # as `info --json` keeps it, and back


def test_the_file_lines_of_info_and_the_window_are_printable_whatever_the_file_says() -> None:
    """`reader.info_lines`, the one wording of an ArrayRecord file's chunks, options and metadata
    (`tfrview info` and the window's record tree): what comes from the file (the footer's options,
    the metadata's words, an error naming the file) never reaches a terminal as control bytes."""
    from tfrview.core.arrayrecord.reader import RecordsMetadata, info_lines

    meta = RecordsMetadata(record_type="x\x1b[2Jy", writer_options="zstd\r", comment="a\nb", num_records=3)
    lines = info_lines(
        {"chunks": 1234, "options": "group_size:1\x1b]0;title\x07", "metadata": meta.to_json()}
    )
    assert [label for label, _ in lines] == ["chunks", "metadata", "metadata", "metadata", "metadata"]
    assert lines[0][1].startswith("1,234, options group_size:1") and "(no footer)" not in lines[0][1]
    assert lines[3][1] == "3 records expected by the writer" and lines[2][1] == "writer options zstd\\r"
    assert all(text.isprintable() for _, text in lines), lines
    assert info_lines({"chunks": 2, "options": None, "metadata": None}) == [("chunks", "2 (no footer)")]
    ((label, text),) = info_lines({"error": "/tmp/a\x1b[31m.array_record: not an ArrayRecord file"})
    assert label == "arrayrecord" and text.isprintable() and text.endswith("not an ArrayRecord file")


def test_the_official_writers_files_have_no_metadata(tmp_path: Path) -> None:
    path = write_arrayrecord(tmp_path / "a.array_record", "group_size:1,zstd:3", RECS)
    with open_arrayrecord(path) as f:
        assert f.metadata is None


def test_a_damaged_or_hostile_metadata_chunk_is_one_line(tmp_path: Path) -> None:
    path = riegeli_with_metadata(tmp_path, RECS, metadata_bytes(len(RECS)))
    good = path.read_bytes()
    bad = bytearray(good)
    bad[64 + 60] ^= 0x40  # inside its data: the data hash fails
    path.write_bytes(bytes(bad))
    with open_arrayrecord(path) as f:
        assert f.metadata.error == "its data hash fails"
        assert f.metadata.lines() == ["metadata chunk unreadable: its data hash fails"]
        assert [f.record(i) for i in range(f.num_records)] == RECS
    # a header claiming 1 TB of metadata: refused by the limit before anything is read
    rest = bytearray(good[72:104])
    rest[0:8] = struct.pack("<Q", 1 << 40)
    rest[24:32] = struct.pack("<Q", 1 << 40)
    forged = good[:64] + struct.pack("<Q", hash64(bytes(rest))) + bytes(rest) + good[104:]
    path.write_bytes(forged)
    with open_arrayrecord(path) as f:
        assert "limits.AR_METADATA_BYTES" in f.metadata.error and "\n" not in f.metadata.error
    # bytes that are no RecordsMetadata: said, not raised
    other = riegeli_with_metadata(tmp_path, RECS, b"\x0a\xff\xff\xff\x0f")
    with open_arrayrecord(other) as f:
        assert f.metadata.error.startswith("not a RecordsMetadata message") or f.metadata.error.startswith(
            "it does not decode"
        )


def test_a_whole_plain_riegeli_file_is_no_file_whose_writer_never_closed(tmp_path: Path) -> None:
    """A plain Riegeli file has no ArrayRecord footer by design: with a readable metadata chunk
    (ArrayRecord's writer never writes one), every chunk whole and the records it expects, it opens
    with no problem; cut short, or expecting other records, it is the unclosed file it looks like."""
    from tfrview.core.problems import ProblemKind

    path = riegeli_with_metadata(tmp_path, RECS, metadata_bytes(len(RECS)))
    with open_arrayrecord(path) as f:
        assert f.problems == [] and f.num_records == len(RECS)
        assert [f.record(i) for i in range(f.num_records)] == RECS
    whole = path.read_bytes()
    path.write_bytes(whole[:-7])  # the last chunk cut short
    with open_arrayrecord(path) as f:
        kinds = [p.kind for p in f.problems]
        assert kinds[0] == ProblemKind.FOOTER_MISSING and len(kinds) > 1  # and what the walk lost
        assert [f.record(i) for i in range(f.num_records)] == RECS[: f.num_records]
        assert f.num_records == len(RECS) - 1
    other = riegeli_with_metadata(tmp_path, RECS, metadata_bytes(len(RECS) + 2))  # expects 7, holds 5
    with open_arrayrecord(other) as f:
        assert [p.kind for p in f.problems] == [ProblemKind.FOOTER_MISSING]
