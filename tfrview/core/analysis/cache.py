"""Remembered results: each file's pass stored in the user's cache directory, keyed by the file's
identity (device, inode, size, mtime_ns) and what was asked (deep or not, the label map), so an
unchanged dataset reopens at once. Never next to the user's data.

One SQLite file (`analysis/results.sqlite3`, WAL mode) with one row per file and question, not a
folder of files per result: a dataset of 2,048 shards used to cost 2,048 folders of 4-6 files and,
after each store, a walk of every folder to trim it (O(N) a store, O(N^2) a dataset). A row holds
    meta    JSON: path, identity, when its bytes were read, counts, problems, schema, summary,
            statistics and how `arrays` is laid out
    arrays  the index (offsets, lengths, status), each record's schema signature and the image
            hashes, as raw little arrays one after another
    facts   the fact table (see facts.py) as an Arrow IPC stream (LZ4), read only when asked
with its size and when it was last used. Triggers keep a running total of entries and bytes; past
limits.CACHE_MAX_BYTES a store evicts the least recently used rows along an index on that time,
never walking every entry. Many processes (windows, the CLI, pool workers) read and write it at
once: SQLite's locks keep it whole. A store that is busy for limits.STORE_BUSY_SECONDS is said once
and left alone by this process; one that is damaged (garbage over the file, a cut copy) is said and
rebuilt empty. Results of the old layout (a folder per result) are removed when the store opens.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import numpy as np

from tfrview.core import jsontext, limits
from tfrview.core.analysis.results import DeepResult, ShardResult, ShardTask, identity_of
from tfrview.core.errors import TfrviewError
from tfrview.core.problems import Problem
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import OVERHEAD
from tfrview.core.tfrecord.paths import real_path
from tfrview.core.tfrecord.remote import is_url
from tfrview.core.userdirs import cache_dir

FORMAT = 17  # bump when what is stored changes: old entries are then simply not found (7: one SQLite
# store; 8: cut records are rows; 9: findings carry their feature and the data they quote; 10: at most
# limits.TRACKED_KEYS keys, and a record's signature says when it held others (said, never set);
# 11: the fact table's `crc` words are the record status words of tfrecord.status; 12: a summary
# holds the box keys the reading agreed on and counts labels by the reading's label text; 13: the
# fact table holds each record's first image's hashes and quality scores, records.imagesignals;
# 14: and its colour signature, colour_top and colour_bottom; 15: a TFDS dataset's fact table names
# its ClassLabel ids, facts.CLASS_META; 16: a payload that is wholly one msgpack map or array is
# kind msgpack, no longer bytes or protobuf; lengths stored as their excess over the shortest,
# lengths_base; 17: every row's text is standard JSON (core.jsontext: no NaN or Infinity, which
# SQLite's json_extract refuses as malformed), a pass's told answer a JSON array of its messages)
STORE_NAME = "results.sqlite3"
_SCHEMA = 1  # the tables' layout (PRAGMA user_version), apart from FORMAT (what a row's blobs hold)
_WAL_KEPT = 16 << 20  # bytes of write-ahead log kept on disk after a checkpoint
_TOUCH_AFTER = 60.0  # a load marks its row used again only if it was last used longer ago than this

log = logging.getLogger(__name__)
T = TypeVar("T")


class StoreError(TfrviewError):
    """A stored result that was read in part is gone (the store was trimmed or cleared since)."""


def analysis_dir() -> Path:
    return cache_dir() / "analysis"


def store_path() -> Path:
    return analysis_dir() / STORE_NAME


def _key(task: ShardTask, identity) -> str:
    where = task.path if is_url(task.path) else real_path(task.path)
    what = _KEY_JSON.encode(
        [
            FORMAT,
            where,
            list(identity),
            task.deep,
            task.label_map or {},
            task.part,
            task.parts,
            *([list(task.box_specs)] if task.box_specs else []),
            *([task.tfds_stamp] if task.tfds_stamp else []),
        ]
    )
    return hashlib.sha256(what.encode()).hexdigest()[:32]


# what json.dumps(..., sort_keys=True, default=str) makes a new encoder for at every call (~5 us of a key)
_KEY_JSON = json.JSONEncoder(sort_keys=True, default=str)


# --- the public face ----------------------------------------------------------------------------------


def is_stored(task: ShardTask) -> bool:
    """Whether a result is stored for this file as it is now (without reading it)."""
    identity = identity_of(task.path)
    if identity is None:
        return False
    key = _key(task, identity)
    return _run(
        lambda c: (
            c.execute("SELECT 1 FROM entries WHERE key = ? AND format = ?", (key, FORMAT)).fetchone()
            is not None
        ),
        False,
    )


def load(task: ShardTask, index_only: bool = False) -> ShardResult | None:
    """The stored result for this file as it is now, or None (changed, never analysed, unreadable).
    `index_only`: without a deep result's statistics (the window's scan needs the index alone)."""
    identity = identity_of(task.path)
    if identity is None:
        return None
    key = _key(task, identity)

    def read(c: sqlite3.Connection):
        row = c.execute(
            "SELECT meta, arrays, used FROM entries WHERE key = ? AND format = ?", (key, FORMAT)
        ).fetchone()
        if row is None:
            return None
        now = time.time()
        if row[2] < now - _TOUCH_AFTER:  # recently used: evicted last
            with _write(c):
                c.execute("UPDATE entries SET used = ? WHERE key = ?", (now, key))
        return row[0], row[1]

    got = _run(read, None)
    if got is None:
        return None
    try:
        return _result(task, identity, key, *got, deep=task.deep and not index_only)
    except (ValueError, KeyError, TypeError, IndexError) as exc:  # written by a broken run: analyse again
        log.info("stored result %s of %s unreadable (%s): dropped", key, task.path, exc)
        _run(lambda c: _delete(c, key), None)
        return None


def load_many(
    tasks: list[ShardTask], index_only: bool = False, identities: dict | None = None
) -> list[ShardResult | None]:
    """`load` of many files with one query (a task of many small files asks the store once; the
    window reopening 10,000 shards asks it once for a few hundred, `index_only`). `identities`:
    each path's identity, filled here and taken from it by a caller that asks again."""
    # a file asked for twice (its scan and its deep pass): read once
    by_path: dict[str, object] = identities if identities is not None else {}
    for t in tasks:
        if t.path not in by_path:
            by_path[t.path] = identity_of(t.path)
    ids = [by_path[t.path] for t in tasks]
    keys = [None if i is None else _key(t, i) for t, i in zip(tasks, ids, strict=True)]
    wanted = [k for k in keys if k is not None]
    if not wanted:
        return [None] * len(tasks)

    def read(c: sqlite3.Connection) -> dict:
        got = {}
        for at in range(0, len(wanted), 500):  # SQLite's bound on variables a statement
            some = wanted[at : at + 500]
            marks = ",".join("?" * len(some))
            for key, meta, arrays, used in c.execute(
                f"SELECT key, meta, arrays, used FROM entries WHERE format = ? AND key IN ({marks})",
                (FORMAT, *some),
            ):
                got[key] = (meta, arrays, used)
        now = time.time()
        stale = [(now, k) for k, (_, _, used) in got.items() if used < now - _TOUCH_AFTER]
        if stale:  # recently used: evicted last
            with _write(c):
                c.executemany("UPDATE entries SET used = ? WHERE key = ?", stale)
        return got

    got = _run(read, {})
    out: list[ShardResult | None] = []
    memo: dict = {}
    for t, i, k in zip(tasks, ids, keys, strict=True):
        row = got.get(k) if k is not None else None
        r = None
        if row is not None:
            try:
                r = _result(t, i, k, row[0], row[1], deep=t.deep and not index_only, memo=memo)
            except (ValueError, KeyError, TypeError, IndexError) as exc:  # written by a broken run
                log.info("stored result %s of %s unreadable (%s): dropped", k, t.path, exc)
                _run(lambda c, k=k: _delete(c, k), None)
        out.append(r)
    return out


