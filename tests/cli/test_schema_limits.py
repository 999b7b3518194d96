"""The schema file obeys the rules of data files, and a record read through it the list limit of
an Example (issue 25.5): /dev/zero, a FIFO or an oversized file is a one-line error at once, and a
packed list past MAX_LIST_VALUES keeps its first values with a note, in bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from google.protobuf import descriptor_pb2

from tests.helpers import PEAK_RSS_KB
from tfrview.core.limits import MAX_LIST_VALUES, MAX_SCHEMA_BYTES
from tfrview.core.output.writer import write_records
from tfrview.core.units import human_bytes

# Runs the CLI and prints its own peak RSS (kB) on stderr's last line, whatever it returns.
_MEASURED = (
    "import resource, runpy, sys\n"
    "sys.argv = ['tfrview', *sys.argv[1:]]\n"
    "try:\n    runpy.run_module('tfrview', run_name='__main__')\n"
    f"finally:\n    print({PEAK_RSS_KB}, file=sys.stderr)\n"
)

ROOT = Path(__file__).resolve().parents[2]  # the repository: child processes import tfrview from it


def _run(*args, timeout: float = 60):
    return subprocess.run(
        [sys.executable, "-m", "tfrview", *args], capture_output=True, text=True, timeout=timeout
    )


def _points_schema(path):
    """package acme; message Cloud { string name = 1; repeated int64 points = 2 [packed = true];
    message Part { repeated float xs = 1 [packed = true]; } Part part = 3; }"""
    F = descriptor_pb2.FieldDescriptorProto
    f = descriptor_pb2.FileDescriptorProto(name="cloud.proto", package="acme", syntax="proto3")
    m = f.message_type.add(name="Cloud")
    m.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    pts = m.field.add(name="points", number=2, type=F.TYPE_INT64, label=F.LABEL_REPEATED)
    pts.options.packed = True
    part = m.nested_type.add(name="Part")
    xs = part.field.add(name="xs", number=1, type=F.TYPE_FLOAT, label=F.LABEL_REPEATED)
    xs.options.packed = True
    m.field.add(
        name="part", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=".acme.Cloud.Part"
    )
    path.write_bytes(descriptor_pb2.FileDescriptorSet(file=[f]).SerializeToString())
    return path


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _field(num: int, body: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(body)) + body


def _one_line_error(r, words: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in r.stderr, r.stderr


def test_a_schema_that_is_no_regular_file_or_too_big_is_refused_at_once(tmp_path):
    data = tmp_path / "x.tfrecord"
    write_records(data, [b"\x0a\x01a"])
    _one_line_error(
        _run("dump", "--proto", "/dev/zero", str(data), timeout=20), "/dev/zero: not a regular file"
    )
    fifo = tmp_path / "schema.desc"
    os.mkfifo(fifo)  # no writer: opening it for reading would wait forever
    _one_line_error(
        _run("dump", "--proto", str(fifo), str(data), timeout=20), "not a regular file (a named pipe)"
    )
    big = tmp_path / "big.desc"
    with open(big, "wb") as fh:
        fh.truncate(MAX_SCHEMA_BYTES + (1 << 20))  # sparse: costs no disk
    said = f"the schema is {human_bytes(MAX_SCHEMA_BYTES + (1 << 20))}, over the {human_bytes(MAX_SCHEMA_BYTES)} limit"
    _one_line_error(_run("dump", "--proto", str(big), str(data)), said + " (limits.MAX_SCHEMA_BYTES)")


def test_a_packed_list_past_the_limit_keeps_its_first_values_with_a_note(tmp_path):
    desc = _points_schema(tmp_path / "cloud.desc")
    n = MAX_LIST_VALUES * 20  # 20 M one-byte varints: gigabytes if decoded whole
    xs = 1_200_000  # and a nested packed float list past the limit too
    part = _field(1, b"\x00\x00\xc0\x3f" * xs)  # 1.5f
    record = _field(1, b"cloud") + _field(2, b"\x07" * n) + _field(3, part)
    data = tmp_path / "cloud.tfrecord"
    write_records(data, [record])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run(
        [sys.executable, "-c", _MEASURED, "dump", "--json", "--proto", str(desc), str(data)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    row = json.loads(r.stdout)
    msg = row["message"]
    assert msg["name"] == "cloud"
    assert len(msg["points"]) == MAX_LIST_VALUES and set(msg["points"]) == {7}
    assert len(msg["part"]["xs"]) == MAX_LIST_VALUES and set(msg["part"]["xs"]) == {1.5}
    assert row["limits"] == [
        f"part.xs: {xs:,} values, over the limit of {MAX_LIST_VALUES:,}; the first {MAX_LIST_VALUES:,} are decoded (limits.MAX_LIST_VALUES)",
        f"points: {n:,} values, over the limit of {MAX_LIST_VALUES:,}; the first {MAX_LIST_VALUES:,} are decoded (limits.MAX_LIST_VALUES)",
    ]
    peak_mb = int(r.stderr.strip().splitlines()[-1]) / 1024
    assert peak_mb < 400, f"dump through the schema peaked at {peak_mb:.0f} MB"
