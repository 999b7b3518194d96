"""Issue 23, tags: the person's work survives a reopen, a moved dataset, a changed file (stale, not
applied), a damaged store (kept aside), a crash in the middle of tagging, and goes to JSON lines and
back. A bulk tag of 100,000 rows is one transaction."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import framed, payloads
from tfrview.core.tags import FileKey, Marks, TagError, TagStore, TagWord, file_key, stored_crcs
from tfrview.core.tags.history import TagHistory
from tfrview.core.tags.jsonl import import_jsonl, read_jsonl, write_jsonl
from tfrview.core.tfrecord.source import open_source
from tfrview.core.userdirs import cache_dir, data_dir

ROOT = Path(__file__).resolve().parents[2]


def _file(path: Path, n: int = 20) -> list[int]:
    data, offs = framed(payloads(n))
    path.write_bytes(data)
    return offs[:-1]


def _marks(path: Path, records: list[int]) -> Marks:
    """Marks of some records of a file, as the window makes them: offsets, lengths, stored CRCs."""
    data, offs = framed(payloads(20))
    offsets = np.array([offs[r] for r in records], np.int64)
    lengths = np.array([offs[r + 1] - offs[r] - 16 for r in records], np.int64)
    with open_source(path) as src:
        crcs = stored_crcs(src.read, offsets, lengths)
    return Marks(file_key(path), str(path), offsets, lengths, crcs)


def _words(store: TagStore, path: Path) -> dict[int, str]:
    ft = store.file_tags(path)
    return {int(o): str(TagWord(list(TagWord)[c - 1])) for o, c in zip(ft.offsets, ft.codes, strict=True)}


def test_tags_live_in_the_data_directory_not_the_cache(tmp_path):
    with TagStore.open() as store:
        assert store.path == data_dir() / "tags.sqlite"
        assert not str(store.path).startswith(str(cache_dir()))
        assert store.note is None


def test_tags_survive_a_reopen_and_a_moved_dataset(tmp_path):
    a = tmp_path / "a" / "train-00000-of-00001.tfrecord"
    a.parent.mkdir()
    offs = _file(a)
    db = tmp_path / "tags.sqlite"
    with TagStore.open(db) as store:
        store.tag([_marks(a, [1, 2])], TagWord.DROP)
        store.tag([_marks(a, [5])], TagWord.REVIEW, note="blurry?")
    moved = tmp_path / "elsewhere" / "renamed.tfrecord"
    moved.parent.mkdir()
    shutil.copyfile(a, moved)
    a.unlink()  # the original is gone: only the content knows the tags
    with TagStore.open(db) as store:
        ft = store.file_tags(moved)
        assert ft.stale == 0
        assert _words(store, moved) == {offs[1]: "drop", offs[2]: "drop", offs[5]: "review"}
        assert ft.tag_at(offs[5]).note == "blurry?"
        assert list(ft.codes_at(np.array(offs, np.int64))) == [0, 1, 1, 0, 0, 3] + [0] * 14
        assert store.tags_of(file_key(moved))[offs[1]].word is TagWord.DROP
        assert store.counts() == {TagWord.DROP: 2, TagWord.KEEP: 0, TagWord.REVIEW: 1}


def test_a_changed_file_keeps_the_tags_that_still_match_and_calls_the_rest_stale(tmp_path):
    f = tmp_path / "f.tfrecord"
    offs = _file(f)
    db = tmp_path / "tags.sqlite"
    with TagStore.open(db) as store:
        store.tag([_marks(f, [1, 3, 7])], TagWord.DROP)
    before = file_key(f)
    pls = payloads(20)
    pls[3] = b"XY" + pls[3][2:]  # record 3's payload changed (same length), its CRC written anew
    f.write_bytes(framed(pls)[0])
    assert file_key(f) != before  # another content: its tags are found by its path, and checked
    with TagStore.open(db) as store:
        ft = store.file_tags(f)
        assert ft.stale == 1  # record 3: another CRC at its offset
        assert _words(store, f) == {offs[1]: "drop", offs[7]: "drop"}
        codes, stale = store.codes_over([str(f)], [np.array(offs, np.int64)])  # the filter's way
        assert np.flatnonzero(codes).tolist() == [1, 7] and stale == 1


def test_undo_and_redo_of_a_bulk_tag_are_one_step_each(tmp_path):
    f = tmp_path / "f.tfrecord"
    offs = _file(f)
    with TagStore.open(tmp_path / "t.sqlite") as store:
        h = TagHistory(store)
        h.did(store.tag([_marks(f, [0])], TagWord.KEEP, note="fine"))
        h.did(store.tag([_marks(f, list(range(10)))], TagWord.DROP))
        assert set(_words(store, f).values()) == {"drop"} and len(_words(store, f)) == 10
        assert store.file_tags(f).notes == {offs[0]: "fine"}  # a word changed, the note kept
        h.undo()
        assert _words(store, f) == {offs[0]: "keep"}
        h.redo()
        assert len(_words(store, f)) == 10
        h.did(store.clear([_marks(f, [0, 1])]))
        assert offs[0] not in _words(store, f) and store.file_tags(f).notes == {}
        assert h.undo().what == "clear 2 records"
        assert _words(store, f)[offs[0]] == "drop" and store.file_tags(f).notes == {offs[0]: "fine"}
        assert not h.can_redo() or h.redo() is not None


def test_tagging_100000_rows_is_one_transaction(tmp_path):
    key = FileKey(123_456_789, "deadbeef20000")
    n = 100_000
    offs = np.arange(n, dtype=np.int64) * 40
    m = Marks(
        key, str(tmp_path / "big.tfrecord"), offs, np.full(n, 24, np.int64), np.arange(n, dtype=np.int64)
    )
    with TagStore.open(tmp_path / "t.sqlite") as store:
        commits = []
        store._c.set_trace_callback(
            lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None
        )
        change = store.tag([m], TagWord.DROP)
        store._c.set_trace_callback(None)
        assert commits == ["COMMIT"]
        assert len(change.after) == n and store.counts()[TagWord.DROP] == n
        assert len(store.tags_of(key)) == n


def test_a_damaged_store_is_kept_aside_and_a_new_one_started(tmp_path):
    db = tmp_path / "tags.sqlite"
    garbage = b"this is no database at all\n" * 200
    db.write_bytes(garbage)
    store = TagStore.open(db)
    assert store.note is not None and "damaged" in store.note and "\n" not in store.note
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("tags.sqlite.damaged-")]
    assert len(kept) == 1 and kept[0].read_bytes() == garbage  # moved, never overwritten
    f = tmp_path / "f.tfrecord"
    _file(f)
    store.tag([_marks(f, [2])], TagWord.KEEP)
    store.close()
    with TagStore.open(db) as again:
        assert again.note is None and again.counts()[TagWord.KEEP] == 1


def test_tags_go_to_json_lines_and_back(tmp_path):
    f = tmp_path / "f.tfrecord"
    offs = _file(f)
    out = tmp_path / "tags.jsonl"
    with TagStore.open(tmp_path / "a.sqlite") as store:
        store.tag([_marks(f, [1, 4])], TagWord.DROP)
        store.tag([_marks(f, [6])], TagWord.REVIEW, note="ünïcode note")
        with open(out, "w", encoding="utf-8") as fh:
            assert write_jsonl(store, fh) == 3
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == '{"tfrview": "tags", "version": 1}' and '"tag": "review"' in lines[3]
    with TagStore.open(tmp_path / "b.sqlite") as store:
        _, n = import_jsonl(store, out)
        assert n == 3
        assert _words(store, f) == {offs[1]: "drop", offs[4]: "drop", offs[6]: "review"}
        assert store.file_tags(f).notes == {offs[6]: "ünïcode note"}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "empty"),
        ("garbage\n", "line 1: not JSON"),
        ('{"tfrview": "tags", "version": 1}\n{"size": 1, "ends": "x", "offset": -1}\n', "line 2: 'offset'"),
        (
            '{"tfrview": "tags", "version": 1}\n'
            '{"size": 1, "ends": "x", "offset": 0, "length": 1, "crc": 2, "tag": "burn"}\n',
            "no tag 'burn'",
        ),
        ('{"tfrview": "tags", "version": 1}\n' + "x" * (70 << 10), "TAG_LINE_BYTES"),
    ],
)
def test_a_corrupt_tags_file_is_one_line_and_imports_nothing(tmp_path, text, said):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    with pytest.raises(TagError) as e:
        read_jsonl(bad)
    assert said in str(e.value) and "\n" not in str(e.value)


def test_tags_committed_before_a_kill_are_all_there(tmp_path):
    """A process tags one record a transaction, saying each after its commit; killed (SIGKILL) in
    the middle, every tag it said is in the store, which opens."""
    f = tmp_path / "f.tfrecord"
    _file(f, 20)
    db = tmp_path / "tags.sqlite"
    code = textwrap.dedent(
        f"""
        import sys, numpy as np
        from tfrview.core.tags import FileKey, Marks, TagStore, TagWord
        key = FileKey(10**9, "cafe")
        store = TagStore.open({str(db)!r})
        for i in range(100000):
            m = Marks(key, "x", np.array([i * 64]), np.array([48]), np.array([i]))
            store.tag([m], TagWord.DROP if i % 2 else TagWord.KEEP)
            print(i, flush=True)
        """
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, text=True)
    said = -1
    for line in p.stdout:
        said = int(line)
        if said >= 30:
            break
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    assert p.returncode == -signal.SIGKILL
    with TagStore.open(db) as store:
        assert store.note is None
        got = store.tags_of(FileKey(10**9, "cafe"))
        assert len(got) >= said + 1  # those it said, and perhaps the one it committed after
        assert all(got[i * 64].word is (TagWord.DROP if i % 2 else TagWord.KEEP) for i in range(said + 1))
        assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