_READ_AT = b'"analysed_at": '  # how `_pack`'s JSON says when a result's bytes were read


def stamps(keys: list[str]) -> dict[str, float]:
    """When the bytes of each stored result among `keys` were read (its `analysed_at`), for those
    stored: a few queries for thousands of keys, a few bytes of each row's JSON, never the JSON
    parsed (a row's whole JSON, by Python or SQLite, is what this spares: 2,048 rows of summaries).
    A whole answer made from these results is still true while they are
    (`cli._info_answer`). Marks them used, as `load_many` does."""

    def read(c: sqlite3.Connection) -> dict[str, float]:
        got: dict[str, tuple[float, float]] = {}
        for at in range(0, len(keys), 500):  # SQLite's bound on variables a statement
            some = keys[at : at + 500]
            marks = ",".join("?" * len(some))
            for key, head, used in c.execute(
                # the first such bytes are the top-level key: inside a JSON string a quote is escaped
                f"SELECT key, substr(meta, instr(meta, ?) + {len(_READ_AT)}, 32), used FROM entries"
                f" WHERE format = ? AND key IN ({marks}) AND instr(meta, ?) > 0",
                (_READ_AT, FORMAT, *some, _READ_AT),
            ):
                try:
                    got[key] = (float(bytes(head).split(b",")[0].split(b"}")[0]), used)
                except ValueError:  # not a time: as if not stored (the answer is computed again)
                    continue
        now = time.time()
        stale = [(now, k) for k, (_, used) in got.items() if used < now - _TOUCH_AFTER]
        if stale:  # recently used: evicted last
            with _write(c):
                c.executemany("UPDATE entries SET used = ? WHERE key = ?", stale)
        return {k: when for k, (when, _) in got.items()}

    return _run(read, {})


def store(task: ShardTask, r: ShardResult, max_bytes: int | None = None) -> None:
    """Remember a result; a store that cannot be written is no error (the answer is already here).
    Past `max_bytes` (limits.CACHE_MAX_BYTES) the least recently used results make room."""
    store_many([(task, r)], max_bytes)


def store_many(pairs: list[tuple[ShardTask, ShardResult]], max_bytes: int | None = None) -> set[str]:
    """Remember the results of many files in one transaction (a task of many small files: one
    commit, not one a file). The keys written (none when the store could not be)."""
    limit = limits.CACHE_MAX_BYTES if max_bytes is None else max_bytes
    rows = []
    # the file changed while it was read: nothing to remember
    pairs = [(task, r) for task, r in pairs if r.identity is not None and _unchanged(task.path, r.identity)]
    for (task, r), index in zip(pairs, _index_arrays_many([r for _, r in pairs]), strict=True):
        key = _key(task, r.identity)
        meta, arrays, facts = _pack(r, index)
        size = len(key) + len(meta) + len(arrays) + len(facts or b"")
        if size > limit:
            log.info("result of %s (%d bytes) is larger than the store's limit: not stored", task.path, size)
            continue
        rows.append((key, FORMAT, size, time.time(), meta, arrays, facts))
    if not rows:
        return set()

    return {row[0] for row in rows} if _put_rows(rows, limit) else set()


def _put_rows(rows: list[tuple], limit: int) -> bool:
    """Rows of `entries` written (a row a key: a newer one replaces it) in one transaction, then
    the least recently used evicted down to `limit`, never the last row written; whether it was."""

    def put(c: sqlite3.Connection) -> bool:
        with _write(c):
            c.executemany(
                "INSERT INTO entries (key, format, size, used, meta, arrays, facts) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (key) DO UPDATE SET format = excluded.format, size = excluded.size,"
                " used = excluded.used, meta = excluded.meta, arrays = excluded.arrays, facts = excluded.facts",
                rows,
            )
            _evict(c, limit, keep=rows[-1][0])
        return True

    return _run(put, False)


