import math

import numpy as np

from tests.helpers import RACCOON
from tfrview.core.records import payload as P
from tfrview.core.records.proto import example_pb2, tensor_pb2


def make_example(**features) -> bytes:
    ex = example_pb2.Example()
    for k, v in features.items():
        f = ex.features.feature[k]
        if isinstance(v, list) and v and isinstance(v[0], bytes):
            f.bytes_list.value.extend(v)
        elif isinstance(v, list) and v and isinstance(v[0], float):
            f.float_list.value.extend(v)
        else:
            f.int64_list.value.extend(v)
    return ex.SerializeToString()


def test_example_decodes_to_plain_values():
    data = make_example(label=[3], name=[b"cat"], box=[0.25, 0.5])
    p = P.decode(data)
    assert p.kind == "example"
    assert p.features["label"].type == "int64_list" and p.features["label"].values.tolist() == [3]
    assert p.features["name"].values == [b"cat"]
    assert p.features["box"].values.dtype == np.float32
    assert p.features["box"].values.tolist() == [0.25, 0.5]


def test_sequence_example():
    se = example_pb2.SequenceExample()
    se.context.feature["id"].bytes_list.value.append(b"clip-1")
    fl = se.feature_lists.feature_list["frames"]
    for i in range(3):
        fl.feature.add().int64_list.value.extend([i, i + 1])
    p = P.decode(se.SerializeToString())
    assert p.kind == "sequence_example"
    assert p.features["id"].values == [b"clip-1"]
    assert [f.values.tolist() for f in p.feature_lists["frames"]] == [[0, 1], [1, 2], [2, 3]]


def test_other_protobuf_becomes_a_field_tree():
    t = tensor_pb2.TensorProto(dtype=tensor_pb2.DT_UINT8, tensor_content=b"\x01\x02\x03")
    t.tensor_shape.dim.add().size = 3
    p = P.decode(t.SerializeToString())
    assert p.kind == "protobuf"
    nums = [f.number for f in p.fields]
    assert nums == [1, 2, 4]
    assert p.fields[0].value == tensor_pb2.DT_UINT8


def test_opaque_bytes_and_text():
    assert P.decode(b"just some text").kind == "bytes"
    assert P.decode(bytes(range(256)) * 3).kind == "bytes"


def test_empty_payload_is_an_empty_example():
    p = P.decode(b"")
    assert p.kind == "example" and p.features == {}


def test_json_values_nan_inf_and_bytes():
    data = make_example(x=[math.nan, math.inf, -math.inf, 1.5], b=[b"\xff\x00", b"ok"])
    d = P.payload_json(P.decode(data))
    assert d["features"]["x"]["values"] == ["nan", "inf", "-inf", 1.5]
    assert d["features"]["b"]["values"] == [{"base64": "/wA="}, "ok"]


def test_corpus_examples():
    from tfrview.core.tfrecord.report import index_source
    from tfrview.core.tfrecord.source import open_source

    with open_source(RACCOON) as src:
        idx = index_source(src)
        p = P.decode(src.read(int(idx.offsets[0]) + 12, int(idx.lengths[0])))
    assert p.kind == "example"
    assert p.features["image/object/class/text"].values == [b"raccoon"]
    assert p.features["image/encoded"].values[0][:3] == b"\xff\xd8\xff"


def test_bytes_that_are_not_text_go_to_json_as_base64():
    """A NUL or many control characters make bytes no text, though they decode as UTF-8: JSON would
    write each as six characters (a 22 MB record of zeros became 135 MB of `dump --json`)."""
    import base64

    from tfrview.core.records.payload import json_bytes

    zeros = b"\x00" * 1000
    assert json_bytes(zeros) == {"base64": base64.b64encode(zeros).decode("ascii")}
    controls = b"\x01\x02ab" * 10  # half control characters
    assert json_bytes(controls) == {"base64": base64.b64encode(controls).decode("ascii")}
    assert json_bytes(b"a\tb\nc\r\n caf\xc3\xa9") == "a\tb\nc\r\n café"  # text stays text
    assert (
        json_bytes(b"\x1b[1mbold\x1b[0m said once in a line of text")
        == "\x1b[1mbold\x1b[0m said once in a line of text"
    )
