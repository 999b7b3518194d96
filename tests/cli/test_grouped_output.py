"""verify --checks text folds repeated findings into one line with their count (issue 12);
--json keeps every problem."""

from __future__ import annotations

import json
import subprocess
import sys

from tfrview.core.output.writer import write_records
from tfrview.demo import _example


def test_repeats_are_one_line_in_text_and_every_one_in_json(tmp_path):
    recs = [
        _example(**{"image/encoded": b"img_%03d.jpg" % i, "image/format": "jpeg"}).SerializeToString()
        for i in range(12)
    ]
    path = tmp_path / "names.tfrecord"
    write_records(path, recs)
    text = subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", "--checks", str(path)], capture_output=True, text=True
    ).stdout
    lines = [ln for ln in text.splitlines() if "image_not_an_image" in ln]
    assert len(lines) == 1 and "×12" in lines[0] and "(records 0, 1, 2, 3, 4, 5, 6, 7, …)" in lines[0], text
    out = subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", "--checks", "--json", str(path)],
        capture_output=True,
        text=True,
    ).stdout
    kinds = [p["kind"] for p in json.loads(out)["files"][0]["problems"]]
    assert kinds.count("image_not_an_image") == 12


def test_findings_that_quote_data_bytes_are_one_group_and_json_keeps_each_detail(tmp_path):
    """Issue 18.5: 50 records whose image holds noise of different sizes and first bytes were 50
    lines (the message quoted the bytes); they group by kind and feature, the bytes in `detail`."""
    import random

    rnd = random.Random(7)
    noise = [bytes([0x74, 0x1F, i]) + rnd.randbytes(1000 + 37 * i) for i in range(50)]
    path = tmp_path / "L.tfrecord"
    write_records(
        path, [_example(**{"image/encoded": b, "image/format": "jpeg"}).SerializeToString() for b in noise]
    )
    text = subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", "--checks", str(path)], capture_output=True, text=True
    ).stdout
    lines = [ln for ln in text.splitlines() if "image_not_an_image" in ln]
    assert lines == [
        "  image_not_an_image ×50: image/encoded holds bytes that no image format starts with, not an image "
        "(records 0, 1, 2, 3, 4, 5, 6, 7, …)"
    ], text
    out = subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", "--checks", "--json", str(path)],
        capture_output=True,
        text=True,
    ).stdout
    found = [p for p in json.loads(out)["files"][0]["problems"] if p["kind"] == "image_not_an_image"]
    assert len(found) == 50 and {p["feature"] for p in found} == {"image/encoded"}
    assert len({p["message"] for p in found}) == 1
    assert [p["detail"] for p in found[:2]] == [
        f"{len(noise[0]):,} bytes, starting 74 1f 00 {noise[0][3:8].hex(' ')}",
        f"{len(noise[1]):,} bytes, starting 74 1f 01 {noise[1][3:8].hex(' ')}",
    ]


def test_a_group_of_repeats_with_a_cause_says_it_on_a_line_of_its_own(tmp_path):
    from tests.helpers import framed, payloads

    data, offs = framed(payloads(20, base=200))
    b = bytearray(data)
    for n in (2, 9, 15):
        b[offs[n] + 40] ^= 4  # one flipped bit each, at the same data byte
    path = tmp_path / "flips.tfrecord"
    path.write_bytes(bytes(b))
    text = subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", str(path)], capture_output=True, text=True
    ).stdout
    lines = text.splitlines()
    assert lines[1:] == [
        "  bad_data_crc ×3: corrupted record at …: data CRC mismatch in record … (starts at …) (records 2, 9, 15)",
        "    cause: one flipped bit (data byte 28, bit 2): `tfrview repair` restores it",
    ], text