def answer_key(
    tasks: list[ShardTask], what: object, known: dict[str, object] | None = None
) -> tuple[str, list] | None:
    """The key of a whole pass's answer over these tasks (`store_answer`), from every file's path
    and identity as they are now, what each task asks, and `what` else the answer depends on (which
    pass, the window's file numbers), with those identities; None when a file has none (it cannot be
    read, or it is an object with no version): such a pass is never remembered whole. One hash of
    them all (a file's own key costs ~60 us: 0.6 s of 10,000 shards). `known`: identities taken a
    moment ago for another key over the same files (path -> identity), not taken again."""
    identities: dict[str, object] = dict(known or {})
    settings: dict[str, int] = {}
    said: dict[tuple, int] = {}  # the tasks share a few settings: each written out once
    rows = []
    for t in tasks:
        if t.path not in identities:
            identities[t.path] = identity_of(t.path)
        i = identities[t.path]
        if i is None:
            return None
        at = said.get((t.deep, id(t.label_map), t.box_specs, t.tfds_stamp))
        if at is None:
            asked = json.dumps(
                [t.deep, t.label_map or {}, list(t.box_specs), *([t.tfds_stamp] if t.tfds_stamp else [])],
                sort_keys=True,
                default=str,
            )
            at = said[(t.deep, id(t.label_map), t.box_specs, t.tfds_stamp)] = settings.setdefault(
                asked, len(settings)
            )
        rows.append((t.path, i, t.part, t.parts, at))
    text = json.dumps([FORMAT, "answer", what, list(settings), rows], default=str)
    return "answer-" + hashlib.sha256(text.encode()).hexdigest()[:32], [identities[t.path] for t in tasks]


_SETTLED_NS = 2_000_000_000  # a file's ctime this long before its identity was read: no write since hides


def identities(paths: list[str]) -> list | None:
    """Every file's identity (`identity_of`), for the keys of a split's stored answers: see
    `split_identities`. None when a file has no identity (as `answer_key` then gives none). (Only
    tests ask it now, for the identities alone; the window's scan asks `split_identities`.)"""
    got = split_identities(paths)
    return None if got is None else got[0]


def split_identities(paths: list[str]) -> tuple[list, str] | None:
    """Every file's identity (`identity_of`) and their `split_digest`, most of them from one stored
    row rather than each file's ends read and hashed (10,000 shards: ~0.85 s, read twice on a
    reopen, by the window's scan and by its analysis job). A local file keeps the identity last
    read of it when its stat (device, inode, size, mtime, ctime) is what it was then and its ctime
    was at least `_SETTLED_NS` older than that read: any write since would have moved its ctime
    past it (`_unchanged`'s rule; no one sets a ctime back). Any other file (changed, new, just
    written, an object in storage) is read as `identity_of` reads it, and the row written again.
    The row holds the stats as arrays, compared at once, and the digest, hashed again only when a
    file was read again (a reopen of 10,000 shards: ~0.1 s of per-file Python and JSON on the
    window's scan thread became ~0.04 s, nearly all of it the stats themselves). None when a file
    has no identity."""
    named = json.dumps([FORMAT, "identities", paths]).encode()
    whole = hashlib.sha256(named).hexdigest()
    key = "ids2-" + whole[:32]
    n = len(paths)
    local = [k for k, p in enumerate(paths) if not ("://" in p and is_url(p))]
    stats = []
    for k in local:
        try:
            stats.append(os.stat(paths[k]))
        except OSError:
            return None
    now = _stat_columns(stats)  # (dev, ino, size, mtime, ctime) of each local file
    kept = _kept_identities(key, whole, n)  # (columns, at, tails, digest) as last stored
    same = np.zeros(n, bool)
    if kept is not None and now is not None and len(local):
        cols, at, _, _ = kept
        li = np.asarray(local, np.int64)
        same[li] = np.all(cols[li] == now, axis=1) & (now[:, 4] < at[li] - _SETTLED_NS)
    fresh = np.flatnonzero(~same)
    if kept is not None and not len(fresh):
        cols, at, tails, digest = kept
        rows = cols.tolist()
        return [(*r, *t) for r, t in zip(rows, tails, strict=True)], digest
    out: list = [None] * n
    ats = np.zeros(n, np.int64)
    if kept is not None:
        cols, at, tails, _ = kept
        for k in np.flatnonzero(same).tolist():
            out[k] = (*cols[k].tolist(), *tails[k])
            ats[k] = at[k]
    for k in fresh.tolist():
        ats[k] = time.time_ns()  # before the read: a write after it is later than this
        i = identity_of(paths[k])
        if i is None:
            return None
        out[k] = i
    digest = split_digest(paths, out)
    _store_identities(key, whole, out, ats, digest)
    return out, digest


def _stat_columns(stats: list) -> np.ndarray | None:
    """(device, inode, size, mtime, ctime) of each stat as an int64 array (None if one does not fit,
    an inode past 2**63: every file is then read as new)."""
    try:
        return np.array(
            [(s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns) for s in stats], np.int64
        ).reshape(len(stats), 5)
    except OverflowError:
        return None


def _kept_identities(key: str, whole: str, n: int) -> tuple | None:
    """The identities row `_store_identities` wrote: (stat columns, when each file was read, the
    rest of each identity, the digest), or None (none, or unreadable: every file read again)."""
    got = load_answer(key)
    if got is None:
        return None
    try:
        doc = json.loads(got[0])
        arrays = np.frombuffer(got[1], "<i8")
        if doc["paths"] != whole or len(doc["tails"]) != n or len(arrays) != 6 * n:
            return None
        table = arrays.reshape(n, 6).astype(np.int64)
        return table[:, :5], table[:, 5], list(doc["tails"]), str(doc["digest"])
    except (ValueError, TypeError, KeyError) as exc:  # written by a broken run: every file read
        log.info("stored identities %s unreadable (%s): read again", key, exc)
        return None


def _store_identities(key: str, whole: str, ids: list, ats: np.ndarray, digest: str) -> None:
    """Each file's identity and when it was read, as `_kept_identities` reads them back; nothing
    when one does not fit the columns (an object in storage, a huge inode: read again each time)."""
    try:
        table = np.array([(*i[:5], a) for i, a in zip(ids, ats.tolist(), strict=True)], np.int64)
    except (OverflowError, TypeError, ValueError):
        return
    text = json.dumps({"paths": whole, "tails": [i[5:] for i in ids], "digest": digest})
    store_answer(key, text.encode(), table.reshape(len(ids), 6).astype("<i8").tobytes())


def split_digest(paths: list[str], ids: list) -> str:
    """One digest of every file's path and identity (`identities`), from which a split's answers
    are keyed (`split_key`): 10,000 shards hashed once a session, not once an answer and a
    `ShardTask` a file each time (~0.1 s of the window's scan thread an answer)."""
    return hashlib.sha256(json.dumps([FORMAT, paths, ids], default=str).encode()).hexdigest()


