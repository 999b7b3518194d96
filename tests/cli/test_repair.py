"""tfrview repair (issue 12): every record with one flipped data bit restored and proven by both
CRCs; nothing unproven written; the report says what and how."""

from __future__ import annotations

import json
import random
import subprocess
import sys

from tests.helpers import RACCOON, framed, payloads_of
from tfrview.core.tfrecord.bitflip import find_flipped_bit
from tfrview.core.tfrecord.framing import HEADER_SIZE, masked_crc


def test_every_single_flipped_data_bit_is_found():
    rnd = random.Random(7)
    for n in (1, 9, 4096, 200_000, 1 << 20):
        for _ in range(5):
            d = bytearray(rnd.randbytes(n))
            c = masked_crc(bytes(d))
            p, b = rnd.randrange(n), rnd.randrange(8)
            d[p] ^= 1 << b
            assert find_flipped_bit(bytes(d), c) == (p, b)
    d = bytearray(rnd.randbytes(3000))
    c = masked_crc(bytes(d))
    d[5] ^= 1
    d[2000] ^= 0x40
    assert find_flipped_bit(bytes(d), c) is None  # two flips: no single position explains it


def test_repair_restores_flipped_records_and_leaves_out_the_rest(tmp_path):
    pls = payloads_of(RACCOON)
    data, offs = framed(pls)
    b = bytearray(data)
    rnd = random.Random(11)
    flipped = [1, 4, 7, 10]
    for k in flipped:  # one data bit each
        b[offs[k] + HEADER_SIZE + rnd.randrange(len(pls[k]))] ^= 1 << rnd.randrange(8)
    b[offs[2] + HEADER_SIZE + len(pls[2]) + 1] ^= 0x10  # a bit of record 2's stored data CRC
    b[offs[5] + HEADER_SIZE + 10] ^= 0x01  # record 5: two bits, beyond proof
    b[offs[5] + HEADER_SIZE + 900] ^= 0x80
    src = tmp_path / "flipped.tfrecord"
    src.write_bytes(bytes(b))
    before = src.read_bytes()
    out = tmp_path / "repaired.tfrecord"
    r = subprocess.run(
        [sys.executable, "-m", "tfrview", "repair", str(src), "-o", str(out), "--json"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert sorted(x["record"] for x in rep["repaired"]) == sorted([*flipped, 2])
    assert [x["record"] for x in rep["dropped"]] == [5]
    assert all("proven" in x["how"] or "data is whole" in x["how"] for x in rep["repaired"])
    assert src.read_bytes() == before  # the input is never written
    v = subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", "--json", str(out)], capture_output=True, text=True
    )
    f = json.loads(v.stdout)["files"][0]
    assert v.returncode == 0 and f["ok"] and f["records"] == len(pls) - 1
    assert payloads_of(out) == [p for k, p in enumerate(pls) if k != 5]  # byte-exact originals


def _run_json(*args) -> dict:
    r = subprocess.run([sys.executable, "-m", "tfrview", *args], capture_output=True, text=True)
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_verify_names_causes_where_the_bytes_show_them(tmp_path):
    from tests.helpers import payloads

    pls = payloads(200, base=3000)
    data, offs = framed(pls)
    b = bytearray(data)
    b[offs[3] + HEADER_SIZE + 100] ^= 0x20
    b[offs[50] + HEADER_SIZE + 600 : offs[50] + HEADER_SIZE + 1624] = bytes(1024)
    cases = {
        "flip": bytes(b),
        "cut": data[: (len(data) // 65536) * 65536],
        "crlf": data.replace(b"\n", b"\r\n"),
        "tail": data + b"appended by someone " * 10,
        "zeros": data[: offs[100]] + bytes(8192) + data[offs[100] :],
        "joined": data[: offs[120] + 500] + data,
        "prepended": b"<html><body>403 Forbidden</body></html>\n" + data,
    }
    got = {}
    for name, content in cases.items():
        (tmp_path / f"{name}.tfrecord").write_bytes(content)
        f = _run_json("verify", "--json", str(tmp_path / f"{name}.tfrecord"))["files"][0]
        got[name] = (f.get("cause", ""), [p.get("cause", "") for p in f["problems"]])
    assert got["flip"][1] == [
        "one flipped bit (data byte 100, bit 5): `tfrview repair` restores it",
        "1.0 KB of zeros from byte 600 of its data: a block the disk or filesystem lost",
    ]
    assert "a whole number of 64 KiB: a copy or download cut short" in got["cut"][1][0]
    assert got["crlf"][0].startswith("line-ending conversion: every LF byte became CR LF")
    assert "appended after the last record" in got["tail"][1][0]
    assert "of zeros" in got["zeros"][1][0]
    assert (
        "whole records follow from byte" in got["joined"][1][0] and "two files joined" in got["joined"][1][0]
    )
    assert got["prepended"][1][0].startswith(
        "40 B before the first record: prepended to the file (text starting '<html>"
    )


def test_one_command_repairs_a_line_ending_conversion_and_a_flipped_bit(tmp_path):
    from tests.helpers import payloads

    pls = payloads(120, base=2000)
    data, offs = framed(pls)
    b = bytearray(data)
    b[offs[7] + HEADER_SIZE + 33] ^= 0x04  # one flipped bit, before the transfer that converted line endings
    both = bytes(b).replace(b"\n", b"\r\n")
    src = tmp_path / "both.tfrecord"
    src.write_bytes(both)
    out = tmp_path / "fixed.tfrecord"
    rep = _run_json("repair", str(src), "-o", str(out), "--json")
    assert rep["file_fix"].startswith("a line-ending conversion undone")
    assert [r["record"] for r in rep["repaired"]] == [7] and rep["dropped"] == []
    assert out.read_bytes() == data  # every record restored to its original bytes


def test_repair_puts_back_the_cr_bytes_dos2unix_dropped(tmp_path):
    pls = payloads_of(RACCOON)
    data, _ = framed(pls)
    src = tmp_path / "dos2unix.tfrecord"
    src.write_bytes(data.replace(b"\r\n", b"\n"))
    cause = _run_json("verify", "--json", str(src))["files"][0]["cause"]
    assert cause.startswith("line-ending conversion: CR LF bytes became LF")
    out = tmp_path / "fixed.tfrecord"
    rep = _run_json("repair", str(src), "-o", str(out), "--json")
    assert "CR bytes put back" in rep["file_fix"]
    left_out = [d["record"] for d in rep["dropped"]]
    # 4 CR LF in a 160 KB JPEG
    assert left_out == [11] and "cannot single one out" in rep["dropped"][0]["why"]
    assert all("CR byte" in r["how"] and "proven by both CRCs" in r["how"] for r in rep["repaired"])
    assert len(rep["repaired"]) == sum(p.count(b"\r\n") > 0 for p in pls[:11])
    assert payloads_of(out) == pls[:11]  # byte-exact originals
