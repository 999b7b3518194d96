"""Line-ending forensics and repair on records whose counts explode (issues 25.3 and 26.2): every
command that reaches the search for lost CR bytes answers at once, keeps the good record, says why
a record was left out, and never shows a traceback."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from tests.helpers import framed, payloads_of
from tfrview.core.tfrecord.framing import encode_header, encode_record

HANG = 60  # seconds: a command still running then has hung (each answers in about one)
# with repair and export --parquet: what reaches the search
COMMANDS = (
    ["info"],
    ["verify", "--checks", "--json"],
)


def _run(*args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "tfrview", *args], capture_output=True, text=True, timeout=HANG)
    assert r.returncode in (0, 1), f"{args}: exit {r.returncode}: {r.stderr[-500:]}"
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr[-500:]
    return r


def _stripped(rnd: random.Random, m: int, k: int, proven: bool = True) -> tuple[bytes, bytes]:
    """(the record as written, framed; the same after dos2unix): m LF bytes, k after a CR. Not
    `proven`: its stored CRC is another data's, so no placement can pass."""
    cr = set(rnd.sample(range(m), k))
    body = rnd.randbytes(m).replace(b"\n", b"x").replace(b"\r", b"y")
    data = b"".join((b"\r\n" if i in cr else b"\n") + body[i : i + 1] for i in range(m))
    rec = encode_record(data)
    if not proven:
        rec = rec[:-4] + encode_record(data[::-1])[-4:]
    return data, rec.replace(b"\r\n", b"\n")


def _good(rnd: random.Random) -> bytes:
    return rnd.randbytes(2000).replace(b"\n", b"x").replace(b"\r", b"y")


@pytest.mark.parametrize("proven", [True, False], ids=["restorable", "unproven"])
def test_a_thousand_lf_bytes_that_lost_999_crs(tmp_path, proven):
    """~2,000 bytes, 1,000 LF bytes, a header claiming 999 more bytes than the record has, then a
    good record: the search (1,000 placements, once 1.7e8 enumerated heads) answers at once."""
    rnd = random.Random(25)
    data, rec = _stripped(rnd, 1000, 999, proven)
    good = _good(rnd)
    src = tmp_path / "lost.tfrecord"
    src.write_bytes(rec + encode_record(good))
    before = src.read_bytes()
    for command in COMMANDS:
        r = _run(*command, str(src))
        if command[0] == "verify" and "--json" in command:
            f = json.loads(r.stdout)["files"][0]
            assert f["records"] == 1 and not f["ok"]
            assert ("line-ending conversion" in f.get("cause", "")) == proven  # 2 of 2 whole once undone
        elif command == ["info"]:
            assert "records       2 (1 damaged)" in r.stdout  # one numbering: the cut record is a row
    r = _run("repair", str(src), "-o", str(tmp_path / "out.tfrecord"), "--json")
    rep = json.loads(r.stdout)
    assert payloads_of(tmp_path / "out.tfrecord") == ([data, good] if proven else [good])
    if proven:
        assert rep["repaired"] == [
            {"record": 0, "how": "999 CR bytes the conversion dropped put back, proven by both CRCs"}
        ]
    r = _run("export", "--parquet", str(tmp_path / "out.parquet"), str(src))
    import pyarrow.parquet as pq

    rows = pq.read_table(tmp_path / "out.parquet").to_pylist()  # the damaged record 0, then the good one
    assert [row["record"] for row in rows] == [0, 1] and "wrote 2 records" in r.stdout
    assert src.read_bytes() == before


def test_a_search_over_its_budget_is_left_out_and_named(tmp_path):
    """33 LF bytes that lost 8 CR bytes (13.9 M placements: few enough to prove, too many steps to
    search) among records that each lost one: the repair says which limit left it out."""
    rnd = random.Random(26)
    pls, recs = [], []
    for _ in range(3):
        data, rec = _stripped(rnd, 40, 1)
        pls.append(data)
        recs.append(rec)
    recs.append(_stripped(rnd, 33, 8)[1])
    good = _good(rnd)
    src = tmp_path / "budget.tfrecord"
    src.write_bytes(b"".join(recs) + encode_record(good))
    r = _run("verify", "--checks", "--json", str(src))
    assert "4 of its 5 records are whole" in json.loads(r.stdout)["files"][0]["cause"]
    r = _run("repair", str(src), "-o", str(tmp_path / "out.tfrecord"), "--json")
    rep = json.loads(r.stdout)
    assert payloads_of(tmp_path / "out.tfrecord") == [*pls, good]
    [(record, why)] = [(d["record"], d["why"]) for d in rep["dropped"]]
    assert record == 3 and "proof search budget exceeded (limits.PROOF_WORK" in why, why


def test_a_text_file_whose_first_header_overstates_its_length(tmp_path):
    """100 records of 'ab\\n' * 2000 whose first header claims bytes past the end: the ways to put
    back its 'lost' CR bytes have thousands of digits, said as a power of ten, never written out."""
    data, _ = framed([b"ab\n" * 2000] * 100)
    src = tmp_path / "text.tfrecord"
    src.write_bytes(encode_header(len(data) - 16 + 3000) + data[12:])
    before = src.read_bytes()
    r = _run("verify", "--json", str(src))
    assert r.stdout.endswith("}\n") and r.stdout.count("\n") == 1
    f = json.loads(r.stdout)["files"][0]
    # its first record's header alone is damaged: its data passed its CRC, so it is intact (one rule)
    assert f["records"] == 100 and f["damaged_records"] == 0 and f["record_status"]["header_damaged"] == 1
    assert [p["kind"] for p in f["problems"]] == ["bad_length_crc"]
    assert (
        "damaged length header" in f["problems"][0]["message"]
        and "data bytes are still framed" in f["problems"][0]["message"]
    )
    r = _run("verify", str(src))
    assert "bad_length_crc" in r.stdout and "100 intact records, 0 damaged" in r.stdout
    r = _run("info", str(src))
    assert "records       100\n" in r.stdout  # none damaged: the header-damaged record is intact
    r = _run("repair", str(src), "-o", str(tmp_path / "out.tfrecord"), "--json")
    rep = json.loads(r.stdout)
    assert rep["written"] == 100 and rep["reheadered"] == 1 and rep["dropped"] == []
    assert payloads_of(tmp_path / "out.tfrecord") == [b"ab\n" * 2000] * 100
    assert src.read_bytes() == before