def split_key(digest: str, what: object) -> str:
    """The key of a whole answer over the files of `digest` (`split_digest`), with `what` else it
    depends on (which answer, the settings every file was read with): for `store_answer`/
    `load_answer`. A file's task is fixed by its identity and those settings (its parts by its size
    and first bytes), so the tasks themselves need not be planned to find the answer."""
    text = json.dumps([FORMAT, "split", digest, what], sort_keys=True, default=str)
    return "answer-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def still(paths: list[str], identities: list) -> bool:
    """Whether every file is still as its identity saw it (a stat a local file: `_unchanged`)."""
    return all(_unchanged(p, i) for p, i in zip(paths, identities, strict=True))


def load_answer(key: str) -> tuple[bytes, bytes] | None:
    """A whole pass's answer stored under `key`: (its text, its arrays) as stored, or None. A split
    of 10,000 unchanged shards reopens from one row, not 10,000 results read and merged again."""

    def read(c: sqlite3.Connection) -> tuple[bytes, bytes] | None:
        row = c.execute(
            "SELECT meta, arrays FROM entries WHERE key = ? AND format = ?", (key, FORMAT)
        ).fetchone()
        return None if row is None else (bytes(row[0]), bytes(row[1]))

    return _run(read, None)


def store_answer(key: str, text: bytes, arrays: bytes = b"", max_bytes: int | None = None) -> bool:
    """Remember a whole pass's answer under `key` (`answer_key`): a row of the one store, so its
    bytes count toward limits.CACHE_MAX_BYTES and it is evicted by use like any other."""
    limit = limits.CACHE_MAX_BYTES if max_bytes is None else max_bytes
    size = len(key) + len(text) + len(arrays)
    if size > limit:
        return False
    return _put_rows([(key, FORMAT, size, time.time(), text, arrays, None)], limit)


def _unchanged(path: str, identity) -> bool:
    """Whether a file is still as `identity` saw it before it was read. A local file by its stat
    alone: a write since changes its ctime (which no one can set back), and hashing its ends again
    cost a quarter of a millisecond a file (a second of 2,048 small shards); an object by its ETag."""
    if is_url(path) or identity[0] == "url":
        return identity_of(path) == identity
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == tuple(identity[:5])


def trim(max_bytes: int) -> tuple[int, int]:
    """Evict the least recently used results until at most `max_bytes` remain: (entries, bytes)
    evicted."""

    def evict(c: sqlite3.Connection) -> tuple[int, int]:
        with _write(c):
            return _evict(c, max_bytes)

    return _run(evict, (0, 0))


def usage() -> tuple[int, int]:
    """(entries, bytes of their results) stored, from the running totals (no walk)."""
    return _run(lambda c: tuple(c.execute("SELECT entries, bytes FROM totals").fetchone()), (0, 0))


def disk_bytes() -> int:
    """What the store takes on disk: its file and its write-ahead log."""
    total = 0
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            st = os.stat(f"{store_path()}{suffix}")
            total += st.st_blocks * 512 if hasattr(st, "st_blocks") else st.st_size
    return total


def clear() -> tuple[int, int]:
    """Remove every stored result: (entries, bytes) removed. The file shrinks to its tables."""

    def empty(c: sqlite3.Connection) -> tuple[int, int]:
        with _write(c):
            n, size = c.execute("SELECT entries, bytes FROM totals").fetchone()
            c.execute("DELETE FROM entries")
        c.execute("PRAGMA incremental_vacuum")
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return n, size

    return _run(empty, (0, 0))


# --- packing a result into a row and back -------------------------------------------------------------


def _pack(r: ShardResult, index: tuple[dict, dict] | None = None) -> tuple[bytes, bytes, bytes | None]:
    """(meta JSON, raw arrays, fact table) of a result; `index`: its `_index_arrays` (meta's part,
    arrays) taken already, with the others of a batch (`_index_arrays_many`)."""
    meta = {
        "path": r.path,
        "identity": list(r.identity),
        "compression": r.compression,
        "file_size": r.file_size,
        "scanned": r.scanned,
        "analysed_at": r.analysed_at,
        "seconds": r.seconds,
        "records": r.records,
        "damaged": r.damaged,
        "written_at": time.time(),
        "lo": r.lo,
        "hi": r.hi,
        "cause": r.cause,
        "problems": [p.to_json() for p in r.problems],
    }
    if index is None:
        arrays = _index_arrays(r, meta)
    else:
        meta.update(index[0])
        arrays = dict(index[1])
    facts = None
    if r.deep is not None:
        deep = r.deep
        arrays["signature_of"] = np.asarray(deep.signature_of, np.int32)
        meta["schema"] = _schema_json(deep.schema)
        s = deep.summary
        meta["summary"] = {
            "records": s.records,
            "kinds": dict(s.kinds),
            "box_classes": dict(s.box_classes),
            "record_labels": dict(s.record_labels),
            "class_keys": dict(s.class_keys),
            "other_keys": s.other_keys,
            "class_text_key": s.class_text_key,
            "class_id_key": s.class_id_key,
            "box_keys": s.box_keys,
        }
        meta["stats"] = _stats_json(s)
        meta["signatures"] = [[k, [list(kt) for kt in keys], partial] for k, keys, partial in deep.signatures]
        meta["class_zero"] = [[int(n), k] for n, k in deep.class_zero]
        meta["class_ids"] = sorted(int(i) for i in deep.class_ids)
        ik = deep.image_keys
        if ik is not None:
            meta["image_keys"] = {
                "images": dict(ik.images),
                "seen": dict(ik.seen),
                "odd": {k: [[int(n), *w] for n, *w in v] for k, v in ik.odd.items()},
            }
        keys = sorted({k for _, k, _ in deep.digests})
        slot = {k: i for i, k in enumerate(keys)}
        meta["digest_keys"] = keys
        arrays["digest_record"] = np.array([n for n, _, _ in deep.digests], np.int64)
        arrays["digest_key"] = np.array([slot[k] for _, k, _ in deep.digests], np.int32)
        # 16 bytes each
        arrays["digest_hash"] = np.frombuffer(b"".join(h for _, _, h in deep.digests), np.uint8)
        facts = _table_bytes(deep.facts)
    layout, pieces, at = [], [], 0
    for name, a in arrays.items():
        b = a.tobytes()
        layout.append([name, a.dtype.str, len(a), at])
        pieces.append(b)
        at += len(b)
    meta["arrays"] = layout
    return jsontext.dumps(meta).encode(), b"".join(pieces), facts


