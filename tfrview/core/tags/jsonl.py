"""Tags as JSON lines, to share or keep elsewhere: a first line `{"tfrview": "tags", "version": 1}`,
then one object a tag: `{"size", "ends", "path", "offset", "length", "crc", "tag", "note"}` (the
file's key, the path it was last tagged at, the record's offset, data length and stored data CRC,
the word and the note). Import checks every line before writing anything, and writes all in one
transaction: a corrupt file is one line naming the line and what is wrong, and changes nothing."""

from __future__ import annotations

import json
import os
from typing import TextIO

import numpy as np

from tfrview.core import limits
from tfrview.core.tags.identity import FileKey
from tfrview.core.tags.store import Change, Marks, TagStore
from tfrview.core.tags.words import TagError, word_of

HEADER = {"tfrview": "tags", "version": 1}


def write_jsonl(store: TagStore, f: TextIO, keys: set[FileKey] | None = None) -> int:
    """Write every tag (or those of the files with `keys`) to the text file `f` (the caller's
    temporary file, renamed when done: `output.atomic`); how many were written."""
    n = 0
    f.write(json.dumps(HEADER) + "\n")
    for key, path, offset, length, crc, word, note in store.entries():
        if keys is not None and key not in keys:
            continue
        row = {"size": key.size, "ends": key.ends, "path": path, "offset": offset, "length": length}
        row |= {"crc": crc, "tag": str(word), "note": note}
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
        n += 1
    return n


def _int(row: dict, name: str, where: str) -> int:
    v = row.get(name)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise TagError(f"{where}: {name!r} must be a whole number ≥ 0, not {v!r}")
    return v


def read_jsonl(path: str | os.PathLike) -> list[tuple[Marks, np.ndarray, dict[int, str]]]:
    """The tags of a JSON-lines file, grouped by file, checked line by line (TagError: one line)."""
    name = os.fspath(path)
    groups: dict[FileKey, tuple[str, list, dict[int, str]]] = {}
    try:
        f = open(name, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise TagError(f"{name}: {exc.strerror or exc}") from None
    with f:
        k = 0
        while True:
            k += 1
            try:
                line = f.readline(limits.TAG_LINE_BYTES + 1)
            except UnicodeDecodeError:
                raise TagError(f"{name} line {k}: not UTF-8 text: no tags file") from None
            if not line:
                break
            where = f"{name} line {k}"
            if len(line) > limits.TAG_LINE_BYTES:
                raise TagError(
                    f"{where}: "
                    + limits.too_large("the line", None, limits.TAG_LINE_BYTES, name="TAG_LINE_BYTES")
                )
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as exc:
                raise TagError(f"{where}: not JSON ({exc.msg})") from None
            if k == 1:
                if row != HEADER:
                    raise TagError(f"{where}: no tags file (it starts with {json.dumps(HEADER)})")
                continue
            if not isinstance(row, dict):
                raise TagError(f"{where}: a tag is a JSON object")
            ends = row.get("ends")
            if not isinstance(ends, str) or not ends:
                raise TagError(f"{where}: 'ends' must be the file's ends hash as text")
            key = FileKey(_int(row, "size", where), ends)
            offset, length, crc = (_int(row, n, where) for n in ("offset", "length", "crc"))
            word = word_of(row.get("tag", ""))
            note = row.get("note", "")
            path_ = row.get("path", "")
            if not isinstance(note, str) or not isinstance(path_, str):
                raise TagError(f"{where}: 'note' and 'path' are text")
            p, items, notes = groups.setdefault(key, (path_, [], {}))
            if note:
                notes[len(items)] = note
            items.append((offset, length, crc, word.code))
        if k == 1:
            raise TagError(f"{name}: empty: no tags file")
    out = []
    for key, (p, items, notes) in groups.items():
        a = np.array(items, dtype=np.int64).reshape(-1, 4)
        out.append((Marks(key, p, a[:, 0], a[:, 1], a[:, 2]), a[:, 3].astype(np.int8), notes))
    return out


def import_jsonl(store: TagStore, path: str | os.PathLike) -> tuple[Change, int]:
    """Read a tags file and write its tags in one transaction (a tag of a record already tagged
    replaces it); the change and how many tags were read."""
    entries = read_jsonl(path)
    change = store.put(entries, "import")
    return change, sum(len(m.offsets) for m, _, _ in entries)
