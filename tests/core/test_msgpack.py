"""msgpack payloads (issue 22): written by the `msgpack` package itself into ArrayRecord (official
writer) and TFRecord files, read back as a tree in `dump`'s text and JSON; hostile ones (cut, nested
past the limits, absurd claimed lengths) stay bytes or are cut with the limit named, in bounded time."""

from __future__ import annotations

import time
from pathlib import Path

import msgpack
import pytest

from tests.core.test_payload import make_example
from tests.helpers import payloads_of
from tfrview.core.limits import MSGPACK_MAX_DEPTH, MSGPACK_SHOWN_NODES
from tfrview.core.output.writer import write_records
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.records.payload import decode, payload_json, sniff_kind
from tfrview.core.records.rowtext import payload_row_text
from tfrview.core.records.textfmt import format_payload

VALUES = [
    {"label": 3, "name": "cat", "scores": [0.5, 1.25], "jpeg": b"\xff\xd8\xff\xe0\x00", "none": None},
    [1, -2, "two", {"nested": [True, False]}],
    {7: "int key", "ext": msgpack.ExtType(9, b"\x00\x01"), "t": msgpack.Timestamp(10, 5)},
]
RECORDS = [msgpack.packb(v, datetime=False) for v in VALUES]


def _check(recs: list[bytes]) -> None:
    assert recs == RECORDS
    kinds = [sniff_kind(r) for r in recs]
    assert kinds == [PayloadKind.MSGPACK] * 3
    first, second, third = (decode(r) for r in recs)
    assert first.kind == "msgpack" and first.limits == ()
    assert payload_json(first)["msgpack"] == {
        "label": 3,
        "name": "cat",
        "scores": [0.5, 1.25],
        "jpeg": {"base64": "/9j/4AA="},
        "none": None,
    }
    text = format_payload(first)
    assert "msgpack {" in text and "  label: int 3" in text and "  scores: array[2]" in text
    assert "    [1]: float 1.25" in text and "jpeg: bin[5] <5 bytes: ff d8 ff e0 00>" in text
    assert payload_json(second)["msgpack"] == [1, -2, "two", {"nested": [True, False]}]
    assert payload_row_text(second).startswith("msgpack array of 4: 1, -2, 'two', map")
    # a map with a key that is no text: [key, value] pairs; an ext type is its code and bytes, never run
    assert payload_json(third)["msgpack"][:2] == [
        [7, "int key"],
        ["ext", {"ext": 9, "data": {"base64": "AAE="}}],
    ]
    assert "ext: ext type 9: <2 bytes: 00 01>" in format_payload(third)


def test_msgpack_records_in_a_tfrecord_file(tmp_path: Path) -> None:
    path = tmp_path / "m.tfrecord"
    write_records(path, RECORDS)
    _check(payloads_of(path))


def test_msgpack_records_in_an_arrayrecord_file(tmp_path: Path) -> None:
    pytest.importorskip(
        "array_record.python.array_record_module",
        reason="the official array-record wheel is not installed here (it has no Windows build)",
    )
    from tests.helpers import write_arrayrecord

    path = write_arrayrecord(tmp_path / "m.array_record", "group_size:1,zstd:3", RECORDS)
    _check(payloads_of(path))


def test_more_specific_kinds_and_plain_bytes_are_not_msgpack() -> None:
    assert sniff_kind(make_example(label=[1])) == PayloadKind.EXAMPLE
    for data in (msgpack.packb(5), msgpack.packb("text"), b'{"a": 1}', b"\x89PNG\r\n\x1a\n" + b"\0" * 30):
        assert sniff_kind(data) != PayloadKind.MSGPACK, data


@pytest.mark.parametrize(
    "data",
    [
        RECORDS[0][:-1],  # cut short
        RECORDS[0] + b"\x00",  # a byte left over
        b"\xdd\xff\xff\xff\xff",  # an array claiming 4 G entries in 5 bytes
        b"\xdf\x7f\xff\xff\xff" + b"\x01" * 64,  # a map claiming 2 G pairs
        b"\x91" * 5000 + b"\x01",  # nested past the decoder's stack
        b"\xc5\xff\xff" + b"x" * 10,  # bin 16 claiming 65,535 bytes
    ],
)
def test_hostile_msgpack_is_bytes_at_once(data: bytes) -> None:
    t = time.perf_counter()
    p = decode(data)
    assert p.kind == PayloadKind.BYTES and sniff_kind(data) == PayloadKind.BYTES
    assert len(format_payload(p).splitlines()) == 1
    assert time.perf_counter() - t < 1  # a claim is refused before it is allocated


def test_deep_and_wide_msgpack_is_cut_with_the_limit_named() -> None:
    deep = decode(b"\x91" * (MSGPACK_MAX_DEPTH + 20) + b"\x01")
    assert deep.kind == PayloadKind.MSGPACK
    assert any("limits.MSGPACK_MAX_DEPTH" in n for n in deep.limits)
    assert "limit: " in format_payload(deep) and "limits.MSGPACK_MAX_DEPTH" in format_payload(deep)
    wide = decode(msgpack.packb(list(range(MSGPACK_SHOWN_NODES * 3))))
    assert wide.kind == PayloadKind.MSGPACK
    assert any("limits.MSGPACK_SHOWN_NODES" in n for n in wide.limits)
    assert len(payload_json(wide)["msgpack"]) == MSGPACK_SHOWN_NODES
    assert len(format_payload(wide).splitlines()) < MSGPACK_SHOWN_NODES + 10


def test_a_decoded_payload_says_the_cuts_its_tree_makes_without_building_it() -> None:
    """`msgpacks.cut_notes` (what `decode` puts in `limits`) walks as `tree` does, counting only:
    the same notes for values within the limits, too deep, too wide, and cut inside a nested one."""
    from tfrview.core.records import msgpacks

    deep: object = 1
    for _ in range(MSGPACK_MAX_DEPTH + 5):
        deep = (deep,)
    shapes = [
        *VALUES,
        deep,
        tuple(range(MSGPACK_SHOWN_NODES * 2)),
        {"a": tuple(range(MSGPACK_SHOWN_NODES - 3)), "b": {"c": (1, 2, 3, 4)}, "d": deep},  # cut inside "b"
        {"d": deep, "wide": tuple({"k": i} for i in range(MSGPACK_SHOWN_NODES))},  # both cuts
        (MSGPACK_SHOWN_NODES - 1) * (0,),  # exactly within: no note
    ]
    for value in shapes:
        assert msgpacks.cut_notes(value) == msgpacks.tree(value)[1]
    notes = [msgpacks.cut_notes(v) for v in shapes]
    assert [len(n) for n in notes] == [0, 0, 0, 1, 1, 1, 2, 0]
    assert "limits.MSGPACK_MAX_DEPTH" in notes[3][0] and "limits.MSGPACK_SHOWN_NODES" in notes[4][0]
    wide = decode(msgpack.packb(shapes[6]))
    assert wide.limits == msgpacks.tree(wide.value)[1] == notes[6]
