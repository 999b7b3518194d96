"""A schema for custom payloads (issue 12): records of another protobuf shown with field names,
through protobuf's own descriptor pool, from a descriptor set; bad schemas are one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

from google.protobuf import descriptor_pb2

from tfrview.core.output.writer import write_records


def _descriptor_set(path):
    """What `protoc --include_imports --descriptor_set_out` writes for:
    package acme; message Frame { string name = 1; int64 timestamp_micros = 2;
    message Camera { string id = 1; double exposure = 2; } repeated Camera cameras = 3; }"""
    f = descriptor_pb2.FileDescriptorProto(name="frame.proto", package="acme", syntax="proto3")
    m = f.message_type.add(name="Frame")
    F = descriptor_pb2.FieldDescriptorProto
    m.field.add(name="name", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    m.field.add(name="timestamp_micros", number=2, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    cam = m.nested_type.add(name="Camera")
    cam.field.add(name="id", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    cam.field.add(name="exposure", number=2, type=F.TYPE_DOUBLE, label=F.LABEL_OPTIONAL)
    m.field.add(
        name="cameras", number=3, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED, type_name=".acme.Frame.Camera"
    )
    path.write_bytes(descriptor_pb2.FileDescriptorSet(file=[f]).SerializeToString())
    return path


def _run(*args):
    return subprocess.run([sys.executable, "-m", "tfrview", *args], capture_output=True, text=True)


def test_records_of_a_custom_message_are_shown_with_field_names(tmp_path):
    from tfrview.core.records.protoschema import load_schema

    desc = _descriptor_set(tmp_path / "frame.desc")
    Frame = load_schema(desc, "acme.Frame").cls
    recs = [
        Frame(
            name=f"frame {i}",
            timestamp_micros=1_700_000_000_000_000 + i,
            cameras=[Frame.Camera(id="FRONT", exposure=0.5)],
        ).SerializeToString()
        for i in range(3)
    ]
    data = tmp_path / "frames.tfrecord"
    write_records(data, recs)
    r = _run("dump", "--json", "--proto", str(desc), "--message", "Frame", str(data))
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert rows[1]["message_type"] == "acme.Frame" and rows[1]["kind"] == "message"
    assert rows[1]["message"] == {
        "name": "frame 1",
        "timestamp_micros": 1700000000000001,  # a number
        "cameras": [{"id": "FRONT", "exposure": 0.5}],
    }
    text = _run(
        "dump", "--proto", str(desc), "--records", "0", str(data)
    ).stdout  # the only top-level message
    assert "acme.Frame" in text and '"name": "frame 0"' in text


def test_bad_schemas_are_one_line_errors(tmp_path):
    desc = _descriptor_set(tmp_path / "frame.desc")
    data = tmp_path / "x.tfrecord"
    write_records(data, [b"\x0a\x01a"])
    junk = tmp_path / "junk.desc"
    junk.write_bytes(b"\xff\xfe not a descriptor set")
    for args, words in [
        (["--proto", str(junk)], "not a descriptor set"),
        (["--proto", str(desc), "--message", "Nope"], "no message 'Nope'"),
        (["--message", "Frame"], "--message needs --proto"),
    ]:
        r = _run("dump", *args, str(data))
        assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
