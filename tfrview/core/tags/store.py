"""The tag store: one SQLite file in the user's data directory (`userdirs.data_dir()/tags.sqlite`),
the person's work, never trimmed (it is no cache).

Built for many entries: a row per tagged record, keyed by (file, offset) in a table WITHOUT ROWID,
files a small table of their own (`identity.FileKey`: size and ends, and the path last tagged at).
WAL with `synchronous = FULL`: every person's action is one transaction, durable once it returns,
and a process killed in the middle of one leaves the store as it was before it. A write touches
only the rows it tags (a temporary table of the marked rows joined to the tags by key), never a
walk of every entry; tagging 100,000 rows is one transaction.

A damaged store is moved aside (renamed beside itself, never overwritten or deleted), said in one
line (`TagStore.note`), and a new one started. Tags of a file whose content changed (another key at
the same path) are applied only where the record at their offset is still there with the same
length and stored data CRC; the others are counted as stale, never applied."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from tfrview.core import limits
from tfrview.core.tags.identity import FileKey, Read, file_key, still_there
from tfrview.core.tags.words import TagError, TagWord, word_of_code
from tfrview.core.termtext import printable
from tfrview.core.userdirs import data_dir

log = logging.getLogger(__name__)

FILE_NAME = "tags.sqlite"
_SCHEMA = 1  # PRAGMA user_version of the tables below
_SOUND = "ok"  # what PRAGMA quick_check says of a sound file

_TABLES = (
    "CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, size INTEGER NOT NULL, ends TEXT NOT NULL,"
    " path TEXT NOT NULL, UNIQUE (size, ends))",
    "CREATE INDEX IF NOT EXISTS files_by_path ON files (path)",
    "CREATE TABLE IF NOT EXISTS tags (file INTEGER NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL,"
    " crc INTEGER NOT NULL, word INTEGER NOT NULL, note TEXT NOT NULL, at REAL NOT NULL,"
    " PRIMARY KEY (file, offset)) WITHOUT ROWID",
)


def default_path() -> Path:
    """Where the person's tags live unless told otherwise."""
    return data_dir() / FILE_NAME


@dataclass(frozen=True, slots=True)
class Tag:
    """One record's tag: its word and the person's note ("" none)."""

    word: TagWord
    note: str = ""


@dataclass(frozen=True)
class Marks:
    """Records of one file to tag: their offsets in its record stream, data lengths and stored data
    CRCs (`identity.stored_crcs`), as arrays."""

    key: FileKey
    path: str
    offsets: np.ndarray
    lengths: np.ndarray
    crcs: np.ndarray


@dataclass(frozen=True)
class Rows:
    """Tag rows as arrays over the store's file ids; a word 0 is no tag (the row is removed)."""

    files: np.ndarray  # int64 file ids
    offsets: np.ndarray  # int64
    lengths: np.ndarray  # int64
    crcs: np.ndarray  # int64
    words: np.ndarray  # int8 TagWord.code, 0 none
    notes: dict[int, str] = field(default_factory=dict)  # row index -> note, only those with one

    def __len__(self) -> int:
        return len(self.offsets)


@dataclass(frozen=True)
class Change:
    """One action of the person: the rows it touched as they were and as it left them. Undo writes
    `before` back, redo `after`; either is one transaction."""

    before: Rows
    after: Rows
    what: str  # a few words: "drop 3 records"


@dataclass(frozen=True)
class FileTags:
    """The tags that apply to one file as it is now: sorted offsets, their codes, notes by offset,
    and how many tags of its earlier content no longer match a record (stale, not applied)."""

    key: FileKey | None
    offsets: np.ndarray  # int64, sorted
    codes: np.ndarray  # int8 TagWord.code
    notes: dict[int, str]
    stale: int = 0

    def __len__(self) -> int:
        return len(self.offsets)

    def codes_at(self, offsets: np.ndarray) -> np.ndarray:
        """The code (0 none) of each record at `offsets` (an index's offsets, in any order)."""
        out = np.zeros(len(offsets), dtype=np.int8)
        if len(self.offsets) and len(offsets):
            at = np.searchsorted(self.offsets, offsets)
            at[at >= len(self.offsets)] = 0
            hit = self.offsets[at] == offsets
            out[hit] = self.codes[at[hit]]
        return out

    def tag_at(self, offset: int) -> Tag | None:
        code = self.codes_at(np.array([offset], dtype=np.int64))[0]
        word = word_of_code(int(code))
        return Tag(word, self.notes.get(int(offset), "")) if word is not None else None


