"""Issue 18.7: TF-Ranking's ExampleListWithContext (field 1: repeated Example `examples`, field 2:
Example `context`) was decoded as a SequenceExample with keys such as '\\n\\x0fdocument_tokens\\x12…'.
It is its own payload kind; dump shows the context and each example's features. The records are
built here from Example protos and the wire format's field numbers."""

from __future__ import annotations

import json

from tfrview.cli import main
from tfrview.core.output.writer import write_records
from tfrview.core.records.payload import EXAMPLE_LIST, decode
from tfrview.demo import _example


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def elwc(examples, context=None) -> bytes:
    out = b"".join(_field(1, e.SerializeToString()) for e in examples)
    return out + (_field(2, context.SerializeToString()) if context is not None else b"")


def _docs(n: int, q: int = 0):
    return [_example(document_tokens=[f"doc{q}_{i}", "text"], relevance=[i % 3]) for i in range(n)]


def test_an_example_list_with_context_is_its_own_kind_with_every_example():
    p = decode(elwc(_docs(3), _example(query_tokens=["what", "is"])))
    assert p.kind == EXAMPLE_LIST
    assert list(p.features) == ["query_tokens"] and list(p.features["query_tokens"].values) == [
        b"what",
        b"is",
    ]
    assert [list(e["document_tokens"].values) for e in p.examples] == [
        [b"doc0_0", b"text"],
        [b"doc0_1", b"text"],
        [b"doc0_2", b"text"],
    ]
    assert [int(e["relevance"].values[0]) for e in p.examples] == [0, 1, 2]
    no_context = decode(elwc(_docs(1)))  # without its context it parses as an Example too: still a list
    assert no_context.kind == EXAMPLE_LIST and len(no_context.examples) == 1 and no_context.features == {}


def test_dump_shows_the_context_and_each_examples_features(capsys, tmp_path):
    path = tmp_path / "ranking.tfrecord"
    write_records(path, [elwc(_docs(2, q), _example(query_tokens=[f"query {q}"])) for q in range(3)])
    assert main(["dump", str(path), "--records", "1"]) == 0
    out = capsys.readouterr().out
    assert "example_list_with_context" in out and "\\n\\x0f" not in out
    assert "context {\n    'query_tokens': bytes_list[1] 'query 1'\n  }" in out
    assert (
        "examples[1] {\n    'document_tokens': bytes_list[2] 'doc1_1' 'text'\n    'relevance': int64_list[1] 1"
        in out
    )
    assert main(["dump", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.endswith("\n")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["kind"] for r in rows] == [EXAMPLE_LIST] * 3
    assert rows[2]["features"] == {"query_tokens": {"type": "bytes_list", "values": ["query 2"]}}
    assert [e["document_tokens"]["values"][0] for e in rows[2]["examples"]] == ["doc2_0", "doc2_1"]
    assert main(["info", "--json", "-j", "1", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["files"][0]["payload_kinds"] == {EXAMPLE_LIST: 3}


def test_a_list_over_the_parser_size_is_read_by_the_walker_too():
    from tfrview.core.limits import UPB_MAX_BYTES

    docs = [_example(doc=["y" * 1000] * 3, relevance=[i]) for i in range(1000)]
    data = elwc(docs, _example(query_tokens=["q"]))
    assert len(data) > UPB_MAX_BYTES
    p = decode(data)
    assert p.kind == EXAMPLE_LIST and len(p.examples) == 1000
    assert [int(e["relevance"].values[0]) for e in p.examples[:3]] == [0, 1, 2] and list(p.features) == [
        "query_tokens"
    ]
