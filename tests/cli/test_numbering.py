"""Issue 18: what the trial found hidden. A split with a missing shard is never called clean."""

from __future__ import annotations

import json

from tests.helpers import framed, payloads
from tfrview.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _split_without_2(tmp_path):
    data, _ = framed(payloads(3))
    d = tmp_path / "p"
    d.mkdir()
    for i in (0, 1, 3):
        (d / f"train-{i:05d}-of-00004").write_bytes(data)
    return d


def test_verify_names_a_missing_shard_in_text_json_and_exit_status(capsys, tmp_path):
    d = _split_without_2(tmp_path)
    code, out, _ = run(capsys, "verify", "-j", "1", str(d))
    assert code == 1
    lines = out.splitlines()
    assert sum(" OK " in x for x in lines) == 3
    assert f"{d / 'train-00002-of-00004'}: MISSING  1 problem" in lines
    assert any(x.startswith("  missing_shard: train-00002-of-00004 is not there") for x in lines)

    code, out, _ = run(capsys, "verify", "-j", "1", "--json", str(d))
    assert code == 1
    files = json.loads(out)["files"]
    gone = [f for f in files if not f["ok"]]
    assert [f["path"] for f in gone] == [str(d / "train-00002-of-00004")]
    assert gone[0]["missing"] is True and gone[0]["records"] == 0
    (p,) = gone[0]["problems"]
    assert p["kind"] == "missing_shard" and p["record"] is None and "4 shards" in p["message"]
    assert sum(f["records"] for f in files) == 9


def test_a_whole_split_is_clean_and_info_and_dump_name_the_gap(capsys, tmp_path):
    d = _split_without_2(tmp_path)
    (d / "train-00002-of-00004").write_bytes(framed(payloads(3))[0])
    code, out, _ = run(capsys, "verify", "-j", "1", "--json", str(d))
    assert code == 0 and all(f["ok"] for f in json.loads(out)["files"])
    (d / "train-00002-of-00004").unlink()

    code, out, _ = run(capsys, "info", "-j", "1", "--json", str(d))
    files = json.loads(out)["files"]
    assert [f["problems"][0]["kind"] for f in files if f.get("missing")] == ["missing_shard"]
    code, out, _ = run(capsys, "info", "-j", "1", str(d))
    assert "train-00002-of-00004 is not there" in out

    code, out, err = run(capsys, "dump", "--json", str(d))
    assert code == 1 and len(out.splitlines()) == 9
    assert "train-00002-of-00004 is not there" in err


# --- 18.3: one numbering, every framed record a row -----------------------------------------------


def _cr_stripped(path):
    """10 records, 3 of which hold CR LF in their data; the file went through dos2unix (CR LF -> LF),
    the last record's among them (it then ends short of what its header says)."""
    import random

    rnd = random.Random(1)
    pls = []
    for i in range(10):
        b = bytearray(f"rec-{i:02d}|".encode() + bytes(rnd.randrange(32, 127) for _ in range(60)))
        if i in (2, 5, 9):
            b[20:22] = b"\r\n"
        pls.append(bytes(b))
    path.write_bytes(framed(pls)[0].replace(b"\r\n", b"\n"))
    return pls


def _swallowing(path):
    """Record 0's header (its length CRC valid) claims records 1 and 2 as well."""
    from tfrview.core.tfrecord.framing import encode_header, encode_record

    pls = payloads(6)
    recs = [encode_record(p) for p in pls]
    recs[0] = encode_header(len(pls[0]) + len(recs[1]) + len(recs[2])) + recs[0][12:]
    path.write_bytes(b"".join(recs))
    return pls


def _numbers(capsys, path, tmp_path) -> dict[str, list]:
    """(number, status) of every record as verify --json, dump --json, repair --json and the
    Parquet export give them."""
    import pyarrow.parquet as pq

    code, out, _ = run(capsys, "verify", "-j", "1", "--json", str(path))
    f = json.loads(out)["files"][0]
    damaged = sorted({p["record"] for p in f["problems"] if p["record"] is not None})
    code, out, _ = run(capsys, "dump", "--json", str(path))
    assert code == 1
    dumped = [json.loads(x) for x in out.splitlines()]
    pq_out = tmp_path / f"{path.stem}.parquet"
    assert run(capsys, "export", "-j", "1", "--parquet", str(pq_out), str(path))[0] == 0
    rows = pq.read_table(pq_out).select(["n", "record", "crc", "problems"]).to_pylist()
    return {
        "verify": [f["records"] + f["damaged_records"] + f.get("unverified_records", 0), damaged],
        "dump": [len(dumped), [d["record"] for d in dumped if d.get("status")]],
        "parquet": [
            sum(r["n"] is not None for r in rows),
            [r["n"] for r in rows if r["crc"] not in ("ok", None)],
        ],
        "rows": rows,
        "dumped": dumped,
    }


