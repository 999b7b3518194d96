"""Issue 20 (review defect 5): "intact" is one set. A record whose header alone was damaged has data
that passed its CRC: `verify` counts it intact, `salvage` keeps it, `dump` decodes it and the deep
pass (so Parquet) reads it, while a record whose data CRC fails is damaged everywhere."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from tests.helpers import framed
from tfrview.cli import main
from tfrview.core.records.proto import example_pb2


def example(i: int) -> bytes:
    ex = example_pb2.Example()
    ex.features.feature["n"].int64_list.value.append(i)
    return ex.SerializeToString()


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_salvage_dump_and_parquet_agree_on_intact(capsys, tmp_path):
    data, offs = framed([example(i) for i in range(5)])
    b = bytearray(data)
    b[offs[1] + 12] ^= 0xFF  # record 1: a payload byte, so its data CRC fails
    b[offs[3] + 8] ^= 0xFF  # record 3: its length CRC only (header damaged, data intact)
    path = tmp_path / "two.tfrecord"
    path.write_bytes(bytes(b))

    code, out, _ = run(capsys, "verify", "-j", "1", "--json", str(path))
    (f,) = json.loads(out)["files"]
    assert f["record_status"] == {"ok": 3, "damaged": 1, "header_damaged": 1, "unverified": 0}
    assert (f["records"], f["damaged_records"]) == (4, 1)
    code, out, _ = run(capsys, "verify", "-j", "1", str(path))
    assert "4 intact records, 1 damaged" in out

    code, out, _ = run(capsys, "salvage", str(path), "-o", str(tmp_path / "s.tfrecord"))
    assert "wrote 4 intact records; dropped 1 damaged" in out

    code, out, _ = run(capsys, "dump", "--json", str(path))
    rows = [json.loads(x) for x in out.splitlines()]
    assert [r.get("status", "ok") for r in rows] == ["ok", "damaged", "ok", "header_damaged", "ok"]
    assert rows[3]["kind"] == "example"

    pq_out = tmp_path / "two.parquet"
    assert run(capsys, "export", "-j", "1", "--parquet", str(pq_out), str(path))[0] == 0
    table = pq.read_table(pq_out).select(["n", "crc", "kind"]).to_pylist()
    kinds = {r["n"]: (r["crc"], r["kind"]) for r in table}
    assert kinds[3] == ("header_damaged", "example")  # the deep pass read it, as dump decodes it
    assert kinds[1][0] == "damaged" and kinds[1][1] is None
    assert [kinds[n][1] for n in (0, 2, 4)] == ["example"] * 3
