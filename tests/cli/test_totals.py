"""Issue 18.7: `info` and `verify` of many shards give the dataset's totals (a line, and a `totals`
object in JSON) and, past FILES_LISTED files, list only the files with problems unless -v."""

from __future__ import annotations

import json

from tests.helpers import framed
from tfrview.cli import FILES_LISTED, main
from tfrview.core.output.writer import write_records
from tfrview.demo import _example


def _shards(tmp_path, n: int, damaged: int | None = None) -> list:
    recs = [_example(label=k, text=f"t{k}").SerializeToString() for k in range(50)]
    paths = []
    for i in range(n):
        p = tmp_path / f"train-{i:05d}-of-{n:05d}"
        if i == damaged:
            data, offs = framed(recs)
            b = bytearray(data)
            b[offs[3] + 14] ^= 1  # record 3's data CRC fails
            p.write_bytes(bytes(b))
        else:
            write_records(p, recs)
        paths.append(p)
    return paths


def _run(capsys, *args) -> tuple[int, str]:
    code = main([*args, "-j", "1"])
    out, _ = capsys.readouterr()
    return code, out


def test_verify_of_many_shards_lists_the_damaged_one_and_the_totals(capsys, tmp_path):
    paths = _shards(tmp_path, FILES_LISTED + 4, damaged=5)
    size = sum(p.stat().st_size for p in paths)
    code, out = _run(capsys, "verify", str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert [ln for ln in lines if ln.startswith(str(tmp_path))] == [
        f"{paths[5]}: 1 problem  49 intact records, 1 damaged, compression none"
    ]
    total = (
        f"total: 12 files (11 OK, 1 with problems) · 599 intact records, 1 damaged · "
        f"{_human(size)} · 1 problem (more than {FILES_LISTED} files: only files with problems are listed; "
        "-v lists all)"
    )
    assert lines[-1] == total
    code, out = _run(capsys, "verify", "-v", str(tmp_path))
    assert sum(ln.startswith(str(tmp_path)) for ln in out.splitlines()) == 12
    assert out.splitlines()[-1].startswith("total: 12 files (11 OK, 1 with problems) · 599 intact records")
    code, out = _run(capsys, "verify", "--json", str(tmp_path))
    assert out.endswith("\n")
    doc = json.loads(out)
    assert doc["totals"] == {
        "files": 12,
        "unreadable_files": 0,
        "records": 599,
        "damaged_records": 1,
        "bytes": size,
        "files_with_problems": 1,
        "problems": 1,
        "record_status": {"ok": 599, "damaged": 1, "header_damaged": 0, "unverified": 0},
    }
    assert len(doc["files"]) == 12 and {f["dataset"] for f in doc["files"]} == {"train-?????-of-00012"}


def test_info_of_many_shards_gives_one_dataset_block_and_totals(capsys, tmp_path):
    paths = _shards(tmp_path, FILES_LISTED + 2, damaged=1)
    code, out = _run(capsys, "info", str(tmp_path))
    assert code == 0
    assert out.count("  compression") == 2  # the damaged file's block and the dataset's
    assert f"dataset train-?????-of-{len(paths):05d}\n  files         10\n" in out
    assert "  records       500 (1 damaged)\n" in out
    assert out.splitlines()[-1].startswith("total: 10 files · 500 records, 1 damaged · ")
    code, out = _run(capsys, "info", "--json", str(tmp_path))
    assert out.endswith("\n")
    doc = json.loads(out)
    assert doc["totals"]["records"] == 500 and doc["totals"]["files"] == 10
    (d,) = doc["datasets"]
    assert d["records"] == 500 and d["files"] == 10 and set(d["features"]) == {"label", "text"}
    code, out = _run(capsys, "info", "-v", str(tmp_path))
    assert out.count("  compression") == 11
    assert out.count(f"  dataset       train-?????-of-{len(paths):05d}\n") == 10  # each file says its dataset


def _human(n: int) -> str:
    from tfrview.core.units import human_bytes

    return human_bytes(n)


def test_info_of_a_folder_of_many_datasets_prints_blocks_only_for_the_damaged(capsys, tmp_path):
    recs = [_example(label=k).SerializeToString() for k in range(5)]
    for name in "abcdefghijkl":  # twelve datasets of one file each
        write_records(tmp_path / f"{name}.tfrecord", recs)
    data, offs = framed(recs)
    (tmp_path / "m.tfrecord").write_bytes(data[: offs[4] + 20])  # cut short
    code, out = _run(capsys, "info", str(tmp_path))
    assert code == 0
    assert [ln for ln in out.splitlines() if not ln.startswith(" ")] == [
        f"{tmp_path / 'm.tfrecord'}",
        "total: 13 files in 13 datasets · 65 records, 1 damaged · "  # the record cut short is a row
        + _human(sum(p.stat().st_size for p in tmp_path.iterdir()))
        + " · 1 framing problem (more than 8 files: only files with problems are listed; -v lists all)",
    ]