def _index_arrays(r: ShardResult, meta: dict) -> dict[str, np.ndarray]:
    """A file's index as stored: records that follow one another (every clean file) keep their
    lengths alone (`_narrow_lengths`: ~1 byte a record for records of similar sizes) and the first
    offset, and one status for all when they share it: not 17 bytes a record (2,000,000 records in
    2,048 shards wrote 35 MB in 2,048 rows, pickled by the workers and stored again).
    `_index_of` reads either form back."""
    offs = np.asarray(r.offsets, np.uint64)
    lens = np.asarray(r.lengths, np.uint64)
    status = np.asarray(r.status, np.uint8)
    out: dict[str, np.ndarray] = {}
    if len(offs) and np.array_equal(offs[1:], offs[:-1] + lens[:-1] + np.uint64(OVERHEAD)):
        meta["first_offset"] = int(offs[0])
    else:
        out["offsets"] = offs
    out["lengths"] = _narrow_lengths(lens, meta)
    if len(status) and not np.any(status != status[0]):
        meta["status_all"] = int(status[0])
    else:
        out["status"] = status
    return out


def _index_arrays_many(results: list[ShardResult]) -> list[tuple[dict, dict[str, np.ndarray]]]:
    """`_index_arrays` of each result, as (meta's part, arrays), the checks of every file done at
    once over the batch's records (a batch of 256 shards: ~15 numpy calls a file were ~30 us)."""
    counts = np.array([len(r.offsets) for r in results], np.int64)
    if len(results) < 2 or not counts.all():
        out = []
        for r in results:
            meta: dict = {}
            out.append((meta, _index_arrays(r, meta)))
        return out
    offs = np.concatenate([np.asarray(r.offsets, np.uint64) for r in results])
    lens = np.concatenate([np.asarray(r.lengths, np.uint64) for r in results])
    status = np.concatenate([np.asarray(r.status, np.uint8) for r in results])
    firsts = np.cumsum(counts) - counts
    apart = np.zeros(len(offs), bool)  # a record that does not follow the one before it
    apart[1:] = offs[1:] != offs[:-1] + lens[:-1] + np.uint64(OVERHEAD)
    apart[firsts] = False  # (a file's first record follows none)
    follow = ~np.logical_or.reduceat(apart, firsts)
    lo, hi = np.minimum.reduceat(lens, firsts), np.maximum.reduceat(lens, firsts)
    one_status = np.minimum.reduceat(status, firsts) == np.maximum.reduceat(status, firsts)
    out = []
    for k, (a, n) in enumerate(zip(firsts.tolist(), counts.tolist(), strict=True)):
        meta, arrays = {}, {}
        if follow[k]:
            meta["first_offset"] = int(offs[a])
        else:
            arrays["offsets"] = offs[a : a + n]
        base, span = int(lo[k]), int(hi[k]) - int(lo[k])
        dtype = next(
            (t for t in (np.uint8, np.uint16, np.uint32) if span < 1 << (8 * np.dtype(t).itemsize)), None
        )
        if dtype is None:
            arrays["lengths"] = lens[a : a + n]
        elif base:
            meta["lengths_base"] = base
            arrays["lengths"] = (lens[a : a + n] - np.uint64(base)).astype(dtype)
        else:
            arrays["lengths"] = lens[a : a + n].astype(dtype)
        if one_status[k]:
            meta["status_all"] = int(status[a])
        else:
            arrays["status"] = status[a : a + n]
        out.append((meta, arrays))
    return out


def _narrow_lengths(lens: np.ndarray, meta: dict) -> np.ndarray:
    """Record lengths as their excess over the shortest (`lengths_base` in meta when not 0) in the
    narrowest unsigned type that holds it: 2,000,000 small records took 8 MB as uint32, and a
    commit past the write-ahead log's 4 MB checkpoints it, fsyncs included (~0.25 s of a 1 s
    `verify`); as uint8 it is 2 MB."""
    if not len(lens):
        return lens
    base = int(lens.min())
    span = int(lens.max()) - base
    for dtype in (np.uint8, np.uint16, np.uint32):
        if span < 1 << (8 * np.dtype(dtype).itemsize):
            if base:
                meta["lengths_base"] = base
                return (lens - np.uint64(base)).astype(dtype)
            return lens.astype(dtype)
    return lens


