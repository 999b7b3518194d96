"""The bulk reading of Examples (records/examplecols.parse) gives, for every record it takes, exactly
what upb gives (keys, list types, values to the bit); it takes every record protobuf's serializer
writes, and leaves any other encoding (damaged, merged, unknown fields, non-canonical) to upb."""

from __future__ import annotations

import struct

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfrview.core.records.examplecols import parse
from tfrview.core.records.payload import parse_clean_example
from tfrview.core.records.proto import example_pb2

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(tag: int, body: bytes) -> bytes:
    return bytes([tag]) + varint(len(body)) + body


def wire(features: list[tuple[bytes, int, list]]) -> bytes:
    """An Example written by hand in the canonical encoding (floats as raw 32-bit patterns)."""
    entries = b""
    for key, kind, values in features:
        if kind == 0:
            body = b"".join(field(0x0A, v) for v in values)
        elif kind == 1:
            body = field(0x0A, b"".join(struct.pack("<I", v) for v in values)) if values else b""
        else:
            body = field(0x0A, b"".join(varint(v) for v in values)) if values else b""
        entries += field(0x0A, field(0x0A, key) + field(0x12, field([0x0A, 0x12, 0x1A][kind], body)))
    return field(0x0A, entries)


def upb_view(data: bytes):
    """{key: (list type, values as comparable)} by upb, or None when it is not a clean Example."""
    ex = parse_clean_example(data, check_keys=False)
    if ex is None:
        return None
    out = {}
    for k in sorted(ex.features.feature):
        f = ex.features.feature[k]
        t = f.WhichOneof("kind")
        if t is None:
            return "no list"
        v = list(getattr(f, t).value)
        if t == "float_list":
            v = np.array(v, np.float32).view(np.uint32).tolist()  # to the bit: NaNs, signed zeros
        out[k] = (t, v)
    return out


def bulk_view(p, r: int):
    out = {}
    for j in range(int(p.ent_lo[r]), int(p.ent_hi[r])):
        k = p.keys[int(p.e_key[j])]
        kind = int(p.e_kind[j])
        v = p.values(j)
        if kind == 1:  # the floats themselves, to the bit
            a, c = int(p.e_start[j]), int(p.e_count[j])
            v = p.floats[a : a + c].view(np.uint32).tolist()
        out[k] = (("bytes_list", "float_list", "int64_list")[kind], v)
    assert list(out) == sorted(out)  # entries in the order Python sorts the keys
    return out


def check(records: list[bytes], junk: bytes = b"") -> object:
    """Parse the records in one buffer (with `junk` between them) and compare each with upb."""
    buf, starts, ends = b"", [], []
    for r in records:
        buf += junk
        starts.append(len(buf))
        buf += r
        ends.append(len(buf))
    buf += junk
    p = parse(buf, np.array(starts, np.int64), np.array(ends, np.int64))
    for i, r in enumerate(records):
        if p.ok[i]:
            want = upb_view(r)
            assert want is not None and want != "no list", r
            assert bulk_view(p, i) == want, r
            layout, empty = p.variants[p.variant[i]]
            assert layout == (tuple(want), tuple(t for t, _ in want.values()))
            assert empty == (
                None if all(v for _, v in want.values()) else tuple(not v for _, v in want.values())
            )
        else:
            assert p.variant[i] == -1
    return p


keys = st.one_of(
    st.sampled_from(["label", "x", "id", "image/class/label", "", "a" * 40, "é", "\n"]),
    st.text(max_size=12),
)
values = st.one_of(
    st.tuples(st.just(0), st.lists(st.binary(max_size=20), max_size=6)),
    st.tuples(st.just(1), st.lists(st.integers(0, 2**32 - 1), max_size=20)),  # any float bit pattern
    st.tuples(
        st.just(1), st.lists(st.sampled_from([0x7F800001, 0xFFC00000, 0x80000000, 0x7F800000]), max_size=3)
    ),
    st.tuples(st.just(2), st.lists(st.integers(-(2**63), 2**63 - 1), max_size=20)),
)
examples = st.dictionaries(keys, values, max_size=6).map(
    lambda d: wire([(k.encode(), kind, v) for k, (kind, v) in d.items()])
)


@FAST
@given(st.lists(examples, min_size=1, max_size=12), st.binary(max_size=3))
def test_canonical_examples_are_read_as_upb_reads_them(records, junk):
    p = check(records, junk)
    assert p.ok.all()  # everything a serializer writes is taken


@FAST
@given(st.lists(examples, min_size=1, max_size=8), st.data())
def test_damaged_and_other_encodings_are_left_or_read_as_upb_reads_them(records, data):
    hurt = []
    for r in records:
        how = data.draw(st.sampled_from(["flip", "cut", "insert", "twice", "unknown", "same"]))
        b = bytearray(r)
        if how == "flip" and b:
            at = data.draw(st.integers(0, len(b) - 1))
            b[at] = data.draw(st.integers(0, 255))
        elif how == "cut" and b:
            b = b[: data.draw(st.integers(0, len(b) - 1))]
        elif how == "insert":
            b[data.draw(st.integers(0, len(b))) : 0] = data.draw(st.binary(min_size=1, max_size=3))
        elif how == "twice":  # two Examples joined: upb merges them
            b += r
        elif how == "unknown":  # an unknown field in the Example
            b += b"\x10\x01"
        hurt.append(bytes(b))
    check(hurt)


def test_serialized_examples_and_what_the_bulk_reading_leaves():
    ex = example_pb2.Example()
    ex.features.feature["label"].int64_list.value.extend([3, -1, 2**40])
    ex.features.feature["x"].float_list.value.extend([0.5, float("nan"), -0.0])
    ex.features.feature["id"].bytes_list.value.extend([b"a", b""])
    ex.features.feature["empty"].float_list.value.extend([])
    ex.features.feature["nothing"].Clear()  # a Feature with no list: upb's path
    good = ex.SerializeToString()
    del ex.features.feature["nothing"]
    plain = ex.SerializeToString()
    unpacked = wire([(b"x", 1, [1])]).replace(b"\x12\x06\n\x04", b"\x12\x05\x0d")  # one float unpacked
    bad_key = wire([(b"\xff", 2, [1])])  # not UTF-8: upb refuses it
    twice_key = field(0x0A, wire([(b"k", 2, [1])])[2:] + wire([(b"k", 2, [2])])[2:])
    p = check([plain, good, unpacked, bad_key, twice_key, b"", b"\x08\x96\x01"])
    assert p.ok.tolist() == [True, False, False, False, False, False, False]
    assert bulk_view(p, 0)["label"] == ("int64_list", [3, -1, 2**40])
    assert p.variants[p.variant[0]][1] == (True, False, False, False)  # "empty" holds no value