def test_a_cr_stripped_file_is_numbered_alike_everywhere(capsys, tmp_path):
    path = tmp_path / "crlf.record"
    pls = _cr_stripped(path)
    got = _numbers(capsys, path, tmp_path)
    assert got["verify"] == got["dump"] == got["parquet"] == [10, [2, 5, 9]]
    assert [d["bytes"][:6] if isinstance(d["bytes"], str) else "" for d in got["dumped"]][:2] == [
        "rec-00",
        "rec-01",
    ]
    assert [r["n"] for r in got["rows"]] == list(range(10))  # no problem of no record here

    code, out, _ = run(capsys, "repair", str(path), "-o", str(tmp_path / "fixed.record"), "--json")
    rep = json.loads(out)
    assert code == 0 and rep["written"] == 10 and rep["dropped"] == []
    assert [r["record"] for r in rep["repaired"]] == [2, 5, 9]  # the numbers verify and the table give them
    code, out, _ = run(capsys, "dump", "--json", str(tmp_path / "fixed.record"))
    assert [json.loads(x)["record"] for x in out.splitlines()] == list(range(10))
    from tests.helpers import payloads_of

    assert payloads_of(tmp_path / "fixed.record") == pls


def test_records_an_overstated_length_swallowed_are_dumped(capsys, tmp_path):
    path = tmp_path / "over.record"
    pls = _swallowing(path)
    got = _numbers(capsys, path, tmp_path)
    assert got["verify"] == got["dump"] == [6, [0]]
    assert [r["n"] for r in got["rows"]] == list(range(6))
    assert [d["bytes"] for d in got["dumped"]] == [p.decode() for p in pls]
    code, out, _ = run(capsys, "salvage", str(path), "-o", str(tmp_path / "s.record"))
    assert code == 0 and "wrote 6 intact records" in out


def test_a_record_cut_in_its_crc_is_shown_dumped_and_kept_when_asked(capsys, tmp_path):
    from tests.helpers import payloads_of
    from tfrview.core.tfrecord.framing import encode_record

    data = b"x" * 5000
    path = tmp_path / "cut.record"
    path.write_bytes(encode_record(data)[:-4])  # the file ends where its data CRC should start
    code, out, _ = run(capsys, "verify", "-j", "1", "--json", str(path))
    f = json.loads(out)["files"][0]
    assert code == 1 and f["records"] == 0 and f["unverified_records"] == 1
    assert [(p["kind"], p["record"]) for p in f["problems"]] == [("truncated", 0)]
    code, out, _ = run(capsys, "dump", "--json", str(path))
    (d,) = [json.loads(x) for x in out.splitlines()]
    assert code == 1 and d["record"] == 0 and d["length"] == 5000 and d["status"] == "unverified"
    assert "no CRC checked them" in d["note"]

    for cmd in ("salvage", "repair"):  # nothing would be written: nothing is, and it says why
        out_path = tmp_path / f"{cmd}.record"
        code, out, err = run(capsys, cmd, str(path), "-o", str(out_path))
        assert code == 2 and not out_path.exists()
        assert len(err.strip().splitlines()) == 1 and "not written" in err and "--keep-unverified" in err
    kept = tmp_path / "kept.record"
    code, out, _ = run(capsys, "salvage", str(path), "-o", str(kept), "--keep-unverified")
    assert code == 0 and "1 unverified record kept" in out
    assert payloads_of(kept) == [data]


def test_problems_of_no_record_are_parquet_rows(capsys, tmp_path):
    import pyarrow.parquet as pq

    path = tmp_path / "junk.record"
    path.write_bytes(framed(payloads(3))[0] + b"\x01junk after the last record")
    out = tmp_path / "junk.parquet"
    code, text, _ = run(capsys, "export", "-j", "1", "--parquet", str(out), str(path))
    rows = pq.read_table(out).select(["n", "record", "file", "offset", "problems"]).to_pylist()
    assert code == 0 and "1 problems of no record" in text
    assert [r["n"] for r in rows] == [0, 1, 2, None]
    assert rows[3] == {
        "n": None,
        "record": None,
        "file": "junk.record",
        "offset": path.stat().st_size - 27,
        "problems": ["trailing_bytes"],
    }