def _parsed(offs: str | None, words: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The two texts `group_concat` made of a file's offsets and words, as arrays sorted by offset
    (a million rows parsed by numpy in well under a second; a row at a time through Python ~3 s)."""
    if not offs:
        return np.empty(0, np.int64), np.empty(0, np.int8)
    o = np.fromstring(offs, np.int64, sep=",")
    w = (np.frombuffer(words.encode("ascii"), np.uint8) - ord("0")).astype(np.int8)
    if len(o) != len(w):  # a word of two digits would be no code of ours
        raise TagError("the tags store holds a word that is no tag: tfrview tags export, then import")
    order = np.argsort(o, kind="stable")
    return o[order], w[order]


# a tag's offset and word packed in one integer, so a file's tags come back as one text that numpy
# parses once: words are single digits (`_parsed`), offsets far below 2^59
_PACKED = "offset * 16 + word"
_WORDS_FIT = "min(word) >= 0 AND max(word) <= 9"


def _unpacked(text: str | None, fits: int | None) -> tuple[np.ndarray, np.ndarray]:
    """The text `group_concat` made of `_PACKED` values, as (offsets, words) sorted by offset."""
    if not text:
        return np.empty(0, np.int64), np.empty(0, np.int8)
    if not fits:  # a word of two digits would be no code of ours
        raise TagError("the tags store holds a word that is no tag: tfrview tags export, then import")
    v = np.fromstring(text, np.int64, sep=",")
    o, w = v >> 4, (v & 15).astype(np.int8)
    if len(o) > 1 and not (o[1:] >= o[:-1]).all():  # the key's order, unless SQLite chose another
        order = np.argsort(o, kind="stable")
        o, w = o[order], w[order]
    return o, w


def _columns(c: sqlite3.Connection, fid: int) -> tuple[np.ndarray, np.ndarray, int]:
    """A file's tags as two arrays (offsets sorted, codes) and how many have a note: one query
    whose one text numpy parses (1,000,000 tags: ~0.3 s of CPU, where two texts from a sorted
    subquery took ~0.45 s and a row at a time through Python ~3 s)."""
    packed, fits, noted = c.execute(
        f"SELECT group_concat({_PACKED}, ','), {_WORDS_FIT}, sum(note != '') FROM tags WHERE file = ?",
        (fid,),
    ).fetchone()
    o, w = _unpacked(packed, fits)
    return o, w, int(noted or 0)


def _batches(items: list, size: int = 400) -> list[list]:
    """Items in lists of at most `size`: SQLite's bound on a statement's variables (a piece size)."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def _cat(arrs: list) -> np.ndarray:
    """Arrays joined as int64 (none: empty)."""
    return np.concatenate([np.asarray(a, dtype=np.int64) for a in arrs]) if arrs else np.empty(0, np.int64)


def _empty_tags(key: FileKey | None) -> FileTags:
    return FileTags(key, np.empty(0, np.int64), np.empty(0, np.int8), {})


def _is_busy(exc: sqlite3.DatabaseError) -> bool:
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def _connect(path: Path) -> sqlite3.Connection:
    c = sqlite3.connect(
        path, timeout=limits.STORE_BUSY_SECONDS, isolation_level=None, check_same_thread=False
    )
    try:
        version = c.execute("PRAGMA user_version").fetchone()[0]
        if version not in (0, _SCHEMA):
            c.close()
            raise TagError(
                f"the tags store {path} was made by a newer tfrview (layout {version}): left as it is"
            )
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = FULL")  # an action the person saw done stays done
        if version == 0:
            c.execute("BEGIN IMMEDIATE")
            for statement in _TABLES:
                c.execute(statement)
            c.execute(f"PRAGMA user_version = {_SCHEMA}")
            c.execute("COMMIT")
        check = c.execute("PRAGMA quick_check").fetchone()[0]
        if check != _SOUND:
            raise sqlite3.DatabaseError(f"quick_check: {check}")
        c.execute("SELECT count(*) FROM files").fetchone()
    except sqlite3.Error:
        c.close()
        raise
    return c


def _move_aside(path: Path) -> Path:
    """Rename a damaged store (and its WAL and shared-memory files) beside itself; never overwrite."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    aside = path.with_name(f"{path.name}.damaged-{stamp}")
    k = 1
    while aside.exists():
        aside = path.with_name(f"{path.name}.damaged-{stamp}-{k}")
        k += 1
    for suffix in ("-wal", "-shm"):
        side = Path(str(path) + suffix)
        if side.exists():
            os.rename(side, Path(str(aside) + suffix))
    os.rename(path, aside)
    return aside


class TagStore:
    """The person's tags (see the module's docstring). Open with `TagStore.open()`; one connection,
    usable from one thread at a time."""

    def __init__(self, conn: sqlite3.Connection, path: Path, note: str | None = None) -> None:
        self._c = conn
        self.path = path
        self.note = note  # one line when the store was found damaged and kept aside

    @classmethod
    def open(cls, path: str | os.PathLike | None = None) -> TagStore:
        """The store at `path` (default `default_path()`), made the first time. A damaged one is
        kept aside and a new one started (`note` says so); a busy one past STORE_BUSY_SECONDS is a
        TagError."""
        p = Path(path) if path is not None else default_path()
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise TagError(
                f"the tags store's folder {p.parent} cannot be made: {exc.strerror or exc}"
            ) from None
        note = None
        try:
            c = _connect(p)
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                raise TagError(
                    f"the tags store {p} is busy (another tfrview writes it; waited "
                    f"{limits.STORE_BUSY_SECONDS:g} s) (limits.STORE_BUSY_SECONDS)"
                ) from None
            try:
                aside = _move_aside(p)
            except OSError as err:
                raise TagError(f"the tags store {p} is damaged and cannot be moved aside: {err}") from None
            note = printable(
                f"the tags store {p} is damaged ({exc}): kept as {aside.name} beside it; a new one is started"
            )
            log.info("%s", note)  # the caller says it to the person, once (`note`)
            try:
                c = _connect(p)
            except sqlite3.Error as err:
                raise TagError(f"the tags store {p} cannot be made: {err}") from None
        except sqlite3.Error as exc:
            raise TagError(f"the tags store {p} cannot be opened: {exc}") from None
        return cls(c, p, note)

    def close(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._c.close()

    def __enter__(self) -> TagStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- writing -----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        c = self._c
        try:
            c.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise TagError(f"the tags store {self.path} cannot be written: {exc}") from None
        try:
            yield c
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                c.execute("ROLLBACK")
            raise
        try:
            c.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(sqlite3.Error):
                c.execute("ROLLBACK")
            raise TagError(f"the tags store {self.path} cannot be written: {exc}") from None

    def _file_ids(self, c: sqlite3.Connection, marks: list[Marks]) -> list[int]:
        ids = []
        for m in marks:
            c.execute(
                "INSERT INTO files (size, ends, path) VALUES (?, ?, ?)"
                " ON CONFLICT (size, ends) DO UPDATE SET path = excluded.path",
                (m.key.size, m.key.ends, os.path.realpath(m.path)),
            )
            ids.append(
                c.execute(
                    "SELECT id FROM files WHERE size = ? AND ends = ?", (m.key.size, m.key.ends)
                ).fetchone()[0]
            )
        return ids

    def _marked(self, c: sqlite3.Connection, marks: list[Marks]) -> Rows:
        """The marked records as rows with the word 0, their file ids from the store."""
        ids = self._file_ids(c, marks)
        files = _cat([np.full(len(m.offsets), i) for m, i in zip(marks, ids, strict=True)])
        rows = Rows(
            files,
            _cat([m.offsets for m in marks]),
            _cat([m.lengths for m in marks]),
            _cat([m.crcs for m in marks]),
            np.zeros(len(files), np.int8),
        )
        if len(rows) > 1:  # one row a record, whatever the selection held twice
            order = np.lexsort((rows.offsets, rows.files))
            keep = order[np.r_[True, (np.diff(rows.files[order]) != 0) | (np.diff(rows.offsets[order]) != 0)]]
            if len(keep) < len(rows):
                keep.sort()
                rows = Rows(
                    rows.files[keep],
                    rows.offsets[keep],
                    rows.lengths[keep],
                    rows.crcs[keep],
                    rows.words[keep],
                )
        return rows

    def _as_stored(self, c: sqlite3.Connection, rows: Rows) -> Rows:
        """The stored state of the records `rows` names (word 0 where untagged), aligned to them,
        file by file: a file with no tags costs one count; one with fewer tags than the records
        marked in it is read whole as arrays (`_parsed`) and matched by offset; else the marked
        records are joined to the tags by key through a temporary table. Never a walk of every tag."""
        lengths, crcs, words = rows.lengths.copy(), rows.crcs.copy(), np.zeros(len(rows), np.int8)
        notes: dict[int, str] = {}
        for fid in np.unique(rows.files).tolist():
            sel = np.flatnonzero(rows.files == fid)
            have = c.execute("SELECT count(*) FROM tags WHERE file = ?", (fid,)).fetchone()[0]
            if not have:
                continue
            if have <= 4 * len(sel):
                got = c.execute(
                    "SELECT group_concat(offset, ','), group_concat(word, ''), group_concat(length, ','),"
                    " group_concat(crc, ','), sum(note != '') FROM"
                    " (SELECT offset, word, length, crc, note FROM tags WHERE file = ? ORDER BY offset)",
                    (fid,),
                ).fetchone()
                o, w = _parsed(got[0], got[1])  # sorted by offset, as the two texts below
                ln, k = (np.fromstring(t, np.int64, sep=",") for t in (got[2], got[3]))
                order = np.argsort(np.fromstring(got[0], np.int64, sep=","), kind="stable")
                ln, k = ln[order], k[order]
                mine = rows.offsets[sel]
                at = np.minimum(np.searchsorted(o, mine), len(o) - 1)
                hit = o[at] == mine
                idx, at = sel[hit], at[hit]
                lengths[idx], crcs[idx], words[idx] = ln[at], k[at], w[at]
                if got[4]:
                    where = dict(zip(rows.offsets[idx].tolist(), idx.tolist(), strict=True))
                    for off, note in c.execute(
                        "SELECT offset, note FROM tags WHERE file = ? AND note != ''", (fid,)
                    ):
                        if off in where:
                            notes[where[off]] = note
                continue
            c.execute("CREATE TEMP TABLE IF NOT EXISTS sel (i INTEGER PRIMARY KEY, offset INTEGER)")
            c.execute("DELETE FROM sel")
            c.executemany(
                "INSERT INTO sel VALUES (?, ?)", zip(sel.tolist(), rows.offsets[sel].tolist(), strict=True)
            )
            for i, length, crc, word, note in c.execute(
                "SELECT sel.i, t.length, t.crc, t.word, t.note FROM sel JOIN tags t"
                " ON t.file = ? AND t.offset = sel.offset",
                (fid,),
            ).fetchall():
                lengths[i], crcs[i], words[i] = length, crc, word
                if note:
                    notes[i] = note
            c.execute("DELETE FROM sel")
        return Rows(rows.files, rows.offsets, lengths, crcs, words, notes)

    def _put(self, c: sqlite3.Connection, rows: Rows) -> None:
        gone = rows.words == 0
        if gone.any():
            c.executemany(
                "DELETE FROM tags WHERE file = ? AND offset = ?",
                zip(rows.files[gone].tolist(), rows.offsets[gone].tolist(), strict=True),
            )
        idx = np.flatnonzero(~gone)
        if len(idx):
            now = time.time()
            notes = rows.notes
            c.executemany(
                "INSERT OR REPLACE INTO tags VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    (f, o, n, k, w, notes.get(i, ""), now)
                    for i, f, o, n, k, w in zip(
                        idx.tolist(),
                        rows.files[idx].tolist(),
                        rows.offsets[idx].tolist(),
                        rows.lengths[idx].tolist(),
                        rows.crcs[idx].tolist(),
                        rows.words[idx].tolist(),
                        strict=True,
                    )
                ),
            )

    def _act(self, marks: list[Marks], word: TagWord | None, note: str | None, what: str) -> Change:
        """One action over the marked records, in one transaction: `word` None clears; `note` None
        keeps each record's note (a note given to an untagged record tags it `review`)."""
        if note is not None and len(note) > limits.TAG_NOTE_CHARS:
            log.warning(
                "a note of %d characters is cut to %d (limits.TAG_NOTE_CHARS)",
                len(note),
                limits.TAG_NOTE_CHARS,
            )
            note = note[: limits.TAG_NOTE_CHARS]
        with self._transaction() as c:
            marked = self._marked(c, marks)
            before = self._as_stored(c, marked)
            if word is None and note is None:
                after = Rows(
                    before.files, before.offsets, before.lengths, before.crcs, np.zeros(len(before), np.int8)
                )
            else:
                if word is not None:
                    words = np.full(len(before), word.code, np.int8)
                else:  # a note alone: each record keeps its word, an untagged one is for review
                    words = np.where(before.words == 0, TagWord.REVIEW.code, before.words).astype(np.int8)
                if note is None:
                    notes = dict(before.notes)
                else:
                    notes = {i: note for i in range(len(before))} if note else {}
                after = Rows(before.files, before.offsets, marked.lengths, marked.crcs, words, notes)
            self._put(c, after)
        return Change(before, after, what)

    def tag(self, marks: list[Marks], word: TagWord, note: str | None = None) -> Change:
        """Tag every marked record `word` (keeping its note unless `note` is given): one transaction."""
        n = sum(len(m.offsets) for m in marks)
        return self._act(marks, word, note, f"{word} {n:,} record{'s' if n != 1 else ''}")

    def clear(self, marks: list[Marks]) -> Change:
        """Remove the marked records' tags and notes: one transaction."""
        n = sum(len(m.offsets) for m in marks)
        return self._act(marks, None, None, f"clear {n:,} record{'s' if n != 1 else ''}")

    def annotate(self, marks: list[Marks], note: str) -> Change:
        """Set the marked records' note ("" removes it), keeping their words (untagged: review)."""
        n = sum(len(m.offsets) for m in marks)
        return self._act(marks, None, note, f"note on {n:,} record{'s' if n != 1 else ''}")

    def restore(self, rows: Rows) -> None:
        """Write rows as they are (an undo's `before`, a redo's `after`): one transaction."""
        with self._transaction() as c:
            self._put(c, rows)

    def put(self, entries: list[tuple[Marks, np.ndarray, dict[int, str]]], what: str = "import") -> Change:
        """Write each file's records with their own words (int8 codes) and notes (index in the
        marks -> note): one transaction (`tfrview tags import`)."""
        with self._transaction() as c:
            marks = [m for m, _, _ in entries]
            ids = self._file_ids(c, marks)
            parts = [
                Rows(
                    np.full(len(m.offsets), i, np.int64),
                    np.asarray(m.offsets, np.int64),
                    np.asarray(m.lengths, np.int64),
                    np.asarray(m.crcs, np.int64),
                    np.asarray(w, np.int8),
                )
                for (m, w, _), i in zip(entries, ids, strict=True)
            ]
            base, notes = 0, {}
            for (m, _, ns), _p in zip(entries, parts, strict=True):
                notes.update({base + k: v[: limits.TAG_NOTE_CHARS] for k, v in ns.items() if v})
                base += len(m.offsets)

            def cat(name: str) -> np.ndarray:
                return np.concatenate([getattr(p, name) for p in parts]) if parts else np.empty(0)

            after = Rows(
                cat("files").astype(np.int64),
                cat("offsets").astype(np.int64),
                cat("lengths").astype(np.int64),
                cat("crcs").astype(np.int64),
                cat("words").astype(np.int8),
                notes,
            )
            before = self._as_stored(c, after)
            self._put(c, after)
        return Change(before, after, what)

    # --- reading -----------------------------------------------------------------------------------

    def _file_id(self, key: FileKey) -> int | None:
        got = self._c.execute(
            "SELECT id FROM files WHERE size = ? AND ends = ?", (key.size, key.ends)
        ).fetchone()
        return got[0] if got else None

    def tags_of(self, key: FileKey) -> dict[int, Tag]:
        """Every tag stored for the file with this key: offset -> Tag (no staleness check: the key
        says the file is as it was)."""
        fid = self._file_id(key)
        if fid is None:
            return {}
        return {
            o: Tag(word_of_code(w), note)
            for o, w, note in self._c.execute("SELECT offset, word, note FROM tags WHERE file = ?", (fid,))
            if word_of_code(w) is not None
        }

    def file_tags(
        self, path: str | os.PathLike, key: FileKey | None = None, read: Read | None = None
    ) -> FileTags:
        """The tags that apply to the file at `path` as it is now (see `FileTags`): those stored
        under its key, wherever it was tagged; and those of an earlier content of the same path
        whose record is still at its offset with its length and stored CRC (read with `read`, or
        by opening the file), the others counted stale."""
        key = key if key is not None else file_key(path)
        if key is None:
            return _empty_tags(None)
        c = self._c
        where = os.path.realpath(os.fspath(path))
        fid, older = None, []  # this content's id; those of earlier contents at this path
        for i, size, ends in c.execute(
            "SELECT id, size, ends FROM files WHERE (size = ? AND ends = ?) OR path = ?",
            (key.size, key.ends, where),
        ).fetchall():
            if (size, ends) == (key.size, key.ends):
                fid = i
            else:
                older.append(i)
        offsets = np.empty(0, np.int64)
        codes = np.empty(0, np.int8)
        notes: dict[int, str] = {}
        if fid is not None:
            offsets, codes, noted = _columns(c, fid)
            if noted:
                notes = dict(
                    c.execute(
                        "SELECT offset, note FROM tags WHERE file = ? AND note != ''", (fid,)
                    ).fetchall()
                )
        stale = 0
        if older:
            marks = ",".join("?" * len(older))
            rows = c.execute(
                f"SELECT offset, length, crc, word, note FROM tags WHERE file IN ({marks}) ORDER BY offset",
                older,
            ).fetchall()
            if rows:
                o = np.array([r[0] for r in rows], np.int64)
                ok = self._still_there(
                    path,
                    read,
                    o,
                    np.array([r[1] for r in rows], np.int64),
                    np.array([r[2] for r in rows], np.int64),
                )
                new = ok & ~np.isin(o, offsets)  # a tag of this content wins over an earlier one
                stale = int((~ok).sum())
                if new.any():
                    idx = np.flatnonzero(new)
                    offsets = np.concatenate([offsets, o[idx]])
                    codes = np.concatenate([codes, np.array([rows[i][3] for i in idx], np.int8)])
                    notes.update({int(o[i]): rows[i][4] for i in idx if rows[i][4]})
                    order = np.argsort(offsets, kind="stable")
                    offsets, codes = offsets[order], codes[order]
                if stale:
                    log.info(
                        "%s: %d tags of its earlier content no longer match a record (stale)", where, stale
                    )
        return FileTags(key, offsets, codes, notes, stale)

    @staticmethod
    def _still_there(path, read: Read | None, offsets, lengths, crcs) -> np.ndarray:
        if read is not None:
            return still_there(read, offsets, lengths, crcs)
        from tfrview.core.errors import SourceError
        from tfrview.core.tfrecord.source import open_source

        try:
            with open_source(path) as src:
                return still_there(src.read, offsets, lengths, crcs)
        except SourceError as exc:
            log.warning("%s: its earlier tags cannot be checked (%s): none applied", path, exc)
            return np.zeros(len(offsets), dtype=bool)

    def codes_over(self, paths: list[str], offsets: list[np.ndarray]) -> tuple[np.ndarray, int]:
        """Each record's tag code (0 none) over files taken one after another, as a dataset numbers
        its records (`offsets[i]`: file i's records' offsets, its index), and the stale tags found.
        A few queries for all the files (2,048 shards: not 8,000 queries); a file with tags of an
        earlier content at its path is read as `file_tags` reads it."""
        keys = [file_key(p) for p in paths]
        where = [os.path.realpath(os.fspath(p)) for p in paths]
        ids: dict[FileKey, int] = {}
        at_path: dict[str, list[FileKey]] = {}
        for part in _batches(sorted({k for k in keys if k is not None}, key=str)):
            q = " OR ".join("(size = ? AND ends = ?)" for _ in part)
            for i, size, ends in self._c.execute(f"SELECT id, size, ends FROM files WHERE {q}", [v for k in part for v in (k.size, k.ends)]):  # fmt: skip
                ids[FileKey(size, ends)] = i
        for part in _batches(sorted(set(where))):
            q = ",".join("?" * len(part))
            for path, size, ends in self._c.execute(
                f"SELECT path, size, ends FROM files WHERE path IN ({q})", part
            ):
                at_path.setdefault(path, []).append(FileKey(size, ends))
        columns: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for part in _batches(sorted(set(ids.values()))):
            q = ",".join("?" * len(part))
            for fid, packed, fits in self._c.execute(
                f"SELECT file, group_concat({_PACKED}, ','), {_WORDS_FIT} FROM tags WHERE file IN ({q})"
                " GROUP BY file",
                part,
            ):
                columns[fid] = _unpacked(packed, fits)
        parts, stale = [], 0
        for path, key, real, offs in zip(paths, keys, where, offsets, strict=True):
            offs = np.asarray(offs, np.int64)
            if key is None:
                parts.append(np.zeros(len(offs), np.int8))
                continue
            if any(k != key for k in at_path.get(real, ())):  # an earlier content's tags: checked
                ft = self.file_tags(path, key)
                stale += ft.stale
                parts.append(ft.codes_at(offs))
                continue
            o, w = columns.get(ids.get(key, -1), (np.empty(0, np.int64), np.empty(0, np.int8)))
            parts.append(FileTags(key, o, w, {}).codes_at(offs))
        return (np.concatenate(parts) if parts else np.empty(0, np.int8)), stale

    def entries(self) -> Iterator[tuple[FileKey, str, int, int, int, TagWord, str]]:
        """Every tag, file by file in offset order: (key, path last tagged at, offset, length, crc,
        word, note); read from a cursor, never all at once."""
        q = (
            "SELECT f.size, f.ends, f.path, t.offset, t.length, t.crc, t.word, t.note FROM tags t"
            " JOIN files f ON f.id = t.file ORDER BY t.file, t.offset"
        )
        for size, ends, path, offset, length, crc, word, note in self._c.execute(q):
            w = word_of_code(word)
            if w is not None:
                yield FileKey(size, ends), path, offset, length, crc, w, note

    def counts(self) -> dict[TagWord, int]:
        """How many records carry each word (every word, zeros included)."""
        got = dict(self._c.execute("SELECT word, count(*) FROM tags GROUP BY word").fetchall())
        return {w: int(got.get(w.code, 0)) for w in TagWord}
