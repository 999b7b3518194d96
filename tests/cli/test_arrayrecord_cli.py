"""`tfrview info/verify/dump/salvage` on ArrayRecord files made by the official writer: the records
it wrote, their payload kinds, damage named at its chunk, a salvage that is an ArrayRecord of them
(through the official writer, read back by its reader) or, asked, a TFRecord."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.test_payload import make_example
from tests.helpers import write_arrayrecord
from tfrview.cli import main
from tfrview.core.tfrecord.report import index_and_verify
from tfrview.core.tfrecord.source import open_source

pytest.importorskip(
    "array_record.python.array_record_module",
    reason="the official array-record wheel is not installed here (it has no Windows build)",
)


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


RECS = [make_example(label=[i], name=[f"n{i}".encode()]) for i in range(40)]  # tf.train.Examples


@pytest.fixture
def shard(tmp_path) -> Path:
    # a TFDS-style ArrayRecord shard name: found by its content, not its name
    return write_arrayrecord(
        tmp_path / "mnist-train.array_record-00000-of-00001", "group_size:1,zstd:3", RECS
    )


def test_info_counts_and_sniffs_the_records(capsys, shard) -> None:
    code, out, _ = run(capsys, "info", str(shard))
    assert code == 0
    assert "compression   arrayrecord" in out and "records       40" in out
    assert "payloads      example 40" in out.lower()


def test_verify_and_dump_print_its_records(capsys, shard) -> None:
    code, out, _ = run(capsys, "verify", str(shard), "--json")
    assert code == 0
    rep = json.loads(out)
    files = rep["files"] if isinstance(rep, dict) and "files" in rep else rep
    first = files[0] if isinstance(files, list) else files
    assert first["records"] == 40 and first["compression"] == "arrayrecord" and first["ok"]
    code, out, _ = run(capsys, "dump", str(shard), "--records", "3", "--json")
    assert code == 0
    row = json.loads(out.splitlines()[0])
    assert row["record"] == 3 and json.dumps(row).count("features") >= 1


def test_damage_is_named_at_its_chunk_and_salvage_keeps_the_rest(capsys, tmp_path, shard) -> None:
    src = open_source(shard)
    begin = int(src.ar.chunks.begin[7])
    src.close()
    data = bytearray(shard.read_bytes())
    data[begin + 10] ^= 4  # chunk 7's header
    bad = tmp_path / "bad.array_record"
    bad.write_bytes(data)
    code, out, _ = run(capsys, "verify", str(bad))
    assert code == 1
    assert f"chunk_damaged: chunk 7 at byte {begin:,} has a damaged header" in out
    assert "39 intact records, 1 damaged" in out
    out_path = tmp_path / "saved.tfrecord"
    code, out, _ = run(capsys, "salvage", str(bad), "-o", str(out_path), "--format", "tfrecord")
    assert code == 0 and "wrote 39 intact records (tfrecord)" in out
    with open_source(out_path) as s:
        assert s.compression == "none"
        idx, found = index_and_verify(s)
        got = [s.read(int(o) + 12, int(n)) for o, n in zip(idx.offsets, idx.lengths, strict=True)]
    assert found == [] and got == RECS[:7] + RECS[8:]


def test_data_hashes_on_request_name_a_flipped_data_byte(capsys, tmp_path, shard, monkeypatch) -> None:
    src = open_source(shard)
    begin = int(src.ar.chunks.begin[5])
    src.close()
    data = bytearray(shard.read_bytes())
    data[begin + 45] ^= 1  # chunk 5's data (zstd: it may still decode)
    bad = tmp_path / "flipped.array_record"
    bad.write_bytes(data)
    monkeypatch.setenv("TFRVIEW_AR_DATA_HASHES", "1")
    code, out, _ = run(capsys, "verify", str(bad))
    assert code == 1 and f"chunk 5 at byte {begin:,} has damaged data (hash mismatch)" in out


def test_a_group_size_over_one_is_a_note(capsys, tmp_path) -> None:
    p = write_arrayrecord(tmp_path / "g.array_record", "group_size:16,snappy", RECS)
    code, out, _ = run(capsys, "verify", str(p))
    assert "arrayrecord_group_size" in out and "group_size 16" in out
    assert code == 0  # a note: the file is still OK
    code, out, _ = run(capsys, "dump", str(p), "--records", "20:22", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["record"] for r in rows] == [20, 21]


@pytest.mark.parametrize("options", ["group_size:1,zstd:3", "group_size:8,brotli:6", "group_size:1,snappy"])
def test_salvage_of_an_arrayrecord_writes_arrayrecord_the_official_reader_reads(
    capsys, tmp_path, options
) -> None:
    """By default an ArrayRecord input's intact records go to a new ArrayRecord file through the
    official writer, with group_size:1 and the input's compression; its reader reads them all."""
    from array_record.python.array_record_module import ArrayRecordReader

    src_path = write_arrayrecord(tmp_path / "in.array_record", options, RECS)
    with open_source(src_path) as src:
        begin = int(src.ar.chunks.begin[2])
        first = int(src.ar.chunks.first[2])
        lost = int(src.ar.chunks.records[2])
    data = bytearray(src_path.read_bytes())
    data[begin + 10] ^= 4  # chunk 2's header
    bad = tmp_path / "bad.array_record"
    bad.write_bytes(data)
    out_path = tmp_path / "saved.array_record"
    code, out, _ = run(capsys, "salvage", str(bad), "-o", str(out_path))
    assert code == 0 and f"wrote {40 - lost} intact records (arrayrecord)" in out
    r = ArrayRecordReader(str(out_path))
    try:
        got = [r.read() for _ in range(r.num_records())]
    finally:
        r.close()
    assert got == RECS[:first] + RECS[first + lost :]
    with open_source(out_path) as s:
        assert s.ar.group_size == 1
        codec = options.split(",")[1].split(":")[0]
        assert codec in s.ar.footer.options
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]  # no temporary file left


def test_salvage_asked_for_arrayrecord_refuses_a_tfrecord_compression_in_one_line(
    capsys, tmp_path, shard
) -> None:
    code, _, err = run(capsys, "salvage", str(shard), "-o", str(tmp_path / "o"), "--compression", "gzip")
    assert code == 2 and "--compression is TFRecord's" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
