"""Issue 23: `tfrview tags list|export|import`: listing with record numbers, a JSON-lines round
trip into another store, a corrupt tags file and a damaged store each said in one line."""

from __future__ import annotations

import json

import numpy as np

from tests.helpers import framed, payloads
from tfrview.cli import main
from tfrview.core.tags import Marks, TagStore, TagWord, file_key, stored_crcs
from tfrview.core.tfrecord.source import open_source


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _tagged(tmp_path, db):
    f = tmp_path / "train.tfrecord"
    data, offs = framed(payloads(12))
    f.write_bytes(data)
    o = np.array([offs[2], offs[9]], np.int64)
    n = np.array([offs[3] - offs[2], offs[10] - offs[9]], np.int64) - 16
    with open_source(f) as src, TagStore.open(db) as store:
        store.tag([Marks(file_key(f), str(f), o, n, stored_crcs(src.read, o, n))], TagWord.DROP, "odd")
    return f, offs


def test_list_export_and_import(tmp_path, capsys):
    db = tmp_path / "a.sqlite"
    f, offs = _tagged(tmp_path, db)
    code, out, _ = run(capsys, "tags", "--store", str(db), "list", str(f))
    assert code == 0
    assert f"{f}  record 2  offset {offs[2]}  drop  odd" in out and "total: 2 drop" in out
    code, out, _ = run(capsys, "tags", "--store", str(db), "list", str(tmp_path), "--json")
    doc = json.loads(out)
    assert [(t["record"], t["tag"]) for t in doc["tags"]] == [(2, "drop"), (9, "drop")]
    assert doc["counts"] == {"drop": 2} and doc["stale"] == 0
    out_file = tmp_path / "t.jsonl"
    code, out, _ = run(capsys, "tags", "--store", str(db), "export", "-o", str(out_file))
    assert code == 0 and "2 tags written" in out and len(out_file.read_text().splitlines()) == 3
    other = tmp_path / "b.sqlite"
    code, out, _ = run(capsys, "tags", "--store", str(other), "import", str(out_file))
    assert code == 0 and "2 tags read" in out
    code, out, _ = run(capsys, "tags", "--store", str(other), "list", str(f), "--json")
    assert [t["record"] for t in json.loads(out)["tags"]] == [2, 9]


def test_a_corrupt_tags_file_is_one_line_and_changes_nothing(tmp_path, capsys):
    db = tmp_path / "a.sqlite"
    _tagged(tmp_path, db)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tfrview": "tags", "version": 1}\n{"size": 1, "ends": "x"\n')
    code, out, err = run(capsys, "tags", "--store", str(db), "import", str(bad))
    assert code == 2 and err.count("\n") == 1 and "line 2: not JSON" in err
    with TagStore.open(db) as store:
        assert store.counts()[TagWord.DROP] == 2


def test_a_damaged_store_is_said_in_one_line_and_kept(tmp_path, capsys):
    db = tmp_path / "tags.sqlite"
    db.write_bytes(b"\0garbage" * 512)
    code, out, err = run(capsys, "tags", "--store", str(db), "list")
    assert code == 0 and "total: no tags" in out
    assert err.count("\n") == 1 and "damaged" in err and "kept as tags.sqlite.damaged-" in err
    assert len(list(tmp_path.glob("tags.sqlite.damaged-*"))) == 1
