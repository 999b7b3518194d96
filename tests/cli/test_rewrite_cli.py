"""`tfrview rewrite`: the --json summary's counts, the text lines, and each mistake as one line on
stderr with exit status 2 and nothing written."""

from __future__ import annotations

import json

import pytest

from tests.helpers import framed, payloads, payloads_of
from tfrview.cli import main


@pytest.fixture
def bad(tmp_path):
    data, offs = framed(payloads(12))
    b = bytearray(data)
    b[offs[2] + 13] ^= 1  # bad data CRC in record 2
    p = tmp_path / "in" / "bad.tfrecord"
    p.parent.mkdir()
    p.write_bytes(bytes(b))
    return p


def test_json_summary(capsys, bad, tmp_path):
    out = tmp_path / "out"
    assert (
        main(["rewrite", str(bad), "-o", str(out), "--shards", "2", "--json", "--compression", "zlib"]) == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert (doc["records_in"], doc["kept"], doc["dropped"]) == (12, 11, {"damaged": 1, "filter": 0, "tag": 0})
    assert doc["written"]["splits"] == {"data": 11}
    assert [s["records"] for s in doc["written"]["shards"]] == [
        len(payloads_of(out / s["name"])) for s in doc["written"]["shards"]
    ]
    assert sum(len(payloads_of(out / s["name"])) for s in doc["written"]["shards"]) == 11


def test_text_lines(capsys, bad, tmp_path):
    assert (
        main(
            [
                "rewrite",
                str(bad.parent),
                "-o",
                str(tmp_path / "o"),
                "--split",
                "train=0.5,test=0.5",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    said = capsys.readouterr().out.splitlines()
    assert said[0].endswith(
        "wrote 11 of 12 records in 2 shards; dropped 1 damaged, 0 by the filter, 0 by tags"
    )
    assert sorted(line.split(":")[0].strip() for line in said[1:]) == ["test", "train"]


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["--map-classes", "dog"], "--map-classes: 'dog' is not OLD=NEW"),
        (["--split", "train=0.8,val=0.3"], "--split: the fractions add up to 1.1, not 1"),
        (["--shard-size", "big"], "--shard-size: 'big' is no size"),
        (["--group-by", "stem"], "--group-by needs --split"),
        (["--drop-tag", "dorp"], "no tag 'dorp' (tags are drop, keep, review)"),
    ],
)
def test_mistakes_are_one_line(capsys, bad, tmp_path, words, message):
    out = tmp_path / "o"
    assert main(["rewrite", str(bad), "-o", str(out), *words]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not out.exists()


def test_output_inside_the_input_and_existing_output(capsys, bad, tmp_path):
    assert main(["rewrite", str(bad.parent), "-o", str(bad.parent / "clean")]) == 2
    assert "is inside the input" in capsys.readouterr().err
    full = tmp_path / "full"
    full.mkdir()
    (full / "f").write_text("x")
    assert main(["rewrite", str(bad), "-o", str(full), "--json"]) == 2
    captured = capsys.readouterr()
    assert "exists (use --force" in json.loads(captured.out)["error"]
    assert (full / "f").read_text() == "x"


def test_tags_drop_and_keep(capsys, bad, tmp_path, monkeypatch):
    """The person's tags (the window's D, K, R) choose what a rewrite drops or keeps: drop-tagged
    records left out and counted as dropped by tags; with --keep-tag, only the kept ones written."""
    import numpy as np

    from tests.helpers import framed as framed_again
    from tfrview.core.tags import Marks, TagStore, TagWord, file_key, stored_crcs
    from tfrview.core.tfrecord.source import open_source

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    _, offs = framed_again(payloads(12))

    def marks(records):
        offsets = np.array([offs[r] for r in records], np.int64)
        lengths = np.array([offs[r + 1] - offs[r] - 16 for r in records], np.int64)
        with open_source(bad) as src:
            crcs = stored_crcs(src.read, offsets, lengths)
        return Marks(file_key(bad), str(bad), offsets, lengths, crcs)

    with TagStore.open() as store:
        store.tag([marks([0, 5])], TagWord.DROP)
        store.tag([marks([1, 3, 7])], TagWord.KEEP)
    out = tmp_path / "dropped"
    assert main(["rewrite", str(bad), "-o", str(out), "--drop-tag", "drop", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["kept"], doc["dropped"]) == (9, {"damaged": 1, "filter": 0, "tag": 2})
    want = [p for i, p in enumerate(payloads(12)) if i not in (0, 2, 5)]
    assert [x for f in sorted(out.glob("*.tfrecord")) for x in payloads_of(f)] == want
    out = tmp_path / "kept"
    assert main(["rewrite", str(bad), "-o", str(out), "--keep-tag", "KEEP", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["kept"] == 3 and doc["dropped"]["tag"] == 8
    assert [x for f in sorted(out.glob("*.tfrecord")) for x in payloads_of(f)] == [
        payloads(12)[i] for i in (1, 3, 7)
    ]
    out = tmp_path / "where"
    assert (
        main(["rewrite", str(bad), "-o", str(out), "--where", 'tag == "keep" or tag == "drop"', "--json"])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["kept"] == 5 and doc["dropped"]["filter"] == 6  # the filter knows the tags too
    got = [x for f in sorted(out.glob("*.tfrecord")) for x in payloads_of(f)]
    assert got == [payloads(12)[i] for i in (0, 1, 3, 5, 7)]
