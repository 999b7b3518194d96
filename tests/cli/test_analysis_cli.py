"""The CLI on the analysis pass (issue 10): worker processes give the same answer as one, results
are remembered for info, the fact table exports as Parquet, the cache can be cleared."""

import json

import pyarrow.parquet as pq
import pytest

from tests.cli.test_cli import run
from tests.helpers import framed, payloads


@pytest.fixture
def shards(tmp_path):
    from tfrview.demo import build_demo

    paths = build_demo(tmp_path / "demo")
    data, offs = framed(payloads(30))
    b = bytearray(data)
    b[offs[4] + 20] ^= 1
    extra = tmp_path / "demo" / "extra-00002.tfrecord"
    extra.write_bytes(bytes(b))
    return [*paths, extra]


def test_verify_on_workers_answers_as_one_process(capsys, shards):
    args = ["verify", "--json", "--checks", *map(str, shards)]
    code1, out1, _ = run(capsys, *args, "-j", "1")
    code2, out2, _ = run(capsys, *args, "-j", "3")
    assert code1 == code2 == 1
    assert json.loads(out1) == json.loads(out2)
    files = json.loads(out1)["files"]
    assert [f["path"] for f in files] == [str(p) for p in shards]
    assert files[2]["damaged_records"] == 1


def test_info_says_when_an_unchanged_file_was_read(capsys, shards):
    run(capsys, "verify", str(shards[0]))
    code, out, _ = run(capsys, "info", "--json", str(shards[0]))
    info = json.loads(out)["files"][0]
    assert code == 0 and "analysed_at" in info and info["records"] == 25


def test_export_parquet_one_row_per_record_with_problems(capsys, shards, tmp_path):
    out = tmp_path / "facts.parquet"
    code, text, _ = run(capsys, "export", "--parquet", str(out), *map(str, shards), "--images")
    assert code == 0 and "wrote 69 records" in text
    t = pq.read_table(out)
    n = t.column("n").to_pylist()  # problems of no record (the demo's garbage and cut tail) are rows too
    assert t.num_rows == 71 and [x for x in n if x is not None] == list(range(69))
    rows = [r for r in t.to_pylist() if r["n"] is not None]
    assert sorted(r["problems"][0] for r in t.to_pylist() if r["n"] is None) == [
        "truncated",
        "unreadable_bytes",
    ]
    assert rows[39 + 4]["problems"] == ["bad_data_crc"] and rows[39 + 4]["crc"] == "damaged"
    assert rows[0]["image"][:2] == b"\xff\xd8" and rows[0]["image_width"] == 320
    code, _, err = run(capsys, "export", "--parquet", str(out), str(shards[0]))
    assert code == 2 and "exists" in err  # never replaced without --force
    code, _, err = run(capsys, "export", "--parquet", str(shards[0]), str(shards[0]), "--force")
    assert code == 2 and "input" in err


def test_cache_clear(capsys, shards):
    run(capsys, "info", str(shards[0]))
    code, out, _ = run(capsys, "cache")
    assert code == 0 and "stored results" in out and not out.startswith("0 ")
    code, out, _ = run(capsys, "cache", "--clear")
    assert code == 0 and "removed" in out
    code, out, _ = run(capsys, "cache")
    assert ": 0 stored results" in out


def test_info_all_over_a_file_read_in_parts_counts_every_record(capsys, tmp_path, monkeypatch):
    import tfrview.core.analysis.shard as shard_mod

    data, _ = framed(payloads(300))
    path = tmp_path / "big.tfrecord"
    path.write_bytes(data)
    monkeypatch.setattr(shard_mod, "PART_BYTES", len(data) // 3)  # three parts of one file
    code, out, _ = run(capsys, "info", "--json", "--all", "-j", "2", str(path))
    info = json.loads(out)["files"][0]
    assert code == 0 and info["records"] == 300 and info["sampled_records"] == 300
