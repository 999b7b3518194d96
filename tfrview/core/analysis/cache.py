"""Remembered results: each file's pass stored in the user's cache directory, keyed by the file's
identity (device, inode, size, mtime_ns) and what was asked (deep or not, the label map), so an
unchanged dataset reopens at once. Never next to the user's data.

One directory per file and question, in formats other tools read:
    meta.json       path, identity, when its bytes were read, counts, schema and summary counters
    index.npz       offsets, lengths, status (and each record's schema signature)
    problems.json   every problem of the file
    facts.parquet   the fact table (see facts.py)
    stats.parquet   per feature key: types, presence, values per record, min/max/sum, NaN, top values
    images.parquet  (record, key, hash) of every image, for duplicate detection across files
Written to a temporary directory and renamed; trimmed to limits.CACHE_MAX_BYTES, least recently
used first.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from tfrview.core.analysis.shard import DeepResult, ShardResult, ShardTask, identity_of
from tfrview.core.limits import CACHE_MAX_BYTES
from tfrview.core.tfrecord.framing import Problem
from tfrview.core.tfrecord.remote import is_url
from tfrview.core.userdirs import cache_dir

FORMAT = 7  # bump when what is stored changes: old entries are then simply not found


def analysis_dir() -> Path:
    return cache_dir() / "analysis"


def _key(task: ShardTask, identity) -> str:
    where = task.path if is_url(task.path) else os.path.realpath(task.path)
    what = json.dumps([FORMAT, where, list(identity), task.deep, task.label_map or {},
                       task.part, task.parts],
                      sort_keys=True, default=str)  # fmt: skip
    return hashlib.sha256(what.encode()).hexdigest()[:32]


def is_stored(task: ShardTask) -> bool:
    """Whether a result is stored for this file as it is now (without reading it)."""
    identity = identity_of(task.path)
    return identity is not None and (analysis_dir() / _key(task, identity) / "meta.json").exists()


def load(task: ShardTask, index_only: bool = False) -> ShardResult | None:
    """The stored result for this file as it is now, or None (changed, never analysed, unreadable).
    `index_only`: without a deep result's statistics (the window's scan needs the index alone)."""
    identity = identity_of(task.path)
    if identity is None:
        return None
    d = analysis_dir() / _key(task, identity)
    try:
        meta = json.loads((d / "meta.json").read_text())
        if tuple(meta["identity"]) != identity:
            return None
        arrays = np.load(d / "index.npz")
        problems = [_problem(p) for p in json.loads((d / "problems.json").read_text())]
        r = ShardResult(task.file_no, task.path, identity, compression=meta["compression"],
                        file_size=meta["file_size"], scanned=meta["scanned"], offsets=arrays["offsets"],
                        lengths=arrays["lengths"], status=arrays["status"], problems=problems,
                        analysed_at=meta["analysed_at"], from_cache=True, part=task.part, parts=task.parts,
                        lo=meta["lo"], hi=meta["hi"], cause=meta.get("cause", ""))  # fmt: skip
        if task.deep and not index_only:
            r.deep = _load_deep(d, meta, arrays)
        os.utime(d / "meta.json")  # recently used: trimmed last
        return r
    except (OSError, ValueError, KeyError, TypeError):
        return None  # absent, half-written by a crashed run, or from another version: analyse again


def store(task: ShardTask, r: ShardResult) -> None:
    """Remember a result; a cache that cannot be written is no error (the answer is already here)."""
    if r.identity is None or identity_of(task.path) != r.identity:
        return  # the file changed while it was read: nothing to remember
    root = analysis_dir()
    with contextlib.suppress(OSError):
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".partial-", dir=root))
        try:
            _write(tmp, r)
            final = root / _key(task, r.identity)
            if final.exists():
                shutil.rmtree(final, ignore_errors=True)
            os.replace(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        trim(CACHE_MAX_BYTES)


def clear() -> tuple[int, int]:
    """Remove every stored result: (entries, bytes) removed."""
    entries, size = _entries()
    for _, _, d in entries:
        shutil.rmtree(d, ignore_errors=True)
    return len(entries), size


def trim(max_bytes: int) -> None:
    entries, size = _entries()
    for _, bytes_, d in sorted(entries):  # least recently used first
        if size <= max_bytes:
            break
        shutil.rmtree(d, ignore_errors=True)
        size -= bytes_


def _entries() -> tuple[list[tuple[float, int, Path]], int]:
    root = analysis_dir()
    out = []
    if root.is_dir():
        for d in root.iterdir():
            with contextlib.suppress(OSError):
                files = list(d.iterdir())
                out.append((os.stat(d / "meta.json").st_mtime if (d / "meta.json").exists() else 0.0,
                            sum(f.stat().st_size for f in files), d))  # fmt: skip
    return out, sum(b for _, b, _ in out)


# --- writing and reading one entry ------------------------------------------------------------------


def _write(d: Path, r: ShardResult) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = {"path": r.path, "identity": list(r.identity), "compression": r.compression, "file_size": r.file_size,
            "scanned": r.scanned, "analysed_at": r.analysed_at, "seconds": r.seconds, "records": r.records, "damaged": r.damaged,
            "written_at": time.time(), "lo": r.lo, "hi": r.hi, "cause": r.cause}  # fmt: skip
    arrays = {"offsets": r.offsets, "lengths": r.lengths, "status": r.status}
    if r.deep is not None:
        deep = r.deep
        arrays["signature_of"] = deep.signature_of
        meta["schema"] = _schema_json(deep.schema)
        s = deep.summary
        meta["summary"] = {"records": s.records, "kinds": dict(s.kinds), "box_classes": dict(s.box_classes),
                           "record_labels": dict(s.record_labels), "class_keys": dict(s.class_keys),
                           "other_keys": s.other_keys}  # fmt: skip
        meta["signatures"] = [[k, [list(kt) for kt in keys], partial] for k, keys, partial in deep.signatures]
        meta["class_zero"] = [[int(n), k] for n, k in deep.class_zero]
        meta["class_ids"] = sorted(int(i) for i in deep.class_ids)
        ik = deep.image_keys
        if ik is not None:
            meta["image_keys"] = {"images": dict(ik.images), "seen": dict(ik.seen),
                                  "odd": {k: [[int(n), w] for n, w in v] for k, v in ik.odd.items()}}  # fmt: skip
        pq.write_table(deep.facts, d / "facts.parquet")
        pq.write_table(_stats_table(s), d / "stats.parquet")
        pq.write_table(pa.table({
            "record": pa.array([n for n, _, _ in deep.digests], pa.int64()),
            "key": pa.array([k for _, k, _ in deep.digests], pa.string()),
            "hash": pa.array([h for _, _, h in deep.digests], pa.binary(16)),
        }), d / "images.parquet")  # fmt: skip
    np.savez(d / "index.npz", **arrays)
    (d / "problems.json").write_text(json.dumps([p.to_json() for p in r.problems]))
    (d / "meta.json").write_text(json.dumps(meta))  # last: an entry without it is never read


def _load_deep(d: Path, meta: dict, arrays) -> DeepResult:
    import pyarrow.parquet as pq

    from tfrview.core.analysis.datasummary import DatasetSummary

    s = DatasetSummary()
    m = meta["summary"]
    s.records = m["records"]
    s.kinds = Counter(m["kinds"])
    s.box_classes = Counter(m["box_classes"])
    s.record_labels = Counter(m["record_labels"])
    s.class_keys = dict(m.get("class_keys", {}))
    s.other_keys = m.get("other_keys", 0)
    _read_stats(pq.read_table(d / "stats.parquet"), s)
    images = pq.read_table(d / "images.parquet").to_pydict()
    return DeepResult(
        schema=_schema_from(meta["schema"]),
        summary=s,
        _facts=functools.partial(pq.read_table, d / "facts.parquet"),
        signatures=[(k, tuple((a, b) for a, b in keys), partial) for k, keys, partial in meta["signatures"]],
        signature_of=arrays["signature_of"],
        digests=list(zip(images["record"], images["key"], images["hash"], strict=True)),
        class_zero=[(n, k) for n, k in meta["class_zero"]],
        class_ids=set(meta["class_ids"]),
        image_keys=_image_keys_from(meta.get("image_keys")),
    )


def _image_keys_from(d: dict | None):
    from tfrview.core.analysis.checks import ImageKeys

    if d is None:
        return None
    return ImageKeys(Counter(d["images"]), Counter(d["seen"]), {k: [(n, w) for n, w in v] for k, v in d["odd"].items()})


def _problem(d: dict) -> Problem:
    return Problem.from_json(d)


def _schema_json(schema) -> dict:
    return {"records": schema.records, "kinds": dict(schema.kinds), "presence": dict(schema.presence),
            "types": {k: dict(c) for k, c in schema.types.items()}, "od": schema.od, "other": schema.other,
            "first_other": schema.first_other}  # fmt: skip


def _schema_from(d: dict):
    from tfrview.core.analysis.checks import Schema

    return Schema(d["records"], Counter(d["kinds"]), Counter(d["presence"]),
                  {k: Counter(c) for k, c in d["types"].items()}, d["od"], d["other"], d["first_other"])  # fmt: skip


_STAT_FIELDS = ("present", "per_record_min", "per_record_max", "num_min", "num_max", "num_sum", "num_count", "nan")


def _stats_table(s):
    import pyarrow as pa

    rows = [(section, key, st) for section, d in (("keys", s.keys), ("lists", s.lists)) for key, st in d.items()]
    cols = {"section": [r[0] for r in rows], "key": [r[1] for r in rows],
            "types": [json.dumps(dict(st.types)) for *_, st in rows]}  # fmt: skip
    for f in _STAT_FIELDS:
        cols[f] = [getattr(st, f) for *_, st in rows]
    cols["top"] = [json.dumps([[type(v).__name__, v, c] for v, c in st.top.items()]) for *_, st in rows]
    cols["top_full"] = [st.top_full for *_, st in rows]
    return pa.table(cols)


def _read_stats(t, s) -> None:
    from tfrview.core.analysis.datasummary import KeyStats

    for row in t.to_pylist():
        st = KeyStats()
        st.types = Counter(json.loads(row["types"]))
        for f in _STAT_FIELDS:
            setattr(st, f, row[f])
        st.top = Counter({(int(v) if t_ == "int" else v): c for t_, v, c in json.loads(row["top"])})
        st.top_full = row["top_full"]
        (s.keys if row["section"] == "keys" else s.lists)[row["key"]] = st
