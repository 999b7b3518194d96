"""Issue 20: one record status vocabulary. A file with an ok, a damaged and an unverified record
reads in the same words in `verify --json`, `dump --json`, the JSON-lines export, the Parquet
export and the window's record table."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from tests.cli.test_numbering import run
from tests.gui.driver import Driver
from tests.gui.test_salvage_export import run_and_wait
from tfrview.core.procs.messages import Failed
from tfrview.core.tfrecord.framing import encode_record

WANT = ["ok", "damaged", "unverified"]


def _three_records(path) -> None:
    damaged = bytearray(encode_record(b"y" * 50))
    damaged[12 + 20] ^= 0x01  # a data byte: its data CRC fails, its header is whole
    cut = encode_record(b"z" * 50)[:-3]  # the file ends inside its data CRC: nothing can verify it
    path.write_bytes(encode_record(b"x" * 50) + bytes(damaged) + cut)


def test_every_output_says_a_records_status_in_the_same_words(qtbot, open_window, tmp_path, capsys):
    path = tmp_path / "three.tfrecord"
    _three_records(path)

    code, out, _ = run(capsys, "verify", "-j", "1", "--json", str(path))
    verified = json.loads(out)
    assert code == 1
    counts = {"ok": 1, "damaged": 1, "header_damaged": 0, "unverified": 1}
    assert verified["files"][0]["record_status"] == counts == verified["totals"]["record_status"]

    code, out, _ = run(capsys, "dump", "--json", str(path))
    assert [json.loads(line).get("status", "ok") for line in out.splitlines()] == WANT

    pq_out = tmp_path / "three.parquet"
    assert run(capsys, "export", "-j", "1", "--parquet", str(pq_out), str(path))[0] == 0
    rows = pq.read_table(pq_out).select(["n", "crc"]).to_pylist()
    assert [r["crc"] for r in rows if r["n"] is not None] == WANT

    w = open_window([path])
    d = Driver(qtbot, w)
    d.wait_index_phase("done", timeout=10000)
    assert [s for _, _, s in d.table_records()] == WANT
    col = w.model.columns.index("status")
    assert [w.model.data(w.model.index(r, col)) for r in range(3)] == WANT  # what the person reads

    jsonl = tmp_path / "three.jsonl"
    res = run_and_wait(qtbot, lambda cb: w.exporting.write_export("jsonl", [0, 1, 2], jsonl, on_done=cb))
    assert not isinstance(res, Failed)
    assert [json.loads(line)["crc"] for line in jsonl.read_text().splitlines()] == WANT