def _index_of(meta: dict, arrays: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(offsets, lengths, status) as uint64, uint64, uint8, from either stored form."""
    lens = arrays["lengths"].astype(np.uint64, copy=False)
    if meta.get("lengths_base"):
        lens = lens + np.uint64(meta["lengths_base"])
    if "offsets" in arrays:
        offs = arrays["offsets"]
    else:
        offs = np.empty(len(lens), np.uint64)
        offs[:1] = meta["first_offset"]
        np.cumsum(lens[:-1] + np.uint64(OVERHEAD), out=offs[1:])
        offs[1:] += np.uint64(meta["first_offset"])
    status = arrays["status"] if "status" in arrays else np.full(len(lens), meta["status_all"], np.uint8)
    return offs, lens, status


def _unpack_arrays(meta: dict, blob: bytes) -> dict[str, np.ndarray]:
    out = {}
    for name, dtype, count, at in meta["arrays"]:
        dt = np.dtype(dtype)
        if at < 0 or at + count * dt.itemsize > len(blob):
            raise ValueError(f"array {name} runs past the stored bytes")
        out[name] = np.frombuffer(blob, dt, count, at).copy()  # writable, as np.load gave them
    return out


def _result(
    task: ShardTask, identity, key: str, meta_json: bytes, blob: bytes, deep: bool, memo: dict | None = None
) -> ShardResult | None:
    """`memo`: the index last decoded for each identity, shared by the parts of one big file (each
    part stores the whole file's index: 8 parts of 2,000,000 records were 8 decodings of 16 MB)."""
    meta = jsontext.loads(meta_json)
    if tuple(meta["identity"]) != identity:
        return None
    arrays = _unpack_arrays(meta, blob)
    same = None if memo is None else memo.get(tuple(identity))
    if (
        same is not None
        and same[0] == (meta.get("first_offset"), meta.get("status_all"))
        and all(np.array_equal(same[1].get(k), arrays.get(k)) for k in ("lengths", "offsets", "status"))
    ):
        offsets, lengths, status = same[2]
    else:
        offsets, lengths, status = _index_of(meta, arrays)
        if memo is not None:
            memo[tuple(identity)] = (
                (meta.get("first_offset"), meta.get("status_all")),
                arrays,
                (offsets, lengths, status),
            )
    r = ShardResult(
        task.file_no,
        task.path,
        identity,
        compression=meta["compression"],
        file_size=meta["file_size"],
        scanned=meta["scanned"],
        offsets=offsets,
        lengths=lengths,
        status=status,
        problems=[Problem.from_json(p) for p in meta["problems"]],
        analysed_at=meta["analysed_at"],
        from_cache=True,
        part=task.part,
        parts=task.parts,
        lo=meta["lo"],
        hi=meta["hi"],
        cause=meta.get("cause", ""),
    )
    if deep:
        r.deep = _load_deep(meta, arrays, StoredTable(key, task.path))
    return r


def _table_bytes(table) -> bytes:
    """An Arrow IPC stream, LZ4-compressed on this thread: ~0.13 ms to write and ~0.4 ms to read the
    fact table of 1,000 small records (Parquet: 1.6 and 5.4 ms; LZ4 on Arrow's threads 0.5 ms, and
    every pool worker would start its own), ~21 bytes a record."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    try:
        options = pa.ipc.IpcWriteOptions(compression="lz4", use_threads=False)
    except (pa.ArrowNotImplementedError, ValueError):  # a pyarrow built without LZ4
        options = pa.ipc.IpcWriteOptions(use_threads=False)
    with pa.ipc.new_stream(sink, table.schema, options=options) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


class StoredTable:
    """A stored result's fact table, read when asked (`DeepResult.read_facts`); its `key` lets a
    reader of many fetch theirs in one query (`fact_blobs`, `factcolumns.read`)."""

    def __init__(self, key: str, path: str) -> None:
        self.key, self.path = key, path

    def __call__(self, pick: Callable | None = None):
        return _read_facts(self.key, self.path, pick)


def _read_facts(key: str, path: str, pick: Callable | None = None):
    """The fact table of a result loaded before (a look at a split needs summaries, not facts). Its
    row may have been evicted or cleared since: said, never a traceback. `pick` (the stream's
    schema -> column names): only those columns are decompressed and kept (`DeepResult.read_facts`)."""
    row = _run(lambda c: c.execute("SELECT facts FROM entries WHERE key = ?", (key,)).fetchone(), None)
    return table_of(row[0] if row is not None else None, key, path, pick)


def fact_blobs(keys: list[str]) -> dict[str, bytes]:
    """The stored fact tables (Arrow IPC streams, as stored) of many results, a query a few hundred:
    2,048 shards' tables were 2,048 queries. Those no longer stored are absent (`table_of` says so)."""

    def read(c: sqlite3.Connection) -> dict[str, bytes]:
        got: dict[str, bytes] = {}
        for at in range(0, len(keys), 500):  # SQLite's bound on variables a statement
            some = keys[at : at + 500]
            marks = ",".join("?" * len(some))
            for key, facts in c.execute(
                f"SELECT key, facts FROM entries WHERE key IN ({marks}) AND facts IS NOT NULL", some
            ):
                got[key] = facts
        return got

    return _run(read, {})


def table_of(
    blob: bytes | None, key: str, path: str, pick: Callable | None = None, fields_of: dict | None = None
):
    """A stored fact table from its bytes (`pick`: only the columns it names decompressed); None
    bytes or unreadable ones raise `StoreError` (its row was evicted, or written by a broken run,
    then dropped). `fields_of`: the fields `pick` chose, by the stream's schema message, kept by a
    reader of many tables (a split's shards share one schema: the stream opened once, not twice)."""
    import pyarrow as pa

    head = _schema_head(blob) if fields_of is not None and blob is not None and pick is not None else None
    if head is not None and fields_of.get(head):
        try:
            options = pa.ipc.IpcReadOptions(use_threads=False, included_fields=fields_of[head])
            return pa.ipc.open_stream(blob, options=options).read_all()
        except (pa.ArrowInvalid, OSError):
            pass  # said below

    if blob is None:
        raise StoreError(
            f"{printable(path)}: its stored fact table left the result store after its summary was "
            "read (the store was trimmed or cleared): read the file again"
        )
    try:
        fields: list[int] = []
        if pick is not None:  # the schema message alone, then only the fields asked for
            schema = pa.ipc.open_stream(blob).schema
            wanted = set(pick(schema))
            fields = [i for i, n in enumerate(schema.names) if n in wanted]
            if head is not None:
                fields_of[head] = fields
            if not fields:  # no field asked for is here: Arrow's empty list would mean all of them
                return schema.empty_table().select([])
        options = pa.ipc.IpcReadOptions(use_threads=False, included_fields=fields)
        return pa.ipc.open_stream(blob, options=options).read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        _run(lambda c: _delete(c, key), None)
        raise StoreError(
            f"{printable(path)}: its stored fact table is unreadable ({printable(str(exc))}): "
            "read the file again"
        ) from None


def _schema_head(blob: bytes) -> bytes | None:
    """An Arrow IPC stream's first message (its schema), as bytes; None in the old framing."""
    if blob[:4] != b"\xff\xff\xff\xff" or len(blob) < 8:
        return None
    return bytes(blob[: 8 + int.from_bytes(blob[4:8], "little")])


def _load_deep(meta: dict, arrays: dict, facts: Callable[[], object]) -> DeepResult:
    from tfrview.core.analysis.datasummary import DatasetSummary

    s = DatasetSummary()
    m = meta["summary"]
    s.records = m["records"]
    s.kinds = Counter(m["kinds"])
    s.box_classes = Counter(m["box_classes"])
    s.record_labels = Counter(m["record_labels"])
    s.class_keys = dict(m.get("class_keys", {}))
    s.other_keys = m.get("other_keys", 0)
    s.class_text_key, s.class_id_key = m.get("class_text_key"), m.get("class_id_key")
    s.box_keys = m.get("box_keys")
    _read_stats(meta["stats"], s)
    keys, hashes = meta["digest_keys"], arrays["digest_hash"].tobytes()
    if len(hashes) != 16 * len(arrays["digest_record"]):
        raise ValueError("image hashes and their records differ in number")
    digests = [
        (n, keys[k], hashes[16 * i : 16 * i + 16])
        for i, (n, k) in enumerate(
            zip(arrays["digest_record"].tolist(), arrays["digest_key"].tolist(), strict=True)
        )
    ]
    return DeepResult(
        schema=_schema_from(meta["schema"]),
        summary=s,
        _facts=facts,
        signatures=[(k, tuple((a, b) for a, b in keys), partial) for k, keys, partial in meta["signatures"]],
        signature_of=arrays["signature_of"],
        digests=digests,
        class_zero=[(n, k) for n, k in meta["class_zero"]],
        class_ids=set(meta["class_ids"]),
        image_keys=_image_keys_from(meta.get("image_keys")),
    )


def _image_keys_from(d: dict | None):
    from tfrview.core.analysis.checks import ImageKeys

    if d is None:
        return None
    return ImageKeys(
        Counter(d["images"]), Counter(d["seen"]), {k: [(n, *w) for n, *w in v] for k, v in d["odd"].items()}
    )


def _schema_json(schema) -> dict:
    return {
        "records": schema.records,
        "kinds": dict(schema.kinds),
        "presence": dict(schema.presence),
        "types": {k: dict(c) for k, c in schema.types.items()},
        "od": schema.od,
        "other": schema.other,
        "first_other": schema.first_other,
    }


def _schema_from(d: dict):
    from tfrview.core.analysis.checks import Schema

    return Schema(
        d["records"],
        Counter(d["kinds"]),
        Counter(d["presence"]),
        {k: Counter(c) for k, c in d["types"].items()},
        d["od"],
        d["other"],
        d["first_other"],
    )


_STAT_FIELDS = (
    "present",
    "per_record_min",
    "per_record_max",
    "num_min",
    "num_max",
    "num_sum",
    "num_count",
    "nan",
)


def _stats_json(s) -> list:
    """Per feature key: [section, key, types, the _STAT_FIELDS..., top values, top_full]. A key
    with no numbers (every bytes key) keeps num_min and num_max as null, not their starting ±inf: a
    row then needs no tag (`jsontext`), and its text is read back without a walk."""
    return [
        [
            section,
            key,
            dict(st.types),
            *(_stat_value(st, f) for f in _STAT_FIELDS),
            [[type(v).__name__, v, c] for v, c in st.top.items()],
            st.top_full,
        ]
        for section, d in (("keys", s.keys), ("lists", s.lists))
        for key, st in d.items()
    ]


def _stat_value(st, f: str):
    if not st.num_count and f in ("num_min", "num_max"):
        return None
    return getattr(st, f)


def _read_stats(rows: list, s) -> None:
    from tfrview.core.analysis.datasummary import KeyStats

    n = len(_STAT_FIELDS)
    for section, key, types, *rest in rows:
        st = KeyStats()
        st.types = Counter(types)
        for f, v in zip(_STAT_FIELDS, rest[:n], strict=True):
            if v is not None or f not in ("num_min", "num_max"):  # None: KeyStats' own start
                setattr(st, f, v)
        st.top = Counter({(int(v) if t_ == "int" else v): c for t_, v, c in rest[n]})
        st.top_full = rest[n + 1]
        (s.keys if section == "keys" else s.lists)[key] = st


# --- the store: connections, eviction, damage -------------------------------------------------------


_local = threading.local()  # this thread's connection: (pid, path, inode, connection)
_off: dict[str, str] = {}  # stores this process goes on without (busy, unwritable), and why


def _run(what: Callable[[sqlite3.Connection], T], default: T) -> T:
    """`what` on this thread's connection; a busy, unusable or damaged store gives `default` (a
    damaged one is rebuilt first and `what` tried again)."""
    for attempt in range(2):
        path = store_path()
        try:
            c = _connection(path)
            if c is None:
                return default
            return what(c)
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                why = f"stayed busy for {limits.STORE_BUSY_SECONDS:g} s (limits.STORE_BUSY_SECONDS)"
                _turn_off(path, f"the result store {path} {why}: going on without it")
                return default
            if _is_damaged(exc) and attempt == 0:
                _rebuild(path, exc)
                continue
            _turn_off(
                path, f"the result store {path} cannot be used ({printable(str(exc))}): going on without it"
            )
            return default
        except OSError as exc:
            _turn_off(
                path, f"the result store {path} cannot be used ({printable(str(exc))}): going on without it"
            )
            return default
    return default


def _is_busy(exc: sqlite3.DatabaseError) -> bool:
    name = getattr(exc, "sqlite_errorname", "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc)


def _is_damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether the store itself is damaged: a row's text SQLite's json functions cannot read
    ("malformed JSON") is no damage of the store, and is never a reason to rebuild it empty."""
    name = getattr(exc, "sqlite_errorname", "")
    text = str(exc)
    if "malformed JSON" in text:
        return False
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or any(
        w in text for w in ("malformed", "not a database", "no such table", "no such column")
    )


def _notice(msg: str) -> None:
    """One line on stderr for the person (a store that stopped working changes how fast tfrview is)."""
    log.info(msg)
    print(f"tfrview: {printable(msg)}", file=sys.stderr, flush=True)


def _turn_off(path: Path, why: str) -> None:
    if str(path) not in _off:
        _off[str(path)] = why
        _notice(why)
    _forget()


def close() -> None:
    """Close this thread's connection to the store (its log checkpointed into the file), as a
    process that ends by os._exit does first (`cli._exit_now`)."""
    _forget()


def _forget() -> None:
    held = getattr(_local, "held", None)
    _local.held = None
    if held is not None:
        with contextlib.suppress(sqlite3.Error):
            held[3].close()


def _connection(path: Path) -> sqlite3.Connection | None:
    """This thread's connection to the store at `path`, opened (and made) on first use; again when
    the file was replaced (rebuilt or removed by another process)."""
    if str(path) in _off:
        return None
    held = getattr(_local, "held", None)
    try:
        inode = os.stat(path).st_ino
    except FileNotFoundError:
        inode = None
    if held is not None and held[:3] == (os.getpid(), str(path), inode) and inode is not None:
        return held[3]
    _forget()
    c = _open(path)
    _local.held = (os.getpid(), str(path), os.stat(path).st_ino, c)
    return c


def _connect(path: Path) -> sqlite3.Connection:
    """WAL with `synchronous = NORMAL`: a crash loses at most the last results, never the file; the
    log shrinks back to _WAL_KEPT after a big write."""
    c = sqlite3.connect(
        path, timeout=limits.STORE_BUSY_SECONDS, isolation_level=None, check_same_thread=False
    )
    try:
        c.execute("PRAGMA synchronous = NORMAL")
        c.execute(f"PRAGMA journal_size_limit = {_WAL_KEPT}")
    except sqlite3.Error:
        c.close()
        raise
    return c


def _open(path: Path) -> sqlite3.Connection:
    """Open the store, making its tables the first time; the old layout's folders go."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(path):
        _remove_old_layout(path.parent)
        c = None
        try:
            c = _connect(path)
            _setup(c)
        except sqlite3.DatabaseError as exc:
            if c is not None:
                c.close()
            if not _is_damaged(exc):
                raise
            _notice(f"the result store {path} is damaged ({printable(str(exc))}): rebuilt empty")
            _unlink_store(path)
            c = _connect(path)
            _setup(c)
    return c


def _setup(c: sqlite3.Connection) -> None:
    if c.execute("PRAGMA user_version").fetchone()[0] == _SCHEMA:
        c.execute("SELECT entries, bytes FROM totals").fetchone()  # a damaged header or table says so here
        return
    # a new store's making unsynced: ~8 fsyncs (~35 ms, as long as a quarter of a one-file verify's
    # tail) for tables that hold nothing yet; a machine that stops halfway leaves a store without
    # them or a damaged one, each rebuilt on its next opening (`_setup`, `_open`)
    c.execute("PRAGMA synchronous = OFF")
    c.execute("PRAGMA auto_vacuum = INCREMENTAL")  # before the first table: freed pages can be given back
    c.execute("PRAGMA journal_mode = WAL")  # readers never wait for a writer
    with _write(c):
        for statement in _TABLES:
            c.execute(statement)
        c.execute(f"PRAGMA user_version = {_SCHEMA}")
    c.execute("PRAGMA synchronous = NORMAL")


_TABLES = (
    "CREATE TABLE IF NOT EXISTS entries (key TEXT NOT NULL UNIQUE, format INTEGER NOT NULL, size INTEGER NOT NULL,"
    " used REAL NOT NULL, meta BLOB NOT NULL, arrays BLOB NOT NULL, facts BLOB)",
    "CREATE INDEX IF NOT EXISTS entries_by_use ON entries (used, key)",
    "CREATE TABLE IF NOT EXISTS totals (one INTEGER PRIMARY KEY CHECK (one = 1), entries INTEGER NOT NULL,"
    " bytes INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO totals VALUES (1, 0, 0)",
    # the running total: kept by the same transaction that adds, replaces or removes a row
    "CREATE TRIGGER IF NOT EXISTS entries_added AFTER INSERT ON entries BEGIN"
    " UPDATE totals SET entries = entries + 1, bytes = bytes + NEW.size; END",
    "CREATE TRIGGER IF NOT EXISTS entries_removed AFTER DELETE ON entries BEGIN"
    " UPDATE totals SET entries = entries - 1, bytes = bytes - OLD.size; END",
    "CREATE TRIGGER IF NOT EXISTS entries_replaced AFTER UPDATE OF size ON entries BEGIN"
    " UPDATE totals SET bytes = bytes - OLD.size + NEW.size; END",
)


@contextlib.contextmanager
def _write(c: sqlite3.Connection) -> Iterator[None]:
    """One write transaction, taken at once (a read that turns into a write could not wait)."""
    c.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            c.execute("ROLLBACK")
        raise
    c.execute("COMMIT")


def _evict(c: sqlite3.Connection, max_bytes: int, keep: str = "") -> tuple[int, int]:
    """Least recently used rows out until the total is at most `max_bytes` (inside a write
    transaction): along the index on last use, as far as needed, then one DELETE of that range."""
    total = c.execute("SELECT bytes FROM totals").fetchone()[0]
    if total <= max_bytes:
        return 0, 0
    need, freed, last = total - max_bytes, 0, None
    rows = c.execute("SELECT used, key, size FROM entries ORDER BY used, key")
    while freed < need:
        batch = rows.fetchmany(64)
        if not batch:
            break
        for used, key, size in batch:
            if key == keep:
                continue
            freed += size
            last = (used, key)
            if freed >= need:
                break
    rows.close()
    if last is None:
        return 0, 0
    n = c.execute("DELETE FROM entries WHERE (used, key) <= (?, ?) AND key != ?", (*last, keep)).rowcount
    log.info("result store: %d least recently used results evicted (%d bytes)", n, freed)
    return n, freed


def _delete(c: sqlite3.Connection, key: str) -> None:
    with _write(c):
        c.execute("DELETE FROM entries WHERE key = ?", (key,))


def _rebuild(path: Path, exc: Exception) -> None:
    """A store found damaged while in use: replaced by an empty one, unless another process did so
    already (the file is then another inode)."""
    held = getattr(_local, "held", None)
    seen = held[2] if held is not None else None
    _forget()
    with _exclusive(path):
        try:
            if os.stat(path).st_ino != seen:
                return
        except FileNotFoundError:
            return  # removed by another process: made anew on next use
        _notice(f"the result store {path} is damaged ({printable(str(exc))}): rebuilt empty")
        _unlink_store(path)


def _unlink_store(path: Path) -> None:
    for suffix in ("-wal", "-shm", ""):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{path}{suffix}")


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """Making, migrating and rebuilding the store happen one process at a time (a lock file beside
    it); a lock held past limits.STORE_BUSY_SECONDS is a busy store."""
    try:
        import fcntl
    except ImportError:  # not POSIX: SQLite's own locks alone
        yield
        return
    fd = os.open(path.parent / ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        deadline = time.monotonic() + limits.STORE_BUSY_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise sqlite3.OperationalError("database is locked") from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # releases the lock


def _remove_old_layout(root: Path) -> None:
    """The folders of the layout before the store (one per result: meta.json, index.npz, Parquet)."""
    removed = 0
    with contextlib.suppress(OSError):
        for e in os.scandir(root):
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path, ignore_errors=True)
                removed += 1
    if removed:
        log.info("removed %d results stored in the old layout (a folder each) from %s", removed, root)
